/**
 * Gather reads each shard job's results folder as hostile input (any job of
 * the workflow run can upload an artifact): a record that claims another
 * shard or other commits, a missing record, a failed run and an APPROVE are
 * each a shard not reviewed, with the reason.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { legFromDir } from "../../src/fanout/review.js";
import { mergeReviews } from "../../src/review/merge.js";
import { DiffLines } from "../../src/safe-outputs/diff-lines.js";

const FROM = "1".repeat(40);
const HEAD = "2".repeat(40);
const shard = { index: 2, files: ["src/a.ts"], lines: 10 };

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function resultsDir(o: { record?: unknown; conclusion?: string; request?: unknown; budget?: string }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "review-leg-"));
  made.push(dir);
  if (o.record !== undefined) writeFileSync(path.join(dir, "review-shard.json"), JSON.stringify(o.record));
  // As the runner writes a budget stop: failed, budgetExceeded, the reason naming the budget.
  const budget = o.budget ? { budgetExceeded: true, reason: o.budget } : {};
  writeFileSync(path.join(dir, "result.json"), JSON.stringify({ conclusion: o.conclusion ?? "success", durationMs: 5, usage: { costUsd: 0.01 }, ...budget }));
  mkdirSync(path.join(dir, "outputs"));
  if (o.request) writeFileSync(path.join(dir, "outputs", "safe-outputs.jsonl"), JSON.stringify(o.request) + "\n");
  return dir;
}

const review = { type: "create_pull_request_review", body: "ok", event: "COMMENT", comments: [{ path: "src/a.ts", line: 1, body: "x", severity: "nit" }] };

describe("a shard job's results, as gather reads them", () => {
  it("takes a record of this shard and these commits with a valid review", async () => {
    const leg = await legFromDir(resultsDir({ record: { version: 1, shard: 2, shards: 3, from: FROM, head: HEAD }, request: review }), "a", shard, { from: FROM, head: HEAD });
    expect(leg.status).toBe("reviewed");
    expect(leg.review?.comments).toHaveLength(1);
    expect(leg.costUsd).toBe(0.01);
  });

  it("refuses an artifact whose record claims another shard or other commits, or has none", async () => {
    for (const record of [{ version: 1, shard: 1, shards: 3, from: FROM, head: HEAD }, { version: 1, shard: 2, shards: 3, from: HEAD, head: HEAD }, undefined]) {
      const leg = await legFromDir(resultsDir({ ...(record ? { record } : {}), request: review }), "forged", shard, { from: FROM, head: HEAD });
      expect(leg.status).toBe("refused");
      expect(leg.review).toBeUndefined();
    }
  });

  it("refuses an APPROVE, and counts a failed run or no review request as not reviewed", async () => {
    const record = { version: 1, shard: 2, shards: 3, from: FROM, head: HEAD };
    const approve = await legFromDir(resultsDir({ record, request: { ...review, event: "APPROVE" } }), "a", shard, { from: FROM, head: HEAD });
    expect(approve).toMatchObject({ status: "failed" });
    expect(approve.reason).toMatch(/never approves|COMMENT or REQUEST_CHANGES/);
    expect(await legFromDir(resultsDir({ record, conclusion: "failure", request: review }), "a", shard, { from: FROM, head: HEAD })).toMatchObject({ status: "failed" });
    expect((await legFromDir(resultsDir({ record }), "a", shard, { from: FROM, head: HEAD })).reason).toMatch(/asked for no review/);
  });

  it("names a shard its budget stopped as 'ran out of budget', not as failed, keeping what it found before the stop", async () => {
    const record = { version: 1, shard: 2, shards: 3, from: FROM, head: HEAD };
    const stop = "Budget exceeded: $1.02 spent, max-cost-usd is 1";
    const leg = await legFromDir(resultsDir({ record, conclusion: "failure", budget: stop, request: review }), "a", shard, { from: FROM, head: HEAD });
    expect(leg).toMatchObject({ status: "out-of-budget", costUsd: 0.01 });
    expect(leg.reason).toContain(stop);
    const without = await legFromDir(resultsDir({ record, conclusion: "failure", budget: stop }), "a", shard, { from: FROM, head: HEAD });
    expect(without.status).toBe("out-of-budget");
    const other = { shard: { index: 1, files: ["src/b.ts"], lines: 1 }, status: "reviewed" as const, review: { body: "fine", event: "COMMENT" as const, comments: [] } };
    const diff = new DiffLines([{ filename: "src/a.ts", patch: "@@ -0,0 +1,2 @@\n+a\n+b" }]);
    const m = mergeReviews({ legs: [other, leg, without], prDiff: diff, rangeDiff: diff, earlier: [], maxComments: 5, canBlock: false, head: HEAD, scopeNote: "" });
    expect(m.conclusion).toBe("partial");
    expect(m.body).toContain("- **Shard 2** (ran out of budget: the shard's agent was stopped by its budget");
    expect(m.body).toMatch(/^\| 2 \|.*ran out of budget/m);
    expect(m.body).not.toMatch(/Shard 2\*\* \(failed/);
    expect(m.body).toContain("### Shard 2 (ran out of budget: what it found before the stop)");
    expect(m.comments.map((c) => [c.path, c.line])).toEqual([["src/a.ts", 1]]);
  });

  it("reads an 'incomplete' run (stopped before its time limit) as not reviewed, not as an unreadable artifact", async () => {
    const record = { version: 1, shard: 2, shards: 3, from: FROM, head: HEAD };
    const leg = await legFromDir(resultsDir({ record, conclusion: "incomplete", request: review }), "a", shard, { from: FROM, head: HEAD });
    expect(leg).toMatchObject({ status: "failed", reason: expect.stringContaining("ended 'incomplete'") });
  });

  it("refuses a review whose summary or a comment holds what looks like a secret (gather has no threat-detection stage)", async () => {
    const record = { version: 1, shard: 2, shards: 3, from: FROM, head: HEAD };
    const key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    for (const leaked of [{ ...review, body: `token: ${key}` }, { ...review, comments: [{ ...review.comments[0], body: `use ${key}` }] }]) {
      const leg = await legFromDir(resultsDir({ record, request: leaked }), "a", shard, { from: FROM, head: HEAD });
      expect(leg.status).toBe("refused");
      expect(leg.reason).toMatch(/looks like a secret \(gitleaks rule '[\w-]+'\)/);
      expect(leg.reason).not.toContain(key);
      expect(leg.review).toBeUndefined();
    }
  });
});
