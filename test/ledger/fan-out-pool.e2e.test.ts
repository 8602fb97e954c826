/**
 * A fan-out's pool through dist/: .github/workflows/fan-out.yml simulated job
 * by job (test/fanout/workflow-sim.ts: each job's `with:` taken from the file
 * and evaluated), against the fake GitHub (its ref updates refuse
 * non-fast-forwards as GitHub does), the fake Actions results service and the
 * stub model. 12 items under `max-total-cost-usd: 5`, `max-cost-usd: 1.2`;
 * each item's agent is a `codex` that is a bash script making two model
 * requests through the gateway ($0.50 each by the stub's prices: about $1).
 *
 * As GitHub schedules it (`needs:` is per job): plan, then every item's
 * reserve job (contents: write; ten at a time), then every run job (read-only:
 * it reads its item's reservation from the ledger and takes it as its cap),
 * then every publish job (settles the reservation to the run artifact's
 * claim, never above the reservation), then gather (the pool's report).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errors } from "../artifacts/helpers.js";
import { actionInputs, callInputs, evalExpr, loadWorkflow, type Context } from "../fanout/workflow-sim.js";
import { buildEvent, FIXTURE_REPO } from "../support/events.js";
import type { StepResult } from "../support/harness.js";
import { jobOutputs, ledgerEntries, MODEL_PRICES, OPENAI_KEY, startLedgerWorld, type LedgerWorld } from "./support.js";

const TOKEN = "ghs_fanOutPoolToken0123456789abcdefABCDEFGH";
const REPO = FIXTURE_REPO;
const RUN_ID = 8800;
// Five items exhaust the pool; seven more are enough to be refused and named, and the first ten reserve
// at once, so their ref updates collide.
const ITEMS = 12;
const WORKFLOW_REF = `${REPO}/.github/workflows/nightly-triage.yml@refs/heads/main`;

let world: LedgerWorld;

beforeAll(async () => {
  world = await startLedgerWorld({
    token: TOKEN,
    prefix: "pool",
    event: buildEvent("schedule"),
    env: { GITHUB_WORKFLOW: "nightly triage", GITHUB_WORKFLOW_REF: WORKFLOW_REF },
  });
  for (let n = 1; n <= ITEMS; n++) world.gh.addIssue({ number: n, title: `Bug ${n}`, body: `Steps for bug ${n}.`, labels: [] });
});
afterAll(async () => {
  await world?.close();
});

/** One job of the fan-out's workflow run. */
function runJob(job: string, inputs: Record<string, string>): Promise<StepResult> {
  return world.runJob(RUN_ID, job, inputs);
}

/** `n` at a time, in order, as a matrix with max-parallel runs its jobs. */
async function inBatches<T, R>(list: T[], n: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < list.length; i += n) out.push(...(await Promise.all(list.slice(i, i + n).map(f))));
  return out;
}

describe("max-total-cost-usd: a fan-out of 12 items through fan-out.yml and dist/", () => {
  const wf = loadWorkflow();

  it("the items reserve from one pool of $5; the settled total stays within it; gather names the items skipped for lack of budget", { timeout: 900_000 }, async () => {
    const { gh, stub, results } = world;
    const base: Context = {
      inputs: callInputs(wf, {
        agent: "codex",
        "agent-version": "preinstalled",
        sandbox: "none",
        "base-url": `${stub.url}/v1`,
        model: "stub-model",
        "model-prices": MODEL_PRICES,
        "max-cost-usd": "1.2",
        "max-total-cost-usd": "5",
        items: JSON.stringify(Array.from({ length: ITEMS }, (_, i) => i + 1)),
        "max-items": ITEMS,
        prompt: "Triage this issue.",
        "threat-detection": "none",
        comment: "none",
        deliver: "none",
      }),
      secrets: { OPENAI_API_KEY: OPENAI_KEY },
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
    // $1.20 four times, then the last $0.20 of the pool: five items hold a reservation, seven find the pool spent.
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

    const ledger = await ledgerEntries(world.repo.origin);
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

    // gather: the pool's figures and the seven items skipped for lack of budget, in the summary and the report output.
    const gatherJob = wf.jobs["gather"]!;
    expect(gatherJob.permissions).toMatchObject({ contents: "read" });
    const gather = await runJob("gather", actionInputs(gatherJob, { ...base, needs: { ...needs, publish: { result: "success", outputs: {} } } }));
    expect(errors(gather), gather.log + gather.stderr).toEqual([]);
    expect(gather.summary).toContain("#### Budget pool (max-total-cost-usd 5)");
    expect(gather.summary).toContain("$4.20 spent, $0.00 reserved, $0.80 left.");
    const line = gather.summary.split("\n").find((l) => l.includes("skipped for lack of budget:"))!;
    expect(line).toMatch(new RegExp(`^${ITEMS - 5} items skipped for lack of budget: `));
    const named = line.replace(/^.*: /, "").replace(/\.$/, "").split(", ");
    expect(named).toHaveLength(ITEMS - 5);
    const ranItems = new Set(matrix.filter((_, i) => runs[i]!.outputs.conclusion !== "skipped").map((m) => String(m["item"])));
    expect(named.filter((n) => ranItems.has(n))).toEqual([]);
    const report = JSON.parse(jobOutputs(gatherJob, { gather })["report"]!) as { item: string; conclusion: string; error?: string }[];
    expect(report.filter((r) => r.conclusion === "skipped" && /lack of budget/.test(r.error ?? "")).map((r) => r.item).sort()).toEqual([...named].sort());
  });
});
