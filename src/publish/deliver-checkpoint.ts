/**
 * The checkpoint of an `incomplete` run (git/checkpoint.ts), pushed by the job
 * that holds the write token (phase all, or publish): the base commit with the
 * run's checked patch, committed in the private delivery repository after the
 * patch rules passed on that tree, force-pushed to
 * `refs/agent-runner/checkpoints/<thread>`. A hidden ref: no branch, no pull
 * request, no checks run on it. A run continued from it and delivered removes it.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { DeliverySettings } from "../config/schema.js";
import { errorMessage } from "../errors.js";
import { checkpointMessage, checkpointRef } from "../git/checkpoint.js";
import { gitAuthEnv } from "../github/git-auth.js";
import type { Logger } from "../logger.js";
import type { RunResult } from "../result.js";
import type { Trigger } from "../shared/trigger.js";
import { BOT_IDENTITY, DeliveryRepo, pushRef } from "./deliver-git.js";
import { describeProblems } from "./patch-rules.js";

export interface CheckpointPushContext {
  settings: DeliverySettings;
  trigger: Trigger;
  token: string;
  serverUrl: string;
  gitEnv: Record<string, string>;
  remoteUrl: string;
  runUrl?: string;
  workDir: string;
  log: Logger;
}

export type CheckpointPush = { ok: true; ref: string; sha: string; files: number } | { ok: false; refused?: { files: string[]; problems: string[] }; detail: string };

async function repoFor(ctx: CheckpointPushContext): Promise<DeliveryRepo> {
  return DeliveryRepo.create({ dir: path.join(ctx.workDir, "checkpoint.git"), remoteUrl: ctx.remoteUrl, env: { ...ctx.gitEnv, ...gitAuthEnv(ctx.token, ctx.serverUrl) } });
}

/** The ref a thread's checkpoint lives on; undefined without a thread (nothing to continue it from). */
export function threadCheckpointRef(trigger: Trigger): string | undefined {
  return trigger.thread ? checkpointRef(trigger.thread.number) : undefined;
}

export async function pushCheckpoint(ctx: CheckpointPushContext, result: RunResult, patchPath: string): Promise<CheckpointPush> {
  const ref = threadCheckpointRef(ctx.trigger);
  if (!ref) return { ok: false, detail: "the run is not on an issue or pull request, so there is no thread to keep a checkpoint for" };
  const base = result.diff.baseCommit;
  try {
    const repo = await repoFor(ctx);
    if (!(await repo.ensureCommit(base))) return { ok: false, detail: `the base commit ${base.slice(0, 12)} could not be fetched` };
    const empty = ((await stat(patchPath).catch(() => undefined))?.size ?? 0) === 0;
    const applied = empty ? { ok: true as const, tree: await repo.treeOf(base) } : await repo.apply(base, patchPath);
    if (!applied.ok) return { ok: false, detail: `the patch does not apply to its base commit: ${applied.detail}` };
    // The same rules as any delivery, on the tree the ref will hold.
    const checked = await repo.check(base, applied.tree, { allowWorkflowChanges: ctx.settings.allowWorkflowChanges });
    if (checked.problems.length) return { ok: false, refused: { files: [...new Set(checked.problems.map((p) => p.file))], problems: describeProblems(checked.problems) }, detail: "the changes break the patch rules" };
    const where = ctx.runUrl ?? `#${ctx.trigger.thread!.number}`;
    const runs = result.checkpoint?.runs ?? 1;
    const message = checkpointMessage(
      { cause: result.checkpoint?.cause ?? "time-limit", runs, base, ...(result.checkpoint?.spentUsd !== undefined ? { spentUsd: result.checkpoint.spentUsd } : {}) },
      where,
    );
    const sha = await repo.commit(applied.tree, base, message, BOT_IDENTITY);
    const pushed = await pushRef(repo, sha, ref);
    if (!pushed.ok) return { ok: false, detail: `pushing ${ref} failed: ${pushed.detail}` };
    ctx.log.info(`Checkpoint: pushed ${sha.slice(0, 12)} (${checked.changedFiles.length} changed path(s) on ${base.slice(0, 12)}) to ${ref}.`);
    return { ok: true, ref, sha, files: checked.changedFiles.length };
  } catch (e) {
    return { ok: false, detail: errorMessage(e) };
  }
}

/** After a continued run was delivered, its checkpoint is spent: removed (best effort; a failure only warns). */
export async function removeCheckpoint(ctx: CheckpointPushContext): Promise<void> {
  const ref = threadCheckpointRef(ctx.trigger);
  if (!ref) return;
  try {
    const repo = await repoFor(ctx);
    const r = await pushRef(repo, null, ref);
    if (r.ok) ctx.log.info(`Checkpoint: the work is delivered; removed ${ref}.`);
    else ctx.log.warning(`Checkpoint: could not remove ${ref}: ${r.detail}`);
  } catch (e) {
    ctx.log.warning(`Checkpoint: could not remove ${ref}: ${errorMessage(e)}`);
  }
}
