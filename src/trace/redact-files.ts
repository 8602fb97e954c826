/**
 * Redaction for whole files and folders that leave the runner (the agent's
 * outputs folder, session state): streamed, so file size does not matter.
 *
 * Text files get the usual `***` replacement, line by line. Binary files
 * (SQLite session stores, archives, images) are masked byte for byte with
 * `*` of the same length: replacing with a shorter string would corrupt
 * their internal offsets, and a secret stored in them must still not leave.
 *
 * Only regular files are ever read or copied: a symlink the agent planted in
 * its outputs folder could otherwise point at the runner's own files.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { lstat, mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { once } from "node:events";
import path from "node:path";
import type { Redactor } from "../shared/redact.js";

/** A text line longer than this switches the file to same-length masking. */
const MAX_PENDING = 1 << 20;
/** Bytes kept from one binary chunk to the next, so a match across chunks is found whole. */
const MIN_OVERLAP = 64 * 1024;

/** Text = no NUL and valid UTF-8 in the first 8 KB (a cut multi-byte character at the end is fine). */
async function looksLikeText(file: string): Promise<boolean> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(8192);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const head = buf.subarray(0, bytesRead);
    if (head.includes(0)) return false;
    for (let cut = 0; cut < 4 && cut <= head.length; cut++) {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(head.subarray(0, head.length - cut));
        return true;
      } catch {
        /* maybe a character cut at the end: try shorter */
      }
    }
    return false;
  } finally {
    await fh.close();
  }
}

async function write(out: ReturnType<typeof createWriteStream>, chunk: Buffer): Promise<void> {
  if (chunk.length && !out.write(chunk)) await once(out, "drain");
}

async function finish(out: ReturnType<typeof createWriteStream>): Promise<void> {
  out.end();
  await once(out, "close");
}

/**
 * Same-length masking of a byte stream. The last `overlap` bytes of each
 * window are held back and scanned again with the next chunk, so a match
 * across a chunk boundary is seen whole; the cut is moved past any match that
 * spans it, so a match is never split between what is written and what is
 * scanned again.
 */
class ByteMasker {
  private carry = "";
  private readonly overlap: number;

  constructor(private readonly redactor: Redactor) {
    this.overlap = Math.max(MIN_OVERLAP, redactor.longestForm * 2);
  }

  push(chunk: Buffer): Buffer {
    const text = this.carry + chunk.toString("latin1");
    if (text.length <= this.overlap) {
      this.carry = text;
      return Buffer.alloc(0);
    }
    const spans: Array<[number, number]> = [];
    const masked = this.redactor.maskLatin1(text, spans);
    let cut = text.length - this.overlap;
    for (let moved = true; moved; ) {
      moved = false;
      for (const [start, end] of spans)
        if (start < cut && end > cut) {
          cut = end;
          moved = true;
        }
    }
    // Held back unmasked: it is scanned again, whole, with the next chunk.
    this.carry = text.slice(cut);
    return Buffer.from(masked.slice(0, cut), "latin1");
  }

  end(): Buffer {
    const rest = this.redactor.maskLatin1(this.carry);
    this.carry = "";
    return Buffer.from(rest, "latin1");
  }
}

/**
 * Text: redact complete lines with the usual `***`; the file's bytes are
 * otherwise kept exactly (newlines included). A line longer than 1 MB turns
 * the rest of the file over to same-length masking, which needs no line ends.
 */
async function redactText(src: string, dst: string, redactor: Redactor): Promise<void> {
  const out = createWriteStream(dst);
  // Bytes, not a string: a newline byte never sits inside a multi-byte character,
  // so cutting after it always yields whole characters.
  let pending: Buffer = Buffer.alloc(0);
  let masker: ByteMasker | undefined;
  try {
    for await (const chunk of createReadStream(src)) {
      if (masker) {
        await write(out, masker.push(chunk as Buffer));
        continue;
      }
      pending = pending.length ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
      const cut = pending.lastIndexOf(0x0a);
      if (cut >= 0) {
        await write(out, Buffer.from(redactor.redact(pending.subarray(0, cut + 1).toString("utf8")), "utf8"));
        pending = pending.subarray(cut + 1);
      }
      if (pending.length > MAX_PENDING) {
        masker = new ByteMasker(redactor);
        await write(out, masker.push(pending));
        pending = Buffer.alloc(0);
      }
    }
    if (masker) await write(out, masker.end());
    else if (pending.length) await write(out, Buffer.from(redactor.redact(pending.toString("utf8")), "utf8"));
  } finally {
    await finish(out);
  }
}

/** Binary: same-length masking, streamed. */
async function redactBinary(src: string, dst: string, redactor: Redactor): Promise<void> {
  const out = createWriteStream(dst);
  const masker = new ByteMasker(redactor);
  try {
    for await (const chunk of createReadStream(src, { highWaterMark: 1 << 20 })) await write(out, masker.push(chunk as Buffer));
    await write(out, masker.end());
  } finally {
    await finish(out);
  }
}

/** Copy `src` to `dst` redacted (dst's folder is created). */
export async function redactFileTo(src: string, dst: string, redactor: Redactor): Promise<void> {
  await mkdir(path.dirname(dst), { recursive: true });
  if (await looksLikeText(src)) await redactText(src, dst, redactor);
  else await redactBinary(src, dst, redactor);
}

/** Redact one file in place (write beside it, then rename: a hardlinked original is left alone). */
async function redactInPlace(file: string, redactor: Redactor): Promise<void> {
  const tmp = `${file}.redacting-${process.pid}`;
  try {
    await redactFileTo(file, tmp, redactor);
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

export interface FileWalk {
  /** Absolute paths of regular files, sorted. */
  files: string[];
  /** Paths relative to the root that were left out: symlinks, sockets, devices. */
  skipped: string[];
}

/** Regular files under `root`, never following a symlink. A missing root is empty. */
export async function regularFiles(root: string): Promise<FileWalk> {
  const walk: FileWalk = { files: [], skipped: [] };
  const visit = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
      throw e;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await visit(full);
      else if (entry.isFile()) walk.files.push(full);
      else walk.skipped.push(path.relative(root, full));
    }
  };
  const st = await lstat(root).catch(() => undefined);
  if (st?.isDirectory()) await visit(root);
  walk.files.sort();
  walk.skipped.sort();
  return walk;
}

/** Redact every regular file under `dir` in place; returns what was skipped (symlinks, devices). */
export async function redactTreeInPlace(dir: string, redactor: Redactor): Promise<FileWalk> {
  const walk = await regularFiles(dir);
  for (const f of walk.files) await redactInPlace(f, redactor);
  return walk;
}
