/**
 * The action's main step, as a sequence of stages:
 *   inputs → settings → trigger (who, what) → progress comment →
 *   [phase run/all]     task → session → agent run → artifact upload → session save
 *   [phase publish]     the run's artifact downloaded
 *   [phase publish/all] patch checked → delivery
 *   → outputs, job summary, final comment.
 * [phase plan/gather] fan-out: the items as a matrix, or one report of them (fanout/).
 * Talks to the runner only through ActionIO; each stage lives in the folder of its step.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { hostInstallOptions } from "./agents/install.js";
import { otelSecretValues, rawSecretValues } from "./config/host.js";
import { readInputFiles } from "./config/input-files.js";
import { inputStagingDir } from "./config/input-files.js";
import { configFilePath, parseSettings } from "./config/parse.js";
import { STATE, type OutputName } from "./constants.js";
import { ConfigurationError, errorMessage, isConfigurationError } from "./errors.js";
import { fanOutPhase } from "./fanout/inputs.js";
import { recordDelivery } from "./fanout/record.js";
import { hostRepoDir } from "./git/host-repo.js";
import { configFingerprint, TouchedWorkspaces } from "./git/touched.js";
import { filteredLogger, type Logger } from "./logger.js";
import { artifactOutputs, downloadRunArtifact, uploadRunArtifact, type RunArtifactRef } from "./publish/artifact-stage.js";
import type { GitHubStage } from "./publish/github-stage.js";
import { resultOutputs, type Outputs } from "./publish/outputs.js";
import { checkPatch } from "./publish/patch-stage.js";
import { summaryMarkdown } from "./publish/summary.js";
import type { RunResult } from "./result.js";
import { runAgent, type SessionHooks } from "./runner.js";
import { openSession, saveSession } from "./session/stage.js";
import type { ActionIO, StageContext } from "./stage-context.js";
import { Redactor } from "./shared/redact.js";
import { eventMayProvidePrompt, readEvent } from "./trigger/event.js";
import { inputsNameThread } from "./trigger/item-ref.js";

export async function runAction(io: ActionIO): Promise<RunResult | undefined> {
  // Mask before anything else can print them, even if parsing fails below.
  const secretValues = rawSecretValues(io.inputs);
  secretValues.push(...otelSecretValues(io.host));
  for (const v of secretValues) io.setSecret(v);
  const redactor = new Redactor(secretValues);
  const log = filteredLogger(io.log, (s) => redactor.redact(s));
  try {
    return await pipeline(io, log, redactor);
  } catch (e) {
    // The main step reported (and ended its comment): nothing is left for post to finish.
    io.saveState(STATE.finished, "true");
    if (isConfigurationError(e)) io.setFailed(redactor.redact(e.message));
    else {
      log.debug(redactor.redact((e as Error).stack ?? ""));
      io.setFailed(redactor.redact(`Agent Runner failed unexpectedly (this is a bug; please report it): ${errorMessage(e)}`));
    }
    return undefined;
  }
}

async function pipeline(io: ActionIO, log: Logger, redactor: Redactor): Promise<RunResult | undefined> {
  // Fan-out's plan and gather run no agent: their own small stage (fanout/stage.ts).
  const fanOut = fanOutPhase(io.inputs);
  if (fanOut) {
    const { runFanOutPhase } = await import("./fanout/stage.js");
    await runFanOutPhase(io, log, redactor, fanOut);
    io.saveState(STATE.finished, "true");
    return undefined;
  }
  // The event first: whether it can supply the prompt decides if `prompt` is required (a thread named by `issue-number` has a default request).
  const event = await readEvent(io.host);
  const eventProvidesPrompt = eventMayProvidePrompt(event) || inputsNameThread(io.inputs);
  const parse = (configFile?: { text: string | undefined; source: string }) =>
    parseSettings(io.inputs, { cwd: io.host.workspace, eventProvidesPrompt, ...(configFile ? { configFile } : {}) });
  // A config file an earlier agent step of this job could have written must not decide this step's settings.
  const configFile = configFilePath(io.inputs, io.host.workspace).full;
  const config = await configFingerprint(configFile);
  await refuseRewrittenConfig(io, configFile, config);
  const settings = parse();
  const runDir = path.join(io.host.runnerTemp, "agent-runner", randomUUID());
  const resultsDir = io.resultsDir ?? path.join(runDir, "results");
  io.saveState(STATE.runTemp, runDir);
  io.saveState(STATE.resultsDir, resultsDir);
  let ctx: StageContext = { io, settings, log, redactor, resultsDir, runDir, configFingerprint: config };

  // The GitHub stages (Markdown and HTML parsers, the API client) load only for runs with an event.
  let github: GitHubStage | undefined;
  let gh: GitHubStages | undefined;
  if (event) {
    gh = await loadGitHubStages();
    const trigger = await gh.prepareTrigger({ event, settings, raw: io.inputs, host: io.host, log, reparse: parse, runDir });
    if (trigger.kind === "skip") return skipped(ctx, trigger.reason);
    ctx = { ...ctx, settings: trigger.settings, ...(trigger.run.trigger.item ? { item: trigger.run.trigger.item } : {}) };
    github = await gh.startProgress(ctx, trigger.run);
  } else ctx = { ...ctx, settings: await readInputFiles(settings, { cwd: io.host.workspace, stagingDir: inputStagingDir(runDir) }) };

  let result: RunResult | undefined;
  try {
    let artifact: RunArtifactRef | undefined;
    if (ctx.settings.delivery.phase === "publish") ({ result, artifact } = await downloadRunArtifact(ctx));
    else {
      if (github && gh) {
        ctx = withPrompt(ctx, await gh.prepareWorkspace(github.run, ctx.settings, resultsDir, io.host, log));
        ctx = await gh.withCommentAttachments(ctx, github.run);
      }
      const session = await openSession(ctx);
      result = await runStage({ ...ctx, settings: { ...ctx.settings, run: session.run } }, session.hooks, github);
      artifact = await uploadRunArtifact(ctx, result);
      await saveSession(ctx, result, session);
    }
    const refusal = ctx.settings.delivery.phase !== "run" ? await checkPatch(ctx, result, artifact) : undefined;
    // The agent's GitHub requests, checked again and applied here with the host's token (before the final comment, which lists them).
    const safeOutputs = github || ctx.settings.agent.safeOutputs ? await (await import("./publish/safe-outputs/stage.js")).safeOutputsStage(ctx, github?.run, result) : undefined;
    const delivered = github && gh ? await gh.deliverToGitHub(ctx, github, result, refusal, safeOutputs?.note) : undefined;

    const outputs = { ...resultOutputs(result), ...artifactOutputs(artifact), ...delivered?.outputs, ...safeOutputs?.outputs };
    await finish(ctx, result, outputs);
    if (safeOutputs) await io.appendSummary(redactor.redact(safeOutputs.summary));
    if (delivered?.summary) await io.appendSummary(redactor.redact(delivered.summary));
    if (refusal) await io.appendSummary(redactor.redact((await import("./publish/deliver-report.js")).refusalSummary(refusal)));
    // After delivery, bounded (trace/otel.ts): a dead collector never fails or stalls the step.
    if (ctx.settings.delivery.phase !== "publish" && (ctx.settings.otel || io.host.otel))
      await (await import("./trace/otel.js")).exportTraceStage(ctx, result, github?.run.trigger.thread?.number, delivered?.outputs);
    // The result is saved and the outputs are set; a refused patch or a failed delivery still fails the step.
    const failure = refusal ?? delivered?.error;
    // A fan-out item's publish step says what it delivered, for gather (the run artifact predates delivery).
    if (ctx.item && ctx.settings.delivery.phase !== "run") await recordDelivery(ctx, result, outputs, failure);
    if (failure) io.setFailed(redactor.redact(failure));
    return result;
  } catch (e) {
    if (github && gh) await gh.reportFailure(ctx, github, e, result);
    throw e;
  }
}

/** The step's config file must be what it was when an earlier agent step of this job started, if there was one. */
async function refuseRewrittenConfig(io: ActionIO, configFile: string, fingerprint: string): Promise<void> {
  const touched = await TouchedWorkspaces.forJob(io.host.runnerTemp).lookup(path.dirname(configFile));
  if (!touched || touched.config === fingerprint) return;
  throw new ConfigurationError(
    `Input 'config-file': an agent already ran in '${touched.workTree}' earlier in this job, and '${path.relative(io.host.workspace, configFile)}' ${fingerprint === "absent" ? "is gone" : touched.config === "absent" ? "has appeared" : "has changed"} since. Settings such as sandbox or network cannot come from a file an agent could write: run this step in a job of its own (a fresh checkout), or give the settings as step inputs with a config-file outside the workspace.`,
  );
}

