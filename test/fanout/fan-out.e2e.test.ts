/**
 * Issue #14 end to end: the reusable workflow .github/workflows/fan-out.yml
 * simulated job by job on the runner harness (dist/main.js per step, the
 * steps' inputs evaluated from the workflow file): plan on a search, then
 * three item jobs (run, then publish, `issue-number` from the matrix), then
 * gather. Against the fake GitHub (search, issues, pulls, comments, a bare
 * origin) and the fake Actions results service (the real @actions/artifact
 * client uploads and downloads).
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errors } from "../artifacts/helpers.js";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { cloneRepo, createRepo, type GitRepoFixture } from "../support/git-fixtures.js";
import { runStep, type StepResult } from "../support/harness.js";
import { actionInputs, callInputs, evalExpr, interpolate, loadWorkflow, type Context, type Job } from "./workflow-sim.js";

const TOKEN = "ghs_fanOutE2eToken0123456789abcdefABCDEFG";
const REPO = FIXTURE_REPO;
const RUN_ID = 7700;
const REPORT_ISSUE = 20;
const WORKFLOW_REF = `${REPO}/.github/workflows/nightly-triage.yml@refs/heads/main`;

let repo: GitRepoFixture;
let results: FakeActionsResults;
let gh: FakeGitHub;
let eventEnv: Record<string, string>;
let script: string;

beforeAll(async () => {
  repo = await createRepo({ files: { "README.md": "# Demo\n", "src/app.js": "console.log('hi');\n" } });
  results = await startFakeActionsResults({ repository: REPO });
  gh = await startFakeGitHub({ token: TOKEN, results, repo: { fullName: REPO, gitDir: repo.origin, collaborators: { alice: "write" } } });
  for (let n = 1; n <= 5; n++) gh.addIssue({ number: n, title: `Bug ${n}`, body: `Steps for bug ${n}.`, labels: ["needs-triage"] });
  gh.addIssue({ number: 6, title: "Already triaged", labels: ["bug"] });
  gh.addIssue({ number: REPORT_ISSUE, title: "Nightly triage report", labels: [] });
  // The second workflow run's items: their publish jobs meet GitHub's refusals (a delivery in part, a failed one).
  for (const n of [31, 32, 33]) gh.addIssue({ number: n, title: `Bug ${n}`, body: `Steps for bug ${n}.`, labels: ["verdict-check"] });
  const ev = buildEvent("schedule");
  ({ env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "fanout-event-")), ev));
  // The agent: writes a note naming the issue it was given (from the untrusted context's title).
  const dir = mkdtempSync(path.join(os.tmpdir(), "fanout-agent-"));
  script = path.join(dir, "agent.sh");
  writeFileSync(script, '#!/bin/bash\nset -e\ntask=$(cat)\nbug=$(printf "%s" "$task" | grep -o "Bug [0-9]*" | head -1)\nmkdir -p triage\necho "triaged: $bug" > "triage/${bug// /-}.md"\necho "Triaged $bug"\n');
  chmodSync(script, 0o755);
});
afterAll(async () => {
  await gh?.close();
  await results?.close();
  await repo?.cleanup();
});

/** One job's agent-runner step, as the runner runs it in a fresh job (fresh checkout, its own runtime token). */
async function runJob(job: string, inputs: Record<string, string>, attempt = 1, workspace?: string, runId = RUN_ID): Promise<StepResult> {
  const ws = workspace ?? (await cloneRepo(repo.origin));
  return runStep("main", {
    workspace: ws,
    inputs,
    githubToken: TOKEN,
    env: {
      ...eventEnv,
      ...results.runtimeEnv({ runId, runAttempt: attempt, job, repository: REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }),
      GITHUB_WORKFLOW: "nightly triage",
      GITHUB_WORKFLOW_REF: WORKFLOW_REF,
    },
  });
}

function jobOutputs(job: Job, steps: Record<string, StepResult>): Record<string, string> {
  const ctx = { steps: Object.fromEntries(Object.entries(steps).map(([id, s]) => [id, { outputs: s.outputs }])) };
  return Object.fromEntries(Object.entries(job.outputs ?? {}).map(([k, v]) => [k, interpolate(v, ctx)]));
}

const tableRows = (summary: string) => summary.split("\n").filter((l) => l.startsWith(`| ${REPO}#`));

