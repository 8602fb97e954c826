/**
 * The run artifact's two stages: phase run/all uploads the results folder,
 * phase publish downloads it from an earlier job of the same workflow run
 * (then it is validated like any patch before delivery).
 */
import { ConfigurationError, errorMessage } from "../errors.js";
import type { RunResult } from "../result.js";
import type { StageContext } from "../stage-context.js";
import { artifactUrl } from "../shared/artifact-name.js";
import { ActionsArtifactService } from "./artifacts.js";
import { prepareRunUpload, readDownloadedRun, runArtifactName } from "./run-artifact.js";

/** The run's artifact, once uploaded or downloaded. */
export interface RunArtifactRef {
  id: number;
  name: string;
  url?: string;
}

function retention(ctx: StageContext): { retentionDays?: number } {
  const days = ctx.settings.artifacts.retentionDays;
  return days !== undefined ? { retentionDays: days } : {};
}

/**
 * After the agent (also when it failed or timed out): the results folder as
 * one artifact, listed first in the result. In `phase: run` a failed upload
 * fails the step, since the publish job depends on it; otherwise it is a warning.
 */
export async function uploadRunArtifact(ctx: StageContext, result: RunResult): Promise<RunArtifactRef | undefined> {
  const { io, settings, log } = ctx;
  if (!settings.artifacts.upload) {
    log.info("Artifacts: not uploading (upload-artifacts is false).");
    return undefined;
  }
  if (!io.host.artifactService) {
    log.info(`Artifacts: no Actions artifact service here (ACTIONS_RUNTIME_TOKEN is not set); the results stay in ${ctx.resultsDir}.`);
    return undefined;
  }
  const name = runArtifactName(settings.artifacts.name, io.host, ctx.item?.key);
  const { files, skipped } = await prepareRunUpload(ctx.resultsDir, ctx.redactor);
  if (skipped.length) log.warning(`Artifacts: left out what is not a regular file (symlinks are never followed) or has a name artifacts cannot hold: ${skipped.slice(0, 10).join(", ")}`);
  try {
    const uploaded = await new ActionsArtifactService().upload(name, ctx.resultsDir, files, retention(ctx));
    const url = artifactUrl(io.host, uploaded.id);
    result.artifacts.unshift({ name, id: String(uploaded.id), ...(url ? { url } : {}) });
    log.info(`Artifacts: uploaded '${name}' (${files.length} files, ${uploaded.size} bytes)${url ? `: ${url}` : ""}.`);
    return { id: uploaded.id, name, ...(url ? { url } : {}) };
  } catch (e) {
    const message = `Artifacts: uploading '${name}' failed: ${errorMessage(e)}`;
    if (settings.delivery.phase === "run") throw new ConfigurationError(`${message}. The publish phase needs this artifact.`);
    log.warning(`${message}. The results stay in ${ctx.resultsDir}.`);
    return undefined;
  }
}

/** `name`, or when only the publish job is re-run, the default-named artifact of the newest earlier attempt. */
function findRunArtifact(list: { id: number; name: string }[], name: string, ctx: StageContext): { id: number; name: string } | undefined {
  const found = list.find((a) => a.name === name);
  const runId = ctx.io.host.runId;
  if (found || ctx.settings.artifacts.name || !runId) return found;
  const prefix = `agent-run-${runId}-`;
  // A fan-out item's artifact ends in its key (runArtifactName): only that item's attempts count.
  const suffix = ctx.item ? `-${ctx.item.key}` : "";
  const attemptOf = (a: { name: string }) => (a.name.startsWith(prefix) && a.name.endsWith(suffix) ? a.name.slice(prefix.length, a.name.length - suffix.length) : "");
  const attempt = (a: { name: string }) => Number(attemptOf(a));
  return list.filter((a) => /^\d+$/.test(attemptOf(a))).sort((a, b) => attempt(b) - attempt(a))[0];
}

/** phase publish: the run's artifact downloaded into the results folder, its result.json checked. */
export async function downloadRunArtifact(ctx: StageContext): Promise<{ result: RunResult; artifact: RunArtifactRef }> {
  const { io, settings, log } = ctx;
  if (!io.host.artifactService)
    throw new ConfigurationError(
      "Input 'phase': 'publish' downloads the artifact of a 'phase: run' job from the Actions artifact service, which exists only inside a GitHub Actions job.",
    );
  const name = runArtifactName(settings.artifacts.name, io.host, ctx.item?.key);
  const service = new ActionsArtifactService();
  const list = await service.listThisRun();
  const found = findRunArtifact(list, name, ctx);
  if (!found)
    throw new ConfigurationError(
      `Input 'artifact-name': no artifact '${name}' in this workflow run${list.length ? ` (it has: ${list.map((a) => a.name).join(", ")})` : ""}. ` +
        "'phase: publish' delivers what a 'phase: run' step uploaded in an earlier job of the same workflow run; give both steps the same 'artifact-name' and make the publish job 'needs:' the run job.",
    );
  await service.downloadThisRun(found, ctx.resultsDir);
  const { result } = await readDownloadedRun(ctx.resultsDir, found.name);
  const url = artifactUrl(io.host, found.id);
  log.info(`Artifacts: downloaded '${found.name}' (id ${found.id}): ${result.agentName} run, conclusion ${result.conclusion}, ${result.diff.changedFiles.length} changed file(s).`);
  result.artifacts = [{ name: found.name, id: String(found.id), ...(url ? { url } : {}) }];
  return { result, artifact: { id: found.id, name: found.name, ...(url ? { url } : {}) } };
}
