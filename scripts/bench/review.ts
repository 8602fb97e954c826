/**
 * task: review at size (issue #35): a pull request of 1,000 files and
 * 100,000 changed lines (BENCH_REVIEW_FILES, BENCH_REVIEW_LINES) in one
 * commit. Times the plan (merge-base, the file list from local git, the
 * shards), one shard job's diff, and gather's merge (the diff lines of every
 * commented file on both ranges, dedupe and cap) with a review of 10
 * comments from every shard. Median of BENCH_REVIEW_RUNS runs.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Git } from "../../src/git/git.js";
import { filePatches, hunksOf, mergeBase } from "../../src/review/diff.js";
import { mergeReviews, type Leg } from "../../src/review/merge.js";
import { shardPlan } from "../../src/review/range.js";
import { DiffLines } from "../../src/safe-outputs/diff-lines.js";

const FILES = Number(process.env.BENCH_REVIEW_FILES ?? 1000);
const LINES = Number(process.env.BENCH_REVIEW_LINES ?? 100_000);
const RUNS = Number(process.env.BENCH_REVIEW_RUNS ?? 3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const dir = mkdtempSync(path.join(os.tmpdir(), "bench-review-"));
const sh = (...args: string[]) => execFileSync("git", ["-C", dir, "-c", "user.name=b", "-c", "user.email=b@example.com", ...args], { stdio: "pipe" });
sh("init", "-q", "-b", "main");
writeFileSync(path.join(dir, "README.md"), "# bench\n");
sh("add", "-A");
sh("commit", "-qm", "base");
sh("checkout", "-qb", "feature");
const per = Math.ceil(LINES / FILES);
for (let i = 0; i < FILES; i++) {
  const file = path.join(dir, `pkg${i % 20}`, `mod${Math.floor(i / 20) % 10}`, `file${i}.ts`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, Array.from({ length: per }, (_, l) => `export const v${l} = ${i * 1000 + l};`).join("\n") + "\n");
}
sh("add", "-A");
sh("commit", "-qm", "big change");

const git = new Git(dir, { PATH: process.env.PATH ?? "" });
const limits = { lines: 3000, files: 100 };
const plans: number[] = [];
const shardDiffs: number[] = [];
const gathers: number[] = [];
let shards = 0;
for (let r = 0; r < RUNS; r++) {
  let t = performance.now();
  const from = await mergeBase(git, "main", "feature");
  const head = (await git.text(["rev-parse", "feature"])).trim();
  const plan = await shardPlan(git, { from, head }, limits);
  plans.push(performance.now() - t);
  shards = plan.shards.length;

  t = performance.now();
  await filePatches(git, from, head, plan.shards[0]!.files);
  shardDiffs.push(performance.now() - t);

  t = performance.now();
  const legs: Leg[] = plan.shards.map((shard) => ({
    shard,
    status: "reviewed",
    costUsd: 0.1,
    review: { body: `Shard ${shard.index}`, event: "COMMENT", comments: shard.files.slice(0, 10).map((p, i) => ({ path: p, line: 1 + i, body: `comment ${i}`, severity: i % 2 ? "nit" : "major" })) },
  }));
  const commented = [...new Set(legs.flatMap((l) => l.review!.comments.map((c) => c.path)))].sort();
  const patches = await filePatches(git, from, head, commented);
  const lines = new DiffLines(commented.map((f) => ({ filename: f, patch: hunksOf(patches.get(f)!)! })));
  mergeReviews({ legs, prDiff: lines, rangeDiff: lines, earlier: [], maxComments: 30, canBlock: false, head, scopeNote: "" });
  gathers.push(performance.now() - t);
}
rmSync(dir, { recursive: true, force: true });
console.log(`\n## Review at size (${FILES} files, ${FILES * per} changed lines; median of ${RUNS})\n`);
console.log(`| step | time |\n|---|---|`);
console.log(`| plan: merge-base, file list, ${shards} shards | ${median(plans).toFixed(0)} ms |`);
console.log(`| one shard job's diff (${Math.ceil(FILES / shards)} files) | ${median(shardDiffs).toFixed(0)} ms |`);
console.log(`| gather: diff lines of ${shards * 10} commented files, merge of ${shards} shard reviews | ${median(gathers).toFixed(0)} ms |`);