describe("fan-out.yml on the runner harness", () => {
  const wf = loadWorkflow();
  const inputs = () => callInputs(wf, {
    agent: "command",
    "agent-command": script,
    sandbox: "none",
    "items-query": "is:issue is:open label:needs-triage",
    "max-items": 3,
    "max-parallel": 2,
    prompt: "Triage this issue.",
    "report-issue": String(REPORT_ISSUE),
  });
  const baseContext = (): Context => ({
    inputs: inputs(),
    secrets: {},
    github: { token: TOKEN, repository: REPO, repository_owner: "octo-org", run_id: String(RUN_ID) },
    steps: { "app-token": { outputs: {} } },
  });

  it("plan → three run and publish jobs → gather: three PRs, one table of three, report JSON of three, one tracking comment after a rerun", async () => {
    const base = baseContext();

    // plan
    const plan = await runJob("plan", actionInputs(wf.jobs["plan"]!, base));
    expect(errors(plan), plan.log + plan.stderr).toEqual([]);
    expect(plan.log).toContain("Plan: 5 items matched");
    const planOut = jobOutputs(wf.jobs["plan"]!, { plan });
    const needs = { plan: { result: "success", outputs: planOut } };
    expect(planOut["count"]).toBe("3");

    // The matrix, as the run and publish jobs declare it.
    const runJobDef = wf.jobs["run"]!;
    const matrix = evalExpr(runJobDef.strategy!.matrix.replace(/^\$\{\{|\}\}$/g, ""), { ...base, needs }) as { include: Record<string, unknown>[] };
    expect(matrix.include).toHaveLength(3);
    expect(runJobDef.strategy!["fail-fast"]).toBe(false);
    expect(interpolate(runJobDef.strategy!["max-parallel"]!, base)).toBe("2");
    const groups = matrix.include.map((m) => interpolate(runJobDef.concurrency!.group, { ...base, matrix: m }));
    expect(new Set(groups).size).toBe(3);
    expect(interpolate(wf.jobs["publish"]!.concurrency!.group, { ...base, matrix: matrix.include[0]! })).toBe(groups[0]);

    // run, per item: read-only; writes nothing to GitHub.
    gh.clearRequests();
    for (const m of matrix.include) {
      const ctx = { ...base, needs, matrix: m };
      const step = await runJob(`run (${String(m["item"])})`, actionInputs(runJobDef, ctx));
      expect(errors(step), step.log + step.stderr).toEqual([]);
      expect(step.outputs.conclusion).toBe("success");
    }
    expect(gh.writes()).toEqual([]);
    const runArtifacts = results.artifacts({ runId: RUN_ID }).map((a) => a.name);
    expect(runArtifacts).toEqual(expect.arrayContaining([`agent-run-${RUN_ID}-1-5`, `agent-run-${RUN_ID}-1-4`, `agent-run-${RUN_ID}-1-3`]));

    // publish, per item: a pull request each, the result comment on each issue.
    for (const m of matrix.include) {
      const step = await runJob(`publish (${String(m["item"])})`, actionInputs(wf.jobs["publish"]!, { ...base, needs, matrix: m }));
      expect(errors(step), step.log + step.stderr).toEqual([]);
      expect(step.outputs["pull-request-url"]).toMatch(/\/pull\/\d+$/);
    }
    const pulls = gh.pulls();
    expect(pulls.map((p) => p.head.ref).sort()).toEqual(["agent/3-bug-3", "agent/4-bug-4", "agent/5-bug-5"]);
    for (const p of pulls) expect(p.body).toMatch(/Closes #[345]/);
    for (const n of [3, 4, 5]) expect(gh.issueComments(n).filter((c) => c.user === "github-actions[bot]")).toHaveLength(1);
    expect(gh.issueComments(1)).toHaveLength(0);

    // gather: one table with three rows, report JSON with three entries, one tracking comment.
    const gatherJob = wf.jobs["gather"]!;
    const gatherNeeds = { ...needs, publish: { result: "success", outputs: {} } };
    const gather = await runJob("gather", actionInputs(gatherJob, { ...base, needs: gatherNeeds }));
    expect(errors(gather), gather.log + gather.stderr).toEqual([]);
    expect(tableRows(gather.summary)).toHaveLength(3);
    for (const row of tableRows(gather.summary)) expect(row).toMatch(/✅ success \| \d+\.\d s \| — \| 1 \| \[PR #\d+\]\(http:\/\/github\.localhost:\d+\/octo-org\/octo-repo\/pull\/\d+\) · \[comment\]/);
    const report = JSON.parse(jobOutputs(gatherJob, { gather })["report"]!) as Record<string, unknown>[];
    expect(report).toHaveLength(3);
    expect(report.map((r) => r["item"]).sort()).toEqual([`${REPO}#3`, `${REPO}#4`, `${REPO}#5`]);
    for (const r of report) {
      expect(r).toMatchObject({ conclusion: "success", changedFiles: 1, delivery: "delivered" });
      expect(String(r["pullRequestUrl"])).toMatch(/\/pull\/\d+$/);
    }
    const tracking = gh.issueComments(REPORT_ISSUE);
    expect(tracking).toHaveLength(1);
    expect(tracking[0]!.body).toContain("### Agent Runner fan-out report");
    expect(tableRows(tracking[0]!.body)).toHaveLength(3);

    // Re-run the gather job (attempt 2): the comment is updated, not duplicated.
    const before = tracking[0]!.body;
    const again = await runJob("gather", actionInputs(gatherJob, { ...base, needs: gatherNeeds }), 2);
    expect(errors(again), again.log).toEqual([]);
    const after = gh.issueComments(REPORT_ISSUE);
    expect(after).toHaveLength(1);
    expect(after[0]!.id).toBe(tracking[0]!.id);
    expect(after[0]!.body).not.toBe(before); // the run link now names attempt 2
    expect(tableRows(after[0]!.body)).toHaveLength(3);
    expect(gh.unhandled).toEqual([]);
  }, 300_000);

  it("gather shows each item's verdict, delivery included: a pull request GitHub refused is ⚠️ partial, a failed delivery ❌ failure, as each publish step's own conclusion said", async () => {
    const runId = RUN_ID + 1;
    const base: Context = {
      ...baseContext(),
      inputs: { ...inputs(), "items-query": "is:issue is:open label:verdict-check", "report-issue": "" },
      github: { token: TOKEN, repository: REPO, repository_owner: "octo-org", run_id: String(runId) },
    };
    const plan = await runJob("plan", actionInputs(wf.jobs["plan"]!, base), 1, undefined, runId);
    expect(errors(plan), plan.log + plan.stderr).toEqual([]);
    const needs = { plan: { result: "success", outputs: jobOutputs(wf.jobs["plan"]!, { plan }) } };
    const matrix = evalExpr(wf.jobs["run"]!.strategy!.matrix.replace(/^\$\{\{|\}\}$/g, ""), { ...base, needs }) as { include: Record<string, unknown>[] };
    const byItem = new Map(matrix.include.map((m) => [String(m["item"]), m]));
    expect([...byItem.keys()].sort()).toEqual([`${REPO}#31`, `${REPO}#32`, `${REPO}#33`]);
    for (const m of matrix.include) {
      const step = await runJob(`run (${String(m["item"])})`, actionInputs(wf.jobs["run"]!, { ...base, needs, matrix: m }), 1, undefined, runId);
      expect(step.outputs.conclusion).toBe("success");
    }

    const publish = (n: number) => runJob(`publish (${REPO}#${n})`, actionInputs(wf.jobs["publish"]!, { ...base, needs, matrix: byItem.get(`${REPO}#${n}`)! }), 1, undefined, runId);
    // #31: the workflow may not open pull requests (GitHub's default): the branch is pushed, the pull request is not.
    await gh.setPolicy({ actionsCreatePullRequests: false });
    const refused = await publish(31);
    await gh.setPolicy({ actionsCreatePullRequests: true });
    expect(refused.exitCode, refused.log).toBe(0);
    expect(refused.outputs.conclusion).toBe("partial");
    // #32: the token expired before the pull request was opened: delivery failed.
    gh.failNext("POST /repos/{owner}/{repo}/pulls", { status: 401, body: { message: "Bad credentials" } });
    const failed = await publish(32);
    expect(failed.exitCode).toBe(1);
    expect(failed.outputs.conclusion).toBe("failure");
    // #33: delivered.
    const done = await publish(33);
    expect(errors(done), done.log).toEqual([]);
    expect(done.outputs.conclusion).toBe("success");

    const gatherJob = wf.jobs["gather"]!;
    const gather = await runJob("gather", actionInputs(gatherJob, { ...base, needs: { ...needs, publish: { result: "failure", outputs: {} } } }), 1, undefined, runId);
    expect(errors(gather), gather.log + gather.stderr).toEqual([]);
    const row = (n: number) => tableRows(gather.summary).find((l) => l.startsWith(`| ${REPO}#${n} |`)) ?? "";
    expect(row(31)).toMatch(/^\| [^|]+ \| ⚠️ partial \|/);
    expect(row(32)).toMatch(/^\| [^|]+ \| ❌ failure \|.* delivery failed \|$/);
    expect(row(33)).toMatch(/^\| [^|]+ \| ✅ success \|.*\[PR #\d+\]/);
    expect(gather.summary).toContain("3 items, 1 succeeded.");
    const report = JSON.parse(jobOutputs(gatherJob, { gather })["report"]!) as Record<string, unknown>[];
    const entry = (n: number) => report.find((r) => r["item"] === `${REPO}#${n}`);
    expect(entry(31)).toMatchObject({ conclusion: "partial", changedFiles: 1 });
    expect(entry(32)).toMatchObject({ conclusion: "failure", delivery: "failed" });
    expect(String(entry(32)!["error"])).toContain("Bad credentials");
    expect(entry(33)).toMatchObject({ conclusion: "success", delivery: "delivered" });
  }, 300_000);
});
