/**
 * Budgets across runs through dist/, against the fake GitHub (refs refuse
 * non-fast-forward moves) and the stub model: 20 steps (20 node processes of
 * dist/main.js) start at once, each a `codex` that is a bash script making two
 * model requests through the gateway ($0.50 each by the stub's usage and
 * `model-prices`: about $1 a run), under `max-daily-cost-usd: 10` with
 * `max-cost-usd: 1.5`. The ledger's settled total stays within 10 plus the
 * README's bound, the steps that found no room end `skipped` and never reach
 * the model (the stub's request log), and the next UTC day
 * (AGENT_RUNNER_TEST_NOW, the test-only clock) starts from zero; a forged
 * ledger commit is reported and counted as spent.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runStep, type StepResult } from "../support/harness.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { createRepo, git, type GitRepoFixture } from "../support/git-fixtures.js";
import type { StubModel } from "../support/stub-model.js";
import { fakeCodex, LEDGER, ledgerEntries, MODEL_PRICES, OPENAI_KEY, startSpendStub } from "./support.js";

const DAY = "2031-06-10T12:00:00Z";
const NEXT_DAY = "2031-06-11T00:01:00Z";
let gh: FakeGitHub;
let stub: StubModel;
let repo: GitRepoFixture;
let bin: string;

beforeAll(async () => {
  repo = await createRepo();
  gh = await startFakeGitHub({ repo: { fullName: "octo/repo", gitDir: repo.origin } });
  stub = await startSpendStub();
  bin = fakeCodex("ledger");
});
afterAll(async () => {
  await gh?.close();
  await stub?.close();
  await repo?.cleanup();
});

function step(now: string, env: Record<string, string> = {}): Promise<StepResult> {
  return runStep("main", {
    workspace: repo.dir,
    inputs: {
      agent: "codex",
      "agent-version": "preinstalled",
      prompt: "spend",
      sandbox: "none",
      comment: "none",
      "upload-artifacts": "false",
      "threat-detection": "none",
      "base-url": `${stub.url}/v1`,
      secrets: `OPENAI_API_KEY=${OPENAI_KEY}`,
      model: "stub-model",
      "model-prices": MODEL_PRICES,
      "max-cost-usd": "1.5",
      "max-daily-cost-usd": "10",
      "github-token": gh.token,
    },
    env: {
      PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
      GITHUB_API_URL: gh.url,
      GITHUB_REPOSITORY: "octo/repo",
      GITHUB_WORKFLOW_REF: "octo/repo/.github/workflows/triage.yml@refs/heads/main",
      AGENT_RUNNER_TEST: "1",
      AGENT_RUNNER_TEST_NOW: now,
      ...env,
    },
  });
}

/**
 * The README's bound (docs/budgets.md, "The bound"): what a run can spend past its cap is the input its
 * requests in flight were billed beyond the gateway's estimate (one token per 3 bytes of the body). The fake
 * codex's body is about 60 bytes (an estimate of 20 tokens) and the stub bills 1,000 input tokens: at most
 * 980 tokens at $250 per million past the cap for each of its two requests.
 */
const BOUND_PER_RUN = 2 * 980 * 250e-6;

