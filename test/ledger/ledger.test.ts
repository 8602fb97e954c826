/**
 * The ledger against the fake GitHub, in process: real HTTP through the
 * action's Octokit, real commits in the repository's bare origin, the fake's
 * refs refusing non-fast-forward moves as GitHub does.
 * - 20 runs reserve at once under max-daily-cost-usd 10: the compare-and-swap
 *   retries (GitHub refused moves), the reservations and the settled total stay within 10.
 * - The next UTC day starts from zero.
 * - A tampered entry (pushed, not made through the API; malformed JSON; a
 *   settlement of a reservation that does not exist) is reported and counted as spent.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitHubApi } from "../../src/github/api.js";
import { createOctokit } from "../../src/github/client.js";
import { reserve, settle, type AdmissionRequest } from "../../src/ledger/admission.js";
import { entryMessage, LEDGER_REF, type Reservation } from "../../src/ledger/entry.js";
import { GitHubLedger } from "../../src/ledger/ledger.js";
import { dailyCheck, tally } from "../../src/ledger/tally.js";
import type { Logger } from "../../src/logger.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { createRepo, git, type GitRepoFixture } from "../support/git-fixtures.js";

const quiet: Logger = { debug() {}, info() {}, warning() {}, error() {} } as unknown as Logger;
let gh: FakeGitHub;
let repo: GitRepoFixture;

beforeAll(async () => {
  repo = await createRepo();
  gh = await startFakeGitHub({ repo: { fullName: "octo/repo", gitDir: repo.origin } });
});
afterAll(async () => {
  await gh?.close();
  await repo?.cleanup();
});

async function ledger(): Promise<GitHubLedger> {
  const api = new GitHubApi(await createOctokit({ token: gh.token, apiUrl: gh.url, log: quiet }), { owner: "octo", name: "repo", fullName: "octo/repo" });
  return new GitHubLedger(api);
}

const DAY1 = new Date("2031-03-04T10:00:00Z");
const request = (now: Date, run: string, workflow = "octo/repo/.github/workflows/triage.yml"): AdmissionRequest => ({
  now,
  run,
  workflow,
  runCapUsd: 1.5,
  daily: { capUsd: 10, scope: "workflow" },
  expires: new Date(now.getTime() + 3600_000),
  id: randomUUID(),
});

async function dayTally(now: Date, workflow = "octo/repo/.github/workflows/triage.yml") {
  const read = await (await ledger()).read(new Date(now.getTime() - 25 * 3600_000));
  return { read, t: tally(read.ledger, dailyCheck(10, "workflow", workflow, now), now, 1.5) };
}

describe("the budget ledger on the fake GitHub", () => {
  it("20 runs reserving at once stay within max-daily-cost-usd; GitHub's refusals make them retry; settled total ≤ 10", { timeout: 900_000 }, async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const l = await ledger();
        const a = await reserve(l, request(DAY1, `run-${i}`));
        // Each admitted run spends about $1 (at most its reservation: the gateway holds it there) and settles.
        if (a.kind === "reserved") await settle(l, a.reservation, { costUsd: Math.min(1, a.reservation.amountUsd), tokens: 1000 }, DAY1);
        return a;
      }),
    );
    const admitted = results.filter((r) => r.kind === "reserved");
    const skipped = results.filter((r) => r.kind === "no-room");
    expect(admitted.length + skipped.length).toBe(20);
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped[0]!.kind === "no-room" && skipped[0]!.message).toMatch(/nothing is left in the daily budget of workflow .*triage\.yml for 2031-03-04 \(UTC\)/);
    // Concurrent writers collided: GitHub (the fake) refused non-fast-forward moves, and they retried.
    const refused = gh.requests.filter((r) => r.method === "PATCH" && r.path.endsWith("/git/refs/agent-runner/ledger") && r.status === 422);
    expect(refused.length).toBeGreaterThan(0);
    expect(results.some((r) => r.rounds > 1)).toBe(true);
    // What the ledger holds, read back as plain git from the origin.
    const { read, t } = await dayTally(DAY1);
    expect(read.ledger.rejected).toEqual([]);
    expect(read.ledger.reservations.size).toBe(admitted.length);
    expect(read.ledger.settlements.length).toBe(admitted.length);
    const settled = read.ledger.settlements.reduce((s, x) => s + x.entry.amountUsd, 0);
    expect(settled).toBeLessThanOrEqual(10);
    expect(settled).toBeGreaterThan(6);
    expect(t.reservedUsd).toBe(0);
    const log = await git(repo.origin, ["log", "--format=%s", LEDGER_REF]);
    expect(log.split("\n").filter((l) => l.startsWith("agent-runner ledger: reserve"))).toHaveLength(admitted.length);
  });

  it("the next UTC day starts from zero", async () => {
    const { t: today } = await dayTally(DAY1);
    // The day holds the settled runs of the test before (at least 6 of them at $1).
    expect(today.spentUsd).toBeGreaterThan(6);
    const nextDay = new Date("2031-03-05T00:00:05Z");
    const a = await reserve(await ledger(), request(nextDay, "run-next-day"));
    expect(a.kind).toBe("reserved");
    expect(a.tallies[0]).toMatchObject({ spentUsd: 0, reservedUsd: 0, leftUsd: 10 });
    expect(a.kind === "reserved" && a.reservation.amountUsd).toBe(1.5);
    // Another workflow's day is its own (ledger-scope: workflow).
    const other = await reserve(await ledger(), request(DAY1, "run-other", "octo/repo/.github/workflows/other.yml"));
    expect(other.tallies[0]!.spentUsd).toBe(0);
  });

  it("an unsettled reservation counts until it expires, then no more", async () => {
    const day = new Date("2031-04-01T08:00:00Z");
    const a = await reserve(await ledger(), { ...request(day, "killed-job"), expires: new Date(day.getTime() + 60_000) });
    expect(a.kind).toBe("reserved");
    expect((await dayTally(new Date(day.getTime() + 30_000))).t.reservedUsd).toBe(1.5);
    expect((await dayTally(new Date(day.getTime() + 120_000))).t).toMatchObject({ reservedUsd: 0, spentUsd: 0, leftUsd: 10 });
  });

  it("tampered entries are reported and counted as spent, never as credit", async () => {
    const day = new Date("2031-05-02T09:00:00Z");
    const before = (await dayTally(day)).t;
    expect(before.spentUsd).toBe(0);
    // Someone with push access appends, by git, a settlement crediting the day, a malformed entry and an orphan settlement.
    const head = (await git(repo.origin, ["rev-parse", LEDGER_REF])).trim();
    const tree = (await git(repo.origin, ["rev-parse", `${head}^{tree}`])).trim();
    const forged: Reservation = { v: 1, kind: "reserve", id: "forged", run: "x", workflow: "octo/repo/.github/workflows/triage.yml", amountUsd: 0, time: day.toISOString(), expires: day.toISOString() };
    const env = { GIT_AUTHOR_NAME: "mallory", GIT_AUTHOR_EMAIL: "m@example.com", GIT_COMMITTER_NAME: "mallory", GIT_COMMITTER_EMAIL: "m@example.com", GIT_COMMITTER_DATE: day.toISOString() };
    const c1 = (await git(repo.origin, ["commit-tree", tree, "-p", head], { env, input: entryMessage(forged) })).trim();
    const c2 = (await git(repo.origin, ["commit-tree", tree, "-p", c1], { env, input: 'agent-runner ledger: settle\n\n{"amountUsd": 0.5, "kind": "settle"' })).trim();
    await git(repo.origin, ["update-ref", LEDGER_REF, c2, head]);
    const { read, t } = await dayTally(day);
    expect(read.ledger.rejected.map((r) => r.sha).sort()).toEqual([c1, c2].sort());
    expect(read.ledger.rejected.find((r) => r.sha === c1)!.problem).toMatch(/not signed by GitHub/);
    expect(read.ledger.rejected.find((r) => r.sha === c2)!.problem).toMatch(/not signed by GitHub/);
    // Each counts as the most one reservation of this workflow can hold (its max-cost-usd, 1.5), or what it claims if more.
    expect(t.rejectedUsd).toBe(3);
    expect(t.spentUsd).toBe(3);
    expect(t.leftUsd).toBe(7);
    // An admission on that day reports them and reserves from what is left.
    const a = await reserve(await ledger(), request(day, "after-tamper"));
    expect(a.rejected).toHaveLength(2);
    expect(a.tallies[0]).toMatchObject({ rejectedUsd: 3, leftUsd: 7 });
    // A settlement through the API (signed, by the bot) of a reservation the ledger does not hold is rejected too.
    const l = await ledger();
    const orphan = await settle(l, { ...forged, id: "no-such-reservation", time: day.toISOString() }, { costUsd: 0 }, day);
    expect(orphan?.id).toBe("no-such-reservation");
    const after = await dayTally(day);
    expect(after.read.ledger.rejected.some((r) => /does not hold/.test(r.problem))).toBe(true);
    expect(after.t.rejectedUsd).toBe(4.5);
  });
});
