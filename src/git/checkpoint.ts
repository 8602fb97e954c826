/**
 * Checkpoints: the work of a run stopped before it finished (conclusion
 * `incomplete`: `timeout-minutes` about to run out, a cancel, the stall
 * watchdog), kept on a hidden ref of the repository,
 * `refs/agent-runner/checkpoints/<thread>`, so that `@agent continue` (or
 * `resume: checkpoint`) goes on from it.
 *
 * The ref holds one commit: its tree is the original base commit with the
 * run's patch, its only parent is that base commit, its message names the
 * cause and how many runs the work has taken (written by the publishing job,
 * never by the agent). Continued runs keep the original base: the next
 * checkpoint's parent and the final patch are relative to it, so the work is
 * delivered as one change however many runs it took.
 *
 * The tree is the agent's data, hostile: it is put into the workspace only as
 * file content, through the host's private repository (host-repo.ts), before
 * the agent starts. `git apply --cached` refuses `.git` paths, git's checkout
 * (`read-tree -u`) writes no file through a symlinked folder and never
 * overwrites an untracked file, and with no config of the checkpoint's no
 * filter, hook or driver can run. Symlinks in it stay links (data).
 */
import { rm } from "node:fs/promises";
import { copyIndex } from "./files.js";
import path from "node:path";
import { ConfigurationError } from "../errors.js";
import * as z from "../shared/zod.js";
import type { HostRepo } from "./host-repo.js";
import type { Baseline } from "./snapshot.js";

export const CHECKPOINT_REF_PREFIX = "refs/agent-runner/checkpoints/";

/** The hidden ref of a thread's checkpoint: `refs/agent-runner/checkpoints/<n>`, or a workflow's scope key without a thread. */
export function checkpointRef(scope: number | string): string {
  const name = String(scope);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name) || name.includes("..") || name.endsWith(".lock")) throw new Error(`not a checkpoint name: ${name}`);
  return `${CHECKPOINT_REF_PREFIX}${name}`;
}

/** What the checkpoint commit's message records (trailers the publishing job writes). */
export const CheckpointRecord = z.object({
  cause: z.enum(["time-limit", "cancelled", "stalled"]),
  runs: z.number().check(z.int(), z.positive(), z.lte(1000)),
  base: z.string().check(z.regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/)),
  /** Cost so far in US dollars, when the gateway knew it: a continued run's `max-cost-usd` is what is left. */
  spentUsd: z.optional(z.number().check(z.nonnegative())),
});
export type CheckpointRecord = z.infer<typeof CheckpointRecord>;

const TRAILERS = { cause: "Agent-Runner-Cause", runs: "Agent-Runner-Runs", base: "Agent-Runner-Base", spentUsd: "Agent-Runner-Spent-Usd" } as const;

export function checkpointMessage(r: CheckpointRecord, where: string): string {
  return [
    `Agent Runner checkpoint (${r.cause}, run ${r.runs})`,
    "",
    `Work kept from ${where}, not finished. Continue it with '@agent continue' (or 'resume: checkpoint').`,
    "",
    `${TRAILERS.cause}: ${r.cause}`,
    `${TRAILERS.runs}: ${r.runs}`,
    `${TRAILERS.base}: ${r.base}`,
    ...(r.spentUsd !== undefined ? [`${TRAILERS.spentUsd}: ${r.spentUsd}`] : []),
    "",
  ].join("\n");
}

/** The record in a checkpoint commit's message; undefined when it is not one (a ref someone else wrote). */
export function parseCheckpointMessage(message: string): CheckpointRecord | undefined {
  const value = (name: string) => new RegExp(`^${name}: (\\S{1,80})$`, "m").exec(message)?.[1];
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const parsed = CheckpointRecord.safeParse({
    cause: value(TRAILERS.cause),
    runs: num(value(TRAILERS.runs)),
    base: value(TRAILERS.base),
    ...(value(TRAILERS.spentUsd) !== undefined ? { spentUsd: num(value(TRAILERS.spentUsd)) } : {}),
  });
  return parsed.success ? parsed.data : undefined;
}

