/**
 * The action's main step, as a sequence of stages:
 *   inputs → settings → trigger (who, what) → progress comment →
 *   [phase run]     agent run → trace files → artifact upload
 *   [phase publish] (download the run's artifact) → delivery
 *   → outputs, job summary, final comment.
 * Talks to the runner only through ActionIO; each stage lives in its own module.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { rawSecretValues, type HostContext } from "./config/host.js";
import { parseSettings, type RawInputs } from "./config/parse.js";
import type { Settings } from "./config/schema.js";
import { STATE, type OutputName } from "./constants.js";
import { ConfigurationError, errorMessage, isConfigurationError } from "./errors.js";
import { filteredLogger, type Logger } from "./logger.js";
import { resultOutputs, type Outputs } from "./publish/outputs.js";
import { summaryMarkdown } from "./publish/summary.js";
import type { RunResult } from "./result.js";
import { runAgent, type SessionHooks } from "./runner.js";
import { hostInstallOptions } from "./agents/install.js";
import { Redactor } from "./trace/redact.js";
import { Git } from "./git/git.js";
import { ActionsArtifactService, artifactUrl, type RepositoryAccess } from "./publish/artifacts.js";
import { prepareRunUpload, readDownloadedRun, runArtifactName } from "./publish/run-artifact.js";
import { validatePatch } from "./publish/validate-patch.js";
import { prepareSessionCarry, type SessionCarry } from "./session/carry.js";
import { ArtifactSessionStore, DirSessionStore, type SessionStore } from "./session/store.js";
import { sessionKey, threadNumber } from "./session/thread.js";
import type { ReactionTarget } from "./github/api.js";
import { errorBody } from "./publish/comment.js";
import { deliver, type DeliveryOutcome } from "./publish/deliver.js";
import { deliveryOutputs, deliverySummary, renderFinalComment } from "./publish/deliver-report.js";
import { Progress } from "./publish/progress.js";
import type { TracedEvent } from "./trace/events.js";
import { readEvent, type GitHubEvent } from "./trigger/event.js";
import { eventMayProvidePrompt, prepareTrigger, prepareWorkspace, type GitHubRun } from "./trigger/stage.js";

export interface ActionIO {
  inputs: RawInputs;
  host: HostContext;
  /** Where to write results; default: a fresh folder under the runner's temp dir. */
  resultsDir?: string;
  log: Logger;
  setSecret(value: string): void;
  setOutput(name: OutputName, value: string): void;
  saveState(name: string, value: string): void;
  appendSummary(markdown: string): Promise<void>;
  setFailed(message: string): void;
  /** CLI `--state-dir`: a folder that keeps session state between local runs. */
  stateDir?: string;
}

/** What every stage may use. */
export interface StageContext {
  io: ActionIO;
  settings: Settings;
  log: Logger;
  redactor: Redactor;
  resultsDir: string;
  runDir: string;
}

