/**
 * Extracts a downloaded artifact zip without trusting it. An artifact can be
 * made by a job that ran agent code, and the publish job that opens it holds
 * a write token. The artifact client's own extractor quietly rewrites `..` in
 * entry names and writes whatever else it finds; a tampered archive should be
 * refused, not reshaped. Here every entry must be a plain relative path inside
 * the folder, a regular file or a folder (no symlinks), unencrypted, stored
 * or deflated, named once, and exactly the size and CRC its directory entry
 * declares, within entry-count and size limits (limits.ts: 2 GiB unpacked and
 * 10,000 entries by default).
 *
 * The size limit holds whatever the headers say: the declared sizes must
 * fit, each entry is cut off at its declared size while it inflates, a
 * running total of the bytes actually written is checked too, and entries
 * whose data overlap (the trick of non-recursive zip bombs, where every
 * entry inflates the same compressed bytes) are refused. What a refused
 * archive already wrote is removed.
 *
 * Reads the central directory, then streams each entry: memory does not grow
 * with the archive.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, rm } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import zlib, { createInflateRaw } from "node:zlib";
import { ARTIFACT_LIMITS, describeBytes } from "./limits.js";
import { groupDigits } from "../shared/plain-format.js";

export interface ExtractLimits {
  /** Files and folders. */
  maxEntries?: number;
  /** Unpacked bytes: declared and actually written. */
  maxTotalBytes?: number;
}

const DEFAULT_LIMITS: Required<ExtractLimits> = { ...ARTIFACT_LIMITS };

export class UnsafeArchiveError extends Error {
  override name = "UnsafeArchiveError";
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  crc32: number;
  compressedSize: number;
  size: number;
  offset: number;
  /** Where the entry's local header starts. */
  headerOffset: number;
  /** Unix mode from the external attributes (0 when made elsewhere). */
  mode: number;
}

/** The problem with an entry name, or undefined when it is a plain relative path. */
export function entryNameProblem(name: string): string | undefined {
  if (!name || name.includes("\0") || name.includes("\\")) return "has an invalid name";
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return "is an absolute path";
  const parts = name.replace(/\/$/, "").split("/");
  if (parts.some((p) => p === "" || p === "." || p === "..")) return "is not a plain relative path";
  return undefined;
}

async function readAt(fh: Awaited<ReturnType<typeof open>>, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  if (bytesRead !== length) throw new UnsafeArchiveError("the archive is truncated");
  return buf;
}

async function centralDirectory(file: string, maxEntries: number): Promise<Entry[]> {
  const fh = await open(file, "r");
  try {
    const { size } = await fh.stat();
    if (size < 22) throw new UnsafeArchiveError("the file is not a zip archive");
    const tailLen = Math.min(size, 22 + 0xffff);
    const tail = await readAt(fh, size - tailLen, tailLen);
    let eocd = -1;
    for (let i = tail.length - 22; i >= 0; i--)
      if (tail.readUInt32LE(i) === 0x06054b50) {
        eocd = i;
        break;
      }
    if (eocd < 0) throw new UnsafeArchiveError("the file is not a zip archive");
    let count = tail.readUInt16LE(eocd + 10);
    let cdSize = tail.readUInt32LE(eocd + 12);
    let cdOffset = tail.readUInt32LE(eocd + 16);
    if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
      const locAt = size - tailLen + eocd - 20;
      const loc = locAt >= 0 ? await readAt(fh, locAt, 20) : Buffer.alloc(20);
      if (loc.readUInt32LE(0) !== 0x07064b50) throw new UnsafeArchiveError("the ZIP64 directory is missing");
      const z64 = await readAt(fh, Number(loc.readBigUInt64LE(8)), 56);
      if (z64.readUInt32LE(0) !== 0x06064b50) throw new UnsafeArchiveError("the ZIP64 directory is damaged");
      count = Number(z64.readBigUInt64LE(32));
      cdSize = Number(z64.readBigUInt64LE(40));
      cdOffset = Number(z64.readBigUInt64LE(48));
    }
    if (cdOffset + cdSize > size || cdSize > 256 * 1024 * 1024) throw new UnsafeArchiveError("the central directory is damaged");
    // Refused before the directory is read: a count in the millions would otherwise cost a read per entry.
    if (count > maxEntries) throw new UnsafeArchiveError(`it has ${count} entries, more than ${groupDigits(maxEntries)} (the limit on files and folders)`);
    const cd = await readAt(fh, cdOffset, cdSize);
    const entries: Entry[] = [];
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (p + 46 > cd.length || cd.readUInt32LE(p) !== 0x02014b50) throw new UnsafeArchiveError("the central directory is damaged");
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      const e: Entry = {
        flags: cd.readUInt16LE(p + 8),
        method: cd.readUInt16LE(p + 10),
        crc32: cd.readUInt32LE(p + 16),
        compressedSize: cd.readUInt32LE(p + 20),
        size: cd.readUInt32LE(p + 24),
        mode: cd.readUInt32LE(p + 38) >>> 16,
        offset: cd.readUInt32LE(p + 42),
        headerOffset: 0,
        name: cd.toString("utf8", p + 46, p + 46 + nameLen),
      };
      // ZIP64 extra field: only the values that overflowed, in this order.
      let x = p + 46 + nameLen;
      const extraEnd = x + extraLen;
      while (x + 4 <= extraEnd) {
        const id = cd.readUInt16LE(x);
        const len = cd.readUInt16LE(x + 2);
        if (id === 0x0001) {
          let q = x + 4;
          if (e.size === 0xffffffff) (e.size = Number(cd.readBigUInt64LE(q))), (q += 8);
          if (e.compressedSize === 0xffffffff) (e.compressedSize = Number(cd.readBigUInt64LE(q))), (q += 8);
          if (e.offset === 0xffffffff) e.offset = Number(cd.readBigUInt64LE(q));
        }
        x += 4 + len;
      }
      entries.push(e);
      p = extraEnd + commentLen;
    }
    // Where each entry's data starts: after its local header.
    for (const e of entries) {
      e.headerOffset = e.offset;
      const local = await readAt(fh, e.offset, 30);
      if (local.readUInt32LE(0) !== 0x04034b50) throw new UnsafeArchiveError(`the entry '${e.name}' is damaged`);
      e.offset += 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
      if (e.offset + e.compressedSize > size) throw new UnsafeArchiveError(`the entry '${e.name}' is truncated`);
    }
    return entries;
  } finally {
    await fh.close();
  }
}

