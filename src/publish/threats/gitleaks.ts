/**
 * gitleaks' default rules (MIT, https://github.com/gitleaks/gitleaks, the
 * commit in gitleaks-rules.json), applied the way gitleaks applies them: a
 * rule runs only on text that holds one of its keywords (case-insensitive,
 * one pass over the text for all keywords), its secret is the first non-empty
 * capture group (or `secretGroup`), a secret at or under the rule's Shannon
 * entropy is no finding, and the global and rule allowlists (regexes on the
 * secret, match or line, and stopwords) drop placeholders.
 *
 * Departures, because the agent chooses the names and the text: allowlists
 * by path are not honoured (a secret in `package-lock.json` or
 * `node_modules/` leaves all the same), and neither is the inline
 * `gitleaks:allow` comment. And each regex runs on bounded windows of the
 * text, never on a whole megabyte: JavaScript's backtracking engine is
 * super-linear on some rules (curl-auth-user is quadratic on one long line of
 * `curl -u `), where gitleaks' RE2 is linear. Windows overlap by at least the
 * longest match a rule can make, so no secret that fits is cut in two.
 */
import * as z from "../../shared/zod.js";
import data from "./gitleaks-rules.json" with { type: "json" };

const Pattern = z.object({ source: z.string(), flags: z.string() });
const Allowlist = z.object({
  condition: z.enum(["OR", "AND"]),
  target: z.enum(["secret", "match", "line"]),
  regexes: z.array(Pattern),
  stopwords: z.array(z.string()),
  paths: z.array(z.string()),
});
const Rule = z.object({
  id: z.string(),
  regex: z.optional(Pattern),
  path: z.optional(Pattern),
  secretGroup: z.optional(z.number()),
  entropy: z.optional(z.number()),
  keywords: z.array(z.string()),
  allowlists: z.array(Allowlist),
});
const RuleFile = z.object({ allowlist: Allowlist, rules: z.array(Rule) });

interface CompiledAllowlist {
  and: boolean;
  target: "secret" | "match" | "line";
  regex?: RegExp;
  stopwords: string[];
  /** An AND list that also needs a path: never met here (paths allow nothing). */
  needsPath: boolean;
}

interface CompiledRule {
  id: string;
  regex?: RegExp;
  /** The window its regex runs on: its size, and how far neighbouring windows overlap. */
  window: Window;
  path?: RegExp;
  secretGroup?: number;
  entropy?: number;
  keywords: string[];
  allowlists: CompiledAllowlist[];
}

interface Window {
  size: number;
  overlap: number;
}

/**
 * Most rules match at most a few hundred characters: 4 KB windows, 1 KB of
 * overlap. Rules with no bound (private keys, JWTs, generic-api-key) get
 * 32 KB windows that overlap by 8 KB: an 8192-bit RSA key in PEM is 6.4 KB.
 * A quadratic rule costs at most the window's size squared per window (the
 * slowest unbounded ones, nuget-config-password and kubernetes-secret-yaml,
 * about 0.1 s per 32 KB window of text made for them); the linear ones
 * (generic-api-key, most of a scan's time) read each character 1.33 times.
 */
const SHORT: Window = { size: 4 * 1024, overlap: 1024 };
const LONG: Window = { size: 32 * 1024, overlap: 8 * 1024 };
/**
 * Unbounded only through `[^\n]*` (a curl command over up to six lines) and the slowest rules
 * (quadratic: 16 KB of `curl -u ` takes 0.3 s): short windows. A curl command longer than
 * 1 KB may be cut at a window's edge; its credentials are then found only if they fit in one.
 */
const SHORT_ANYWAY = new Set(["curl-auth-user", "curl-auth-header"]);

/**
 * The scan's budget, shared by every call of one scan: past `deadline`
 * (performance.now()) the scan stops between two windows and `overran` is
 * set, which the caller must treat as a finding (fail closed). `execs` and
 * `longestInput` count regex executions and the longest text one was given.
 */