export async function runAction(io: ActionIO): Promise<RunResult | undefined> {
  const raw = io.inputs;
  // Mask before anything else can print them, even if parsing fails below.
  const secretValues = rawSecretValues(raw);
  for (const v of secretValues) io.setSecret(v);
  const redactor = new Redactor(secretValues);
  const log = filteredLogger(io.log, (s) => redactor.redact(s));

  try {
    // The event first: whether it can supply the prompt decides if `prompt` is required.
    const event = await readEvent(io.host);
    const parse = (configFile?: { text: string | undefined; source: string }) =>
      parseSettings(raw, { cwd: io.host.workspace, eventProvidesPrompt: eventMayProvidePrompt(event), ...(configFile ? { configFile } : {}) });
    const settings = parse();
    const runDir = path.join(io.host.runnerTemp, "agent-runner", randomUUID());
    const resultsDir = io.resultsDir ?? path.join(runDir, "results");
    io.saveState(STATE.runTemp, runDir);
    io.saveState(STATE.resultsDir, resultsDir);
    let ctx: StageContext = { io, settings, log, redactor, resultsDir, runDir };

    let github: GitHubStage | undefined;
    if (event) {
      const triggered = await triggerStage(ctx, event, parse);
      if (!triggered) return undefined;
      ctx = { ...ctx, settings: triggered.settings };
      github = { run: triggered.run, progress: await progressStage(ctx, triggered.run) };
    }

    let result: RunResult | undefined;
    try {
      let artifact: RunArtifactRef | undefined;
      if (ctx.settings.delivery.phase === "publish") {
        ({ result, artifact } = await downloadStage(ctx));
      } else {
        if (github) ctx = await taskStage(ctx, github.run);
        const session = await sessionStage(ctx);
        result = await runStage({ ...ctx, settings: { ...ctx.settings, run: session.run } }, session.hooks, github?.progress.onEvent);
        artifact = await uploadStage(ctx, result);
        await sessionSaveStage(ctx, result, session);
      }
      if (ctx.settings.delivery.phase !== "run") await validateStage(ctx, result, artifact);
      const delivered = github ? await deliveryStage(ctx, github, result) : undefined;

      const outputs: Outputs = { ...resultOutputs(result), ...artifactOutputs(artifact), ...delivered?.outputs };
      await finish(ctx, result, outputs);
      if (delivered?.summary) await io.appendSummary(redactor.redact(delivered.summary));
      // The result is saved and the outputs are set; a failed delivery still fails the step.
      if (delivered?.error) io.setFailed(redactor.redact(delivered.error));
      return result;
    } catch (e) {
      if (github) await failureCommentStage(ctx, github, e, result);
      throw e;
    }
  } catch (e) {
    if (isConfigurationError(e)) io.setFailed(redactor.redact(e.message));
    else {
      log.debug(redactor.redact((e as Error).stack ?? ""));
      io.setFailed(redactor.redact(`Agent Runner failed unexpectedly (this is a bug; please report it): ${errorMessage(e)}`));
    }
    return undefined;
  }
}

/** phase run/all: the agent itself. */
async function runStage(ctx: StageContext, session?: SessionHooks, onEvent?: (e: TracedEvent) => void): Promise<RunResult> {
  return runAgent(ctx.settings, {
    log: ctx.log,
    redactor: ctx.redactor,
    resultsDir: ctx.resultsDir,
    scratchDir: path.join(ctx.runDir, "scratch"),
    searchPath: ctx.io.host.path,
    githubHosted: ctx.io.host.githubHosted,
    install: hostInstallOptions(ctx.io.host),
    ...(session ? { session } : {}),
    ...(onEvent ? { onEvent } : {}),
  });
}

// ---------------------------------------------------------------- GitHub stages

/** A GitHub-triggered run: who asked and how it is delivered, and its progress comment. */
interface GitHubStage {
  run: GitHubRun;
  progress: Progress;
}

/**
 * Trigger and authorization: undefined when the run is skipped (irrelevant
 * event, no trigger phrase, an actor without write access). A skip is a
 * neutral ending: conclusion=skipped, one log line, exit 0, nothing posted.
 */
async function triggerStage(
  ctx: StageContext,
  event: GitHubEvent,
  parse: (configFile?: { text: string | undefined; source: string }) => Settings,
): Promise<{ run: GitHubRun; settings: Settings } | undefined> {
  const { io, log } = ctx;
  const outcome = await prepareTrigger({ event, settings: ctx.settings, raw: io.inputs, host: io.host, log, reparse: parse });
  if (outcome.kind === "skip") {
    log.info(`Agent Runner skipped: ${outcome.reason}.`);
    io.setOutput("conclusion", "skipped");
    io.saveState(STATE.finished, "true");
    return undefined;
  }
  return { run: outcome.run, settings: outcome.settings };
}

/**
 * 👀 on the trigger and the "working" comment. Not in `phase: run`: that job
 * holds a read-only token and writes nothing to GitHub; its publish job
 * reacts and comments instead.
 */
