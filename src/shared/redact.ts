/**
 * Replaces secret values — and the forms they take once encoded (JSON-escaped,
 * URL-encoded, base64) — plus recognizable credentials (GitHub tokens, bearer
 * values, JWTs, provider API keys) before anything is written, logged,
 * uploaded, commented or set as an output.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { rename } from "node:fs/promises";
import { once } from "node:events";
import { escapeRegExp } from "../text.js";
const REDACTED = "***";

/** Shorter values would redact ordinary text; they are still masked by the runner. */
const MIN_SECRET_LENGTH = 4;

const TOKEN_PATTERNS: RegExp[] = [
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,255}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,255}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\bsk-ant-[A-Za-z0-9_-]{16,}/g,
  /\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
];
// Keep the scheme word so the text still reads; drop the credential.
const BEARER = /\b(Bearer|token|Basic)\s+([A-Za-z0-9._~+/=-]{16,})/gi;
/**
 * Where BEARER can match, case-insensitive by character classes so that it
 * joins one pattern with the case-sensitive ones (without the `u` flag, `i`
 * folds ASCII letters only, as these classes do).
 */
const BEARER_ANYWHERE = String.raw`\b(?:[Bb][Ee][Aa][Rr][Ee][Rr]|[Tt][Oo][Kk][Ee][Nn]|[Bb][Aa][Ss][Ii][Cc])\s+[A-Za-z0-9._~+/=-]{16}`;


/** Shorter values get no hex, base32 or reversed forms: those would be common strings. */
const MIN_SHAPED_LENGTH = 8;
/** Values this long are also found by any window of FRAGMENT characters of them. */
const MIN_FRAGMENTED_LENGTH = 20;
const FRAGMENT = 16;
/** Past this length a value's windows are taken every FRAGMENT_STRIDE characters (any 23 in a row still hold one). */
const ALL_WINDOWS_UP_TO = 128;
const FRAGMENT_STRIDE = 8;

/**
 * The forms a secret takes once encoded by a program that prints it, or by an
 * agent that means to carry it out: JSON-escaped, URL-encoded (also every
 * byte as %XX), base64 and base64url and base32 at each alignment inside a
 * longer encoded string, hex in either case, reversed, and its long pieces
 * (a value split across two string literals, or cut short).
 */
