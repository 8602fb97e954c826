/** Streaming redaction of whole files: text, enormous lines, binary, and walks that never follow symlinks. */
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { redactFileTo, redactTreeInPlace, regularFiles } from "../../src/trace/redact-files.js";
import { Redactor } from "../../src/shared/redact.js";

const SECRET = "s3cr3t-Redact-Me-Please";
const TOKEN = `ghp_${"a1B2c3D4e5".repeat(4)}`;
const redactor = new Redactor([SECRET]);
const dir = () => mkdtempSync(path.join(os.tmpdir(), "redact-files-"));

describe("redactFileTo", () => {
  it("redacts text line by line and keeps every other byte, including a missing final newline", async () => {
    const d = dir();
    // Lines straddle the 64 KiB read chunks; no newline at the end.
    const lines = Array.from({ length: 5000 }, (_, i) => (i % 7 === 0 ? `line ${i} ${SECRET} and ${TOKEN} é` : `line ${i} plain ünïcode`));
    const text = lines.join("\n");
    writeFileSync(path.join(d, "in.txt"), text);
    await redactFileTo(path.join(d, "in.txt"), path.join(d, "out/in.txt"), redactor);
    const out = readFileSync(path.join(d, "out/in.txt"), "utf8");
    expect(out).toBe(text.split(SECRET).join("***").split(TOKEN).join("***"));
  });

  it("redacts secrets anywhere in a line of many megabytes, across every chunk boundary", async () => {
    const d = dir();
    // 65,521 is prime: secrets land at shifting offsets against the read chunks. Tokens need a word boundary.
    const filler = ` ${"x".repeat(65_519)} `;
    const parts: string[] = [];
    for (let i = 0; i < 60; i++) parts.push(filler, i % 2 ? SECRET : TOKEN);
    writeFileSync(path.join(d, "big.txt"), parts.join(""));
    await redactFileTo(path.join(d, "big.txt"), path.join(d, "big.out"), redactor);
    const out = readFileSync(path.join(d, "big.out"), "latin1");
    // Booleans: a failure message with the whole file would be megabytes.
    expect(out.includes(SECRET)).toBe(false);
    expect(out.includes("ghp_")).toBe(false);
    expect(out.length).toBe(parts.join("").length);
  });

  it("masks binary files byte for byte, keeping their size", async () => {
    const d = dir();
    const chunks: Buffer[] = [];
    for (let i = 0; i < 40; i++) chunks.push(Buffer.alloc(1_000_003, i), Buffer.from(i % 2 ? SECRET : ` ${TOKEN} `));
    chunks.unshift(Buffer.from([0, 0, 0, 1]));
    const input = Buffer.concat(chunks);
    writeFileSync(path.join(d, "db.sqlite"), input);
    await redactFileTo(path.join(d, "db.sqlite"), path.join(d, "db.out"), redactor);
    const out = readFileSync(path.join(d, "db.out"));
    expect(out.length).toBe(input.length);
    expect(out.includes(Buffer.from(SECRET))).toBe(false);
    expect(out.includes(Buffer.from("ghp_"))).toBe(false);
    expect(out.subarray(0, 4)).toEqual(Buffer.from([0, 0, 0, 1]));
    expect(out.includes(Buffer.from("*".repeat(SECRET.length)))).toBe(true);
  });
});

describe("walking folders", () => {
  it("lists regular files only and redacts them in place", async () => {
    const d = dir();
    mkdirSync(path.join(d, "sub"));
    writeFileSync(path.join(d, "sub/report.md"), `secret: ${SECRET}\n`);
    symlinkSync("/etc/passwd", path.join(d, "passwd"));
    symlinkSync(path.join(d, "sub"), path.join(d, "loop"));
    const walk = await regularFiles(d);
    expect(walk.files).toEqual([path.join(d, "sub/report.md")]);
    expect(walk.skipped).toEqual(["loop", "passwd"]);
    await redactTreeInPlace(d, redactor);
    expect(readFileSync(path.join(d, "sub/report.md"), "utf8")).toBe("secret: ***\n");
    expect(await regularFiles(path.join(d, "missing"))).toEqual({ files: [], skipped: [] });
  });
});