async function progressStage(ctx: StageContext, run: GitHubRun): Promise<Progress> {
  const writes = ctx.settings.delivery.phase !== "run";
  const t = run.trigger;
  const reactTo: ReactionTarget | undefined =
    t.comment?.kind === "issue_comment"
      ? { kind: "issue_comment", id: t.comment.id }
      : t.comment?.kind === "review_comment"
        ? { kind: "review_comment", id: t.comment.id }
        : !t.comment && t.thread
          ? { kind: "issue", number: t.thread.number }
          : undefined;
  const progress = new Progress({
    api: run.api,
    mode: writes ? ctx.settings.delivery.comment : "none",
    ...(t.thread ? { threadNumber: t.thread.number } : {}),
    ...(reactTo && writes ? { reactTo } : {}),
    stickyKey: t.stickyKey,
    ...(run.runUrl ? { runUrl: run.runUrl } : {}),
    ...(t.requester ? { requester: t.requester.login } : {}),
    log: ctx.log,
    redactor: ctx.redactor,
  });
  await progress.start();
  return progress;
}

/** Run phase, before the agent: PR-supplied agent config replaced, the task written from the thread. */
async function taskStage(ctx: StageContext, run: GitHubRun): Promise<StageContext> {
  const prompt = await prepareWorkspace(run, ctx.settings, ctx.resultsDir, ctx.io.host, ctx.log);
  return { ...ctx, settings: { ...ctx.settings, run: { ...ctx.settings.run, prompt } } };
}

/**
 * Publish/all: the patch becomes a commit, a pull request or stays in the
 * comment; then the comment is finalized. Failures here never lose the
 * result: they come back as `error` after the outputs are set.
 */
async function deliveryStage(ctx: StageContext, gh: GitHubStage, result: RunResult): Promise<{ outputs: Outputs; summary?: string; error?: string }> {
  const { io, settings, log } = ctx;
  const { run, progress } = gh;
  let outcome: DeliveryOutcome | undefined;
  let note: string | undefined;
  if (settings.delivery.phase === "run") note = "The changes are delivered by the publish job.";
  else {
    outcome = await deliver(
      {
        plan: run.plan,
        settings: settings.delivery,
        trigger: run.trigger,
        api: run.api,
        token: settings.github.token,
        serverUrl: io.host.serverUrl,
        remoteUrl: run.remoteUrl,
        ...(run.runUrl ? { runUrl: run.runUrl } : {}),
        ...(io.host.workflow ? { workflowName: io.host.workflow } : {}),
        ...(io.host.workflowRef ? { workflowRef: io.host.workflowRef } : {}),
        ...(io.host.ref ? { ref: io.host.ref } : {}),
        workDir: ctx.runDir,
        log,
      },
      result,
    );
    if (outcome.error) log.error(`Delivery: ${outcome.error} The results are in ${ctx.resultsDir}.`);
  }
  const errors: string[] = outcome?.error ? [outcome.error] : [];
  try {
    await progress.finish(
      await renderFinalComment({
        marker: progress.marker,
        result,
        ...(outcome ? { outcome } : {}),
        ...(note ? { note } : {}),
        showPatch: outcome ? outcome.showPatch : result.diff.changedFiles.length > 0,
        ...(run.runUrl ? { runUrl: run.runUrl } : {}),
        ...(run.trigger.requester ? { requester: run.trigger.requester.login } : {}),
      }),
    );
  } catch (e) {
    errors.push(`${errorMessage(e)}. The result is in the job summary and ${ctx.resultsDir}.`);
    log.error(errors.at(-1)!);
  }
  return {
    outputs: deliveryOutputs(outcome, progress.commentUrl),
    ...(outcome ? { summary: deliverySummary(outcome, progress.commentUrl) } : {}),
    ...(errors.length ? { error: `Delivery failed: ${errors.join(" ")}` } : {}),
  };
}

/** Something failed after the comment said "working": the comment ends with the reason. */
async function failureCommentStage(ctx: StageContext, gh: GitHubStage, e: unknown, result: RunResult | undefined): Promise<void> {
  const message = ctx.redactor.redact(errorMessage(e));
  try {
    const body = result
      ? await renderFinalComment({
          marker: gh.progress.marker,
          result,
          note: `❌ ${message}`,
          showPatch: result.diff.changedFiles.length > 0,
          ...(gh.run.runUrl ? { runUrl: gh.run.runUrl } : {}),
        })
      : errorBody({ marker: gh.progress.marker, message, ...(gh.run.runUrl ? { runUrl: gh.run.runUrl } : {}) });
    await gh.progress.finish(body);
  } catch (err) {
    ctx.log.warning(`Could not write the failure into the comment: ${errorMessage(err)}`);
  }
}

