/**
 * phase publish/all, before delivery: the patch must apply to the recorded
 * base commit and stay inside the repository (validate-patch.ts). In publish
 * the changed files are taken from the patch, never from result.json: the
 * artifact was written by a job that ran agent code.
 */
import { Git } from "../git/git.js";
import { HostRepo, hostRepoDir } from "../git/host-repo.js";
import type { RunResult } from "../result.js";
import type { StageContext } from "../stage-context.js";
import type { RunArtifactRef } from "./artifact-stage.js";
import { PatchRefusedError, validatePatch, type PostImage } from "./validate-patch.js";

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * `refusal` undefined when the patch may be delivered; else why it is refused. A
 * refusal is returned, not thrown, so that the outputs and the summary are
 * still written before the step fails with it.
 */
export async function checkPatch(ctx: StageContext, result: RunResult, artifact: RunArtifactRef | undefined): Promise<CheckedPatch> {
  const { settings } = ctx;
  if (settings.delivery.deliver === "none") return {};
  const fromArtifact = settings.delivery.phase === "publish";
  const source = fromArtifact && artifact ? `artifact '${artifact.name}'` : "this run";
  // One repository object for the check and threat detection after it, which asks git the same about the same trees.
  const git = patchRepository(ctx);
  try {
    const validated = await validatePatch(
      git,
      result.diff.patchPath,
      result.diff.baseCommit,
      { allowWorkflowChanges: settings.delivery.allowWorkflowChanges },
      // In phase all the result is this process's own, and its base tree was read from the repository checked here.
      { source, scratchDir: ctx.runDir, ...(!fromArtifact && OBJECT_ID.test(result.diff.baseTree) ? { baseTree: result.diff.baseTree } : {}) },
    );
    if (fromArtifact) result.diff.changedFiles = validated.changedFiles;
    if (validated.bytes) ctx.log.info(`Patch: ${validated.changedFiles.length} file(s), ${validated.bytes} bytes, applies cleanly to ${result.diff.baseCommit.slice(0, 12)}.`);
    return validated.postImage ? { postImage: { ...validated.postImage, git } } : {};
  } catch (e) {
    if (!(e instanceof PatchRefusedError)) throw e;
    if (fromArtifact) result.diff.changedFiles = e.namedFiles;
    return { refusal: e.message, ...(e.postImage ? { postImage: { ...e.postImage, git } } : {}) };
  }
}

export interface CheckedPatch {
  /** Why the patch is not delivered; undefined when it may be. */
  refusal?: string;
  /** What the patch makes, read through `git` (threat detection reads binary files' new bytes and the links there); also for a refused patch that applied. */
  postImage?: PostImage & { git: Git };
}

/**
 * Where the patch is checked. In phase all the agent ran in this workspace,
 * so its repository is hostile: the host's private repository made before
 * the agent started holds the base commit. A publish job's workspace is a
 * fresh checkout no agent touched (the trigger stage refuses a pull request
 * whose workspace an earlier agent step of the job ran in). `task: review`
 * reads its commits here too.
 */
export function patchRepository(ctx: StageContext): Git {
  const env = ctx.io.host.gitEnv;
  return ctx.settings.delivery.phase === "publish" ? new Git(ctx.settings.workspace, env) : HostRepo.reopen(hostRepoDir(ctx.runDir), env);
}
