/**
 * Issue #36, checkpoints: a run cut by `timeout-minutes` (or stopped by the
 * stall watchdog) ends `incomplete` with its partial patch in the results and
 * on `refs/agent-runner/checkpoints/<n>` in the repository; `@agent continue`
 * on the same issue restores it and delivers one pull request holding both
 * runs' work against the original base. Through dist/ with the fake GitHub.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import { startFakeActionsResults } from "../support/fake-actions-results.js";
import { scenario } from "../github/scenario.js";

const git = (dir: string, ...args: string[]) => execFileSync("git", ["-C", dir, ...args], { encoding: "utf8" }).trim();
const refIn = (origin: string, ref: string) => {
  try {
    return git(origin, "rev-parse", "--verify", "-q", ref);
  } catch {
    return undefined;
  }
};

describe("checkpoints", () => {
  it("timeout-minutes cuts the run: incomplete, patch kept on the checkpoint ref; @agent continue delivers one PR with both runs' work on the original base", async () => {
    // First run: the first half of the work, then hangs. Continued run: finds the first half in place, does the second.
    const s = await scenario({
      fixture: "issue_comment.issue",
      tweaks: { body: "@agent write the two parts", author: "alice" },
      agent: [
        'if [ -f part1.txt ]; then echo "saw: $(cat part1.txt)" > "$CAPTURE/continued.txt"; echo two > part2.txt; echo "second half done"; exit 0; fi',
        "echo one > part1.txt",
        'echo "first half written"',
        "sleep 1000",
      ].join("\n"),
    });
    try {
      const issue = s.ev.payload["issue"].number as number;
      const ref = `refs/agent-runner/checkpoints/${issue}`;
      const base = git(s.repo.origin, "rev-parse", "main");
      const first = await s.run({ "timeout-minutes": "0.05" });
      expect(first.outputs.conclusion).toBe("incomplete");
      expect(first.exitCode).toBe(1);
      // 3 s limit from the agent's start (the agent writes part1.txt at once, then hangs), stopped 0.3 s early.
      expect(JSON.parse(first.outputs["changed-files"]!)).toEqual(["part1.txt"]);
      expect(readFileSync(first.outputs["patch-path"]!, "utf8")).toContain("+one");
      const result = JSON.parse(readFileSync(path.join(path.dirname(first.outputs["patch-path"]!), "result.json"), "utf8"));
      expect(result.checkpoint).toMatchObject({ cause: "time-limit", runs: 1 });
      expect(first.outputs.checkpoint).toBe(ref);
      // The ref: one commit on the base with the partial work, in the repository (the fake GitHub's origin).
      const cp = refIn(s.repo.origin, ref)!;
      expect(cp).toMatch(/^[0-9a-f]{40}$/);
      expect(git(s.repo.origin, "rev-parse", `${cp}^1`)).toBe(base);
      expect(git(s.repo.origin, "show", `${cp}:part1.txt`)).toBe("one");
      expect(git(s.repo.origin, "log", "-1", "--format=%B", cp)).toContain("Agent-Runner-Cause: time-limit");
      expect(s.gh.pulls()).toHaveLength(0);
      const sticky = () => s.gh.issueComments(issue).filter((c) => c.body.includes("agent-runner:sticky"));
      expect(sticky().at(-1)!.body).toContain("⏸️");
      expect(sticky().at(-1)!.body).toContain("@agent continue");
      expect(sticky().at(-1)!.body).toContain(ref);

      // `@agent continue` on the same issue, a fresh checkout of the same base.
      const ev2 = buildEvent("issue_comment.issue", { body: "@agent continue", author: "alice", number: issue });
      s.gh.seedEvent(ev2);
      const { env } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "event-continue-")), ev2);
      const second = await s.run({ "timeout-minutes": "2" }, env);
      expect(second.outputs.conclusion).toBe("success");
      expect(readFileSync(path.join(s.capture, "continued.txt"), "utf8").trim()).toBe("saw: one");
      expect(s.prompt()).toMatch(/continues unfinished work/);
      expect(JSON.parse(second.outputs["changed-files"]!).sort()).toEqual(["part1.txt", "part2.txt"]);
      // One PR, both runs' work, on the original base.
      const pulls = s.gh.pulls();
      expect(pulls).toHaveLength(1);
      const head = git(s.repo.origin, "rev-parse", `refs/heads/${pulls[0]!.head.ref}`);
      expect(git(s.repo.origin, "rev-parse", `${head}^1`)).toBe(base);
      expect(git(s.repo.origin, "diff", "--name-only", base, head).split("\n").sort()).toEqual(["part1.txt", "part2.txt"]);
      const secondResult = JSON.parse(readFileSync(path.join(path.dirname(second.outputs["patch-path"]!), "result.json"), "utf8"));
      expect(secondResult.checkpoint).toMatchObject({ runs: 2, resumedFrom: { commit: cp, runs: 2 } });
      // Spent: the checkpoint is gone once the work is delivered.
      expect(refIn(s.repo.origin, ref)).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it("a stalled agent (no output, no file change, no model request) is stopped within stall-minutes + 30 s, with a checkpoint", async () => {
    const s = await scenario({
      fixture: "issue_comment.issue",
      tweaks: { body: "@agent do something slow", author: "alice" },
      agent: ["echo started > progress.txt", "echo working", "sleep 1000"].join("\n"),
    });
    try {
      const issue = s.ev.payload["issue"].number as number;
      const started = Date.now();
      const step = await s.run({ "stall-minutes": "0.05", "timeout-minutes": "5" });
      const agentMs = Number(step.outputs["duration-ms"]);
      expect(step.outputs.conclusion).toBe("incomplete");
      // 3 s of silence; the whole step well inside stall-minutes + 30 s.
      expect(agentMs).toBeGreaterThanOrEqual(3_000);
      expect(agentMs).toBeLessThan(3_000 + 30_000);
      expect(Date.now() - started).toBeLessThan(3_000 + 30_000 + 30_000);
      const result = JSON.parse(readFileSync(path.join(path.dirname(step.outputs["patch-path"]!), "result.json"), "utf8"));
      expect(result.checkpoint).toMatchObject({ cause: "stalled" });
      expect(result.reason).toMatch(/stalled/);
      const cp = refIn(s.repo.origin, `refs/agent-runner/checkpoints/${issue}`)!;
      expect(git(s.repo.origin, "show", `${cp}:progress.txt`)).toBe("started");
      const sticky = s.gh.issueComments(issue).filter((c) => c.body.includes("agent-runner:sticky"));
      expect(sticky.at(-1)!.body).toMatch(/stalled/);
    } finally {
      await s.close();
    }
  });

  it("deliver: comment pushes nothing, not even a checkpoint: the work stays in the artifact and `@agent continue` says there is nothing to continue", async () => {
    const s = await scenario({ fixture: "issue_comment.issue", tweaks: { body: "@agent start it", author: "alice" }, agent: "echo one > part1.txt\necho working\nsleep 1000" });
    try {
      const issue = s.ev.payload["issue"].number as number;
      const step = await s.run({ deliver: "comment", "timeout-minutes": "0.05" });
      expect(step.outputs.conclusion).toBe("incomplete");
      expect(step.outputs.checkpoint ?? "").toBe("");
      expect(readFileSync(step.outputs["patch-path"]!, "utf8")).toContain("+one");
      // No ref of any kind under refs/agent-runner/checkpoints/ in the repository.
      expect(git(s.repo.origin, "for-each-ref", "--format=%(refname)", "refs/agent-runner/checkpoints/")).toBe("");
      const sticky = () => s.gh.issueComments(issue).filter((c) => c.body.includes("agent-runner:sticky"));
      expect(sticky().at(-1)!.body).toContain("no checkpoint was kept");

      const ev2 = buildEvent("issue_comment.issue", { body: "@agent continue", author: "alice", number: issue });
      s.gh.seedEvent(ev2);
      const { env } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "event-continue-")), ev2);
      const second = await s.run({ deliver: "comment", "timeout-minutes": "2" }, env);
      expect(second.exitCode).not.toBe(0);
      expect(sticky().at(-1)!.body).toMatch(/Nothing to continue/);
      expect(git(s.repo.origin, "for-each-ref", "--format=%(refname)", "refs/agent-runner/checkpoints/")).toBe("");
    } finally {
      await s.close();
    }
  });

  it("two jobs: the read-only run job pushes no checkpoint; the publish job, holding the write token, does", async () => {
    const results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    const s = await scenario({ fixture: "issue_comment.issue", tweaks: { body: "@agent start it", author: "alice" }, agent: "echo one > part1.txt\necho working\nsleep 1000" });
    try {
      const issue = s.ev.payload["issue"].number as number;
      const ref = `refs/agent-runner/checkpoints/${issue}`;
      const env = (job: string) => results.runtimeEnv({ runId: 6300, job, github: s.gh, repository: FIXTURE_REPO });
      const run = await s.run({ phase: "run", "timeout-minutes": "0.05" }, env("agent"));
      expect(run.outputs.conclusion).toBe("incomplete");
      expect(refIn(s.repo.origin, ref)).toBeUndefined();
      const publish = await s.run({ phase: "publish", "agent-command": "" }, env("publish"));
      expect(publish.outputs.conclusion).toBe("incomplete");
      expect(publish.outputs.checkpoint).toBe(ref);
      expect(git(s.repo.origin, "show", `${ref}:part1.txt`)).toBe("one");
    } finally {
      await s.close();
      await results.close();
    }
  });
});
