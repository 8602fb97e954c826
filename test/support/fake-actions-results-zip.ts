/**
 * Minimal zip reader/writer on node:zlib, enough for artifact archives:
 * reads what `@actions/artifact` (archiver/zip-stream: deflate, data
 * descriptors, optional ZIP64) writes, and writes archives `unzip-stream`
 * (the artifact client's extractor) reads.
 */
import { crc32, deflateRawSync, inflateRawSync } from "node:zlib";

export interface ZipEntry {
  /** Path inside the archive, `/`-separated; directories end with `/`. */
  name: string;
  isDirectory: boolean;
  /** 0 = stored, 8 = deflate. */
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  /** Offset of the local file header. */
  localHeaderOffset: number;
}

function findEocd(buf: Buffer): number {
  const min = Math.max(0, buf.length - 22 - 0xffff);
  for (let i = buf.length - 22; i >= min; i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) return i;
  }
  throw new Error("not a zip archive (no end of central directory record)");
}

/** List the entries of a zip archive from its central directory. */
export function listZipEntries(zip: Buffer): ZipEntry[] {
  const eocd = findEocd(zip);
  let count = zip.readUInt16LE(eocd + 10);
  let cdOffset = zip.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdOffset === 0xffffffff) {
    // ZIP64 end of central directory locator sits just before the EOCD.
    const loc = eocd - 20;
    if (loc >= 0 && zip.readUInt32LE(loc) === 0x07064b50) {
      const z64 = Number(zip.readBigUInt64LE(loc + 8));
      if (zip.readUInt32LE(z64) !== 0x06064b50) throw new Error("bad ZIP64 end of central directory");
      count = Number(zip.readBigUInt64LE(z64 + 32));
      cdOffset = Number(zip.readBigUInt64LE(z64 + 48));
    }
  }
  const entries: ZipEntry[] = [];
  let p = cdOffset;
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error(`bad central directory entry at ${p}`);
    const method = zip.readUInt16LE(p + 10);
    const crc = zip.readUInt32LE(p + 16);
    let compressedSize = zip.readUInt32LE(p + 20);
    let size = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    let localHeaderOffset = zip.readUInt32LE(p + 42);
    const name = zip.toString("utf8", p + 46, p + 46 + nameLen);
    // ZIP64 extended information extra field (id 0x0001): only the fields that overflowed, in order.
    let e = p + 46 + nameLen;
    const extraEnd = e + extraLen;
    while (e + 4 <= extraEnd) {
      const id = zip.readUInt16LE(e);
      const len = zip.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let q = e + 4;
        if (size === 0xffffffff) (size = Number(zip.readBigUInt64LE(q))), (q += 8);
        if (compressedSize === 0xffffffff) (compressedSize = Number(zip.readBigUInt64LE(q))), (q += 8);
        if (localHeaderOffset === 0xffffffff) localHeaderOffset = Number(zip.readBigUInt64LE(q));
      }
      e += 4 + len;
    }
    entries.push({ name, isDirectory: name.endsWith("/"), method, crc32: crc, compressedSize, size, localHeaderOffset });
    p = extraEnd + commentLen;
  }
  return entries;
}

/** The uncompressed bytes of one entry; throws when it is missing. */
export function readZipEntry(zip: Buffer, name: string | ZipEntry): Buffer {
  const entry = typeof name === "string" ? listZipEntries(zip).find((e) => e.name === name) : name;
  if (!entry) throw new Error(`no entry '${String(name)}' in zip`);
  const h = entry.localHeaderOffset;
  if (zip.readUInt32LE(h) !== 0x04034b50) throw new Error(`bad local header for ${entry.name}`);
  const start = h + 30 + zip.readUInt16LE(h + 26) + zip.readUInt16LE(h + 28);
  const data = zip.subarray(start, start + entry.compressedSize);
  const out = entry.method === 0 ? Buffer.from(data) : entry.method === 8 ? inflateRawSync(data) : null;
  if (!out) throw new Error(`unsupported zip method ${entry.method} for ${entry.name}`);
  if (out.length !== entry.size || crc32(out) !== entry.crc32) throw new Error(`corrupt zip entry ${entry.name}`);
  return out;
}

/** All files (not directories) of an archive, name → bytes. */
export function readZipFiles(zip: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const e of listZipEntries(zip)) if (!e.isDirectory) files.set(e.name, readZipEntry(zip, e));
  return files;
}

/**
 * Build a zip (deflate, UTF-8 names) from name → content. Names ending in `/`
 * become directory entries. Used to seed artifacts "from an earlier run".
 */
export function createZip(files: Record<string, string | Uint8Array>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  // 2024-01-01 00:00 in DOS format.
  const dosTime = 0;
  const dosDate = ((2024 - 1980) << 9) | (1 << 5) | 1;
  for (const [name, content] of Object.entries(files)) {
    const raw = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
    const isDir = name.endsWith("/");
    const data = isDir ? Buffer.alloc(0) : deflateRawSync(raw);
    const method = isDir ? 0 : 8;
    const crc = isDir ? 0 : crc32(raw);
    const nameBuf = Buffer.from(name, "utf8");
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(dosTime, 10);
    local.writeUInt16LE(dosDate, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(isDir ? 0 : raw.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x0314, 4); // made by: unix, 2.0
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(dosTime, 12);
    central.writeUInt16LE(dosDate, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(isDir ? 0 : raw.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(((isDir ? 0o40755 : 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, data);
    centrals.push(central, nameBuf);
    offset += local.length + nameBuf.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  const n = Object.keys(files).length;
  eocd.writeUInt16LE(n, 8);
  eocd.writeUInt16LE(n, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}