type GitHubStages = Awaited<ReturnType<typeof loadGitHubStages>>;

async function loadGitHubStages() {
  const [trigger, attachments, stage] = await Promise.all([import("./trigger/stage.js"), import("./trigger/attachments.js"), import("./publish/github-stage.js")]);
  return {
    prepareTrigger: trigger.prepareTrigger,
    prepareWorkspace: trigger.prepareWorkspace,
    withCommentAttachments: attachments.withCommentAttachments,
    startProgress: stage.startProgress,
    deliverToGitHub: stage.deliverToGitHub,
    reportFailure: stage.reportFailure,
  };
}

/**
 * Trigger or authorization said no (irrelevant event, no trigger phrase, an
 * actor without write access): a neutral ending, one log line, exit 0, nothing posted.
 */
function skipped(ctx: StageContext, reason: string): undefined {
  ctx.log.info(`Agent Runner skipped: ${reason}.`);
  ctx.io.setOutput("conclusion", "skipped");
  ctx.io.saveState(STATE.finished, "true");
  return undefined;
}

/** The task written from the thread replaces the prompt (PR-supplied agent config already swapped out). */
function withPrompt(ctx: StageContext, prompt: string): StageContext {
  return { ...ctx, settings: { ...ctx.settings, run: { ...ctx.settings.run, prompt } } };
}

/** phase run/all: the agent itself, its events feeding the progress comment. */
function runStage(ctx: StageContext, session: SessionHooks, github: GitHubStage | undefined): Promise<RunResult> {
  const runId = randomUUID();
  ctx.io.saveState(STATE.agentRunId, runId);
  return runAgent(ctx.settings, {
    runId,
    log: ctx.log,
    redactor: ctx.redactor,
    resultsDir: ctx.resultsDir,
    scratchDir: path.join(ctx.runDir, "scratch"),
    searchPath: ctx.io.host.path,
    sandboxHost: ctx.io.host.sandbox,
    gitEnv: ctx.io.host.gitEnv,
    hostGitDir: hostRepoDir(ctx.runDir),
    touched: TouchedWorkspaces.forJob(ctx.io.host.runnerTemp, ctx.configFingerprint),
    install: hostInstallOptions(ctx.io.host),
    session,
    ...(github ? { onEvent: github.progress.onEvent } : {}),
    ...(ctx.io.signal ? { signal: ctx.io.signal } : {}),
  });
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
