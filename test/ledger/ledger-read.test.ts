/**
 * Reading the ledger against a fake API (commits listed in pages, as GitHub
 * does), attacked by whoever can push the ref:
 * - junk commits dated long ago on top of today's entries do not stop the read
 *   before today's entries (only a valid entry's own time decides where to stop);
 * - rejected entries count in every check whatever time they claim;
 * - a ledger longer than the read's bound with no valid entry older than the
 *   window refuses admission (fail closed) instead of counting the rest as nothing.
 * - the test clock is honoured only with AGENT_RUNNER_TEST=1.
 */
import { describe, expect, it } from "vitest";
import { readHostContext } from "../../src/config/host.js";
import type { GitHubApi } from "../../src/github/api.js";
import { readSince, reserve, type AdmissionRequest } from "../../src/ledger/admission.js";
import { entryMessage, type LedgerEntry } from "../../src/ledger/entry.js";
import { GitHubLedger, MAX_READ } from "../../src/ledger/ledger.js";
import { dailyCheck, poolCheck, readCommits, tally, type LedgerCommit } from "../../src/ledger/tally.js";

type Listed = LedgerCommit & { tree: string; verified: boolean };

/** A ledger chain, built oldest first; the fake lists it newest first, in pages, like GET /commits. */
class FakeLedgerApi {
  chain: Listed[] = [];
  pagesRead = 0;
  add(message: string, o: { author?: string; verified?: boolean; time?: string } = {}): this {
    const parent = this.chain[this.chain.length - 1];
    this.chain.push({
      sha: `c${String(this.chain.length).padStart(39, "0")}`,
      parents: parent ? [parent.sha] : [],
      tree: "t",
      message,
      author: o.author ?? "github-actions[bot]",
      verified: o.verified ?? true,
      time: o.time ?? "2031-03-04T09:00:00Z",
    });
    return this;
  }
  async refHead(): Promise<string | undefined> {
    return this.chain[this.chain.length - 1]?.sha;
  }
  async commitsFrom(sha: string, page: number, perPage: number): Promise<Listed[]> {
    this.pagesRead++;
    const from = this.chain.findIndex((c) => c.sha === sha);
    const newestFirst = this.chain.slice(0, from + 1).reverse();
    return newestFirst.slice((page - 1) * perPage, page * perPage);
  }
  async createCommit(): Promise<{ sha: string }> {
    return { sha: "new" };
  }
  async fastForwardRef(): Promise<void> {}
}

const NOW = new Date("2031-03-04T12:00:00Z");
const WORKFLOW = "octo/repo/.github/workflows/triage.yml";
const reservation = (id: string, amountUsd: number, time: string): LedgerEntry => ({
  v: 1,
  kind: "reserve",
  id,
  run: `${id}-1`,
  workflow: WORKFLOW,
  amountUsd,
  time,
  expires: new Date(Date.parse(time) + 3600_000).toISOString(),
});
const settlement = (id: string, amountUsd: number, time: string): LedgerEntry => ({ v: 1, kind: "settle", id, run: `${id}-1`, workflow: WORKFLOW, amountUsd, time });
const request = (): AdmissionRequest => ({
  now: NOW,
  run: "me-1",
  workflow: WORKFLOW,
  runCapUsd: 1,
  daily: { capUsd: 10, scope: "workflow" },
  expires: new Date(NOW.getTime() + 3600_000),
  id: "mine",
});
const junk = (i: number) => `junk ${i}\n\n{"amountUsd": 0}`;
const ledgerOf = (api: FakeLedgerApi) => new GitHubLedger(api as unknown as GitHubApi, async () => {});

