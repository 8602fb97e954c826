/** The artifact extractor refuses what could land outside its folder, and round-trips what the artifact client writes. */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { extractZipSafely, entryNameProblem } from "../../src/publish/unzip.js";
import { createZip } from "../support/fake-actions-results.js";

const tmp = () => mkdtempSync(path.join(os.tmpdir(), "unzip-"));

function zipFile(files: Record<string, string | Uint8Array>, tweak?: (zip: Buffer) => void): string {
  const zip = createZip(files);
  tweak?.(zip);
  const f = path.join(tmp(), "a.zip");
  writeFileSync(f, zip);
  return f;
}

/** Set the unix mode of an entry in the central directory (createZip writes 0o100644). */
function setMode(zip: Buffer, name: string, mode: number): void {
  for (let p = 0; p < zip.length - 46; p++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) continue;
    const nameLen = zip.readUInt16LE(p + 28);
    if (zip.toString("utf8", p + 46, p + 46 + nameLen) === name) zip.writeUInt32LE((mode << 16) >>> 0, p + 38);
  }
}

describe("extractZipSafely", () => {
  it("extracts files and folders, binary intact", async () => {
    const bin = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
    const dir = path.join(tmp(), "out");
    const files = await extractZipSafely(zipFile({ "result.json": "{}", "raw/": "", "raw/stdout.jsonl": "x\n", "outputs/bin.dat": bin, "empty.txt": "" }), dir);
    expect(files.sort()).toEqual(["empty.txt", "outputs/bin.dat", "raw/stdout.jsonl", "result.json"]);
    expect(readFileSync(path.join(dir, "outputs/bin.dat")).equals(bin)).toBe(true);
    expect(readFileSync(path.join(dir, "empty.txt"), "utf8")).toBe("");
  });

  it("refuses escaping names, symlinks, duplicates and corrupt data before writing anything", async () => {
    const cases: Array<[Record<string, string>, ((z: Buffer) => void) | undefined, RegExp]> = [
      [{ "ok.txt": "a", "../x": "b" }, undefined, /'\.\.\/x' is not a plain relative path/],
      [{ "/etc/x": "b" }, undefined, /is an absolute path/],
      [{ "a\\..\\x": "b" }, undefined, /invalid name/],
      [{ link: "/etc/passwd" }, (z) => setMode(z, "link", 0o120777), /not a regular file or folder/],
      [{ "A.txt": "1", "a.txt": "2" }, undefined, /appears twice/],
      [{ "c.txt": "content" }, (z) => z.writeUInt32LE(0xdeadbeef, z.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 16), /corrupt/],
    ];
    for (const [files, tweak, message] of cases) {
      const dir = path.join(tmp(), "out");
      await expect(extractZipSafely(zipFile(files, tweak), dir), JSON.stringify(files)).rejects.toThrow(message);
      if (!/corrupt/.test(String(message))) expect(existsSync(dir)).toBe(false);
    }
    await expect(extractZipSafely(zipFile({ a: "1", b: "2" }), path.join(tmp(), "o"), { maxEntries: 1 })).rejects.toThrow(/more than 1/);
  });

  it("names: plain relative paths only", () => {
    expect(entryNameProblem("a/b/c.txt")).toBeUndefined();
    expect(entryNameProblem("dir/")).toBeUndefined();
    expect(entryNameProblem("a//b")).toBe("is not a plain relative path");
    expect(entryNameProblem("./a")).toBe("is not a plain relative path");
    expect(entryNameProblem("")).toBe("has an invalid name");
    expect(entryNameProblem("C:/x")).toBe("is an absolute path");
  });
});
