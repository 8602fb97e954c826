import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isBranchName } from "../../src/git/ref-name.js";

/** What the real `git check-ref-format --branch` says, in an empty repository (nothing to expand). */
function gitSays(cwd: string, name: string): boolean {
  return spawnSync("git", ["check-ref-format", "--branch", name], { cwd, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" } }).status === 0;
}

const TRICKY = [
  "main", "feature/greeting", "a", "@", "a@", "@a", "a@b", "é/ß", "x.y", "a-b_c", "refs/heads/x", "a/b/c", "v1.2.3",
  "HEAD", "-a", "", ".a", "a/.b", "a.", "a/b.", "a..b", "a/./b", "a//b", "/a", "a/", "a.lock", "a/b.lock/c", "a.lock/b",
  "a b", "a\tb", "a\nb", "a\u0001b", "a\u007fb", "a~1", "a^", "a:b", "a?", "a*", "a[b", "a\\b", "a@{1}", "@{-1}", "x@{u}",
  "a{b}", "a}b", "a@{", "lock", ".lock", "a/.lock", "ab.locky", "...", ".", "a/..", "-", "--help", "a-", "a@@b",
];

describe("isBranchName (git's branch-name rules, in-process)", () => {
  const repo = mkdtempSync(path.join(os.tmpdir(), "ref-name-"));
  spawnSync("git", ["init", "-q", repo]);

  it("agrees with git check-ref-format --branch on names at every rule's edge", () => {
    const disagreements = TRICKY.filter((name) => isBranchName(name) !== gitSays(repo, name));
    expect(disagreements).toEqual([]);
  });

  it("agrees with git on random names made of the characters the rules care about", () => {
    const alphabet = ["a", "b", ".", "/", "@", "{", "}", "-", "~", "^", ":", "?", "*", "[", "\\", " ", "l", "o", "c", "k", "é"];
    let seed = 33;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const names = Array.from({ length: 60 }, () => Array.from({ length: 1 + Math.floor(next() * 8) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(""));
    const disagreements = names.filter((name) => isBranchName(name) !== gitSays(repo, name));
    expect(disagreements).toEqual([]);
  });

  it("refuses what git would expand against repository state, and HEAD", () => {
    for (const name of ["@{-1}", "main@{upstream}", "x@{u}", "HEAD"]) expect(isBranchName(name)).toBe(false);
  });
});