export interface ScanMeter {
  deadline: number;
  overran: boolean;
  execs: number;
  longestInput: number;
}

export interface RuleMatch {
  rule: string;
  /** Where the match is in the text, to mask it in a name that is shown. */
  index: number;
  length: number;
}

function compileAllowlist(a: z.infer<typeof Allowlist>): CompiledAllowlist {
  const sources = a.regexes.map((r) => (r.flags.includes("i") ? `(?:${caseFold(r.source)})` : `(?:${r.source})`));
  return {
    and: a.condition === "AND",
    target: a.target,
    ...(sources.length ? { regex: new RegExp(sources.join("|")) } : {}),
    stopwords: a.stopwords,
    needsPath: a.condition === "AND" && a.paths.length > 0,
  };
}

/**
 * A case-insensitive pattern as case-sensitive classes, so that it can join
 * one alternation with case-sensitive ones (allowlists are matched once per
 * finding, rarely, so their speed does not matter).
 */
function caseFold(source: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      out += c + (source[++i] ?? "");
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      const range = /^([a-zA-Z])-([a-zA-Z])/.exec(source.slice(i));
      if (range) {
        out += `${range[1]!.toLowerCase()}-${range[2]!.toLowerCase()}${range[1]!.toUpperCase()}-${range[2]!.toUpperCase()}`;
        i += 2;
      } else out += /[a-zA-Z]/.test(c) ? c.toLowerCase() + c.toUpperCase() : c;
      continue;
    }
    if (c === "[") inClass = true;
    out += /[a-zA-Z]/.test(c) && !/\(\?<$/.test(out) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c;
  }
  return out;
}

interface Compiled {
  rules: CompiledRule[];
  global: CompiledAllowlist;
  /** Every rule's keywords, longest first. */
  keywords: string[];
  /** Published example values (Google's documented Firebase keys) that one rule's allowlist names literally. */
  published: string[];
}
let compiled: Compiled | undefined;

/**
 * The longest text a pattern can match, or Infinity: an upper bound (every
 * escape and class counts one character; a lookaround counts nothing).
 */
