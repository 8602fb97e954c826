/**
 * The reusable .github/workflows/review.yml as written, job by job on the
 * runner harness (dist/main.js per step; each step's inputs evaluated from
 * the workflow file, its `if:`s and matrix as GitHub evaluates them), on a
 * `pull_request` event with docs/review.md's caller's `with:`, against the
 * fake GitHub and the fake Actions results service: plan → a shard job per
 * matrix entry (read-only: it writes nothing to GitHub) → gather posts
 * exactly ONE review. Its inline comments sit on lines the PR's diff shows,
 * its summary names every shard; one shard's agent fails: the review names
 * its files, and the workflow's `conclusion` output is `partial`. (A shard
 * stopped by its budget: review-budget.e2e.test.ts.)
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { readDoc, yamlBlocks } from "../support/docs.js";
import { errors } from "../artifacts/helpers.js";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import { cloneRepo, git } from "../support/git-fixtures.js";
import { runStep, type StepResult } from "../support/harness.js";
import { actionInputs, callInputs, evalExpr, interpolate, jobRuns, loadWorkflow, type Context, type Job } from "../fanout/workflow-sim.js";
import { bigPullRequest, diffHunks, reviewAgent, shardFilesOf, type BigPullRequest, type ReviewAgent } from "./fixture.js";

const TOKEN = "ghs_reviewWorkflowToken0123456789abcdefAB";
const REPO = FIXTURE_REPO;
const RUN_ID = 3550;
const PR = 7;
const FAIL_SHARD = 2;

let pull: BigPullRequest;
let agent: ReviewAgent;
let eventEnv: Record<string, string>;
let head: string;

beforeAll(async () => {
  pull = await bigPullRequest({ token: TOKEN, number: PR, files: 400, lines: 75 });
  agent = reviewAgent();
  head = (await git(pull.repo.dir, ["rev-parse", "feature"])).trim();
  const base = (await git(pull.repo.dir, ["rev-parse", "main"])).trim();
  // The caller's `on: pull_request` event: this pull request, opened by alice (write access).
  const ev = buildEvent("pull_request.opened", {
    number: PR,
    author: "alice",
    headRepo: REPO,
    headRef: "feature",
    headSha: head,
    baseRef: "main",
    mutate: (p) => {
      p["pull_request"]["base"]["sha"] = base;
      p["pull_request"]["title"] = "A big change";
    },
  });
  ({ env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "review-wf-event-")), ev));
}, 120_000);
afterAll(async () => {
  await pull?.close();
  agent?.cleanup();
});

/** One job's agent-runner step, as the runner runs it in a fresh job (fresh checkout, its own runtime token). */
async function runJob(job: string, inputs: Record<string, string>): Promise<StepResult> {
  const ws = await cloneRepo(pull.repo.origin);
  return runStep("main", {
    workspace: ws,
    inputs,
    githubToken: TOKEN,
    env: {
      ...eventEnv,
      ...pull.results.runtimeEnv({ runId: RUN_ID, runAttempt: 1, job, repository: REPO, github: { url: pull.gh.url, serverUrl: pull.gh.serverUrl }, workspace: ws }),
      GITHUB_WORKFLOW: "review",
      GITHUB_WORKFLOW_REF: `${REPO}/.github/workflows/review.yml@refs/heads/main`,
    },
  });
}

function jobOutputs(job: Job, steps: Record<string, StepResult>): Record<string, string> {
  const ctx = { steps: Object.fromEntries(Object.entries(steps).map(([id, s]) => [id, { outputs: s.outputs }])) };
  return Object.fromEntries(Object.entries(job.outputs ?? {}).map(([k, v]) => [k, interpolate(v, ctx)]));
}

type Entry = { shard: number; shards: number; range: string; key: string; "issue-number": number };

interface Caller {
  on: Record<string, unknown>;
  jobs: Record<string, { uses?: string; permissions?: Record<string, string>; with?: Record<string, string | number | boolean>; secrets?: Record<string, string> }>;
}

/** docs/review.md's first workflow: the copy-paste caller of review.yml. */
function docsCaller(): { on: Record<string, unknown>; job: Caller["jobs"][string] } {
  const doc = YAML.parse(yamlBlocks(readDoc("docs/review.md"))[0]!) as Caller;
  const job = Object.values(doc.jobs).find((j) => /^agent-runner\/agent-runner\/\.github\/workflows\/review\.yml@/.test(j.uses ?? ""));
  if (!job) throw new Error("docs/review.md: the first workflow does not call review.yml");
  return { on: doc.on, job };
}

