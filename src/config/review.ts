/**
 * The `task: review` inputs, read the same way by the agent run's parser
 * (config/parse.ts, config file included) and by plan and gather (which read
 * the step only): one function, so a shard job and the plan agree on limits.
 */
import type { InputName } from "../constants.js";

export const REVIEW_SCOPES = ["full", "since-last-review"] as const;
export type ReviewScope = (typeof REVIEW_SCOPES)[number];

/** What a review run needs; absent from Settings when `task` is `change`. */
export interface ReviewSettings {
  /** Above either, plan splits the diff into shards. */
  shardLines: number;
  shardFiles: number;
  /** Above this, no review: an explicit "too large" result. */
  maxLines: number;
  canBlock: boolean;
  scope: ReviewScope;
  maxComments: number;
  /** A shard job: which shard (1-based) of the plan's `range` it reviews. */
  shard?: { index: number; range: { from: string; head: string } };
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** `from..head`, two full commit ids (what plan puts in the matrix). */
export function parseRange(text: string): { from: string; head: string } | undefined {
  const m = /^([0-9a-f]{40}(?:[0-9a-f]{24})?)\.\.([0-9a-f]{40}(?:[0-9a-f]{24})?)$/.exec(text.trim());
  return m && SHA.test(m[1]!) && SHA.test(m[2]!) ? { from: m[1]!, head: m[2]! } : undefined;
}

/**
 * `task` and the review inputs. Undefined when the task is `change`.
 * `get` returns the value as set (step or config file, else the default); `add` records a problem.
 */
export function parseReviewInputs(get: (name: InputName) => string | undefined, add: (input: InputName, message: string) => void): ReviewSettings | undefined {
  const task = (get("task") ?? "change").trim() || "change";
  if (task !== "change" && task !== "review") {
    add("task", `'${task.slice(0, 40)}' is not allowed; use one of: change, review.`);
    return undefined;
  }
  if (task === "change") return undefined;
  // The staged run's review would be dropped when approved: the approval's publish posts safe outputs, not a merged review.
  if ((get("approval") ?? "none").trim() === "required")
    add("approval", "'required' does not apply to 'task: review' yet (an approved run would not post its review); a review changes no code: leave approval at 'none' for review runs.");
  const whole = (name: InputName, fallback: string, min: number, max: number): number => {
    const text = (get(name) ?? fallback).trim() || fallback;
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < min || n > max) {
      add(name, `'${text.slice(0, 20)}' must be a whole number from ${min} to ${max}.`);
      return Number(fallback);
    }
    return n;
  };
  const shardLines = whole("review-shard-lines", "3000", 1, 10_000_000);
  const shardFiles = whole("review-shard-files", "100", 1, 100_000);
  const maxLines = whole("review-max-lines", "200000", 1, 100_000_000);
  const maxComments = whole("review-max-comments", "30", 0, 100);
  const blockText = (get("review-can-block") ?? "false").trim().toLowerCase() || "false";
  if (!["true", "false"].includes(blockText)) add("review-can-block", `'${blockText.slice(0, 20)}' is not a boolean; use true or false.`);
  const scopeText = (get("review-scope") ?? "full").trim() || "full";
  const scope = (REVIEW_SCOPES as readonly string[]).includes(scopeText) ? (scopeText as ReviewScope) : undefined;
  if (!scope) add("review-scope", `'${scopeText.slice(0, 40)}' is not allowed; use one of: ${REVIEW_SCOPES.join(", ")}.`);
  const shardText = get("review-shard")?.trim();
  const rangeText = get("review-range")?.trim();
  let shard: ReviewSettings["shard"];
  if (shardText || rangeText) {
    const index = Number(shardText);
    const range = rangeText ? parseRange(rangeText) : undefined;
    if (!shardText || !/^\d{1,3}$/.test(shardText) || index < 1) add("review-shard", `'${(shardText ?? "").slice(0, 20)}' must be the plan's shard number (1, 2, …), given with 'review-range'.`);
    else if (!range) add("review-range", `'${(rangeText ?? "").slice(0, 90)}' must be the plan's 'from..head' (two full commit ids), given with 'review-shard'.`);
    else shard = { index, range };
  }
  return { shardLines, shardFiles, maxLines, canBlock: blockText === "true", scope: scope ?? "full", maxComments, ...(shard ? { shard } : {}) };
}
