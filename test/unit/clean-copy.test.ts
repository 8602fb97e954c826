/**
 * src/git/clean-copy.ts materialiseCheckCopy: the ignored-files snapshot,
 * then the check's tree checked out over it by the private repository, in one
 * git process. The tree wins wherever both have a path, whatever the snapshot
 * put there (a file, a folder, a link to outside the copy); the snapshot's
 * other files stay.
 */
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { materialiseCheckCopy } from "../../src/git/clean-copy.js";
import { HostRepo } from "../../src/git/host-repo.js";

const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C" };
const GIT_ENV = { ...ENV, HOME: os.tmpdir(), GIT_CONFIG_GLOBAL: "/dev/null", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" };
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" });
const root = mkdtempSync(path.join(os.tmpdir(), "clean-copy-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the check's clean copy", () => {
  it("the tree over the ignored snapshot: tracked paths take the tree's content, a link in the way is replaced, ignored files stay", async () => {
    const ws = path.join(root, "ws");
    mkdirSync(path.join(ws, "lib"), { recursive: true });
    writeFileSync(path.join(ws, "test.js"), "real test\n");
    writeFileSync(path.join(ws, "build"), "a file in the tree\n");
    writeFileSync(path.join(ws, "lib", "a.js"), "tracked lib\n");
    writeFileSync(path.join(ws, "run.sh"), "#!/bin/sh\n");
    execFileSync("chmod", ["+x", path.join(ws, "run.sh")]);
    git(ws, "init", "-q", "-b", "main");
    git(ws, "add", "-A");
    git(ws, "commit", "-qm", "base");
    const tree = git(ws, "rev-parse", "HEAD^{tree}").trim();
    const scratch = path.join(root, "scratch");
    mkdirSync(scratch);
    const repo = await HostRepo.create({ cwd: ws, dir: path.join(scratch, "host-git"), env: GIT_ENV });

    // What the snapshot holds where the tree has paths: a stale copy, a folder, a link to outside.
    const outside = path.join(root, "outside");
    mkdirSync(outside);
    const ignored = path.join(root, "ignored");
    mkdirSync(path.join(ignored, "build", "sub"), { recursive: true });
    mkdirSync(path.join(ignored, "node_modules", ".bin"), { recursive: true });
    writeFileSync(path.join(ignored, "test.js"), "weakened test\n");
    writeFileSync(path.join(ignored, "build", "sub", "x"), "x\n");
    writeFileSync(path.join(ignored, "node_modules", ".bin", "tool"), "installed\n");
    symlinkSync(outside, path.join(ignored, "lib"));

    const dest = path.join(root, "copy");
    await materialiseCheckCopy(repo, { tree, ignored: { dir: ignored, entries: 4, durationMs: 0 }, dest, scratchDir: scratch });

    expect(readFileSync(path.join(dest, "test.js"), "utf8")).toBe("real test\n");
    expect(readFileSync(path.join(dest, "build"), "utf8")).toBe("a file in the tree\n");
    expect(lstatSync(path.join(dest, "lib")).isDirectory()).toBe(true);
    expect(readFileSync(path.join(dest, "lib", "a.js"), "utf8")).toBe("tracked lib\n");
    expect(readdirSync(outside)).toEqual([]);
    expect(lstatSync(path.join(dest, "run.sh")).mode & 0o111).not.toBe(0);
    expect(readFileSync(path.join(dest, "node_modules", ".bin", "tool"), "utf8")).toBe("installed\n");
    // The index was scratch: nothing of it is left.
    expect(readdirSync(scratch)).toEqual(["host-git"]);
  });
});
