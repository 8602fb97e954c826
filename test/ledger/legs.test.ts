/**
 * The two-job flow's parts that need no GitHub (the reusable workflows' reserve, run and publish jobs):
 * - the run and publish jobs find their leg's reservation on the ledger by its run key, never a number
 *   another job hands them; the newest live one for the run job, the unsettled one for the publish job;
 * - the publish job settles to the run artifact's claim, clamped to the reservation (the artifact is
 *   hostile); a missing or malformed claim counts as the whole reservation;
 * - gather's pool report: spent, reserved, left, and the plan's items that hold no reservation.
 * - `phase: reserve` is a budget's step only; the ledger's inputs are taken in every phase of the flow.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseSettings } from "../../src/config/parse.js";
import { isConfigurationError } from "../../src/errors.js";
import { heldReservation, settledClaim } from "../../src/ledger/admission.js";
import { entryMessage, type LedgerEntry, type Reservation } from "../../src/ledger/entry.js";
import { legRun } from "../../src/ledger/legs.js";
import { poolReport } from "../../src/ledger/pool.js";
import { readCommits, type LedgerCommit } from "../../src/ledger/tally.js";
import { poolSection, withPoolSkips, type ReportEntry } from "../../src/fanout/gather.js";

const NOW = new Date("2031-07-01T10:00:00Z");
const POOL = "8800";

/** A ledger of valid entries by the action's bot, given oldest first (listed newest first, as read). */
function ledgerOf(entries: LedgerEntry[], extra: LedgerCommit[] = []) {
  const commits: LedgerCommit[] = [{ sha: "root", parents: [], message: "agent-runner ledger: start\n", author: "github-actions[bot]", verified: true, time: NOW.toISOString() }];
  entries.forEach((e, i) => commits.push({ sha: `c${i}`, parents: [commits[commits.length - 1]!.sha], message: entryMessage(e), author: "github-actions[bot]", verified: true, time: NOW.toISOString() }));
  return readCommits([...extra, ...commits.reverse()], true);
}

function reservation(id: string, item: string, amountUsd: number, o: Partial<Reservation> = {}): Reservation {
  return {
    v: 1,
    kind: "reserve",
    id,
    run: legRun(POOL, item),
    workflow: "octo/repo/.github/workflows/triage.yml",
    pool: POOL,
    amountUsd,
    time: new Date(NOW.getTime() - 60_000).toISOString(),
    expires: new Date(NOW.getTime() + 3600_000).toISOString(),
    ...o,
  };
}

const settlement = (r: Reservation, amountUsd: number): LedgerEntry => ({ v: 1, kind: "settle", id: r.id, run: r.run, workflow: r.workflow, pool: r.pool!, amountUsd, time: NOW.toISOString() });

describe("a leg's reservation, found on the ledger", () => {
  it("the run job finds the newest live one; an expired or another leg's one is not its cap", () => {
    const old = reservation("r-old", "octo/repo#1", 1, { expires: new Date(NOW.getTime() - 1).toISOString() });
    const other = reservation("r-other", "octo/repo#2", 1);
    expect(heldReservation(ledgerOf([old, other]), legRun(POOL, "octo/repo#1"), NOW, true)).toEqual({ kind: "none" });
    const fresh = reservation("r-new", "octo/repo#1", 0.7);
    expect(heldReservation(ledgerOf([old, other, fresh]), legRun(POOL, "octo/repo#1"), NOW, true)).toEqual({ kind: "held", reservation: fresh });
    // The publish job settles an expired one too: the run did start on it.
    expect(heldReservation(ledgerOf([old]), legRun(POOL, "octo/repo#1"), NOW, false)).toEqual({ kind: "held", reservation: old });
  });

  it("the publish job run again finds its reservation settled, and settles nothing twice", () => {
    const r = reservation("r1", "octo/repo#3", 1.2);
    expect(heldReservation(ledgerOf([r, settlement(r, 1)]), legRun(POOL, "octo/repo#3"), NOW, false)).toEqual({ kind: "settled", reservation: r });
  });

  it("a leg's key is matched whole: #1's reservation is not #10's or #11's, nor #10's #1's; gather names #10 and #11 skipped", () => {
    const one = reservation("r1", "octo/repo#1", 1.2);
    const ten = reservation("r10", "octo/repo#10", 0.5);
    expect(heldReservation(ledgerOf([one]), legRun(POOL, "octo/repo#10"), NOW, true)).toEqual({ kind: "none" });
    expect(heldReservation(ledgerOf([one]), legRun(POOL, "octo/repo#11"), NOW, false)).toEqual({ kind: "none" });
    expect(heldReservation(ledgerOf([ten]), legRun(POOL, "octo/repo#1"), NOW, true)).toEqual({ kind: "none" });
    expect(poolReport(ledgerOf([one]), POOL, 5, NOW, ["octo/repo#1", "octo/repo#10", "octo/repo#11"]).skipped).toEqual(["octo/repo#10", "octo/repo#11"]);
  });

  it("a forged reservation (pushed, not made through the API) under the leg's key is not found: it is rejected", () => {
    const forged = reservation("r-forged", "octo/repo#4", 100);
    const read = ledgerOf([], [{ sha: "f1", parents: ["root"], message: entryMessage(forged), author: "mallory", verified: false, time: NOW.toISOString() }]);
    expect(read.rejected).toHaveLength(1);
    expect(heldReservation(read, legRun(POOL, "octo/repo#4"), NOW, true)).toEqual({ kind: "none" });
  });
});

