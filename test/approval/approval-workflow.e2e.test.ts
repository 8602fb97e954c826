/**
 * docs/approval.md's workflow, as written: its first YAML block (a caller of
 * .github/workflows/agent.yml with `approval: required`) is parsed from the page
 * itself, and its `with:`, `secrets:` and `permissions:` drive agent.yml job by job
 * (test/fanout/workflow-sim.ts for each step's `with:`; each job's `if:` evaluated
 * by GitHub's own expression evaluator, @actions/expressions, with the status
 * functions as the runner gives them). Each job's agent-runner step runs through
 * dist/ against the fake GitHub, the fake Actions results service and the stub
 * model, on the caller's event and on GitHub's defaults (sandbox `auto`: bwrap;
 * network `model-only`). The agent is the real pinned `claude` CLI (`agent-version:
 * preinstalled`, found on PATH) talking to the stub model. The only additions to
 * the docs' `with:` point the run at the stubs: `agent-version`, `base-url`, `model`.
 *
 * 1. `@agent …` from a collaborator: reserve skipped (no `max-daily-cost-usd`),
 *    run job (read-only) → publish job stages: one comment with the digest, no
 *    branch, no pull request; the approve job skipped.
 * 2. An edited `/approve` (the docs' reason for `edited` in the trigger): refused with one reply; an
 *    edited `@agent` comment starts the run job, whose own trigger check ends it skipped.
 * 3. `/approve <12 hex>` from another writer: only the approve job runs (the run
 *    job is held back by its `if:`, and its own trigger check skips it too) and
 *    opens one pull request whose tree is the base plus the staged patch.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { data, Evaluator, Lexer, Parser } from "@actions/expressions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { AGENT_PATH } from "../agents/helpers.js";
import { errors } from "../artifacts/helpers.js";
import { actionInputs, callInputs, interpolate, loadWorkflow, type Context, type Job } from "../fanout/workflow-sim.js";
import { scenario, TOKEN, type Scenario } from "../github/scenario.js";
import { readDoc, yamlBlocks } from "../support/docs.js";
import { buildEvent, FIXTURE_REPO, writeEvent, type BuiltEvent } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { cloneRepo, git, listBranches, readBranchLog } from "../support/git-fixtures.js";
import { runStep, type StepResult } from "../support/harness.js";
import { shellStep } from "../support/stub-model-tools.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";

const KEY = "sk-ant-test-key-approval-workflow-0123456789";
/** The caller's file in the repository: a reusable workflow's run is the caller's (`github.workflow_ref`, the run's path). */
const CALLER_PATH = ".github/workflows/agent-approval.yml";
const WORKFLOW_REF = `${FIXTURE_REPO}/${CALLER_PATH}@refs/heads/main`;
const STAGE_RUN = 5151;
const APPROVE_RUN = 5252;
const EDITED_RUN = 5353;
const EDITED_AGENT_RUN = 5454;

interface CallerJob {
  permissions: Record<string, string>;
  uses: string;
  with: Record<string, string | number | boolean>;
  secrets: Record<string, string>;
}
interface CallerWorkflow {
  on: { issue_comment: { types: string[] } };
  permissions: Record<string, string>;
  jobs: Record<string, CallerJob>;
}

const caller = YAML.parse(yamlBlocks(readDoc("docs/approval.md"))[0] ?? "") as CallerWorkflow;
const callerJobs = Object.values(caller.jobs ?? {});
const callerJob = callerJobs[0]!;
const wf = loadWorkflow(".github/workflows/agent.yml");

// ---- job `if:`s as GitHub evaluates them -----------------------------------------------------------

const STATUS_FUNCTIONS = ["always", "cancelled", "success", "failure"] as const;

/**
 * A job's `if:` with GitHub's evaluator: no status function in it means `success() && (…)`;
 * `success()` holds when every needed job succeeded, `failure()` when one failed; the simulated
 * run is never cancelled.
 */
