/**
 * `max-daily-cost-usd` in the two-job flow of .github/workflows/agent.yml, through dist/: each job's
 * `with:` taken from the file and evaluated (test/fanout/workflow-sim.ts), against the fake GitHub (refs
 * refuse non-fast-forward moves), the fake Actions results service and the stub model. Three `@agent`
 * comments, one workflow run each: reserve job (contents: write) → run job (read-only, capped at its
 * reservation read from the ledger) → publish job (settles it). The agent is a `codex` that is a bash
 * script making two model requests through the gateway ($0.50 each by the stub's prices).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errors } from "../artifacts/helpers.js";
import { actionInputs, callInputs, jobRuns, loadWorkflow, type Context } from "../fanout/workflow-sim.js";
import { buildEvent, FIXTURE_REPO } from "../support/events.js";
import { git } from "../support/git-fixtures.js";
import { jobOutputs, ledgerEntries, MODEL_PRICES, OPENAI_KEY, startLedgerWorld, type LedgerWorld } from "./support.js";

const TOKEN = "ghs_agentYmlLedgerToken0123456789abcdefABC";
const REPO = FIXTURE_REPO;
const NOW = "2031-08-01T12:00:00Z";
const WORKFLOW_REF = `${REPO}/.github/workflows/agent-call.yml@refs/heads/main`;

let world: LedgerWorld;

beforeAll(async () => {
  world = await startLedgerWorld({
    token: TOKEN,
    prefix: "agent-yml",
    event: buildEvent("issue_comment.issue"),
    seedEvent: true,
    env: { GITHUB_WORKFLOW_REF: WORKFLOW_REF, AGENT_RUNNER_TEST: "1", AGENT_RUNNER_TEST_NOW: NOW },
  });
});
afterAll(async () => {
  await world?.close();
});

describe("max-daily-cost-usd in agent.yml's two jobs, through dist/", () => {
  const wf = loadWorkflow(".github/workflows/agent.yml");

  it("the reserve job reserves, the run job is capped at the reservation it reads, the publish job settles; a third run finds nothing left and never starts", { timeout: 600_000 }, async () => {
    const reserveJob = wf.jobs["reserve"]!;
    const runJobDef = wf.jobs["run"]!;
    const publishJob = wf.jobs["publish"]!;
    // The shape that makes it safe: only the reserve and publish jobs write; the run job waits for the reserve job.
    expect(reserveJob.permissions).toMatchObject({ contents: "write" });
    expect(runJobDef.permissions).toMatchObject({ contents: "read" });
    expect(runJobDef.needs).toBe("reserve");
    expect(runJobDef.if).toContain("needs.reserve.outputs.conclusion != 'skipped'");
    expect(reserveJob.if).toContain("inputs.max-daily-cost-usd != ''");
    // A run job that died before it set its outputs (out of memory or disk) is still followed by the publish
    // job, which settles the reservation (in full, with no artifact); a run job that never ran is not.
    expect(jobRuns(publishJob, { needs: { run: { result: "failure", outputs: {} } } })).toBe(true);
    expect(jobRuns(publishJob, { needs: { run: { result: "success", outputs: { conclusion: "failure" } } } })).toBe(true);
    expect(jobRuns(publishJob, { needs: { run: { result: "skipped", outputs: {} } } })).toBe(false);
    expect(jobRuns(publishJob, { needs: { run: { result: "success", outputs: { conclusion: "skipped" } } } })).toBe(false);

    const { repo, results, stub, runJob } = world;
    const base: Context = {
      inputs: callInputs(wf, {
        agent: "codex",
        "agent-version": "preinstalled",
        sandbox: "none",
        "base-url": `${stub.url}/v1`,
        model: "stub-model",
        "model-prices": MODEL_PRICES,
        "max-cost-usd": "1.5",
        "max-daily-cost-usd": "2",
        "threat-detection": "none",
      }),
      secrets: { OPENAI_API_KEY: OPENAI_KEY },
      github: { token: TOKEN, repository: REPO },
    };

    const flow = async (runId: number) => {
      const reserve = await runJob(runId, "reserve", actionInputs(reserveJob, base));
      expect(errors(reserve), reserve.log + reserve.stderr).toEqual([]);
      const needs = { reserve: { result: "success", outputs: jobOutputs(reserveJob, { reserve }) } };
      const requests = stub.modelRequests().length;
      // The run job starts even when the reserve job found nothing (its `if:` would not let it): its own check refuses too.
      const run = await runJob(runId, "run", actionInputs(runJobDef, { ...base, needs }));
      expect(errors(run), run.log + run.stderr).toEqual([]);
      const runNeeds = { ...needs, run: { result: "success", outputs: jobOutputs(runJobDef, { agent: run }) } };
      const publish = run.outputs.conclusion === "skipped" ? undefined : await runJob(runId, "publish", actionInputs(publishJob, { ...base, needs: runNeeds }));
      return { reserve, needs, run, publish, requests: stub.modelRequests().length - requests };
    };

    // Run 1: $1.50 reserved of $2; the run spends $1.00 under that cap; the publish job settles $1.00.
    const one = await flow(9101);
    expect(one.reserve.log).toMatch(/Budget ledger: reserved \$1\.50 \(max-daily-cost-usd 2: \$0\.00 spent, \$0\.00 reserved, \$2\.00 left/);
    expect(one.needs.reserve.outputs["conclusion"]).toBe("success");
    expect(one.run.log).toMatch(/Budget ledger: looked up run 9101:octo-org\/octo-repo#7: held \$1\.50/);
    expect(one.run.outputs.conclusion).toBe("success");
    expect(one.requests).toBe(2);
    expect(one.publish!.log).toMatch(/Budget ledger: settled \$1\.00 of the \$1\.50 reserved/);
    expect(errors(one.publish!), one.publish!.log).toEqual([]);

    // "Re-run failed jobs" keeps the leg's key: a run job started again after its publish job settled finds the
    // reservation settled and does not start the agent (nobody would settle what it spent).
    const requestsBefore = stub.modelRequests().length;
    const rerun = await runJob(9101, "run", actionInputs(runJobDef, { ...base, needs: one.needs }));
    expect(rerun.outputs.conclusion, rerun.log).toBe("skipped");
    expect(rerun.log).toMatch(/reservation for this run \(9101:octo-org\/octo-repo#7\) is settled already/);
    expect(stub.modelRequests().length).toBe(requestsBefore);

    // Run 2: what is left ($1.00) is reserved, and is the run's cap (below its max-cost-usd of 1.5).
    const two = await flow(9102);
    expect(two.reserve.log).toMatch(/Budget ledger: reserved \$1\.00 \(max-daily-cost-usd 2: \$1\.00 spent, \$0\.00 reserved, \$1\.00 left/);
    expect(two.run.log).toMatch(/looked up run 9102:octo-org\/octo-repo#7: held \$1\.00/);
    expect(two.requests).toBeLessThanOrEqual(2);
    expect(two.publish!.log).toMatch(/Budget ledger: settled \$(0\.50|1\.00) of the \$1\.00 reserved/);

    // Run 3: nothing left. The reserve job ends skipped (the run job's `if:` holds it back); the run job's own check skips too.
    const three = await flow(9103);
    expect(three.reserve.log).toMatch(/Budget: nothing is left in the daily budget of workflow octo-org\/octo-repo\/\.github\/workflows\/agent-call\.yml for 2031-08-01 \(UTC\)/);
    expect(three.needs.reserve.outputs["conclusion"]).toBe("skipped");
    expect(three.run.outputs.conclusion).toBe("skipped");
    expect(three.run.log).toMatch(/holds no live reservation for this run \(9103:octo-org\/octo-repo#7\)/);
    expect(three.requests).toBe(0);
    expect(results.artifacts({ runId: 9103 })).toEqual([]);

    const read = await ledgerEntries(repo.origin);
    expect(read.rejected).toEqual([]);
    expect(read.reservations.size).toBe(2);
    expect(read.settlements).toHaveLength(2);
    const settled = read.settlements.reduce((s, x) => s + x.entry.amountUsd, 0);
    expect(settled).toBeLessThanOrEqual(2);
    // The workspace never gets the ledger ref.
    expect(await git(repo.dir, ["for-each-ref", "refs/agent-runner"])).toBe("");
  });
});