describe("the publish job's settlement: the run artifact's claim, held to the reservation", () => {
  it("clamps a claim above the reservation and says from what", () => {
    expect(settledClaim(0.5, 0.2)).toEqual({ amountUsd: 0.2, clampedFrom: 0.5 });
    expect(settledClaim(1e9, 1.5)).toEqual({ amountUsd: 1.5, clampedFrom: 1e9 });
  });
  it("takes a claim within it as it is", () => {
    expect(settledClaim(0.73, 1.5)).toEqual({ amountUsd: 0.73 });
    expect(settledClaim(0, 1.5)).toEqual({ amountUsd: 0 });
  });
  it("counts a missing, negative or non-finite claim as the whole reservation", () => {
    for (const claim of [undefined, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(settledClaim(claim, 1.5)).toEqual({ amountUsd: 1.5 });
  });
});

describe("gather's pool report", () => {
  const items = ["octo/repo#1", "octo/repo#2", "octo/repo#3", "other/repo"];

  it("spent, reserved and left of this run's pool, and the items that hold no reservation in it", () => {
    const a = reservation("a", "octo/repo#1", 1.2);
    const b = reservation("b", "octo/repo#2", 0.8);
    // Another fan-out run's pool does not count here, nor name this run's items.
    const elsewhere = reservation("c", "octo/repo#3", 3, { pool: "9999", run: legRun("9999", "octo/repo#3") });
    const report = poolReport(ledgerOf([a, b, elsewhere, settlement(a, 1)]), POOL, 2, NOW, items);
    expect(report).toMatchObject({ capUsd: 2, spentUsd: 1, reservedUsd: 0.8, leftUsd: expect.closeTo(0.2, 9) as number, rejected: 0 });
    expect(report.skipped).toEqual(["octo/repo#3", "other/repo"]);
    const section = poolSection(report);
    expect(section).toContain("#### Budget pool (max-total-cost-usd 2)");
    expect(section).toContain("$1.00 spent, $0.80 reserved, $0.20 left.");
    expect(section).toContain("2 items skipped for lack of budget: octo/repo#3, other/repo.");
  });

  it("marks the skipped items' rows (they left no artifact) and leaves the others", () => {
    const row = (item: string, conclusion: ReportEntry["conclusion"]): ReportEntry => ({ item, key: item, conclusion, changedFiles: 0, files: [], delivery: "unknown" });
    const report = poolReport(ledgerOf([reservation("a", "octo/repo#1", 1)]), POOL, 1, NOW, items.slice(0, 2));
    const rows = withPoolSkips([row("octo/repo#1", "success"), row("octo/repo#2", "missing")], report);
    expect(rows[0]!.conclusion).toBe("success");
    expect(rows[1]).toMatchObject({ conclusion: "skipped", error: expect.stringMatching(/lack of budget/) as string });
  });

  it("a rejected entry counts as spent in the pool and is named in the section", () => {
    const forged = { sha: "f1", parents: ["root"], message: 'agent-runner ledger: settle\n\n{"amountUsd": 0.5}', author: "mallory", verified: false, time: NOW.toISOString() };
    const report = poolReport(ledgerOf([], [forged]), POOL, 2, NOW, []);
    expect(report).toMatchObject({ spentUsd: 0.5, rejectedUsd: 0.5, leftUsd: 1.5, rejected: 1 });
    expect(poolSection(report)).toContain("(1 ledger entry rejected and counted as spent: $0.50)");
    expect(poolSection(report)).toContain("No item was skipped for lack of budget.");
  });
});

describe("the ledger's inputs in the two-job flow", () => {
  const cwd = () => mkdtempSync(path.join(os.tmpdir(), "legs-parse-"));
  const problems = (raw: Record<string, string>): string[] => {
    try {
      parseSettings(raw, { cwd: cwd() });
      return [];
    } catch (e) {
      if (!isConfigurationError(e)) throw e;
      return e.message.split("\n");
    }
  };
  const budget = { agent: "codex", model: "gpt-4.1", "max-cost-usd": "1", "max-daily-cost-usd": "10" };

  it("phase reserve runs no agent (no prompt needed) and needs a budget to reserve", () => {
    expect(problems({ ...budget, phase: "reserve" })).toEqual([]);
    expect(parseSettings({ ...budget, phase: "reserve" }, { cwd: cwd() }).ledger).toEqual({ dailyCapUsd: 10, scope: "workflow" });
    expect(problems({ agent: "codex", phase: "reserve" }).join("\n")).toMatch(/Input 'phase': 'reserve' reserves a run's budget on the ledger: give 'max-daily-cost-usd' or 'max-total-cost-usd' too/);
  });

  it("run and publish take the budget too (the cap read from the ledger, the settlement); agent command is still refused", () => {
    expect(problems({ ...budget, phase: "run", prompt: "p" })).toEqual([]);
    expect(problems({ ...budget, phase: "publish" })).toEqual([]);
    expect(problems({ agent: "command", "agent-command": "true", prompt: "p", phase: "run", "max-total-cost-usd": "5" }).join("\n")).toMatch(/Input 'max-total-cost-usd': needs a model-backed agent/);
  });
});
