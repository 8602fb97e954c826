/**
 * src/git/tree-diff.ts: the raw changes and the binary paths of two trees come
 * from one `git diff-tree --raw --numstat`, shared by the patch rules
 * (treeChanges), the API commit and threat detection (binaryChanges). Paths the
 * agent names like a raw or numstat record are read as paths. git is reached
 * through a shim on PATH that logs every spawn.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binaryChanges } from "../../src/git/blobs.js";
import { Git } from "../../src/git/git.js";
import { treeChanges } from "../../src/publish/patch-rules.js";
import { treeDiff } from "../../src/git/tree-diff.js";
import { HostRepo } from "../../src/git/host-repo.js";
import { collectChanges, takeBaseline } from "../../src/git/snapshot.js";
import { validatePatch } from "../../src/publish/validate-patch.js";
import { createRepo, gitCallLog, type GitRepoFixture } from "../support/git-fixtures.js";

const FAKE_RAW = `:100644 100644 ${"a".repeat(40)} ${"b".repeat(40)} M`;
const FAKE_NUMSTAT = "-\t-\tnot-binary.txt";

let repo: GitRepoFixture;
let calls: () => string[];
let env: Record<string, string>;
let from: string;
let to: string;

beforeAll(async () => {
  repo = await createRepo({ files: { "a.txt": "a\n", "b.bin": Buffer.from([1, 0, 2]), "gone.txt": "x\n" } });
  await repo.commit({ "a.txt": "a\nb\n", "b.bin": Buffer.from([1, 0, 3]), "gone.txt": null, [FAKE_RAW]: "text\n", [FAKE_NUMSTAT]: "text\n", "new.bin": Buffer.from([0, 0]) }, "change");
  ({ env, calls } = gitCallLog());
  const git = new Git(repo.dir, env);
  from = await git.text(["rev-parse", "HEAD~1^{tree}"]);
  to = await git.text(["rev-parse", "HEAD^{tree}"]);
});
afterAll(() => repo.cleanup());


describe("tree diff: raw changes and binary paths from one process", () => {
  it("every change with its modes, blobs and status; binary files by content; record-like names are paths", async () => {
    const diff = await treeDiff(new Git(repo.dir, env), from, to);
    expect(diff.changes.map((c) => [c.status, c.path])).toEqual([
      ["A", FAKE_NUMSTAT],
      ["A", FAKE_RAW],
      ["M", "a.txt"],
      ["M", "b.bin"],
      ["D", "gone.txt"],
      ["A", "new.bin"],
    ]);
    const gone = diff.changes.find((c) => c.path === "gone.txt")!;
    expect([gone.oldMode, gone.newMode, gone.newSha]).toEqual(["100644", "000000", "0".repeat(40)]);
    expect(gone.oldSha).toMatch(/^[0-9a-f]{40}$/);
    expect(diff.binary).toEqual(["b.bin", "new.bin"]);
  });

  it("the patch rules' changes and the binary files of the same trees cost one git process", async () => {
    const git = new Git(repo.dir, { ...env, LANG: "C.UTF-8" });
    const before = calls().length;
    const [changes, binary] = await Promise.all([treeChanges(git, from, to), binaryChanges(git, from, to)]);
    expect(changes).toHaveLength(6);
    expect(binary).toEqual(["b.bin", "new.bin"]);
    const spawned = calls().slice(before);
    expect(spawned).toHaveLength(1);
    expect(spawned[0]).toContain(`diff-tree -r -z --no-renames --no-ext-diff --no-textconv --raw --numstat --abbrev=40 ${from} ${to}`);
  });

  it("the changes collected after the agent and the patch check after them: one diff-tree for both", async () => {
    const ws = mkdtempSync(path.join(os.tmpdir(), "tree-diff-ws-"));
    const GIT_ENV = { ...env, HOME: os.tmpdir(), GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" };
    const sh = (...args: string[]) => execFileSync("git", args, { cwd: ws, env: GIT_ENV, encoding: "utf8" });
    sh("init", "-q", "-b", "main");
    writeFileSync(path.join(ws, "a.txt"), "a\n");
    sh("add", "-A");
    sh("commit", "-qm", "base");
    const scratch = mkdtempSync(path.join(os.tmpdir(), "tree-diff-scratch-"));
    const dir = path.join(scratch, "host-git");
    const repo = await HostRepo.create({ cwd: ws, dir, env });
    expect([repo.objects.cwd, repo.objects.identity]).toEqual([dir, HostRepo.reopen(dir, env).identity]);
    const base = await takeBaseline(repo, scratch);
    writeFileSync(path.join(ws, "a.txt"), "b\n");
    writeFileSync(path.join(ws, "new.bin"), Buffer.from([0, 1, 0]));
    const before = calls().length;
    const collected = await collectChanges(repo, base, scratch, path.join(scratch, "patch.diff"));
    const checked = await validatePatch(HostRepo.reopen(dir, env), collected.patchPath, base.commit, { allowWorkflowChanges: false }, { source: "test", scratchDir: scratch, baseTree: base.commitTree });
    expect(collected.changedFiles).toEqual(["a.txt", "new.bin"]);
    expect(checked.changedFiles).toEqual(["a.txt", "new.bin"]);
    expect(checked.postImage).toMatchObject({ tree: collected.endTree, binaryFiles: ["new.bin"] });
    const spawned = calls().slice(before);
    expect(spawned.filter((c) => / diff-tree /.test(c))).toHaveLength(1);
    expect(spawned.filter((c) => / diff --name-only /.test(c))).toEqual([]);
  });
});