function jobRuns(job: Job, ctx: Context): boolean {
  const needs = typeof job.needs === "string" ? [job.needs] : (job.needs ?? []);
  const needed = (ctx["needs"] ?? {}) as Record<string, { result?: string }>;
  const results = needs.map((n) => needed[n]?.result);
  const status: Record<(typeof STATUS_FUNCTIONS)[number], boolean> = {
    always: true,
    cancelled: false,
    success: results.every((r) => r === "success"),
    failure: results.some((r) => r === "failure"),
  };
  const raw = (job.if ?? "").replace(/^\s*\$\{\{([\s\S]*)\}\}\s*$/, "$1").trim();
  const source = !raw ? "success()" : /\b(always|cancelled|success|failure)\(\)/.test(raw) ? raw : `success() && (${raw})`;
  const lexed = new Lexer(source).lex();
  const infos = STATUS_FUNCTIONS.map((name) => ({ name, minArgs: 0, maxArgs: 0 }));
  const expr = new Parser(lexed.tokens, ["github", "inputs", "needs", "vars"], infos).parse();
  const context = JSON.parse(JSON.stringify({ github: ctx["github"], inputs: ctx["inputs"], needs: ctx["needs"] ?? {}, vars: {} }), data.reviver) as data.Dictionary;
  const functions = new Map(STATUS_FUNCTIONS.map((name) => [name, { name, minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(status[name]) }]));
  return truthy(new Evaluator(expr, context, functions).evaluate());
}

/** GitHub's truthiness: false, 0, NaN, '' and null are falsy; arrays and objects are truthy. */
function truthy(v: data.ExpressionData): boolean {
  switch (v.kind) {
    case data.Kind.Null:
      return false;
    case data.Kind.Boolean:
      return v.coerceString() === "true";
    case data.Kind.Number:
      return v.number() !== 0 && !Number.isNaN(v.number());
    case data.Kind.String:
      return v.coerceString() !== "";
    default:
      return true;
  }
}

const LEVEL: Record<string, number> = { none: 0, read: 1, write: 2 };

/** The scopes a called job asks for that the caller's job does not grant (GitHub refuses the whole workflow then). */
function missingPermissions(granted: Record<string, string>, job: Job): string[] {
  return Object.entries(job.permissions ?? {})
    .filter(([scope, level]) => (LEVEL[granted[scope] ?? "none"] ?? 0) < (LEVEL[level] ?? 0))
    .map(([scope, level]) => `${scope}: ${level}`);
}

// ---- the fakes ------------------------------------------------------------------------------------

let results: FakeActionsResults;
let stub: StubModel;
let s: Scenario;

beforeAll(async () => {
  results = await startFakeActionsResults({ repository: FIXTURE_REPO });
  stub = await startStubModel([]);
  // alice triggers; bob approves (both may write; the docs' default approvers).
  s = await scenario({ fixture: "issue_comment.issue", results, collaborators: { alice: "write", bob: "write" } });
  // The runs GitHub lists for the approve job's checks: both are runs of the caller's file on the repository itself.
  for (const id of [STAGE_RUN, EDITED_RUN, APPROVE_RUN]) s.gh.addWorkflowRun({ id, path: CALLER_PATH, repo: FIXTURE_REPO });
});
afterAll(async () => {
  await s?.close();
  await results?.close();
  await stub?.close();
});

const bot = () => s.gh.issueComments(7).filter((c) => c.user === "github-actions[bot]");

/** The `with:` and `secrets:` of the docs' caller job, plus what points the run at the stubs. */
function callContext(ev: BuiltEvent): Context {
  const callerSecrets = { ANTHROPIC_API_KEY: KEY };
  const secrets = Object.fromEntries(Object.entries(callerJob.secrets).map(([k, v]) => [k, interpolate(v, { secrets: callerSecrets })]));
  return {
    inputs: callInputs(wf, { ...callerJob.with, "agent-version": "preinstalled", "base-url": stub.url, model: "claude-sonnet-4-5" }),
    secrets,
    github: { event_name: ev.eventName, event: ev.payload, repository: FIXTURE_REPO, token: TOKEN, workflow_ref: WORKFLOW_REF },
  };
}

