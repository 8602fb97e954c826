/**
 * The fake GitHub's Git Data API writes some objects itself, without a git process (fake-github-git-data.ts:
 * a commit every compare-and-swap round of the ledger's writers, the ledger's first tree): what it writes
 * must be what git would write, byte for byte (the same ids), and read back by git as its own
 * (`fsck --strict`). A ref that exists neither loose nor packed is answered without git, and a packed one still found.
 */
import { execFileSync } from "node:child_process";
import { expect, it } from "vitest";
import { GitData } from "../support/fake-github-git-data.js";
import { createRepo } from "../support/git-fixtures.js";

it("trees and commits made through the API have the ids git gives the same content; refs read loose, packed or missing", async () => {
  const repo = await createRepo();
  const d = new GitData(repo.origin, "http://x/repos/o/r");
  const a = await d.createBlob({ content: "hi\n" });
  const b = await d.createBlob({ content: "#!/bin/sh\n" });
  const c = await d.createBlob({ content: "" });
  const entries = [{ path: "README.md", mode: "100644", type: "blob", sha: a.sha }, { path: "run.sh", mode: "100755", type: "blob", sha: b.sha }, { path: "README", mode: "100644", type: "blob", sha: c.sha }, { path: "a-b", mode: "100644", type: "blob", sha: c.sha }];
  const tree = await d.createTree({ tree: entries });
  const mk = execFileSync("git", ["--git-dir", repo.origin, "mktree"], { input: entries.map((e) => `${e.mode} blob ${e.sha}\t${e.path}`).join("\n") + "\n" }).toString().trim();
  expect(tree.sha).toBe(mk);
  const ls = execFileSync("git", ["--git-dir", repo.origin, "ls-tree", "-l", tree.sha]).toString();
  expect(tree.tree.map((t) => `${t.mode} ${t.type} ${t.sha} ${String(t.size).padStart(7)}\t${t.path}`).join("\n") + "\n").toBe(ls);
  const one = await d.createTree({ tree: [entries[0]] });
  expect(one.sha).toBe(execFileSync("git", ["--git-dir", repo.origin, "mktree"], { input: `100644 blob ${a.sha}\tREADME.md\n` }).toString().trim());
  const msgs = ["agent-runner ledger: reserve\n\n{\"a\":1}\n", "no newline", "trailing  \n\n\n", "  lead\n# hash line\n"];
  let parent: string[] = [];
  for (const message of msgs) {
    const cm = await d.createCommit({ message, tree: tree.sha, parents: parent }, "github-actions[bot]", 41898282);
    const raw = execFileSync("git", ["--git-dir", repo.origin, "cat-file", "commit", cm.sha]).toString();
    const m = /author .* (\d+ [+-]\d{4})\n/.exec(raw)!;
    const env = { ...process.env, GIT_AUTHOR_NAME: "github-actions[bot]", GIT_AUTHOR_EMAIL: "41898282+github-actions[bot]@users.noreply.github.com", GIT_COMMITTER_NAME: "github-actions[bot]", GIT_COMMITTER_EMAIL: "41898282+github-actions[bot]@users.noreply.github.com", GIT_AUTHOR_DATE: m[1]!, GIT_COMMITTER_DATE: m[1]! };
    expect(cm.sha).toBe(execFileSync("git", ["--git-dir", repo.origin, "commit-tree", tree.sha, ...parent.flatMap((p) => ["-p", p])], { input: message, env }).toString().trim());
    expect(cm.message).toBe(message);
    parent = [cm.sha];
  }
  await expect(d.getRef("agent-runner/ledger")).rejects.toThrow("Not Found");
  execFileSync("git", ["--git-dir", repo.origin, "update-ref", "refs/agent-runner/ledger", parent[0]!]);
  execFileSync("git", ["--git-dir", repo.origin, "pack-refs", "--all"]);
  expect((await d.getRef("agent-runner/ledger")).object.sha).toBe(parent[0]);
  execFileSync("git", ["--git-dir", repo.origin, "fsck", "--strict"]);
  await repo.cleanup();
});
