/**
 * `task: review`, before the agent: the range to review (the plan's, for a
 * shard job; else from the scope and the last review), this run's shard,
 * and its diff from local git. A shard job records which shard it reviewed
 * (review/record.ts) for gather.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { HostContext } from "../config/host.js";
import type { Settings } from "../config/schema.js";
import { ConfigurationError } from "../errors.js";
import { Git } from "../git/git.js";
import { TouchedWorkspaces } from "../git/touched.js";
import type { Logger } from "../logger.js";
import { filePatches } from "../review/diff.js";
import { ownReviews } from "../review/github.js";
import { fileListText, reviewInstructions } from "../review/prompt.js";
import { reviewRange, scopeNote, shardPlan, type RangeKind } from "../review/range.js";
import { SHARD_RECORD_FILE, type ShardRecord } from "../review/record.js";
import { changedPaths, mergeBase } from "../review/diff.js";
import type { GitHubRun } from "../stage-context.js";
import type { TaskContext } from "./task.js";

export function tooLargeMessage(lines: number, max: number): string {
  return `This pull request is too large to review: ${lines} changed lines, over 'review-max-lines' (${max}). Raise the limit or review it in parts.`;
}

export async function prepareReview(run: GitHubRun, settings: Settings, host: HostContext, resultsDir: string, log: Logger): Promise<NonNullable<TaskContext["review"]>> {
  const review = settings.review!;
  const pr = run.trigger.pullRequest;
  if (!pr) throw new ConfigurationError("Input 'task': 'review' runs on a pull request (a pull request event or comment, or 'issue-number' naming one).");
  // Host git reads the workspace's repository here, before this step's agent: only while no agent of this
  // job has run in it (its .git could name a commondir, config or attributes host git would follow). The
  // trigger stage refuses such a pull request run already; this holds on its own.
  const touched = await TouchedWorkspaces.forJob(host.runnerTemp).lookup(settings.workspace);
  if (touched)
    throw new ConfigurationError(
      `Input 'task': an agent already ran in '${touched.workTree}' earlier in this job, so host-side git cannot trust that repository to compute the review's diff. Run the review in a job of its own (a fresh checkout).`,
    );
  const git = new Git(settings.workspace, host.gitEnv);
  let from: string;
  let head: string;
  let kind: RangeKind;
  let prBase: string;
  if (review.shard) {
    ({ from, head } = review.shard.range);
    prBase = await mergeBase(git, pr.baseSha, head);
    kind = from === prBase ? "full" : "since-last-review";
  } else {
    const earlier = review.scope === "since-last-review" ? (await ownReviews(run.api, pr.number, (m) => log.warning(m))).map((r) => r.body) : [];
    ({ from, head, kind, prBase } = await reviewRange(git, pr, review.scope, earlier));
  }
  const note = scopeNote(kind, { from, head });
  const plan = await shardPlan(git, { from, head }, { lines: review.shardLines, files: review.shardFiles });
  if (plan.lines > review.maxLines) throw new ConfigurationError(tooLargeMessage(plan.lines, review.maxLines));
  const index = review.shard?.index ?? 1;
  // One job without a plan reviews everything in one part.
  const shards = review.shard ? plan.shards : [{ index: 1, files: plan.files.map((f) => f.path).sort(), lines: plan.lines }];
  const shard = shards.find((s) => s.index === index);
  if (!shard) throw new ConfigurationError(`Input 'review-shard': the range ${from.slice(0, 12)}..${head.slice(0, 12)} has ${shards.length} shard(s), not ${index}; pass the plan's matrix entry unchanged.`);
  const patches = await filePatches(git, from, head, shard.files);
  const diff = shard.files.map((f) => patches.get(f) ?? "").join("");
  const prFiles = prBase === from ? plan.files : await changedPaths(git, prBase, head);
  if (!shard.files.length) throw new ConfigurationError(`Nothing to review: ${from.slice(0, 12)}..${head.slice(0, 12)} changes no file. ${note}`);
  // What was reviewed, for gather (a shard job's artifact) or this job's own review (phase all).
  const record: ShardRecord = { version: 1, shard: index, shards: shards.length, from, head };
  await mkdir(resultsDir, { recursive: true });
  await writeFile(path.join(resultsDir, SHARD_RECORD_FILE), JSON.stringify(record) + "\n");
  log.info(`Review: ${shards.length > 1 ? `shard ${index} of ${shards.length}, ` : ""}${shard.files.length} file(s), ${shard.lines} changed line(s) of ${from.slice(0, 12)}..${head.slice(0, 12)}. ${note}`);
  return {
    instructions: reviewInstructions({ prFiles, shard, shardCount: shards.length, diff, scopeNote: note, maxComments: review.maxComments }),
    fileList: fileListText(prFiles, new Set(shard.files)),
    fileCount: prFiles.length,
    diff,
  };
}
