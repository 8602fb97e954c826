/**
 * `review-shard.json`: which shard a shard job reviewed, written by the host
 * into its results (so into its run artifact). Gather reads it as hostile
 * input (any job of the run can upload an artifact): it must name the shard
 * the artifact's name says, and the plan's commits.
 */
import * as z from "../shared/zod.js";

export const SHARD_RECORD_FILE = "review-shard.json";

const Sha = z.string().check(z.regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/));

export const ShardRecord = z.object({
  version: z.literal(1),
  shard: z.number().check(z.int(), z.positive()),
  shards: z.number().check(z.int(), z.positive()),
  from: Sha,
  head: Sha,
});
export type ShardRecord = z.infer<typeof ShardRecord>;

/** `<item key>-shard-<n>`: the artifact-name key of a shard job. */
export function shardKey(itemKey: string | undefined, shard: number): string {
  return `${itemKey ?? "pr"}-shard-${shard}`;
}

export function shardOfKey(key: string): number | undefined {
  const m = /-shard-(\d{1,3})$/.exec(key);
  return m ? Number(m[1]) : undefined;
}
