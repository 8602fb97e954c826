/**
 * Which commits a review covers, and its shards: computed the same way by
 * plan, by every shard job and by gather, from the same commits.
 */
import type { Git } from "./diff.js";
/** Input `review-scope` (config/review.ts). */
type ReviewScope = "full" | "since-last-review";
import { changedPaths, filePatches, isAncestor, mergeBase, resolveCommit, type ChangedPath } from "./diff.js";
import { markedHead } from "./merge.js";
import { planShards, type Shard } from "./shards.js";

/** `full`, `since-last-review`, or a full review because the last reviewed head is gone (force-push). */
export type RangeKind = "full" | "since-last-review" | "full-after-force-push" | "full-first-review";

export interface ReviewRange {
  /** The first commit not reviewed is after `from`; the diff is from..head. */
  from: string;
  head: string;
  /** merge-base(base, head): where the pull request's own diff starts. */
  prBase: string;
  kind: RangeKind;
}

export function scopeNote(kind: RangeKind, range: Pick<ReviewRange, "from" | "head">): string {
  switch (kind) {
    case "since-last-review":
      return `Only the commits since the last review (${range.from.slice(0, 12)}..${range.head.slice(0, 12)}) were reviewed.`;
    case "full-after-force-push":
      return `The head the last review covered (${range.from.slice(0, 12)}) is no longer in this pull request's history (a force-push?): the whole pull request was reviewed.`;
    case "full-first-review":
      return "No earlier review by Agent Runner: the whole pull request was reviewed.";
    default:
      return "The whole pull request was reviewed.";
  }
}

/**
 * The range to review. With `since-last-review`, the newest earlier review of
 * ours (its marker's head) starts it, if that commit is still an ancestor of
 * the head; else the whole pull request, and the kind says why.
 */
export async function reviewRange(
  git: Git,
  pr: { baseSha: string; headSha: string },
  scope: ReviewScope,
  earlierBodies: readonly string[],
): Promise<ReviewRange & { lastHead?: string }> {
  const head = await resolveCommit(git, pr.headSha, "pull request's head");
  const base = await resolveCommit(git, pr.baseSha, "pull request's base");
  const prBase = await mergeBase(git, base, head);
  if (scope === "full") return { from: prBase, head, prBase, kind: "full" };
  const lastHead = [...earlierBodies].reverse().map(markedHead).find((h) => h !== undefined);
  if (!lastHead) return { from: prBase, head, prBase, kind: "full-first-review" };
  if (await isAncestor(git, lastHead, head)) return { from: lastHead, head, prBase, kind: "since-last-review", lastHead };
  return { from: prBase, head, prBase, kind: "full-after-force-push", lastHead };
}

export interface ShardPlan {
  files: ChangedPath[];
  shards: Shard[];
  lines: number;
}

/** The files of from..head and their shards under the limits. */
export async function shardPlan(git: Git, range: Pick<ReviewRange, "from" | "head">, limits: { lines: number; files: number }): Promise<ShardPlan> {
  const files = await changedPaths(git, range.from, range.head);
  return { files, shards: planShards(files, limits), lines: files.reduce((n, f) => n + f.lines, 0) };
}

export { filePatches };