function encodedForms(value: string): string[] {
  const forms = new Set<string>([value]);
  forms.add(JSON.stringify(value).slice(1, -1));
  forms.add(JSON.stringify(JSON.stringify(value)).slice(1, -1).replace(/^\\"|\\"$/g, ""));
  forms.add(encodeURIComponent(value));
  const bytes = Buffer.from(value, "utf8");
  // base64 of the value at each of the three alignments it can have inside a longer
  // base64 string: keep only the characters whose 6 bits all come from the value.
  for (let shift = 0; shift < 3; shift++) {
    const b64 = Buffer.concat([Buffer.alloc(shift), bytes]).toString("base64");
    const core = b64.slice(Math.ceil((4 * shift) / 3), Math.floor((4 * (shift + bytes.length)) / 3));
    if (core.length < 6) continue;
    forms.add(core);
    forms.add(core.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  if (value.length >= MIN_SHAPED_LENGTH) {
    const hex = bytes.toString("hex");
    forms.add(hex).add(hex.toUpperCase());
    forms.add(hex.replace(/../g, "%$&")).add(hex.toUpperCase().replace(/../g, "%$&"));
    // The same for base32 (5 bytes to 8 characters): five alignments.
    for (let shift = 0; shift < 5; shift++) {
      const b32 = base32(Buffer.concat([Buffer.alloc(shift), bytes]));
      const core = b32.slice(Math.ceil((8 * shift) / 5), Math.floor((8 * (shift + bytes.length)) / 5));
      if (core.length >= 8) forms.add(core).add(core.toLowerCase());
    }
    forms.add([...value].reverse().join(""));
  }
  for (const piece of fragments(value)) forms.add(piece);
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/** Windows of FRAGMENT characters: any piece of the value at least that long holds one. */
function fragments(value: string): string[] {
  if (value.length < MIN_FRAGMENTED_LENGTH || /\s/.test(value)) return [];
  const stride = value.length <= ALL_WINDOWS_UP_TO ? 1 : FRAGMENT_STRIDE;
  const out: string[] = [];
  for (let i = 0; i + FRAGMENT <= value.length; i += stride) out.push(value.slice(i, i + FRAGMENT));
  return out;
}

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32 without padding (Node has none built in). */
function base32(bytes: Buffer): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/**
 * The model gateway's stand-in key (src/sandbox/gateway.ts), which the agent holds instead of the real
 * one: token-shaped, worth nothing, and in the agent's environment, so any file that copies the
 * environment would otherwise read as a leaked token and hold the run.
 */
const GATEWAY_PLACEHOLDER = /^(?:sk-ant-api03-|sk-)?agent-runner-(?:[0-9a-f]{32}-)?placeholder-not-a-key$/;
function isGatewayPlaceholder(token: string): boolean {
  return GATEWAY_PLACEHOLDER.test(token);
}

export class Redactor {
  private readonly pattern: RegExp | undefined;
  /** The run's own values in any of their forms, tested without the token patterns. */
  private readonly valuePattern: RegExp | undefined;
  /**
   * Every secret form, token pattern and BEARER as one alternation, not
   * global: text it does not match holds nothing any pass would replace, so
   * the usual case (no secret) costs one scan instead of eight.
   */
  private readonly anywhere: RegExp;
  /** The same forms as UTF-8 bytes read as latin1, for binary files (built on first use). */
  private bytePattern: RegExp | null | undefined;
  private readonly forms: string[];
  readonly secretCount: number;

  constructor(secretValues: Iterable<string>) {
    const forms = new Set<string>();
    let count = 0;
    for (const v of secretValues) {
      if (!v || v.length < MIN_SECRET_LENGTH) continue;
      count++;
      for (const f of encodedForms(v)) forms.add(f);
      // Multi-line secrets (keys, certificates) are also redacted line by line.
      for (const line of v.split(/\r?\n/)) if (line.trim().length >= 8) forms.add(line.trim());
    }
    this.secretCount = count;
    // Longest first so a secret is not half-replaced by a shorter form of another.
    this.forms = [...forms].sort((a, b) => b.length - a.length);
    const sorted = this.forms.map(escapeRegExp);
    this.pattern = sorted.length ? new RegExp(sorted.join("|"), "g") : undefined;
    this.valuePattern = sorted.length ? new RegExp(sorted.join("|")) : undefined;
    this.anywhere = new RegExp([...sorted, ...TOKEN_PATTERNS.map((p) => p.source), BEARER_ANYWHERE].join("|"));
  }

  /**
   * Whether the text holds one of the run's own secret values in any form (a
   * token of the right shape that is not the run's is the secret rules' to
   * judge, with their allowlists: `ghp_xxxx…` in a README is no leak).
   */
  holdsSecretValue(text: string): boolean {
    return this.valuePattern?.test(text) ?? false;
  }

  redact(text: string): string {
    if (!this.anywhere.test(text)) return text;
    let out = this.pattern ? text.replace(this.pattern, REDACTED) : text;
    for (const p of TOKEN_PATTERNS) out = out.replace(p, (m) => (isGatewayPlaceholder(m) ? m : REDACTED));
    return out.replace(BEARER, (m, scheme: string, cred: string) => (isGatewayPlaceholder(cred) ? m : `${scheme} ${REDACTED}`));
  }

  /**
   * Same-length masking for binary content (SQLite session stores, images):
   * `latin1` is the bytes as a string, one character per byte. Every secret
   * (as UTF-8 bytes) and recognizable token is overwritten with `*` of the
   * same length, so offsets and record sizes inside the file stay valid.
   */
  maskLatin1(latin1: string, spans?: Array<[start: number, end: number]>): string {
    if (this.bytePattern === undefined) {
      const byteForms = this.forms.map((f) => escapeRegExp(Buffer.from(f, "utf8").toString("latin1")));
      this.bytePattern = byteForms.length ? new RegExp(byteForms.join("|"), "g") : null;
    }
    // Lengths never change, so offsets from every pass refer to the same text.
    const stars = (m: string, ...rest: unknown[]) => {
      const offset = rest.find((r): r is number => typeof r === "number") ?? 0;
      spans?.push([offset, offset + m.length]);
      return "*".repeat(m.length);
    };
    let out = this.bytePattern ? latin1.replace(this.bytePattern, stars) : latin1;
    for (const p of TOKEN_PATTERNS) out = out.replace(p, stars);
    return out.replace(BEARER, (m: string, _scheme: string, cred: string, offset: number) => {
      const credStart = offset + m.length - cred.length;
      spans?.push([credStart, credStart + cred.length]);
      return `${m.slice(0, m.length - cred.length)}${"*".repeat(cred.length)}`;
    });
  }

  /** Longest text a single match can span in maskLatin1, for chunked scanning. */
  get longestForm(): number {
    return Math.max(0, ...this.forms.map((f) => Buffer.byteLength(f, "utf8")));
  }

  /** Deep-redact every string in a JSON-like value. */
  redactValue<T>(value: T): T {
    // A walk, not a JSON round trip: this runs once per event of streams that
    // can be hundreds of MB, and every copy is garbage for the collector.
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value)) return value.map((v) => this.walk(v));
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.walk(v);
      return out;
    }
    return value;
  }
}

