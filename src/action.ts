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
import { configOrigin as configOriginOf, type ConfigOrigin } from "./config/provenance.js";
import { STATE, type OutputName } from "./constants.js";
import { ConfigurationError, errorMessage, isConfigurationError } from "./errors.js";
import { fanOutPhase } from "./fanout/inputs.js";
import { recordDelivery } from "./fanout/record.js";
import { hostRepoDir } from "./git/host-repo.js";
import { Git } from "./git/git.js";
import { configFingerprint, TouchedWorkspaces, type TouchedRepo } from "./git/touched.js";
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
import { Redactor } from "./trace/redact.js";
import { eventMayProvidePrompt, readEvent } from "./trigger/event.js";
import { inputsNameThread, repositoryOfRemote } from "./trigger/item-ref.js";

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
  const configFile = configFilePath(io.inputs, io.host.workspace).full;
  const config = await configFingerprint(configFile);
  const origins = await configOrigins(io, configFile, config);
  const noticed = new Set<string>();
  const notice = (m: string) => {
    if (!noticed.has(m)) (log.notice ? log.notice(m) : log.info(m));
    noticed.add(m);
  };
  // The file as checked out, or (PR events) as on the base commit: whose it is decides what it may set.
  const parse = (configFile?: { text: string | undefined; source: string }) =>
    parseSettings(io.inputs, {
      cwd: io.host.workspace,
      eventProvidesPrompt,
      configOrigin: configFile ? origins.base : origins.checkedOut,
      notice,
      ...(configFile ? { configFile } : {}),
    });
  const settings = parse();
  const runDir = path.join(io.host.runnerTemp, "agent-runner", randomUUID());
  const resultsDir = io.resultsDir ?? path.join(runDir, "results");
  io.saveState(STATE.runTemp, runDir);
  io.saveState(STATE.resultsDir, resultsDir);
  let ctx: StageContext = { io, settings, log, redactor, resultsDir, runDir, configFingerprint: config, ...(origins.checkout ? { configCheckout: origins.checkout } : {}) };

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
    const patchRefusal = ctx.settings.delivery.phase !== "run" ? await checkPatch(ctx, result, artifact) : undefined;
    // Before anything is published: a secret holds everything back (publish/threats/).
    const threats = await (await import("./publish/threats/stage.js")).detectThreats(ctx, result);
    if (threats?.held) result = (await import("./publish/threats/stage.js")).heldResult(result);
    const refusal = threats?.message ?? patchRefusal;
    // The agent's GitHub requests, checked again and applied here with the host's token (before the final comment, which lists them).
    const safeOutputs =
      !threats?.held && (github || ctx.settings.agent.safeOutputs) ? await (await import("./publish/safe-outputs/stage.js")).safeOutputsStage(ctx, github?.run, result) : undefined;
    const delivered = github && gh ? await gh.deliverToGitHub(ctx, github, result, refusal, safeOutputs?.note, threats) : undefined;

    const outputs = { ...resultOutputs(result), ...artifactOutputs(artifact), ...delivered?.outputs, ...safeOutputs?.outputs, ...(threats ? { threats: JSON.stringify(threats.findings) } : {}) };
    await finish(ctx, result, outputs);
    const refusalSection = refusal ? (await import("./publish/deliver-report.js")).refusalSummary(refusal) : undefined;
    const threatSection = threats && (threats.findings.length || threats.review.length) ? (await import("./publish/threats/stage.js")).threatMarkdown(threats) : undefined;
    await writeJobSummary(ctx, [summaryMarkdown(result), threatSection, safeOutputs?.summary, delivered?.summary, refusalSection]);
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

/**
 * Whose config file this step reads (config/provenance.ts): the step's
 * inputs decide for the file at any commit; as checked out, also the
 * repository its folder is a checkout of. After an earlier agent step of
 * this job the folder's remotes are that agent's to write: the repository
 * that step recorded before its agent started stands, and the file must be
 * the one it read.
 */
async function configOrigins(io: ActionIO, configFile: string, fingerprint: string): Promise<{ checkedOut: ConfigOrigin; base: ConfigOrigin; checkout?: string }> {
  const touched = await TouchedWorkspaces.forJob(io.host.runnerTemp).lookup(path.dirname(configFile));
  if (touched) refuseRewrittenConfig(io, configFile, fingerprint, touched);
  const checkout = touched ? touched.checkout : fingerprint === "absent" ? undefined : await checkoutOf(path.dirname(configFile), io.host);
  return {
    checkedOut: configOriginOf(io.inputs, io.host.repository, checkout),
    base: configOriginOf(io.inputs, io.host.repository),
    ...(checkout ? { checkout } : {}),
  };
}

/** The repository on the GitHub host that `dir` is a checkout of (its origin), undefined when there is none or it is elsewhere. */
async function checkoutOf(dir: string, host: ActionIO["host"]): Promise<string | undefined> {
  const r = await new Git(dir, host.gitEnv).exec(["remote", "get-url", "origin"], { okCodes: [1, 2, 128] }).catch(() => undefined);
  return r && r.exitCode === 0 ? repositoryOfRemote(r.stdout.trim(), host.serverUrl) : undefined;
}

/** The step's config file must be what it was when an earlier agent step of this job started, if there was one. */
function refuseRewrittenConfig(io: ActionIO, configFile: string, fingerprint: string, touched: TouchedRepo): void {
  if (touched.config === fingerprint) return;
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
    touched: TouchedWorkspaces.forJob(ctx.io.host.runnerTemp, ctx.configFingerprint, ctx.configCheckout),
    install: hostInstallOptions(ctx.io.host),
    session,
    ...(github ? { onEvent: github.progress.onEvent } : {}),
    ...(ctx.io.signal ? { signal: ctx.io.signal } : {}),
  });
}

/** Outputs and the step's own conclusion (the job summary follows, once every section is known). */
async function finish(ctx: StageContext, result: RunResult, outputs: Outputs): Promise<void> {
  const { io, redactor, log } = ctx;
  for (const [name, value] of Object.entries(outputs) as [OutputName, string][]) io.setOutput(name, redactor.redact(value));
  io.saveState(STATE.finished, "true");
  log.info(`Results: ${ctx.resultsDir}`);
  if (result.conclusion === "success" || result.conclusion === "skipped") log.info(`Conclusion: ${result.conclusion}`);
  else io.setFailed(redactor.redact(`Agent run ${result.conclusion}: ${result.reason ?? ""}`));
}

/**
 * The step's job summary: one document (an open HTML block in one section
 * must not reach into the next), redacted, then through the posting filter
 * (GitHub renders it as Markdown), appended once.
 */
async function writeJobSummary(ctx: StageContext, sections: (string | undefined)[]): Promise<void> {
  const { toSafeMarkdown, SUMMARY_LIMIT } = await import("./publish/safe-markdown.js");
  const markdown = ctx.redactor.redact(sections.filter((s): s is string => Boolean(s)).join("\n"));
  const policy = { serverUrl: ctx.io.host.serverUrl, allowedDomains: ctx.settings.run.network.allowedDomains };
  await ctx.io.appendSummary(toSafeMarkdown(markdown, policy, SUMMARY_LIMIT));
}
