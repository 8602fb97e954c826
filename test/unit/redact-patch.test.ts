/**
 * Issue #20: a patch is bytes. Redacting patch.diff changes the secret values
 * in it and nothing else: CRs of CRLF files, latin1 bytes, a last line with
 * no newline and lines that straddle the reader's chunks come out as they
 * went in, and the redacted patch still applies with `git apply`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Redactor, redactPatchInPlace } from "../../src/shared/redact.js";

const SECRET = "s3cr3t-Value-0123456789";
const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e", GIT_CONFIG_GLOBAL: "/dev/null" };
const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "core.autocrlf=false", ...args], { cwd, env: GIT_ENV });

/** A repository with `base` committed, `after` written over it: the diff as git makes it, and the base's folder. */
function gitPatch(base: Record<string, Buffer>, after: Record<string, Buffer>): { patch: Buffer; dir: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "redact-patch-"));
  git(dir, "init", "-q", "-b", "main");
  for (const [f, b] of Object.entries(base)) writeFileSync(path.join(dir, f), b);
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "base");
  for (const [f, b] of Object.entries(after)) writeFileSync(path.join(dir, f), b);
  git(dir, "add", "-A");
  const patch = git(dir, "diff", "--cached", "--binary", "--full-index");
  git(dir, "reset", "-q", "--hard");
  return { patch, dir };
}

/** Redact `patch` as the runner does; the file's bytes after. */
async function redacted(patch: Buffer, secrets: string[]): Promise<Buffer> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "patch-")), "patch.diff");
  writeFileSync(file, patch);
  await redactPatchInPlace(file, new Redactor(secrets));
  return readFileSync(file);
}

/** Apply to the base commit in `dir`; the files as they then read. */
function applied(dir: string, patch: Buffer, files: string[]): Record<string, Buffer> {
  const file = path.join(dir, "..", `${path.basename(dir)}.diff`);
  writeFileSync(file, patch);
  git(dir, "apply", "--binary", file);
  return Object.fromEntries(files.map((f) => [f, readFileSync(path.join(dir, f))]));
}

const b = (s: string, enc: BufferEncoding = "utf8") => Buffer.from(s, enc);

describe("redacting a patch", () => {
  const base = { "win.txt": b("one\r\ntwo\r\n"), "latin1.txt": b("caf\u00e9\n", "latin1"), "tail.txt": b("no newline") };

  it("without a secret: every byte unchanged (CRs, latin1, the missing final newline)", async () => {
    const after = { "win.txt": b("one\r\ntwo\r\nthree\r\n"), "latin1.txt": b("caf\u00e9\nna\u00efve\n", "latin1"), "tail.txt": b("no newline, still") };
    const { patch, dir } = gitPatch(base, after);
    expect(patch.includes(b("+three\r\n"))).toBe(true);
    const out = await redacted(patch, [SECRET]);
    expect(out.equals(patch)).toBe(true);
    expect(applied(dir, out, Object.keys(after))).toEqual(after);
  });

  it("with secrets: only the secret values change; the patch still applies and gives the files with *** in their place", async () => {
    const after = {
      "win.txt": b(`one\r\ntwo\r\nkey=${SECRET}\r\n`),
      "latin1.txt": b(`caf\u00e9 ${SECRET}\n`, "latin1"),
      "tail.txt": b(`no newline ${SECRET}`),
    };
    const { patch, dir } = gitPatch(base, after);
    const out = await redacted(patch, [SECRET]);
    expect(out.includes(b(SECRET))).toBe(false);
    // UTF-8 lines get `***`; the latin1 line (not UTF-8) is masked byte for byte.
    const expected = b(
      patch
        .toString("latin1")
        .replace(`caf\u00e9 ${SECRET}`, `caf\u00e9 ${"*".repeat(SECRET.length)}`)
        .split(SECRET)
        .join("***"),
      "latin1",
    );
    expect(out.equals(expected)).toBe(true);
    expect(applied(dir, out, Object.keys(after))).toEqual({
      "win.txt": b("one\r\ntwo\r\nkey=***\r\n"),
      "latin1.txt": b(`caf\u00e9 ${"*".repeat(SECRET.length)}\n`, "latin1"),
      "tail.txt": b("no newline ***"),
    });
  });

  it("a patch larger than the reader's chunks: lines across chunk boundaries keep their CRs, every secret is found", async () => {
    const lines = Array.from({ length: 12_000 }, (_, i) => (i % 997 === 0 ? `line ${i} ${SECRET}\r\n` : `line ${i} of a CRLF file\r\n`)).join("");
    const { patch, dir } = gitPatch({ "big.txt": b("start\r\n") }, { "big.txt": b(`start\r\n${lines}`) });
    expect(patch.length).toBeGreaterThan(4 * 65_536);
    const out = await redacted(patch, [SECRET]);
    expect(out.equals(b(patch.toString("utf8").split(SECRET).join("***")))).toBe(true);
    expect(applied(dir, out, ["big.txt"])["big.txt"]!.equals(b(`start\r\n${lines.split(SECRET).join("***")}`))).toBe(true);
  });
});

describe("deciding from the decoded patch whether it needs redacting", () => {
  // The runner reads patch.diff once, as UTF-8 text: when that text redacts to itself it does not
  // rewrite the file. That holds only if the text then holds nothing the byte-wise redaction
  // would change; here both ways are compared on patches with secrets in every place.
  const cases: Record<string, Buffer> = {
    clean: b("+plain line\n-removed\n"),
    "added line": b(`+key=${SECRET}\n`),
    "removed line": b(`-key=${SECRET}\n`),
    "latin1 line": Buffer.concat([b("+caf\u00e9 ", "latin1"), b(SECRET), b(" na\u00efve\n", "latin1")]),
    "latin1 line with a token": Buffer.concat([b("+\u00e9", "latin1"), b(`ghp_${"a".repeat(36)}`), b("\u00e9\n", "latin1")]),
    "latin1 bytes around a clean line": b("+caf\u00e9\n+ghp_short\n", "latin1"),
    "bearer over a CR": b("+Authorization: Bearer abcdefghijklmnopqrstuvwxyz\r\n"),
    "secret in a file name": b(`diff --git a/${SECRET}.txt b/${SECRET}.txt\n`),
  };
  for (const [name, body] of Object.entries(cases))
    it(name, async () => {
      const text = body.toString("utf8");
      const r = new Redactor([SECRET]);
      const textClean = r.redact(text) === text;
      const bytesClean = (await redacted(body, [SECRET])).equals(body);
      expect(textClean).toBe(bytesClean);
      expect(textClean).toBe(name === "clean" || name === "latin1 bytes around a clean line");
    });
});