/** A checkpoint fetched and checked (session/checkpoint.ts), ready to go into the workspace. */
export interface CheckpointToRestore {
  /** The checkpoint commit. */
  commit: string;
  /** Its parent: the original base commit, which the workspace must be at. */
  base: string;
  /** The checkpoint's changes as a binary patch against `base` (made in a private repository). */
  patchPath: string;
  /** Runs the work took before this one. */
  runs: number;
  /** What those runs cost, as the checkpoint records it. */
  spentUsd?: number;
  /** Why the last of them stopped. */
  cause: CheckpointRecord["cause"];
}

/**
 * Put the checkpoint's changes into the workspace, before the agent starts and
 * after the baseline was taken: the patch stays relative to the base commit and
 * carries the earlier runs' work with this run's. Only onto a clean checkout
 * of the checkpoint's own base commit.
 */
export async function restoreCheckpoint(repo: HostRepo, baseline: Baseline, cp: CheckpointToRestore, scratchDir: string): Promise<{ files: number }> {
  if (baseline.commit !== cp.base)
    throw new ConfigurationError(
      `Checkpoint: it was made on commit ${cp.base.slice(0, 12)}, the workspace is at ${baseline.commit.slice(0, 12)}. Check out ${cp.base} (actions/checkout with 'ref: ${cp.base}') to continue from it, or start anew without 'resume: checkpoint'.`,
    );
  if (baseline.preexisting.length)
    throw new ConfigurationError(
      `Checkpoint: the workspace already differs from commit ${cp.base.slice(0, 12)} (${baseline.preexisting.slice(0, 5).map((p) => p.path).join(", ")}); a checkpoint is restored only onto a clean checkout.`,
    );
  const treeIndex = path.join(scratchDir, "index-checkpoint-tree");
  const workIndex = path.join(scratchDir, "index-checkpoint-work");
  try {
    // The checkpoint's tree, made here from its patch: `apply` refuses paths in `.git` and outside the tree.
    await repo.git.exec(["read-tree", baseline.commitTree], { env: { GIT_INDEX_FILE: treeIndex } });
    const applied = await repo.git.exec(["apply", "--cached", "--binary", "--whitespace=nowarn", cp.patchPath], { env: { GIT_INDEX_FILE: treeIndex }, okCodes: [1, 128] });
    if (applied.exitCode !== 0) throw new ConfigurationError(`Checkpoint: its changes do not apply to ${cp.base.slice(0, 12)}: ${applied.stderr.trim().split("\n").slice(-3).join(" ")}`);
    const tree = await repo.git.text(["write-tree"], { env: { GIT_INDEX_FILE: treeIndex } });
    // Into the work tree by git's own checkout, from the index taken before the agent (its stat data spares re-hashing).
    await copyIndex(repo.baseIndex, workIndex).catch(() => repo.git.exec(["read-tree", baseline.commitTree], { env: { GIT_INDEX_FILE: workIndex } }));
    await repo.git.exec(["update-index", "-q", "--refresh"], { env: { GIT_INDEX_FILE: workIndex }, okCodes: [1] });
    const out = await repo.git.exec(["read-tree", "-m", "-u", baseline.commitTree, tree], { env: { GIT_INDEX_FILE: workIndex }, okCodes: [1, 128] });
    if (out.exitCode !== 0) throw new ConfigurationError(`Checkpoint: its files could not be written into the workspace: ${out.stderr.trim().split("\n").slice(-3).join(" ")}`);
    const changed = (await repo.git.exec(["diff", "--name-only", "--no-renames", "-z", baseline.commitTree, tree])).stdout.split("\0").filter(Boolean);
    return { files: changed.length };
  } finally {
    await rm(treeIndex, { force: true });
    await rm(workIndex, { force: true });
  }
}
