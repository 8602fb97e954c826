import { describe, expect, it } from "vitest";
import { planShards, shardCount, type ShardFile } from "../../src/review/shards.js";
import { commentKey, mergeReviews, markedHead, reviewMarker, type Leg } from "../../src/review/merge.js";
import { DiffLines } from "../../src/safe-outputs/diff-lines.js";
import { splitDiff } from "../../src/review/diff.js";

function tree(dirs: number, filesPer: number, lines: (d: number, f: number) => number): ShardFile[] {
  const out: ShardFile[] = [];
  for (let d = 0; d < dirs; d++) for (let f = 0; f < filesPer; f++) out.push({ path: `pkg${d}/sub${f % 3}/file${f}.ts`, lines: lines(d, f) });
  return out;
}

describe("planShards", () => {
  it("splits 400 files / 30,000 lines into balanced shards, every file exactly once, none split", () => {
    const files = tree(20, 20, (d, f) => 50 + ((d * 7 + f * 13) % 50));
    const total = files.reduce((n, f) => n + f.lines, 0);
    const shards = planShards(files, { lines: 3000, files: 100 });
    expect(shards.length).toBe(shardCount(files, { lines: 3000, files: 100 }));
    expect(shards.length).toBeGreaterThanOrEqual(Math.ceil(total / 3000));
    const all = shards.flatMap((s) => s.files);
    expect(all.sort()).toEqual(files.map((f) => f.path).sort());
    expect(new Set(all).size).toBe(files.length);
    const max = Math.max(...shards.map((s) => s.lines));
    const min = Math.min(...shards.map((s) => s.lines));
    // Balanced by lines: no shard more than a third heavier than the lightest.
    expect(max / min).toBeLessThan(1.34);
    expect(shards.map((s) => s.index)).toEqual(shards.map((_, i) => i + 1));
  });

  it("is deterministic whatever order the files come in", () => {
    const files = tree(9, 11, (d, f) => (d + 1) * (f + 2));
    const a = planShards(files, { lines: 200, files: 30 });
    const b = planShards([...files].reverse(), { lines: 200, files: 30 });
    expect(b).toEqual(a);
  });

  it("keeps a directory whole while it fits a shard", () => {
    const files: ShardFile[] = [
      ...Array.from({ length: 5 }, (_, i) => ({ path: `a/x${i}.ts`, lines: 100 })),
      ...Array.from({ length: 5 }, (_, i) => ({ path: `b/y${i}.ts`, lines: 100 })),
    ];
    const shards = planShards(files, { lines: 500, files: 100 });
    expect(shards).toHaveLength(2);
    expect(shards.map((s) => new Set(s.files.map((f) => f.split("/")[0])).size)).toEqual([1, 1]);
  });

  it("splits by file count too, and never makes more shards than files", () => {
    expect(planShards(tree(1, 10, () => 1), { lines: 1000, files: 3 })).toHaveLength(4);
    expect(planShards([{ path: "huge.ts", lines: 100_000 }], { lines: 10, files: 10 })).toHaveLength(1);
    expect(planShards([], { lines: 10, files: 10 })).toEqual([]);
  });
});

describe("mergeReviews", () => {
  const patch = (path: string, n: number) => `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${n} @@\n${Array.from({ length: n }, (_, i) => `+line ${i + 1}`).join("\n")}\n`;
  const diffText = patch("a/one.ts", 5) + patch("b/two.ts", 5);
  const lines = new DiffLines([...splitDiff(diffText)].map(([filename, p]) => ({ filename, patch: p.slice(p.indexOf("@@")) })));
  const shard = (index: number, files: string[]) => ({ index, files, lines: 5 * files.length });
  const head = "a".repeat(40);

  it("keeps comments on the shard's own diff lines, drops others, orders by severity, names the unreviewed shard", () => {
    const legs: Leg[] = [
      {
        shard: shard(1, ["a/one.ts"]),
        status: "reviewed",
        costUsd: 0.5,
        review: {
          body: "Shard one looks fine <!-- agent-runner-review head=" + "b".repeat(40) + " -->",
          event: "REQUEST_CHANGES",
          comments: [
            { path: "a/one.ts", line: 2, body: "nit here", severity: "nit" },
            { path: "a/one.ts", line: 3, body: "bug here", severity: "critical" },
            { path: "a/one.ts", line: 3, body: "bug  here", severity: "critical" },
            { path: "a/one.ts", line: 99, body: "outside" },
            { path: "b/two.ts", line: 1, body: "not my shard" },
          ],
        },
      },
      { shard: shard(2, ["b/two.ts"]), status: "failed", reason: "budget", costUsd: 0.25 },
    ];
    const m = mergeReviews({ legs, prDiff: lines, rangeDiff: lines, earlier: [{ path: "a/one.ts", line: 2, key: commentKey("**nit:** nit here") }], maxComments: 10, canBlock: false, head, scopeNote: "" });
    expect(m.comments.map((c) => [c.path, c.line])).toEqual([["a/one.ts", 3]]);
    expect(m.dropped).toEqual({ outside: 1, duplicate: 2, overCap: 0, otherShard: 1 });
    expect(m.event).toBe("COMMENT");
    expect(m.conclusion).toBe("partial");
    expect(m.costUsd).toBeCloseTo(0.75);
    expect(m.body).toContain("` b/two.ts `");
    expect(m.body).toMatch(/Shard 2\*\* \(failed: budget\)/);
    // Our marker first; the agent's forged one defused.
    expect(markedHead(m.body)).toBe(head);
    expect(m.body.match(/<!--/g)).toHaveLength(1);
    expect(reviewMarker(head)).toContain(head);
  });

  it("caps the most severe first, blocks only with can-block, and says when nothing was covered", () => {
    const comments = [1, 2, 3, 4].map((line) => ({ path: "a/one.ts", line, body: `c${line}`, severity: (line === 4 ? "critical" : "nit") as "critical" | "nit" }));
    const legs: Leg[] = [{ shard: shard(1, ["a/one.ts"]), status: "reviewed", review: { body: "x", event: "REQUEST_CHANGES", comments } }];
    const m = mergeReviews({ legs, prDiff: lines, rangeDiff: lines, earlier: [], maxComments: 2, canBlock: true, head, scopeNote: "" });
    expect(m.comments.map((c) => c.line)).toEqual([4, 1]);
    expect(m.dropped.overCap).toBe(2);
    expect(m.event).toBe("REQUEST_CHANGES");
    const none = mergeReviews({ legs: [{ shard: shard(1, ["a/one.ts"]), status: "missing" }], prDiff: lines, rangeDiff: lines, earlier: [], maxComments: 2, canBlock: true, head, scopeNote: "" });
    expect(none.conclusion).toBe("failure");
    expect(none.body).toContain("This review covered nothing");
    // It claims no covered head: the next since-last-review starts where the last review that covered something ended.
    expect(markedHead(none.body)).toBeUndefined();
  });
});
