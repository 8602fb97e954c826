/**
 * Issue #26: a change that never passes `verify-command` is never committed
 * onto a branch. Through dist/main.js with the fake GitHub and a bare origin
 * (test/github/scenario.ts), the command agent editing the workspace: with
 * `max-fix-rounds: 1` the check runs twice, the agent twice (the second time
 * with the check's output as its prompt), `verified=failed`, the step fails,
 * nothing is pushed (no branch, no pull request, the PR's branch unmoved) and
 * the comment holds the patch back with the checks listed. A passing check
 * delivers as before.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { RunResult } from "../../src/result.js";
import { FIXTURE_REPO } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { listBranches, revParse } from "../support/git-fixtures.js";
import { scenario, type Scenario } from "../github/scenario.js";
import { closeAfterEach } from "../support/close-after-each.js";

let s: Scenario | undefined;
let results: FakeActionsResults | undefined;
closeAfterEach(() => s, () => results);

const botComments = (sc: Scenario, n: number) => sc.gh.issueComments(n).filter((c) => c.user === "github-actions[bot]");
const resultOf = (outputs: Record<string, string>) => JSON.parse(readFileSync(path.join(path.dirname(outputs["patch-path"]!), "result.json"), "utf8")) as RunResult;

/** The check fails while README.md still says "Teh", with a recognisable line on stderr. */
const CHECK = `bash -c "if grep -q Teh README.md; then echo 'SPELLING-CHECK: Teh is still in README.md' >&2; exit 2; fi; echo spelling ok"`;

describe("a task that never passes, max-fix-rounds: 1", () => {
  it("on an issue (would be a pull request): two checks, two agent runs, verified=failed, no branch, no pull request, the patch held in the comment", async () => {
    // The agent changes a file but never fixes the spelling.
    s = await scenario({ fixture: "issue_comment.issue", agent: "echo more >> src/app.js\necho 'Tried.'" });
    const r = await s.run({ "verify-command": CHECK, "max-fix-rounds": "1" });

    expect(r.exitCode).not.toBe(0);
    expect(r.outputs.verified).toBe("failed");
    expect(r.outputs.conclusion).toBe("failure");
    const result = resultOf(r.outputs);
    expect(result.verify!.runs.map((v) => [v.run, v.passed, v.exitCode])).toEqual([
      [1, false, 2],
      [2, false, 2],
    ]);
    expect(result.verify!.fixRounds).toBe(1);
    expect(result.reason).toMatch(/verify-command .*still fails after 1 fix round/);
    // The agent ran twice; the second time its prompt was the check's output.
    expect(s.agentRuns()).toBe(2);
    expect(s.prompt()).toContain("SPELLING-CHECK: Teh is still in README.md");
    expect(s.prompt()).toMatch(/<verify-output-[0-9a-f]{8}>/);

    // Nothing pushed, nothing opened.
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);
    expect(s.gh.pulls()).toEqual([]);
    expect(r.outputs["commit-sha"]).toBeUndefined();
    expect(r.outputs.branch).toBeUndefined();
    const [comment] = botComments(s, 7);
    expect(comment!.body).toContain("**Held back:** the changes still fail `verify-command`");
    expect(comment!.body).toContain("**Verify:** ❌ failed");
    expect(comment!.body).toContain("<details><summary>Patch");
    expect(comment!.body).toContain("+more");
    expect(r.summary).toContain("### Verify");
    expect(r.log).toMatch(/Agent run failure: verify-command .*still fails after 1 fix round/);
  });

  it("on a same-repo pull request (would be a commit): the PR's branch does not move", async () => {
    s = await scenario({ fixture: "issue_comment.pr", agent: "echo 'test' > greeting.test.js\necho 'Added a test.'" });
    const head = await revParse(s.repo.origin, "refs/heads/feature/greeting");
    const r = await s.run({ "verify-command": CHECK, "max-fix-rounds": "1" });
    expect(r.exitCode).not.toBe(0);
    expect(r.outputs.verified).toBe("failed");
    expect(resultOf(r.outputs).verify!.runs).toHaveLength(2);
    expect(await revParse(s.repo.origin, "refs/heads/feature/greeting")).toBe(head);
    expect((await listBranches(s.repo.origin)).sort()).toEqual(["feature/greeting", "main"]);
    expect(r.outputs["commit-sha"]).toBeUndefined();
    expect(botComments(s, 12)[0]!.body).toContain("nothing was committed or pushed (a commit was asked for)");
  });

  it("a check that passes after the fix round delivers the pull request as usual", async () => {
    // The first run leaves the typo; the fix round (prompted with the check's output) fixes it.
    s = await scenario({
      fixture: "issue_comment.issue",
      agent: `if grep -q SPELLING-CHECK "$CAPTURE/prompt.txt"; then sed -i 's/Teh/The/' README.md; echo 'Fixed the spelling.'; else echo more >> src/app.js; echo 'Tried.'; fi`,
    });
    const r = await s.run({ "verify-command": CHECK, "max-fix-rounds": "1" });
    expect(r.exitCode, r.log).toBe(0);
    expect(r.outputs.verified).toBe("passed");
    expect(s.agentRuns()).toBe(2);
    expect(s.gh.pulls()).toHaveLength(1);
    expect(botComments(s, 7)[0]!.body).toMatch(/\*\*Verify:\*\* ✅ passed/);
  });
});