/** Entries whose local header and data overlap another's: one compressed stream inflated many times. */
function overlapping(entries: readonly Entry[]): Entry | undefined {
  const sorted = [...entries].sort((a, b) => a.headerOffset - b.headerOffset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    if (sorted[i]!.headerOffset < prev.offset + prev.compressedSize) return sorted[i];
  }
  return undefined;
}

/** Counts and checksums what passes through; refuses more bytes than declared, or than the archive's total allows. */
class Checked extends Transform {
  private bytes = 0;
  private crc = 0;
  constructor(
    private readonly entry: Entry,
    private readonly total: { written: number; max: number },
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    this.total.written += chunk.length;
    if (this.bytes > this.entry.size) return cb(new UnsafeArchiveError(`the entry '${this.entry.name}' is larger than it declares`));
    if (this.total.written > this.total.max) return cb(new UnsafeArchiveError(`it unpacks to more than the limit of ${describeBytes(this.total.max)}`));
    // zlib.crc32 needs Node ≥ 20.15: artifacts are downloaded only inside an Actions job
    // (node24), and the namespace import keeps the CLI loading on an older Node.
    this.crc = zlib.crc32(chunk, this.crc);
    cb(null, chunk);
  }
  override _flush(cb: TransformCallback): void {
    if (this.bytes !== this.entry.size || this.crc !== this.entry.crc32) return cb(new UnsafeArchiveError(`the entry '${this.entry.name}' is corrupt`));
    cb();
  }
}

/** Extract `zipFile` into `dir` (created), refusing anything that could land outside it. Returns the files' relative paths. */
export async function extractZipSafely(zipFile: string, dir: string, limits: ExtractLimits = {}): Promise<string[]> {
  const lim = { ...DEFAULT_LIMITS, ...limits };
  const entries = await centralDirectory(zipFile, lim.maxEntries);
  if (entries.length > lim.maxEntries)
    throw new UnsafeArchiveError(`it has ${entries.length} entries, more than ${groupDigits(lim.maxEntries)} (the limit on files and folders)`);
  const declared = entries.reduce((n, e) => n + e.size, 0);
  if (declared > lim.maxTotalBytes) throw new UnsafeArchiveError(`it unpacks to ${describeBytes(declared)}, more than the limit of ${describeBytes(lim.maxTotalBytes)}`);
  const overlap = overlapping(entries);
  if (overlap) throw new UnsafeArchiveError(`the entry '${overlap.name}' overlaps another entry's data (a zip bomb)`);
  const seen = new Set<string>();
  for (const e of entries) {
    const problem = entryNameProblem(e.name);
    if (problem) throw new UnsafeArchiveError(`the entry '${e.name}' ${problem}`);
    const type = e.mode & 0o170000;
    if (type !== 0 && type !== 0o100000 && type !== 0o040000) throw new UnsafeArchiveError(`the entry '${e.name}' is not a regular file or folder (a symlink or device)`);
    if (e.flags & 0x1) throw new UnsafeArchiveError(`the entry '${e.name}' is encrypted`);
    if (e.method !== 0 && e.method !== 8) throw new UnsafeArchiveError(`the entry '${e.name}' uses an unsupported compression method`);
    const key = e.name.replace(/\/$/, "").toLowerCase();
    if (seen.has(key) && !e.name.endsWith("/")) throw new UnsafeArchiveError(`the entry '${e.name}' appears twice`);
    seen.add(key);
  }
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  const written: string[] = [];
  const total = { written: 0, max: lim.maxTotalBytes };
  try {
    await extractEntries(zipFile, dir, entries, files, written, total);
  } catch (e) {
    // Nothing of a refused archive stays behind.
    await Promise.all(written.map((f) => rm(f, { force: true })));
    throw e;
  }
  return files;
}

async function extractEntries(zipFile: string, dir: string, entries: readonly Entry[], files: string[], written: string[], total: { written: number; max: number }): Promise<void> {
  for (const e of entries) {
    const target = path.join(dir, ...e.name.replace(/\/$/, "").split("/"));
    if (e.name.endsWith("/")) {
      await mkdir(target, { recursive: true });
      continue;
    }
    await mkdir(path.dirname(target), { recursive: true });
    const source = e.compressedSize ? createReadStream(zipFile, { start: e.offset, end: e.offset + e.compressedSize - 1 }) : Readable.from([]);
    // 'wx': never write through something already there.
    const out = createWriteStream(target, { flags: "wx" });
    // Only what this extraction created is removed on failure, never a file that was there.
    out.once("open", () => written.push(target));
    if (e.method === 8 && e.compressedSize) await pipeline(source, createInflateRaw(), new Checked(e, total), out);
    else await pipeline(source, new Checked(e, total), out);
    files.push(e.name);
  }
}
