// The budget ledger's added latency per run (issue #37): one reservation before the agent starts and
// one settlement after, against the fake GitHub (real HTTP, real commits in a bare origin), alone and
// with 5 runs reserving at once (compare-and-swap rounds). The fake answers in a few milliseconds; on
// GitHub each call is a round trip (about 100–300 ms), so multiply the API calls shown by that.
// The two-job flow (the reusable workflows): the reserve job's reservation, the run job's look-up of it
// and the publish job's look-up and settlement, each job with its own client (no read shared).
import { randomUUID } from "node:crypto";
import { GitHubApi } from "../../src/github/api.js";
import { createOctokit } from "../../src/github/client.js";
import { heldReservation, readSince, reserve, settle } from "../../src/ledger/admission.js";
import { legRun } from "../../src/ledger/legs.js";
import { GitHubLedger } from "../../src/ledger/ledger.js";
import type { Logger } from "../../src/logger.js";
import { startFakeGitHub } from "../../test/support/fake-github.js";
import { createRepo } from "../../test/support/git-fixtures.js";

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const quiet = { debug() {}, info() {}, warning() {}, error() {} } as unknown as Logger;
const repo = await createRepo();
const gh = await startFakeGitHub({ repo: { fullName: "octo/repo", gitDir: repo.origin } });

async function oneRun(now: Date): Promise<{ ms: number; calls: number; rounds: number }> {
  const api = new GitHubApi(await createOctokit({ token: gh.token, apiUrl: gh.url, log: quiet }), { owner: "octo", name: "repo", fullName: "octo/repo" });
  const ledger = new GitHubLedger(api);
  const started = Date.now();
  const a = await reserve(ledger, { now, run: randomUUID(), workflow: "bench.yml", runCapUsd: 0.01, daily: { capUsd: 1e6, scope: "workflow" }, expires: new Date(now.getTime() + 3600_000), id: randomUUID() });
  if (a.kind === "reserved") await settle(ledger, a.reservation, { costUsd: 0.01 }, now);
  return { ms: Date.now() - started, calls: ledger.calls, rounds: a.rounds };
}

/** reserve job, run job, publish job: each its own ledger handle, as each job is its own process. */
async function twoJobs(now: Date): Promise<{ ms: number; calls: number; rounds: number }> {
  const open = async () => new GitHubLedger(new GitHubApi(await createOctokit({ token: gh.token, apiUrl: gh.url, log: quiet }), { owner: "octo", name: "repo", fullName: "octo/repo" }));
  const run = legRun(randomUUID(), "octo/repo#1");
  const started = Date.now();
  const reserving = await open();
  const a = await reserve(reserving, { now, run, workflow: "bench.yml", runCapUsd: 0.01, daily: { capUsd: 1e6, scope: "workflow" }, expires: new Date(now.getTime() + 3600_000), id: randomUUID() });
  const running = await open();
  heldReservation((await running.read(readSince(now))).ledger, run, now, true);
  const publishing = await open();
  const held = heldReservation((await publishing.read(readSince(now))).ledger, run, now, false);
  if (held.kind === "held") await settle(publishing, held.reservation, { costUsd: 0.01 }, now);
  return { ms: Date.now() - started, calls: reserving.calls + running.calls + publishing.calls, rounds: a.rounds };
}

try {
  const now = new Date();
  await oneRun(now); // creates the ref
  const alone: Awaited<ReturnType<typeof oneRun>>[] = [];
  for (let i = 0; i < RUNS; i++) alone.push(await oneRun(now));
  const together = await Promise.all(Array.from({ length: 5 }, () => oneRun(now)));
  const line = (label: string, rs: typeof alone) =>
    `  ${label}: reserve + settle ${median(rs.map((r) => r.ms)).toFixed(0)} ms median (max ${Math.max(...rs.map((r) => r.ms))} ms), ${median(rs.map((r) => r.calls)).toFixed(0)} API calls, ${Math.max(...rs.map((r) => r.rounds))} round(s) at most`;
  console.log("\nBudget ledger (max-daily-cost-usd), added per run, against the fake GitHub:");
  console.log(line(`one run at a time (${RUNS} runs)`, alone));
  console.log(line("5 runs at once", together));
  const jobs: Awaited<ReturnType<typeof oneRun>>[] = [];
  for (let i = 0; i < RUNS; i++) jobs.push(await twoJobs(now));
  console.log(
    `  two-job flow (reserve job, run job's look-up, publish job's look-up and settlement; ${RUNS} runs): ${median(jobs.map((r) => r.ms)).toFixed(0)} ms median (max ${Math.max(...jobs.map((r) => r.ms))} ms), ${median(jobs.map((r) => r.calls)).toFixed(0)} API calls`,
  );
} finally {
  await gh.close();
  await repo.cleanup();
}