export function maxMatchLength(source: string): number {
  let i = 0;
  const sequence = (): number => {
    let alternatives = 0;
    let total = 0;
    while (i < source.length && source[i] !== ")") {
      if (source[i] === "|") {
        alternatives = Math.max(alternatives, total);
        total = 0;
        i++;
        continue;
      }
      total += quantified(atom());
    }
    return Math.max(alternatives, total);
  };
  const atom = (): number => {
    const c = source[i]!;
    if (c === "\\") {
      i += 2;
      return 1;
    }
    if (c === "[") {
      for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
      i++;
      return 1;
    }
    if (c === "(") {
      const look = /^\(\?<?[=!]/.test(source.slice(i));
      const head = /^\((?:\?<[A-Za-z]\w*>|\?:|\?<?[=!])?/.exec(source.slice(i))![0];
      i += head.length;
      const inner = sequence();
      i++;
      return look ? 0 : inner;
    }
    i++;
    return c === "^" || c === "$" ? 0 : 1;
  };
  const quantified = (length: number): number => {
    const q = /^(?:\*|\+|\?|\{(\d+)(,(\d*))?\})\??/.exec(source.slice(i));
    if (!q) return length;
    i += q[0].length;
    if (q[0][0] === "?") return length;
    if (q[0][0] === "*" || q[0][0] === "+" || (q[2] !== undefined && q[3] === "")) return length ? Infinity : 0;
    return length * Number(q[3] || q[1]);
  };
  return sequence();
}

/**
 * gitleaks' global allowlist has `^true|false|null$`: unanchored in the
 * middle, it allows any secret that merely holds `false` (`<real secret>false`).
 * Its intent, anchored: the whole secret is one of the words.
 */
function anchorAlternation(p: z.infer<typeof Pattern>): z.infer<typeof Pattern> {
  return /^\^[^()[\]\\]*\|[^()[\]\\]*\$$/.test(p.source) ? { ...p, source: `^(?:${p.source.slice(1, -1)})$` } : p;
}

function load(): Compiled {
  if (compiled) return compiled;
  const file = RuleFile.parse(data);
  const globalList = { ...file.allowlist, regexes: file.allowlist.regexes.map(anchorAlternation) };
  const rules = file.rules.map(
    (r): CompiledRule => ({
      id: r.id,
      window: SHORT_ANYWAY.has(r.id) || (r.regex && maxMatchLength(r.regex.source) <= SHORT.overlap) ? SHORT : LONG,
      ...(r.regex ? { regex: new RegExp(r.regex.source, r.regex.flags + "g") } : {}),
      ...(r.path ? { path: new RegExp(r.path.source, r.path.flags) } : {}),
      ...(r.secretGroup !== undefined ? { secretGroup: r.secretGroup } : {}),
      ...(r.entropy !== undefined ? { entropy: r.entropy } : {}),
      keywords: r.keywords,
      allowlists: r.allowlists.map(compileAllowlist),
    }),
  );
  const words = [...new Set(rules.flatMap((r) => r.keywords))].sort((a, b) => b.length - a.length);
  const keywords = words;
  // Google's published Firebase example keys (literals in gcp-api-key's allowlist) are no secret
  // to generic-api-key either, which would otherwise take one under `apiKey:`; only as the whole
  // secret, so that an example pasted into a real key does not hide it.
  const published = file.rules.flatMap((r) => r.allowlists.flatMap((a) => a.regexes.map((x) => x.source).filter((x) => /^[\w-]{16,}$/.test(x))));
  compiled = { rules, global: compileAllowlist(globalList), keywords, published };
  return compiled;
}

/**
 * Keywords present in lower-cased text. One alternation of the keywords not
 * yet seen: after each hit the alternation is rebuilt without what was found
 * and the search goes on one character later, so common keywords ("key",
 * "token") cost one hit each, and overlapping ones ("xoxb", "xox") are all
 * seen, as gitleaks' Aho-Corasick sees them.
 */
function presentKeywords(lower: string, words: readonly string[]): Set<string> {
  const found = new Set<string>();
  let from = 0;
  for (;;) {
    const left = words.filter((w) => !found.has(w));
    if (!left.length) return found;
    const pattern = new RegExp(left.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
    pattern.lastIndex = from;
    const m = pattern.exec(lower);
    if (!m) return found;
    // The alternation takes the longest keyword at a place (sorted longest first); shorter ones there are its prefixes.
    for (let len = m[0].length; len > 0; len--) found.add(m[0].slice(0, len));
    from = m.index + 1;
  }
}

/** Shannon entropy in bits per character, as gitleaks computes it. */
export function shannonEntropy(text: string): number {
  if (!text) return 0;
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  const length = Buffer.byteLength(text, "utf8");
  let entropy = 0;
  for (const n of counts.values()) {
    const p = n / length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

function allowed(lists: readonly CompiledAllowlist[], secret: string, match: string, line: string): boolean {
  for (const a of lists) {
    const target = a.target === "match" ? match : a.target === "line" ? line : secret;
    const regexHit = a.regex !== undefined && target !== "" && a.regex.test(target);
    const lower = secret.toLowerCase();
    const stopHit = secret !== "" && a.stopwords.some((w) => lower.includes(w));
    if (a.and) {
      if (a.needsPath) continue;
      const checks = [...(a.regex ? [regexHit] : []), ...(a.stopwords.length ? [stopHit] : [])];
      if (checks.length && checks.every(Boolean)) return true;
    } else if (regexHit || stopHit) return true;
  }
  return false;
}

function lineAround(text: string, start: number, end: number): string {
  const from = text.lastIndexOf("\n", start - 1) + 1;
  const to = text.indexOf("\n", end);
  return text.slice(from, to < 0 ? text.length : to);
}

/** The rules that published examples are allowed under (gitleaks allows them under gcp-api-key). */
const EXAMPLE_RULES = new Set(["gcp-api-key", "generic-api-key"]);

/** Findings of one rule's regex in the text, window by window. */
function ruleMatches(rule: CompiledRule, regex: RegExp, text: string, all: Compiled, meter?: ScanMeter): RuleMatch[] {
  const out: RuleMatch[] = [];
  const seen = new Set<number>();
  const { size, overlap } = rule.window;
  for (let from = 0; from === 0 || from + overlap < text.length; from += size - overlap) {
    if (meter && performance.now() > meter.deadline) {
      meter.overran = true;
      return out;
    }
    const to = Math.min(text.length, from + size);
    // One character either side, so that `\b` and what follows a secret read as in the whole
    // text; a match that takes in one of them is another window's (or lies past the text's ends).
    const start = Math.max(0, from - 1);
    const slice = text.slice(start, Math.min(text.length, to + 1));
    // Neighbouring windows find what lies in both once each.
    for (const m of windowMatches(rule, regex, slice, start, { from, to, length: text.length }, all, meter)) {
      if (seen.has(m.index)) continue;
      seen.add(m.index);
      out.push(m);
    }
    if (to >= text.length) break;
  }
  return out;
}

function windowMatches(rule: CompiledRule, regex: RegExp, slice: string, offset: number, bounds: { from: number; to: number; length: number }, { global, published }: Compiled, meter?: ScanMeter): RuleMatch[] {
  const out: RuleMatch[] = [];
  regex.lastIndex = 0;
  if (meter) meter.longestInput = Math.max(meter.longestInput, slice.length);
  for (let m = regex.exec(slice); m; m = regex.exec(slice)) {
    if (meter) meter.execs++;
    const at = offset + m.index;
    if ((at < bounds.from && bounds.from > 0) || (at + m[0].length > bounds.to && bounds.to < bounds.length)) {
      regex.lastIndex = m.index + 1;
      continue;
    }
    if (m[0] === "") regex.lastIndex++;
    const match = m[0].replace(/^\n+|\n+$/g, "");
    let secret = match;
    if (m.length > 1) {
      if (rule.secretGroup !== undefined) secret = m[rule.secretGroup] ?? "";
      else secret = m.slice(1).find((g) => g !== undefined && g !== "") ?? match;
    }
    if (rule.entropy !== undefined && shannonEntropy(secret) <= rule.entropy) continue;
    const line = lineAround(slice, m.index, m.index + m[0].length);
    if (allowed([global], secret, match, line) || allowed(rule.allowlists, secret, match, line)) continue;
    if (EXAMPLE_RULES.has(rule.id) && published.includes(secret)) continue;
    out.push({ rule: rule.id, index: at, length: m[0].length });
  }
  if (meter) meter.execs++;
  return out;
}

/**
 * Every rule that finds a secret in the text; `file`, when the text is a
 * file's, lets the rules that apply to some files only (`*.tf`, `*.php`,
 * `*.p12`) apply.
 */
export function gitleaksMatches(text: string, file?: string, meter?: ScanMeter): RuleMatch[] {
  const all = load();
  const { rules, keywords } = all;
  const present = presentKeywords(text.toLowerCase(), keywords);
  const out: RuleMatch[] = [];
  for (const rule of rules) {
    if (rule.path && (file === undefined || !rule.path.test(file))) continue;
    if (!rule.regex) {
      // A rule on the name alone (a PKCS #12 file).
      if (rule.path) out.push({ rule: rule.id, index: 0, length: 0 });
      continue;
    }
    if (rule.keywords.length && !rule.keywords.some((k) => present.has(k))) continue;
    out.push(...ruleMatches(rule, rule.regex, text, all, meter));
    if (meter?.overran) break;
  }
  return out;
}

/** Where the rules came from, for reports. */
export function gitleaksSource(): { commit: string; version: string } {
  return { commit: data.source.commit, version: data.source.version };
}