describe("review.yml on the runner harness", () => {
  const wf = loadWorkflow(".github/workflows/review.yml");

  it("docs/review.md's caller: on pull_request, granting every permission review.yml's jobs ask for", () => {
    const { on, job } = docsCaller();
    expect(Object.keys(on)).toEqual(["pull_request"]);
    const level = { none: 0, read: 1, write: 2 } as Record<string, number>;
    for (const [name, j] of Object.entries(wf.jobs))
      for (const [scope, wanted] of Object.entries(j.permissions ?? {})) expect(level[job.permissions?.[scope] ?? "none"]!, `${name}: ${scope}: ${wanted}`).toBeGreaterThanOrEqual(level[wanted]!);
    for (const name of Object.keys(job.secrets ?? {})) expect(Object.keys(wf.on.workflow_call.secrets)).toContain(name);
  });

  it("plan → a read-only job per shard → gather posts one review on diff lines naming every shard and the failed one's files", async () => {
    // The caller's `with:` (docs/review.md), plus what the test harness needs: its agent, no sandbox, smaller shards.
    const inputs = callInputs(wf, {
      ...docsCaller().job.with,
      agent: "command",
      "agent-command": agent.script,
      // A `command` agent's model requests do not pass the gateway: a cap it cannot enforce is refused (the default is skipped).
      "max-cost-usd": "",
      sandbox: "none",
      "review-shard-lines": "7500",
      "max-parallel": 2,
      env: `FAIL_SHARD=${FAIL_SHARD}`,
    });
    const base: Context = { inputs, secrets: {}, github: { token: TOKEN, repository: REPO, run_id: String(RUN_ID) } };

    // plan
    const planJob = wf.jobs["plan"]!;
    expect(jobRuns(planJob, base)).toBe(true);
    const plan = await runJob("plan", actionInputs(planJob, base));
    expect(errors(plan), plan.log + plan.stderr).toEqual([]);
    const planOut = jobOutputs(planJob, { plan });
    const needs: Record<string, { result: string; outputs: Record<string, string> }> = { plan: { result: "success", outputs: planOut } };

    // The matrix, as the shard job declares it.
    const runJobDef = wf.jobs["run"]!;
    expect(jobRuns(runJobDef, { ...base, needs })).toBe(true);
    const matrix = evalExpr(runJobDef.strategy!.matrix.replace(/^\$\{\{|\}\}$/g, ""), { ...base, needs }) as { include: Entry[] };
    expect(matrix.include.length).toBeGreaterThanOrEqual(4);
    expect(planOut["count"]).toBe(String(matrix.include.length));
    expect(runJobDef.strategy!["fail-fast"]).toBe(false);
    expect(interpolate(runJobDef.strategy!["max-parallel"]!, base)).toBe("2");

    // The shard jobs: read-only, nothing written to GitHub.
    pull.gh.clearRequests();
    const legs = new Map<number, StepResult>();
    for (const m of matrix.include) {
      const step = await runJob(`review shard ${m.shard}`, actionInputs(runJobDef, { ...base, needs, matrix: m }));
      legs.set(m.shard, step);
      const want = m.shard === FAIL_SHARD ? "failure" : "success";
      expect(step.outputs.conclusion, step.log.slice(-4000)).toBe(want);
    }
    expect(pull.gh.writes()).toEqual([]);
    expect(pull.results.artifacts({ runId: RUN_ID }).map((a) => a.name)).toEqual(expect.arrayContaining(matrix.include.map((m) => `agent-run-${RUN_ID}-1-${m.key}`)));
    // Each agent saw its own shard's files: together every file of the pull request, once.
    const seen = agent.tasks();
    const union = [...seen.values()].flatMap(shardFilesOf);
    expect(union.sort()).toEqual([...pull.files].sort());

    // gather: after every shard job, whatever their results.
    const gatherJob = wf.jobs["gather"]!;
    const gatherNeeds = { ...needs, run: { result: "failure", outputs: {} } };
    expect(jobRuns(gatherJob, { ...base, needs: gatherNeeds })).toBe(true);
    const gather = await runJob("gather", actionInputs(gatherJob, { ...base, needs: gatherNeeds }));
    expect(errors(gather), gather.log + gather.stderr).toEqual([]);
    const out = jobOutputs(gatherJob, { gather });
    expect(out["conclusion"]).toBe("partial");

    // Exactly one review, pinned to the head, naming every shard.
    const reviews = pull.gh.reviews(PR);
    expect(reviews).toHaveLength(1);
    const body = reviews[0]!.body;
    expect(body).toContain(`<!-- agent-runner-review head=${head} -->`);
    for (const m of matrix.include) expect(body).toMatch(new RegExp(`^\\| ${m.shard} \\|`, "m"));
    expect(body).toContain(`- **Shard ${FAIL_SHARD}** (failed: `);
    for (const f of shardFilesOf(seen.get(FAIL_SHARD)!).slice(0, 50)) expect(body).toContain(`\` ${f} \``);
    expect(body).toContain("No earlier review by Agent Runner: the whole pull request was reviewed.");
    // Inline comments: one per shard that reviewed, each on a line the PR's diff shows.
    const comments = pull.gh.reviewComments(PR);
    expect(comments).toHaveLength(matrix.include.length - 1);
    for (const c of comments) {
      const hunks = await diffHunks(pull.repo.dir, "main", "feature", c.path);
      expect(hunks.some((h) => h.RIGHT.has(c.line!)), `${c.path}:${c.line}`).toBe(true);
      expect(c.body).not.toMatch(/forged|outside the diff/);
    }
    const report = JSON.parse(out["report"]!) as { shard: number; status: string }[];
    expect(report.filter((r) => r.status !== "reviewed")).toEqual([expect.objectContaining({ shard: FAIL_SHARD, status: "failed" })]);
    expect(pull.gh.unhandled).toEqual([]);
  }, 400_000);
});
