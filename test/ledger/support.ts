/**
 * What the ledger's end-to-end tests through dist/ share: a `codex` on PATH that is a bash script making two
 * model requests through the gateway, a stub model billing $0.50 a request at MODEL_PRICES, the ledger ref
 * read back as tally entries, and (for the workflow simulations) the fake GitHub + Actions results service
 * and a `runJob` that runs one job's step in a fresh clone.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readCommits } from "../../src/ledger/tally.js";
import { interpolate, type Job } from "../fanout/workflow-sim.js";
import { FIXTURE_REPO, writeEvent, type BuiltEvent } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { cloneRepo, createRepo, git, type GitRepoFixture } from "../support/git-fixtures.js";
import { runStep, type StepResult } from "../support/harness.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";

export const LEDGER = "refs/agent-runner/ledger";
/** $250 per million tokens each way: with the stub's 1,000 + 1,000 tokens an answer, $0.50 a request. */
export const MODEL_PRICES = "stub-model: {input: 250, output: 250}";
export const OPENAI_KEY = "sk-stub-model-key-0123456789abcdef";

/** A `codex` on PATH that is a script: two model requests to the gateway it was given (each one's HTTP status printed), then done. */
export function fakeCodex(prefix: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), `${prefix}-codex-`));
  mkdirSync(path.join(root, "bin"));
  const file = path.join(root, "bin", "codex");
  writeFileSync(
    file,
    `#!/bin/bash
B=$(grep -o 'http://127.0.0.1:[0-9]*/v1' "$CODEX_HOME/config.toml" | head -1)
for i in 1 2; do
  curl -sS --noproxy '*' -o /dev/null -w '%{http_code}\\n' -m 30 -H "Authorization: Bearer $OPENAI_API_KEY" -H 'content-type: application/json' \\
    -d '{"model":"stub-model","input":"spend","max_output_tokens":2000}' "$B/responses"
done
echo done
`,
  );
  chmodSync(file, 0o755);
  return path.join(root, "bin");
}

/** 1,000 input and 1,000 output tokens per answer: $0.50 a request at MODEL_PRICES. */
export function startSpendStub(): Promise<StubModel> {
  return startStubModel([], { usage: { inputTokens: 1000, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1000 } });
}

/** The ledger ref of `origin`, read back as the action reads it (tally.ts; unsigned commits accepted). */
export async function ledgerEntries(origin: string) {
  const out = await git(origin, ["log", "--format=%H%x1f%P%x1f%an%x1f%cI%x1f%B%x1e", LEDGER]);
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

/** A job's `outputs:` evaluated over its steps' outputs, as the next job's `needs.<job>.outputs` sees them. */
export function jobOutputs(job: Job, steps: Record<string, StepResult>): Record<string, string> {
  const ctx = { steps: Object.fromEntries(Object.entries(steps).map(([id, s]) => [id, { outputs: s.outputs }])) };
  return Object.fromEntries(Object.entries(job.outputs ?? {}).map(([k, v]) => [k, interpolate(v, ctx)]));
}

/** The world a simulated workflow's jobs run in: FIXTURE_REPO on the fake GitHub, its results service, the stub model, the fake codex. */
export interface LedgerWorld {
  repo: GitRepoFixture;
  results: FakeActionsResults;
  gh: FakeGitHub;
  stub: StubModel;
  token: string;
  /** One job's step ("main") in a fresh clone, as run `runId`'s job `job`, with the world's event and fake codex. */
  runJob(runId: number, job: string, inputs: Record<string, string>): Promise<StepResult>;
  close(): Promise<void>;
}

export async function startLedgerWorld(opts: {
  token: string;
  /** Names the temporary folders (codex, event). */
  prefix: string;
  event: BuiltEvent;
  /** Seeds the event on the fake GitHub (an `issue_comment` the action reads back). */
  seedEvent?: boolean;
  /** Extra environment of every job (GITHUB_WORKFLOW_REF, the test clock...). */
  env: Record<string, string>;
}): Promise<LedgerWorld> {
  const repo = await createRepo({ files: { "README.md": "# Demo\n" } });
  const results = await startFakeActionsResults({ repository: FIXTURE_REPO });
  const gh = await startFakeGitHub({ token: opts.token, results, repo: { fullName: FIXTURE_REPO, gitDir: repo.origin, collaborators: { alice: "write" } } });
  if (opts.seedEvent) gh.seedEvent(opts.event);
  const { env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), `${opts.prefix}-event-`)), opts.event);
  const stub = await startSpendStub();
  const bin = fakeCodex(opts.prefix);
  return {
    repo,
    results,
    gh,
    stub,
    token: opts.token,
    async runJob(runId, job, inputs) {
      const ws = await cloneRepo(repo.origin);
      return runStep("main", {
        workspace: ws,
        inputs,
        githubToken: opts.token,
        env: {
          ...eventEnv,
          ...results.runtimeEnv({ runId, runAttempt: 1, job, repository: FIXTURE_REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }),
          PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
          ...opts.env,
        },
      });
    },
    async close() {
      await gh.close();
      await results.close();
      await stub.close();
      await repo.cleanup();
    },
  };
}

