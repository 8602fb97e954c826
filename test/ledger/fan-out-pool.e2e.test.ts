/**
 * A fan-out's pool through dist/: .github/workflows/fan-out.yml simulated job
 * by job (test/fanout/workflow-sim.ts: each job's `with:` taken from the file
 * and evaluated), against the fake GitHub (its ref updates refuse
 * non-fast-forwards as GitHub does), the fake Actions results service and the
 * stub model. 30 items under `max-total-cost-usd: 5`, `max-cost-usd: 1.2`;
 * each item's agent is a `codex` that is a bash script making two model
 * requests through the gateway ($0.50 each by the stub's prices: about $1).
 *
 * As GitHub schedules it (`needs:` is per job): plan, then every item's
 * reserve job (contents: write; ten at a time), then every run job (read-only:
 * it reads its item's reservation from the ledger and takes it as its cap),
 * then every publish job (settles the reservation to the run artifact's
 * claim, never above the reservation), then gather (the pool's report).
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCommits } from "../../src/ledger/tally.js";
import { errors } from "../artifacts/helpers.js";
import { actionInputs, callInputs, evalExpr, interpolate, loadWorkflow, type Context, type Job } from "../fanout/workflow-sim.js";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { cloneRepo, createRepo, git, type GitRepoFixture } from "../support/git-fixtures.js";
import { runStep, type StepResult } from "../support/harness.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";

const TOKEN = "ghs_fanOutPoolToken0123456789abcdefABCDEFGH";
const REPO = FIXTURE_REPO;
const RUN_ID = 8800;
const ITEMS = 30;
const LEDGER = "refs/agent-runner/ledger";
const WORKFLOW_REF = `${REPO}/.github/workflows/nightly-triage.yml@refs/heads/main`;

let repo: GitRepoFixture;
let results: FakeActionsResults;
let gh: FakeGitHub;
let stub: StubModel;
let eventEnv: Record<string, string>;
let bin: string;

/** A `codex` on PATH that is a script: two model requests to the gateway it was given, then done. */
function fakeCodex(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "pool-codex-"));
  mkdirSync(path.join(root, "bin"));
  const file = path.join(root, "bin", "codex");
  writeFileSync(
    file,
    `#!/bin/bash
B=$(grep -o 'http://127.0.0.1:[0-9]*/v1' "$CODEX_HOME/config.toml" | head -1)
for i in 1 2; do
  curl -sS --noproxy '*' -o /dev/null -m 30 -H "Authorization: Bearer $OPENAI_API_KEY" -H 'content-type: application/json' \\
    -d '{"model":"stub-model","input":"spend","max_output_tokens":2000}' "$B/responses"
done
echo done
`,
  );
  chmodSync(file, 0o755);
  return path.join(root, "bin");
}

beforeAll(async () => {
  repo = await createRepo({ files: { "README.md": "# Demo\n" } });
  results = await startFakeActionsResults({ repository: REPO });
  gh = await startFakeGitHub({ token: TOKEN, results, repo: { fullName: REPO, gitDir: repo.origin, collaborators: { alice: "write" } } });
  for (let n = 1; n <= ITEMS; n++) gh.addIssue({ number: n, title: `Bug ${n}`, body: `Steps for bug ${n}.`, labels: [] });
  ({ env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "pool-event-")), buildEvent("schedule")));
  // 1,000 input and 1,000 output tokens per answer at $250 per million each: $0.50 a request.
  stub = await startStubModel([], { usage: { inputTokens: 1000, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1000 } });
  bin = fakeCodex();
});
afterAll(async () => {
  await gh?.close();
  await results?.close();
  await stub?.close();
  await repo?.cleanup();
});

async function runJob(job: string, inputs: Record<string, string>): Promise<StepResult> {
  const ws = await cloneRepo(repo.origin);
  return runStep("main", {
    workspace: ws,
    inputs,
    githubToken: TOKEN,
    env: {
      ...eventEnv,
      ...results.runtimeEnv({ runId: RUN_ID, runAttempt: 1, job, repository: REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }),
      PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
      GITHUB_WORKFLOW: "nightly triage",
      GITHUB_WORKFLOW_REF: WORKFLOW_REF,
    },
  });
}

/** `n` at a time, in order, as a matrix with max-parallel runs its jobs. */
async function inBatches<T, R>(list: T[], n: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < list.length; i += n) out.push(...(await Promise.all(list.slice(i, i + n).map(f))));
  return out;
}