describe("max-daily-cost-usd through dist/", () => {
  it("20 steps at once, about $1 each, under max-daily-cost-usd 10: the settled total stays within the cap and the bound, the rest end skipped without calling the model; the next day starts from zero", { timeout: 600_000 }, async () => {
    const steps = await Promise.all(Array.from({ length: 20 }, (_, i) => step(DAY, { GITHUB_RUN_ID: String(5000 + i) })));
    const skipped = steps.filter((s) => s.outputs.conclusion === "skipped");
    // Admitted: reserved and ran (a run admitted with less than a request needs is stopped by its gateway: budget-exceeded).
    const ran = steps.filter((s) => s.outputs.conclusion !== "skipped");
    for (const s of ran) expect(s.outputs.conclusion === "success" || s.outputs["budget-exceeded"] === "true", s.log.slice(-3000)).toBe(true);
    // Six reservations of $1.50, then the last $1.00 (down to the cent): at least seven ran.
    expect(ran.length).toBeGreaterThanOrEqual(7);
    expect(skipped.length).toBeGreaterThan(0);
    expect(ran.length + skipped.length).toBe(20);
    for (const s of skipped) {
      expect(s.log).toMatch(/Budget: nothing is left in the daily budget of workflow octo\/repo\/\.github\/workflows\/triage\.yml for 2031-06-10 \(UTC\)/);
      expect(s.log).not.toMatch(/Conclusion: success/);
      expect(s.outputs["budget-exceeded"]).toBe("true");
    }
    // Only admitted steps reached the model; the skipped ones never did.
    const admittedRuns = new Set(ran.map((s) => s.log));
    expect(admittedRuns.size).toBe(ran.length);
    expect(stub.modelRequests().length).toBeLessThanOrEqual(2 * ran.length);
    expect(stub.modelRequests().length).toBeGreaterThanOrEqual(2 * steps.filter((s) => s.outputs.conclusion === "success").length);
    const ledger = await ledgerEntries(repo.origin);
    expect(ledger.rejected).toEqual([]);
    expect(ledger.reservations.size).toBe(ran.length);
    expect(ledger.settlements).toHaveLength(ran.length);
    const settled = ledger.settlements.reduce((s, x) => s + x.entry.amountUsd, 0);
    // Each settled at the gateway's measured cost: $0.50 a request.
    expect(settled).toBeCloseTo(stub.modelRequests().length * 0.5, 6);
    const reservedOf = new Map([...ledger.reservations.values()].map((r) => [r.entry.id, r.entry.amountUsd]));
    const over = ledger.settlements.filter((s) => s.entry.amountUsd > reservedOf.get(s.entry.id)!);
    for (const s of over) expect(s.entry.amountUsd - reservedOf.get(s.entry.id)!).toBeLessThanOrEqual(BOUND_PER_RUN);
    expect(settled).toBeLessThanOrEqual(10 + over.length * BOUND_PER_RUN);
    expect(settled).toBeGreaterThanOrEqual(6);
    // The ledger ref never reaches the workspace's repository: nothing fetches it there.
    expect(await git(repo.dir, ["for-each-ref", "refs/agent-runner"])).toBe("");

    // The next UTC day: nothing spent yet, the whole cap is there; a forged commit (pushed, not made by the action) is reported and counted.
    const head = (await git(repo.origin, ["rev-parse", LEDGER])).trim();
    const tree = (await git(repo.origin, ["rev-parse", `${head}^{tree}`])).trim();
    const env = { GIT_AUTHOR_NAME: "mallory", GIT_AUTHOR_EMAIL: "m@example.com", GIT_COMMITTER_NAME: "mallory", GIT_COMMITTER_EMAIL: "m@example.com", GIT_COMMITTER_DATE: NEXT_DAY };
    const forged = (await git(repo.origin, ["commit-tree", tree, "-p", head], { env, input: 'agent-runner ledger: settle\n\n{"v":1,"kind":"settle","amountUsd":0}' })).trim();
    await git(repo.origin, ["update-ref", LEDGER, forged, head]);
    const before = stub.modelRequests().length;
    const next = await step(NEXT_DAY, { GITHUB_RUN_ID: "6000" });
    expect(next.outputs.conclusion, next.log).toBe("success");
    expect(next.log).toContain(`Budget ledger: entry ${forged.slice(0, 12)} is rejected`);
    expect(next.log).toMatch(/reserved \$1\.50 \(max-daily-cost-usd 10: \$1\.50 spent \(\$1\.50 of it for rejected entries\), \$0\.00 reserved, \$8\.50 left/);
    expect(stub.modelRequests().length - before).toBe(2);
    expect(existsSync(repo.dir)).toBe(true);
  });
});