/** The run's artifact, once uploaded or downloaded. */
interface RunArtifactRef {
  id: number;
  name: string;
  url?: string;
}

function artifactOutputs(artifact: RunArtifactRef | undefined): Outputs {
  return artifact ? { "artifact-id": String(artifact.id), ...(artifact.url ? { "artifact-url": artifact.url } : {}) } : {};
}

function repositoryAccess(ctx: StageContext): RepositoryAccess | undefined {
  const [owner, repo] = (ctx.io.host.repository ?? "").split("/");
  if (!owner || !repo) return undefined;
  return { token: ctx.settings.github.token, owner, repo, apiUrl: ctx.io.host.apiUrl };
}

/**
 * phase run/all, before the agent: which issue/PR this is, where its session
 * state is kept, and what `session` resolves to.
 */
async function sessionStage(ctx: StageContext): Promise<SessionCarry> {
  const { io, settings } = ctx;
  const thread = await threadNumber(io.host.eventPath);
  let store: SessionStore | undefined;
  let key: string | undefined;
  if (io.stateDir) {
    store = new DirSessionStore(io.stateDir);
    key = sessionKey(thread ?? "local");
  } else if (thread !== undefined && settings.artifacts.upload && io.host.artifactService) {
    const access = repositoryAccess(ctx);
    if (access) {
      store = new ArtifactSessionStore(new ActionsArtifactService(), access, {
        ...(settings.artifacts.retentionDays !== undefined ? { retentionDays: settings.artifacts.retentionDays } : {}),
      });
      key = sessionKey(thread);
    }
  }
  return prepareSessionCarry({
    settings,
    ...(store ? { store } : {}),
    ...(key ? { key } : {}),
    workDir: ctx.runDir,
    log: ctx.log,
    redactor: ctx.redactor,
  });
}

/** phase run/all, after the agent: the session state for the next run on this thread. */
async function sessionSaveStage(ctx: StageContext, result: RunResult, session: SessionCarry): Promise<void> {
  const saved = await session.save();
  const host = ctx.io.host;
  if (saved?.artifactId !== undefined)
    result.artifacts.push({
      name: saved.key,
      id: String(saved.artifactId),
      ...(host.repository && host.runId ? { url: artifactUrl(host.serverUrl, host.repository, host.runId, saved.artifactId) } : {}),
    });
}

/**
 * phase run/all, after the agent (also when it failed or timed out): the
 * results folder as one artifact. In `phase: run` a failed upload fails the
 * step, since the publish job depends on it; otherwise it is a warning.
 */