/** One job's agent-runner step, in a fresh checkout of the default branch (`actions/checkout` with no `ref`). */
async function runJob(ev: BuiltEvent, runId: number, name: string, ctx: Context): Promise<StepResult> {
  const workspace = await cloneRepo(s.repo.origin);
  const { env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "approval-wf-event-")), ev);
  return runStep("main", {
    workspace,
    inputs: actionInputs(wf.jobs[name]!, ctx),
    githubToken: TOKEN,
    env: {
      ...eventEnv,
      ...results.runtimeEnv({ runId, runAttempt: 1, job: name, repository: FIXTURE_REPO, github: s.gh, workspace }),
      PATH: AGENT_PATH,
      GITHUB_WORKFLOW_REF: WORKFLOW_REF,
    },
  });
}

function jobOutputs(job: Job, steps: Record<string, StepResult>): Record<string, string> {
  const ctx = { steps: Object.fromEntries(Object.entries(steps).map(([id, r]) => [id, { outputs: r.outputs }])) };
  return Object.fromEntries(Object.entries(job.outputs ?? {}).map(([k, v]) => [k, interpolate(v, ctx)]));
}

const skipped = { result: "skipped", outputs: {} };

describe("docs/approval.md's workflow, as written, through agent.yml's jobs", () => {
  let digest = "";
  let artifactName = "";

  it("is one caller of agent.yml whose permissions cover every job agent.yml asks them for, on the comment event it declares", () => {
    expect(callerJobs).toHaveLength(1);
    expect(callerJob.uses).toBe("agent-runner/agent-runner/.github/workflows/agent.yml@v1");
    expect(callerJob.with).toMatchObject({ agent: "claude", approval: "required" });
    expect(Object.keys(caller.on)).toEqual(["issue_comment"]);
    expect(caller.on.issue_comment.types).toContain("created");
    // A called job may hold no more than its caller's job grants: GitHub refuses the whole run otherwise.
    for (const [name, job] of Object.entries(wf.jobs)) expect(missingPermissions(callerJob.permissions, job), `agent.yml job '${name}'`).toEqual([]);
    // The caller's secret reaches the run job's step, and only there.
    const ctx = callContext(s.ev);
    expect(actionInputs(wf.jobs["run"]!, ctx)["secrets"]).toContain(`ANTHROPIC_API_KEY=${KEY}`);
    for (const name of ["publish", "approve"]) expect(JSON.stringify(actionInputs(wf.jobs[name]!, ctx))).not.toContain(KEY);
  });

  it("@agent: reserve skipped, the read-only run job runs claude, the publish job stages one comment with the digest; no branch, no pull request", { timeout: 300_000 }, async () => {
    const ev = s.ev;
    expect(String(ev.payload["comment"].body)).toContain("@agent");
    const ctx = callContext(ev);
    // The jobs GitHub starts for this event.
    expect(jobRuns(wf.jobs["reserve"]!, ctx)).toBe(false);
    expect(jobRuns(wf.jobs["approve"]!, ctx)).toBe(false);
    const runCtx = { ...ctx, needs: { reserve: skipped } };
    expect(jobRuns(wf.jobs["run"]!, runCtx)).toBe(true);
    expect(wf.jobs["run"]!.permissions).toEqual({ contents: "read", actions: "read" });

    stub.setScript([shellStep("claude", "sed -i 's/Teh/The/' README.md", "fix the typo"), { text: "Fixed the typo." }]);
    const before = stub.modelRequests().length;
    const run = await runJob(ev, STAGE_RUN, "run", runCtx);
    expect(run.exitCode, run.log + run.stderr).toBe(0);
    expect(errors(run), run.log).toEqual([]);
    expect(run.outputs.conclusion, run.log).toBe("success");
    // GitHub's defaults: sandbox `auto` is bwrap on an Ubuntu runner.
    expect(run.log).toMatch(/Starting claude \([^)]*\) in sandbox 'bwrap'\./);
    expect(stub.modelRequests().length - before).toBeGreaterThanOrEqual(2);
    // The read-only job wrote nothing on GitHub.
    expect(bot()).toEqual([]);
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);

    const publishCtx = { ...ctx, needs: { reserve: skipped, run: { result: "success", outputs: jobOutputs(wf.jobs["run"]!, { agent: run }) } } };
    expect(jobRuns(wf.jobs["publish"]!, publishCtx)).toBe(true);
    const publish = await runJob(ev, STAGE_RUN, "publish", publishCtx);
    expect(publish.exitCode, publish.log + publish.stderr).toBe(0);
    expect(publish.outputs["approval-state"], publish.log).toBe("staged");
    digest = publish.outputs["approval-digest"]!;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);

    const comments = bot();
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(`/approve ${digest.slice(0, 12)}`);
    expect(comments[0]!.body).toContain("+The demo project.");
    expect(comments[0]!.body).toContain("waiting for approval");
    expect(comments[0]!.body).not.toContain(KEY);
    // The run job's artifact (with the patch) is what the staging names; the session artifacts sit beside it.
    artifactName = `agent-run-${STAGE_RUN}-1`;
    expect(results.artifacts({ runId: STAGE_RUN }).map((a) => a.name)).toContain(artifactName);
    expect(results.artifactFiles(artifactName)).toContain("patch.diff");
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);
    expect(s.gh.pulls()).toEqual([]);
    expect(s.gh.repo().issues.get(7)!.labels).toEqual([]);
  });

  it("an edited /approve (why the docs list `edited`): the approve job runs and answers that it is refused; nothing is published", { timeout: 120_000 }, async () => {
    expect(caller.on.issue_comment.types).toContain("edited");
    const ev = buildEvent("issue_comment.issue", { author: "bob", authorAssociation: "COLLABORATOR", action: "edited", body: `/approve ${digest.slice(0, 12)}`, mutate: (p) => (p["comment"].id = 2400000888) });
    const ctx = callContext(ev);
    expect(jobRuns(wf.jobs["run"]!, { ...ctx, needs: { reserve: skipped } })).toBe(false);
    expect(jobRuns(wf.jobs["approve"]!, ctx)).toBe(true);
    const before = bot().length;
    const r = await runJob(ev, EDITED_RUN, "approve", ctx);
    expect(r.exitCode, r.log + r.stderr).toBe(0);
    expect(r.outputs["approval-state"], r.log).toBe("refused");
    expect(bot().slice(before).map((c) => c.body)).toEqual([expect.stringMatching(/the comment was edited/)]);
    expect(s.gh.pulls()).toEqual([]);
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);

    // `edited` also starts the run job for an edited `@agent` comment (its `if:` reads only the body): the action's
    // own trigger check ends it skipped before any model request, so the publish job does not run.
    const editedAgent = buildEvent("issue_comment.issue", { action: "edited", mutate: (p) => (p["comment"].id = 2400000777) });
    const agentCtx = { ...callContext(editedAgent), needs: { reserve: skipped } };
    expect(jobRuns(wf.jobs["run"]!, agentCtx)).toBe(true);
    const requests = stub.modelRequests().length;
    const rerun = await runJob(editedAgent, EDITED_AGENT_RUN, "run", agentCtx);
    expect(rerun.exitCode, rerun.log + rerun.stderr).toBe(0);
    expect(rerun.outputs.conclusion, rerun.log).toBe("skipped");
    expect(rerun.log).toContain("issue_comment action 'edited' does not trigger (only new comments do)");
    expect(stub.modelRequests().length).toBe(requests);
    const publishNeeds = { reserve: skipped, run: { result: "success", outputs: jobOutputs(wf.jobs["run"]!, { agent: rerun }) } };
    expect(jobRuns(wf.jobs["publish"]!, { ...agentCtx, needs: publishNeeds })).toBe(false);
  });

  it("/approve <12 hex> from a writer: only the approve job runs, and opens one pull request whose tree is the base plus the staged patch", { timeout: 300_000 }, async () => {
    expect(digest).not.toBe("");
    const ev = buildEvent("issue_comment.issue", {
      author: "bob",
      authorAssociation: "COLLABORATOR",
      body: `/approve ${digest.slice(0, 12)}`,
      mutate: (p) => (p["comment"].id = 2400000999),
    });
    const ctx = callContext(ev);
    expect(jobRuns(wf.jobs["reserve"]!, ctx)).toBe(false);
    const runCtx = { ...ctx, needs: { reserve: skipped } };
    expect(jobRuns(wf.jobs["run"]!, runCtx)).toBe(false);
    expect(jobRuns(wf.jobs["publish"]!, { ...ctx, needs: { reserve: skipped, run: skipped } })).toBe(false);
    expect(jobRuns(wf.jobs["approve"]!, ctx)).toBe(true);

    // Were the run job started anyway, its own trigger check would not start the agent.
    const requests = stub.modelRequests().length;
    const strayRun = await runJob(ev, APPROVE_RUN, "run", runCtx);
    expect(strayRun.exitCode, strayRun.log + strayRun.stderr).toBe(0);
    expect(strayRun.outputs.conclusion, strayRun.log).toBe("skipped");
    expect(stub.modelRequests().length).toBe(requests);
    expect(results.artifacts({ runId: APPROVE_RUN })).toEqual([]);

    const approve = await runJob(ev, APPROVE_RUN, "approve", ctx);
    expect(approve.exitCode, approve.log + approve.stderr).toBe(0);
    expect(approve.outputs["approval-state"], approve.log).toBe("enacted");
    expect(approve.outputs["approval-digest"]).toBe(digest);

    const pulls = s.gh.pulls();
    expect(pulls).toHaveLength(1);
    const pr = pulls[0]!;
    expect(pr.body).toContain(`Approved by @bob: the staged outputs with digest \`${digest}\``);
    // The PR's tree is the staged patch applied to its base, byte for byte.
    const dir = mkdtempSync(path.join(os.tmpdir(), "approval-wf-patch-"));
    const patchFile = path.join(dir, "patch.diff");
    writeFileSync(patchFile, results.readArtifactFile(artifactName, "patch.diff"));
    const env = { ...process.env, GIT_INDEX_FILE: path.join(dir, "index") };
    const [commit] = await readBranchLog(s.repo.origin, pr.head.ref, { max: 1 });
    expect(commit!.parents).toEqual([s.repo.initialSha]);
    await git(s.repo.origin, ["read-tree", s.repo.initialSha], { env });
    await git(s.repo.origin, ["apply", "--cached", "--binary", patchFile], { env });
    const expected = (await git(s.repo.origin, ["write-tree"], { env })).trim();
    expect((await git(s.repo.origin, ["rev-parse", `${pr.head.ref}^{tree}`])).trim()).toBe(expected);
    expect(await git(s.repo.origin, ["show", `${pr.head.ref}:README.md`])).toContain("The demo project.");
    expect(await git(s.repo.origin, ["log", "-1", "--format=%B", pr.head.ref])).toContain(`Approval-digest: ${digest}`);
    expect(await listBranches(s.repo.origin)).toEqual(["main", pr.head.ref].sort());
    // The staging comment records who approved what; the approve job's own comment (`comment: sticky`) links the pull request.
    const comments = bot().filter((c) => !/the comment was edited/.test(c.body));
    expect(comments).toHaveLength(2);
    expect(comments[0]!.body).toMatch(new RegExp(`Approved by @bob at \\S+: digest \`${digest}\` published: \\S+/pull/${pr.number}\\.`));
    expect(comments[0]!.body).not.toContain("publishing.");
    expect(comments[1]!.body).toContain(`Opened pull request [#${pr.number}]`);
    expect(s.gh.repo().issues.get(7)!.labels).toEqual([]);
  });
});