describe("reading the budget ledger, attacked by its writers", () => {
  it("junk commits dated 2000-01-01 on top do not stop the read before today's entries", async () => {
    const api = new FakeLedgerApi().add("agent-runner ledger: start\n");
    api.add(entryMessage(reservation("old", 3, "2031-03-01T09:00:00.000Z")));
    api.add(entryMessage(reservation("today", 8, "2031-03-04T09:00:00.000Z")));
    api.add(entryMessage(settlement("today", 8, "2031-03-04T10:00:00.000Z")));
    for (let i = 0; i < 150; i++) api.add(junk(i), { author: "mallory", verified: false, time: "2000-01-01T00:00:00Z" });
    const read = await ledgerOf(api).read(readSince(NOW));
    expect(read.ledger.reservations.has("today")).toBe(true);
    expect(read.truncated).toBe(false);
    expect(read.ledger.rejected).toHaveLength(150);
    const t = tally(read.ledger, dailyCheck(10, "workflow", WORKFLOW, NOW), NOW, 1);
    // $8 settled today plus 150 rejected entries at $1 each: nothing is left.
    expect(t.spentUsd).toBe(8 + 150);
    expect(t.leftUsd).toBe(0);
    const admission = await reserve(ledgerOf(api), request());
    expect(admission.kind).toBe("no-room");
  });

  it("stops at the first valid entry older than the window, never at a junk commit's date", async () => {
    const api = new FakeLedgerApi().add("agent-runner ledger: start\n");
    for (let i = 0; i < 250; i++) api.add(entryMessage(reservation(`old${i}`, 0.01, "2031-02-01T09:00:00.000Z")));
    api.add(junk(0), { author: "mallory", verified: false, time: "2031-02-01T00:00:00Z" });
    for (let i = 0; i < 150; i++) api.add(entryMessage(reservation(`r${i}`, 0.01, "2031-03-04T09:00:00.000Z")));
    const read = await ledgerOf(api).read(readSince(NOW));
    // 150 + 1 + the old entries on page 2: two pages, not all three.
    expect(api.pagesRead).toBe(2);
    expect(read.truncated).toBe(false);
    expect(read.ledger.rejected.map((r) => r.problem)).toEqual([expect.stringMatching(/not signed by GitHub/)]);
  });

  it("rejected entries count in every check whatever time they claim; below the window's edge they are not read", () => {
    const commit = (sha: string, message: string, o: Partial<LedgerCommit> = {}): LedgerCommit => ({ sha, parents: ["p"], message, author: "github-actions[bot]", verified: true, time: "2031-03-04T09:00:00Z", ...o });
    const ledger = readCommits(
      [
        commit("a", entryMessage(reservation("claims-old", 5, "2000-01-01T00:00:00.000Z")), { author: "mallory", time: "2000-01-01T00:00:00Z" }),
        commit("b", entryMessage(reservation("edge", 1, "2031-03-01T00:00:00.000Z"))),
        commit("c", junk(1), { verified: false }),
      ],
      false,
      { since: readSince(NOW) },
    );
    expect(ledger.rejected.map((r) => r.sha)).toEqual(["a"]);
    expect(tally(ledger, dailyCheck(10, "workflow", WORKFLOW, NOW), NOW, 1).rejectedUsd).toBe(5);
    expect(tally(ledger, poolCheck(10, "900"), NOW, 1).rejectedUsd).toBe(5);
  });

  it("a ledger longer than the read's bound with no valid entry older than the window refuses admission", async () => {
    const api = new FakeLedgerApi().add("agent-runner ledger: start\n");
    api.add(entryMessage(reservation("today", 0.5, "2031-03-04T09:00:00.000Z")));
    for (let i = 0; i < MAX_READ + 5; i++) api.add(junk(i), { author: "mallory", verified: false, time: "2000-01-01T00:00:00Z" });
    const read = await ledgerOf(api).read(readSince(NOW));
    expect(read.complete).toBe(false);
    expect(read.truncated).toBe(true);
    // Even with a run cap too small for the junk to fill the budget, nothing unread counts as free.
    const admission = await reserve(ledgerOf(api), { ...request(), runCapUsd: 0 });
    expect(admission.kind).toBe("no-room");
    expect(admission.kind === "no-room" && admission.message).toMatch(
      new RegExp(`refs/agent-runner/ledger\\) is too long to check: its newest ${MAX_READ} commits hold no valid entry older than 2031-03-03T11:00:00.000Z`),
    );
  });
});

describe("the test clock (AGENT_RUNNER_TEST_NOW)", () => {
  it("is ignored unless AGENT_RUNNER_TEST=1 is set too: a stray value in a workflow does not move the ledger's day", () => {
    const now = "2099-01-01T00:00:00Z";
    expect(readHostContext({ GITHUB_ACTIONS: "true", AGENT_RUNNER_TEST_NOW: now }).now).toBeUndefined();
    expect(readHostContext({ AGENT_RUNNER_TEST: "true", AGENT_RUNNER_TEST_NOW: now }).now).toBeUndefined();
    expect(readHostContext({ AGENT_RUNNER_TEST: "1", AGENT_RUNNER_TEST_NOW: now }).now).toBe(now);
  });
});