async function uploadStage(ctx: StageContext, result: RunResult): Promise<RunArtifactRef | undefined> {
  const { io, settings, log } = ctx;
  if (!settings.artifacts.upload) {
    log.info("Artifacts: not uploading (upload-artifacts is false).");
    return undefined;
  }
  if (!io.host.artifactService) {
    log.info(`Artifacts: no Actions artifact service here (ACTIONS_RUNTIME_TOKEN is not set); the results stay in ${ctx.resultsDir}.`);
    return undefined;
  }
  const name = runArtifactName(settings.artifacts.name, io.host);
  const { files, skipped } = await prepareRunUpload(ctx.resultsDir, ctx.redactor);
  if (skipped.length) log.warning(`Artifacts: left out what is not a regular file (symlinks are never followed) or has a name artifacts cannot hold: ${skipped.slice(0, 10).join(", ")}`);
  try {
    const uploaded = await new ActionsArtifactService().upload(name, ctx.resultsDir, files, {
      ...(settings.artifacts.retentionDays !== undefined ? { retentionDays: settings.artifacts.retentionDays } : {}),
    });
    const url = io.host.repository && io.host.runId ? artifactUrl(io.host.serverUrl, io.host.repository, io.host.runId, uploaded.id) : undefined;
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

/**
 * phase publish: the run's artifact from an earlier job of this workflow
 * run, downloaded into the results folder and checked (downloadStage), then
 * validated like any patch (validateStage) before delivery.
 */
async function downloadStage(ctx: StageContext): Promise<{ result: RunResult; artifact: RunArtifactRef }> {
  const { io, settings, log } = ctx;
  if (!io.host.artifactService)
    throw new ConfigurationError(
      "Input 'phase': 'publish' downloads the artifact of a 'phase: run' job from the Actions artifact service, which exists only inside a GitHub Actions job.",
    );
  const name = runArtifactName(settings.artifacts.name, io.host);
  const service = new ActionsArtifactService();
  const list = await service.listThisRun();
  let found = list.find((a) => a.name === name);
  // Re-running only the publish job: the run job's artifact carries an earlier attempt number.
  if (!found && !settings.artifacts.name && io.host.runId) {
    const prefix = `agent-run-${io.host.runId}-`;
    found = list
      .filter((a) => a.name.startsWith(prefix) && /^\d+$/.test(a.name.slice(prefix.length)))
      .sort((a, b) => Number(b.name.slice(prefix.length)) - Number(a.name.slice(prefix.length)))[0];
  }
  if (!found)
    throw new ConfigurationError(
      `Input 'artifact-name': no artifact '${name}' in this workflow run${list.length ? ` (it has: ${list.map((a) => a.name).join(", ")})` : ""}. ` +
        "'phase: publish' delivers what a 'phase: run' step uploaded in an earlier job of the same workflow run; give both steps the same 'artifact-name' and make the publish job 'needs:' the run job.",
    );
  await service.downloadThisRun(found, ctx.resultsDir);
  const { result } = await readDownloadedRun(ctx.resultsDir, found.name);
  const url = io.host.repository && io.host.runId ? artifactUrl(io.host.serverUrl, io.host.repository, io.host.runId, found.id) : undefined;
  log.info(`Artifacts: downloaded '${found.name}' (id ${found.id}): ${result.agentName} run, conclusion ${result.conclusion}, ${result.diff.changedFiles.length} changed file(s).`);
  result.artifacts = [{ name: found.name, id: String(found.id), ...(url ? { url } : {}) }];
  return { result, artifact: { id: found.id, name: found.name, ...(url ? { url } : {}) } };
}

/**
 * phase publish/all, before delivery: the patch must apply to the recorded
 * base commit and stay inside the repository (src/publish/validate-patch.ts).
 * In publish the changed files are taken from the patch, not from result.json.
 */
async function validateStage(ctx: StageContext, result: RunResult, artifact: RunArtifactRef | undefined): Promise<void> {
  const { settings } = ctx;
  if (settings.delivery.deliver === "none") return;
  const source = settings.delivery.phase === "publish" && artifact ? `artifact '${artifact.name}'` : "this run";
  const validated = await validatePatch(
    new Git(settings.workspace),
    result.diff.patchPath,
    result.diff.baseCommit,
    { allowWorkflowChanges: settings.delivery.allowWorkflowChanges },
    { source, scratchDir: ctx.runDir },
  );
  if (settings.delivery.phase === "publish") result.diff.changedFiles = validated.changedFiles;
  if (validated.bytes) ctx.log.info(`Patch: ${validated.changedFiles.length} file(s), ${validated.bytes} bytes, applies cleanly to ${result.diff.baseCommit.slice(0, 12)}.`);
}

/** Outputs, job summary and the step's own conclusion. */
async function finish(ctx: StageContext, result: RunResult, outputs: Outputs): Promise<void> {
  const { io, redactor, log } = ctx;
  for (const [name, value] of Object.entries(outputs) as [OutputName, string][]) io.setOutput(name, redactor.redact(value));
  await io.appendSummary(redactor.redact(summaryMarkdown(result)));
  io.saveState(STATE.finished, "true");
  log.info(`Results: ${ctx.resultsDir}`);
  if (result.conclusion === "success" || result.conclusion === "skipped") log.info(`Conclusion: ${result.conclusion}`);
  else io.setFailed(redactor.redact(`Agent run ${result.conclusion}: ${result.reason ?? ""}`));
}
