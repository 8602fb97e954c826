/**
 * Issue #36, SECURITY.md CP1–CP4: a checkpoint ref is agent-written data. A
 * ref that is not a checkpoint the runner wrote, or whose tree would write
 * into `.git`, is refused before the agent starts; a symlink and a filter
 * attribute in it stay data when it is restored (no filter the checkout's
 * config defines runs, nothing is written through the link). Through dist/
 * with the fake GitHub, `resume: checkpoint` on the issue.
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkpointMessage } from "../../src/git/checkpoint.js";
import { scenario } from "../github/scenario.js";

const git = (dir: string, args: string[], input?: string) => execFileSync("git", ["-C", dir, ...args], { encoding: "utf8", ...(input !== undefined ? { input } : {}) }).trim();

/** A commit on `main` in the bare origin, its tree = main's tree plus `entries` (mktree lines), on the issue's checkpoint ref. */
function plantCheckpoint(origin: string, issue: number, entries: string[], message?: string): string {
  const base = git(origin, ["rev-parse", "main"]);
  const mainTree = git(origin, ["ls-tree", "main"]).split("\n");
  const tree = git(origin, ["mktree"], [...mainTree, ...entries].join("\n") + "\n");
  const msg = message ?? checkpointMessage({ cause: "time-limit", runs: 1, base }, "#test");
  const commit = git(origin, ["commit-tree", tree, "-p", base, "-F", "-"], msg);
  git(origin, ["update-ref", `refs/agent-runner/checkpoints/${issue}`, commit]);
  return commit;
}
const blob = (origin: string, text: string) => git(origin, ["hash-object", "-w", "--stdin"], text);

describe("hostile checkpoint refs", () => {
  it("CP1/CP2: a ref without the runner's record, and a tree that writes into .git, are refused before the agent starts", async () => {
    const s = await scenario({ fixture: "issue_comment.issue", tweaks: { body: "@agent go on", author: "alice" }, agent: "echo ran" });
    try {
      const issue = s.ev.payload["issue"].number as number;
      // CP1: someone's own commit on the ref (no record): not continued.
      plantCheckpoint(s.repo.origin, issue, [`100644 blob ${blob(s.repo.origin, "x\n")}\tnew.txt`], "just a commit\n");
      const plain = await s.run({ resume: "checkpoint" });
      expect(plain.exitCode).toBe(1);
      expect(plain.log).toMatch(/is not a checkpoint Agent Runner wrote/);
      expect(s.agentRuns()).toBe(0);
      // CP2: a record, but the tree carries .git/hooks/post-checkout.
      const hook = git(s.repo.origin, ["mktree"], `100755 blob ${blob(s.repo.origin, "#!/bin/sh\ntouch /tmp/pwned\n")}\tpost-checkout\n`);
      const hooks = git(s.repo.origin, ["mktree"], `040000 tree ${hook}\thooks\n`);
      plantCheckpoint(s.repo.origin, issue, [`040000 tree ${hooks}\t.git`]);
      const dotgit = await s.run({ resume: "checkpoint" });
      expect(dotgit.exitCode).toBe(1);
      expect(dotgit.log).toMatch(/Checkpoint: its changes do not apply/);
      expect(existsSync(path.join(s.repo.dir, ".git/hooks/post-checkout"))).toBe(false);
      expect(s.agentRuns()).toBe(0);
    } finally {
      await s.close();
    }
  });

  it("CP3: a symlink and a filter attribute in the checkpoint stay data: no filter of the checkout's config runs, nothing is written through the link", async () => {
    const marker = path.join(mkdtempSync(path.join(os.tmpdir(), "cp-filter-")), "filter-ran");
    const outside = mkdtempSync(path.join(os.tmpdir(), "cp-outside-"));
    const s = await scenario({
      fixture: "issue_comment.issue",
      tweaks: { body: "@agent go on", author: "alice" },
      agent: 'readlink out > "$CAPTURE/link.txt"; cat data.txt > "$CAPTURE/data.txt"; echo done',
      // The checkout's own config names a filter: host git restoring the checkpoint must never run it.
      beforeStep: (ws) => {
        git(ws, ["config", "filter.pwn.smudge", `sh -c 'touch ${marker}; cat'`]);
        git(ws, ["config", "filter.pwn.required", "true"]);
      },
    });
    try {
      const issue = s.ev.payload["issue"].number as number;
      const link = git(s.repo.origin, ["hash-object", "-w", "--stdin"], outside);
      plantCheckpoint(s.repo.origin, issue, [
        `100644 blob ${blob(s.repo.origin, "* filter=pwn\n")}\t.gitattributes`,
        `100644 blob ${blob(s.repo.origin, "restored\n")}\tdata.txt`,
        `120000 blob ${link}\tout`,
      ]);
      const step = await s.run({ resume: "checkpoint" });
      expect(s.agentRuns(), step.log.slice(-2000)).toBe(1);
      expect(existsSync(marker)).toBe(false);
      expect(lstatSync(path.join(s.repo.dir, "out")).isSymbolicLink()).toBe(true);
      expect(readlinkSync(path.join(s.repo.dir, "out"))).toBe(outside);
      expect(execFileSync("ls", ["-A", outside], { encoding: "utf8" })).toBe("");
      expect(execFileSync("cat", [path.join(s.capture, "data.txt")], { encoding: "utf8" })).toBe("restored\n");
    } finally {
      await s.close();
    }
  });
});