describe("checks within the run's limits and phases", () => {
  it("timeout-minutes runs out during a check: the run ends timeout, verified=failed, nothing pushed", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: "echo more >> src/app.js\necho 'Done.'" });
    const r = await s.run({ "verify-command": "sleep 60", "timeout-minutes": "0.1", "max-fix-rounds": "2" });
    expect(r.exitCode).not.toBe(0);
    expect(r.outputs.conclusion).toBe("timeout");
    expect(r.outputs.verified).toBe("failed");
    const result = resultOf(r.outputs);
    expect(result.reason).toMatch(/timeout-minutes' limit ran out during verify-command/);
    expect(result.verify!.runs).toEqual([expect.objectContaining({ run: 1, passed: false, timedOut: true })]);
    expect(result.verify!.fixRounds).toBe(0);
    expect(s.agentRuns()).toBe(1);
    // The 60 s check was stopped by the run's limit, not waited out.
    expect(result.durationMs).toBeLessThan(60_000);
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);
  });

  it("cancelled during a check: the run ends incomplete (work kept as a checkpoint), no fix round, nothing pushed", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: "echo more >> src/app.js\necho 'Done.'" });
    const r = await s.run({ "verify-command": "bash -c 'sleep 1000'", "max-fix-rounds": "2" }, {}, { interrupt: { when: "Verify: bash -c" } });
    expect(r.outputs.conclusion).toBe("incomplete");
    // The check was stopped by the cancel, not waited out (it sleeps 1000 s).
    expect(r.durationMs).toBeLessThan(120_000);
    expect(s.agentRuns()).toBe(1);
    expect(resultOf(r.outputs).verify!.runs).toHaveLength(1);
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);
  });

  it("a check over verify-timeout-minutes fails and starts a fix round, within the run's limit", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: "echo more >> src/app.js\necho 'Done.'" });
    const r = await s.run({ "verify-command": "sleep 60", "verify-timeout-minutes": "0.02", "max-fix-rounds": "1" });
    expect(r.outputs.conclusion).toBe("failure");
    expect(r.outputs.verified).toBe("failed");
    const result = resultOf(r.outputs);
    expect(result.verify!.runs.map((v) => v.timedOut), JSON.stringify(result.verify)).toEqual([true, true]);
    expect(s.agentRuns()).toBe(2);
    expect(s.prompt()).toContain("was stopped: it ran out of time");
  });

  it("two jobs: the run job checks, the publish job reads verified=failed from the artifact and pushes nothing", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    const r0 = results;
    s = await scenario({ fixture: "issue_comment.issue", agent: "echo more >> src/app.js\necho 'Tried.'" });
    const sc = s;
    const env = (job: string) => r0.runtimeEnv({ runId: 6200, job, github: sc.gh, repository: FIXTURE_REPO });
    const run = await s.run({ phase: "run", "verify-command": CHECK, "max-fix-rounds": "1" }, env("agent"));
    expect(run.outputs.verified).toBe("failed");
    expect(run.exitCode).not.toBe(0);
    const publish = await s.run({ phase: "publish", "agent-command": "" }, env("publish"));
    expect(publish.exitCode).not.toBe(0);
    expect(publish.outputs.verified).toBe("failed");
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);
    expect(s.gh.pulls()).toEqual([]);
    const [comment] = botComments(s, 7);
    expect(comment!.body).toContain("**Held back:**");
    expect(comment!.body).toContain("<summary>Checks (2)</summary>");
  });
});