function jobOutputs(job: Job, steps: Record<string, StepResult>): Record<string, string> {
  const ctx = { steps: Object.fromEntries(Object.entries(steps).map(([id, s]) => [id, { outputs: s.outputs }])) };
  return Object.fromEntries(Object.entries(job.outputs ?? {}).map(([k, v]) => [k, interpolate(v, ctx)]));
}

async function ledgerEntries() {
  const out = await git(repo.origin, ["log", "--format=%H%x1f%P%x1f%an%x1f%cI%x1f%B%x1e", LEDGER]);
  const commits = out
    .split("\x1e")
    .map((r) => r.replace(/^\n/, ""))
    .filter(Boolean)
    .map((r) => {
      const [sha = "", parents = "", author = "", time = "", message = ""] = r.split("\x1f");
      return { sha, parents: parents.split(" ").filter(Boolean), author, time, message };
    });
  return readCommits(commits, true);
}

describe("max-total-cost-usd: a fan-out of 30 items through fan-out.yml and dist/", () => {
  const wf = loadWorkflow();

  it("the items reserve from one pool of $5; the settled total stays within it; gather names the items skipped for lack of budget", { timeout: 900_000 }, async () => {
    const base: Context = {
      inputs: callInputs(wf, {
        agent: "codex",
        "agent-version": "preinstalled",
        sandbox: "none",
        "base-url": `${stub.url}/v1`,
        model: "stub-model",
        "model-prices": "stub-model: {input: 250, output: 250}",
        "max-cost-usd": "1.2",
        "max-total-cost-usd": "5",
        items: JSON.stringify(Array.from({ length: ITEMS }, (_, i) => i + 1)),
        "max-items": ITEMS,
        prompt: "Triage this issue.",
        "threat-detection": "none",
        comment: "none",
        deliver: "none",
      }),
      secrets: { OPENAI_API_KEY: "sk-stub-model-key-0123456789abcdef" },
      github: { token: TOKEN, repository: REPO, repository_owner: "octo-org", run_id: String(RUN_ID) },
      steps: { "app-token": { outputs: {} } },
    };

    const plan = await runJob("plan", actionInputs(wf.jobs["plan"]!, base));
    expect(errors(plan), plan.log + plan.stderr).toEqual([]);
    const needs = { plan: { result: "success", outputs: jobOutputs(wf.jobs["plan"]!, { plan }) } };
    const reserveJob = wf.jobs["reserve"]!;
    // The reserve job is a matrix over the plan's items, like the run and publish jobs, and holds the write token.
    expect(reserveJob.strategy!.matrix).toBe(wf.jobs["run"]!.strategy!.matrix);
    expect(reserveJob.permissions).toMatchObject({ contents: "write" });
    expect(wf.jobs["run"]!.permissions!["contents"]).toBe("read");
    expect(wf.jobs["run"]!.needs).toEqual(["plan", "reserve"]);
    const matrix = (evalExpr(reserveJob.strategy!.matrix.replace(/^\$\{\{|\}\}$/g, ""), { ...base, needs }) as { include: Record<string, unknown>[] }).include;
    expect(matrix).toHaveLength(ITEMS);

    // Every item reserves before any runs (GitHub's `needs:` is per job), ten at a time: they collide on the ref and retry.
    const reserved = await inBatches(matrix, 10, (m) => runJob(`reserve (${String(m["item"])})`, actionInputs(reserveJob, { ...base, needs, matrix: m })));
    for (const r of reserved) expect(errors(r), r.log + r.stderr).toEqual([]);
    const admitted = reserved.filter((r) => r.outputs.conclusion === "success");
    const refusedReserve = reserved.filter((r) => r.outputs.conclusion === "skipped");
    // $1.20 four times, then the last $0.20 of the pool: five items hold a reservation, 25 find the pool spent.
    expect(admitted).toHaveLength(5);
    expect(refusedReserve).toHaveLength(ITEMS - 5);
    for (const r of refusedReserve) {
      expect(r.log).toMatch(/Budget: nothing is left in the fan-out's pool \(workflow run 8800\)/);
      expect(r.outputs["budget-exceeded"]).toBe("true");
    }
    expect(gh.requests.some((r) => r.method === "PATCH" && r.path.endsWith("/git/refs/agent-runner/ledger") && r.status === 422)).toBe(true);

    // The run jobs: read-only; each takes its item's reservation from the ledger as its cap, or ends skipped.
    const runJobDef = wf.jobs["run"]!;
    const runNeeds = { ...needs, reserve: { result: "success", outputs: {} } };
    gh.clearRequests();
    const runs = await inBatches(matrix, 6, (m) => runJob(`run (${String(m["item"])})`, actionInputs(runJobDef, { ...base, needs: runNeeds, matrix: m })));
    expect(gh.writes()).toEqual([]);
    const started = runs.filter((r) => r.outputs.conclusion !== "skipped");
    expect(started).toHaveLength(5);
    for (const r of runs.filter((x) => x.outputs.conclusion === "skipped"))
      expect(r.log).toMatch(/Budget: the budget ledger holds no live reservation for this run \(8800:octo-org\/octo-repo#\d+\)/);
    // A skipped run job left no run artifact: its agent never started.
    expect(results.artifacts({ runId: RUN_ID }).filter((a) => a.name.startsWith("agent-run-"))).toHaveLength(5);
    // Only the five items with a reservation reached the model: two requests each at most.
    expect(stub.modelRequests().length).toBeLessThanOrEqual(10);
    expect(stub.modelRequests().length).toBeGreaterThanOrEqual(9);
    // The item that reserved the last $0.20 was capped there by its gateway (its first $0.50 request went past it).
    expect(started.filter((r) => r.outputs["budget-exceeded"] === "true")).toHaveLength(1);

    // The publish jobs settle each reservation; the items that reserved nothing end skipped.
    const publishes = await inBatches(matrix, 6, (m) => runJob(`publish (${String(m["item"])})`, actionInputs(wf.jobs["publish"]!, { ...base, needs: { ...runNeeds, run: { result: "success" } }, matrix: m })));
    const settledJobs = publishes.filter((p) => /Budget ledger: settled/.test(p.log));
    expect(settledJobs).toHaveLength(5);
    for (const p of publishes.filter((x) => !settledJobs.includes(x))) expect(p.log).toMatch(/holds no reservation for this run .*nothing to publish or settle/);
    // The run artifact claims $0.50 for the item capped at $0.20: clamped to the reservation, and said so.
    const clamped = publishes.filter((p) => /the run artifact claims \$0\.50, more than the \$0\.20 reserved/.test(p.log));
    expect(clamped).toHaveLength(1);

    const ledger = await ledgerEntries();
    expect(ledger.rejected).toEqual([]);
    expect(ledger.reservations.size).toBe(5);
    expect(ledger.settlements).toHaveLength(5);
    const reservedTotal = [...ledger.reservations.values()].reduce((s, r) => s + r.entry.amountUsd, 0);
    const settled = ledger.settlements.reduce((s, x) => s + x.entry.amountUsd, 0);
    expect(reservedTotal).toBeCloseTo(5, 6);
    // Four items at $1.00, one clamped to its $0.20: within the pool (no claim above a reservation is written).
    expect(settled).toBeCloseTo(4.2, 6);
    expect(settled).toBeLessThanOrEqual(5);
    for (const r of ledger.reservations.values()) expect(r.entry.pool).toBe(String(RUN_ID));

    // gather: the pool's figures and the 25 items skipped for lack of budget, in the summary and the report output.
    const gatherJob = wf.jobs["gather"]!;
    expect(gatherJob.permissions).toMatchObject({ contents: "read" });
    const gather = await runJob("gather", actionInputs(gatherJob, { ...base, needs: { ...needs, publish: { result: "success", outputs: {} } } }));
    expect(errors(gather), gather.log + gather.stderr).toEqual([]);
    expect(gather.summary).toContain("#### Budget pool (max-total-cost-usd 5)");
    expect(gather.summary).toContain("$4.20 spent, $0.00 reserved, $0.80 left.");
    const line = gather.summary.split("\n").find((l) => l.includes("skipped for lack of budget:"))!;
    expect(line).toMatch(/^25 items skipped for lack of budget: /);
    const named = line.replace(/^.*: /, "").replace(/\.$/, "").split(", ");
    expect(named).toHaveLength(25);
    const ranItems = new Set(matrix.filter((_, i) => runs[i]!.outputs.conclusion !== "skipped").map((m) => String(m["item"])));
    expect(named.filter((n) => ranItems.has(n))).toEqual([]);
    const report = JSON.parse(jobOutputs(gatherJob, { gather })["report"]!) as { item: string; conclusion: string; error?: string }[];
    expect(report.filter((r) => r.conclusion === "skipped" && /lack of budget/.test(r.error ?? "")).map((r) => r.item).sort()).toEqual([...named].sort());
  });
});