/** Valid UTF-8 bytes as text; undefined for anything else (latin1 text, a cut character). */
function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * One line of a patch (its bytes, without the newline): the same bytes back
 * unless it holds a secret. UTF-8 text gets the usual `***`; other bytes (a
 * latin1 file's line) are masked with `*` of the same length, byte for byte.
 */
function redactPatchLine(line: Buffer, redactor: Redactor): Buffer {
  const text = utf8(line);
  if (text !== undefined) {
    const redacted = redactor.redact(text);
    return redacted === text ? line : Buffer.from(redacted, "utf8");
  }
  const latin1 = line.toString("latin1");
  const masked = redactor.maskLatin1(latin1);
  return masked === latin1 ? line : Buffer.from(masked, "latin1");
}

/** Complete lines (a block that ends with a newline, or the file's last bytes), redacted line by line. */
function redactPatchBlock(block: Buffer, redactor: Redactor): Buffer {
  const text = utf8(block);
  // The common case: no secret anywhere in the block, its bytes go out as they came.
  if (text !== undefined && redactor.redact(text) === text) return block;
  const out: Buffer[] = [];
  let start = 0;
  while (start < block.length) {
    const nl = block.indexOf(0x0a, start);
    const end = nl < 0 ? block.length : nl;
    out.push(redactPatchLine(block.subarray(start, end), redactor));
    if (nl >= 0) out.push(block.subarray(nl, nl + 1));
    start = end + 1;
  }
  return Buffer.concat(out);
}

/**
 * Redact a patch file in place, streamed (patches can be large). A patch is
 * bytes, not text: only secret values change. Carriage returns (a CRLF file's
 * line ends), bytes that are not UTF-8, the last line's missing newline are
 * all kept, or the patch would no longer apply to the files it was made from.
 */
export async function redactPatchInPlace(file: string, redactor: Redactor): Promise<boolean> {
  let changed = false;
  const tmp = `${file}.redacting`;
  const out = createWriteStream(tmp);
  const write = async (bytes: Buffer) => {
    if (bytes.length && !out.write(bytes)) await once(out, "drain");
  };
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file)) {
    pending = pending.length ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
    // Cut after the last newline: a newline byte never sits inside a multi-byte character.
    const cut = pending.lastIndexOf(0x0a);
    if (cut < 0) continue;
    const block = pending.subarray(0, cut + 1);
    const redacted = redactPatchBlock(block, redactor);
    changed ||= redacted !== block;
    await write(redacted);
    pending = pending.subarray(cut + 1);
  }
  const last = redactPatchBlock(pending, redactor);
  changed ||= last !== pending;
  await write(last);
  out.end();
  await once(out, "close");
  await rename(tmp, file);
  return changed;
}
