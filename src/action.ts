/**
 * The action's main step. Plan and gather (fan-out) run no agent: their own
 * short stage (fanout/stage.ts). Every other step opens the same way
 * (inputs → settings → trigger and progress comment when there is an event)
 * and then runs its phase's stages, in order (PHASES below):
 *   run     the agent runs; the run artifact carries its result to a publish job
 *   publish no agent: the run job's artifact, its patch checked, then delivery
 *   all     both in one job
 *   reserve no agent: the run's budget reserved on the ledger, before a read-only run job (then it ends)
 * Talks to the runner only through ActionIO; each stage lives in the folder of its step.
 */
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { cloudSecretValues, otelSecretValues, rawSecretValues } from "./config/host.js";
import { readInputFiles } from "./config/input-files.js";
import { inputStagingDir } from "./config/input-files.js";
import { parseSettings, readConfigFile, type ConfigFileText } from "./config/parse.js";
import { configOrigin as configOriginOf, localConfigOrigin, type ConfigOrigin } from "./config/provenance.js";
import type { Settings } from "./config/schema.js";
import { RESULTS_FILES, STATE, type OutputName } from "./constants.js";
import { ConfigurationError, errorMessage, isConfigurationError } from "./errors.js";
import { fanOutPhase } from "./fanout/inputs.js";
import { Git } from "./git/git.js";
import { configFingerprint, fingerprintOf, TouchedWorkspaces, type TouchedRepo } from "./git/touched.js";
import { filteredLogger, type Logger } from "./logger.js";
import type { RunArtifactRef } from "./publish/artifact-stage.js";
import type { Delivered, GitHubStage } from "./publish/github-stage.js";
import { artifactOutputs, resultOutputs, type Outputs } from "./publish/outputs.js";
import type { RequestsFile } from "./publish/safe-outputs/requests.js";
import type { SafeOutputsReport } from "./publish/safe-outputs/stage.js";
import type { ThreatReport } from "./publish/threats/stage.js";
import type { CheckedPatch } from "./publish/patch-stage.js";
import { summaryMarkdown } from "./publish/summary.js";
import { runVerdict } from "./publish/verdict.js";
import type { RunResult } from "./result.js";
import type { SessionCarry } from "./session/carry.js";
import type { CheckpointToRestore } from "./git/checkpoint.js";
import type { ActionIO, GitHubRun, StageContext } from "./stage-context.js";
import { Redactor } from "./shared/redact.js";
import { shardKey } from "./review/record.js";
import { itemKey } from "./shared/item-ref.js";
import type { GitHubEvent } from "./trigger/event.js";
import { eventMayProvidePrompt, readEvent } from "./trigger/event.js";
import { inputsNameThread, repositoryOfRemote } from "./shared/item-ref.js";
import { workflowIdentity } from "./session/thread.js";

export async function runAction(io: ActionIO): Promise<RunResult | undefined> {
  // Mask before anything else can print them, even if parsing fails below.
  const secretValues = rawSecretValues(io.inputs);
  secretValues.push(...otelSecretValues(io.host), ...cloudSecretValues(io.host), ...Object.values(io.keyEnv ?? {}));
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

/**
 * Each phase: its stages, in order. A stage that does not apply to this run (no event, no item) does nothing.
 * A stage loads its own code when it runs: the publish phase never loads the runner, the sandbox or the agents.
 */
const PHASES: Record<Settings["delivery"]["phase"], readonly Stage[]> = {
  run: [prepareWorkspace, resumeCheckpoint, startSession, runTheAgent, judgeOutput, uploadArtifact, endSession, applySafeOutputs, deliver, report, exportTrace, conclude],
  // The reservation is settled first: whatever fails later, the ledger has the run's cost.
  publish: [downloadArtifact, settleBudget, checkThePatch, detectThreats, stageApproval, applySafeOutputs, deliver, report, postReview, recordForGather, conclude],
  // Nothing the agent wrote leaves (artifact, session state, comment) before threat detection has passed.
  all: [prepareWorkspace, resumeCheckpoint, startSession, runTheAgent, checkThePatch, judgeOutput, settleBudget, detectThreats, uploadArtifact, endSession, stageApproval, applySafeOutputs, deliver, report, postReview, exportTrace, recordForGather, conclude],
  // Ends in openStep, once the reservation is made (admitAcrossRuns).
  reserve: [],
};

/** `/approve`: the publish phase's checks and delivery on the staged artifact, then the audit in the staging comment. */
const ENACT: readonly Stage[] = [checkThePatch, detectThreats, applySafeOutputs, deliver, recordApproval, report, conclude];

async function pipeline(io: ActionIO, log: Logger, redactor: Redactor): Promise<RunResult | undefined> {
  const fanOut = fanOutPhase(io.inputs);
  if (fanOut) {
    await (await import("./fanout/stage.js")).runFanOutPhase(io, log, redactor, fanOut);
    io.saveState(STATE.finished, "true");
    return undefined;
  }
  const step = await openStep(io, log, redactor);
  if (!step) return undefined;
  try {
    for (const stage of step.stages ?? PHASES[step.ctx.settings.delivery.phase]) await stage(step);
    return step.result;
  } catch (e) {
    // The reservation is settled even when the run failed: to what was measured, else to all of it.
    await settleBudget(step).catch((err: unknown) => step.ctx.log.warning(`Budget ledger: the reservation was not settled (${errorMessage(err)}); it counts as spent until it expires.`));
    await step.github?.stages.reportFailure(step.ctx, step.github.stage, e, step.result);
    throw e;
  }
}

/** One step of the action: its context, and what its stages have produced so far. */
interface Step {
  ctx: StageContext;
  /** The ledger reservation (max-daily-cost-usd, max-total-cost-usd), settled after the agent ran. */
  settleBudget?: (costUsd: number | undefined, tokens: number | undefined) => Promise<void>;
  /** The GitHub side of a run with an event: the trigger, the progress comment, delivery. */
  github?: { stage: GitHubStage; stages: GitHubStages };
  session?: SessionCarry;
  /** `@agent continue` / `resume: checkpoint`: the thread's checkpoint, fetched and checked (session/checkpoint.ts). */
  checkpoint?: CheckpointToRestore;
  result?: RunResult;
  artifact?: RunArtifactRef;
  refusal?: string;
  /** The tree the checked patch makes (threat detection scans its binary files). */
  postImage?: CheckedPatch["postImage"];
  threats?: ThreatReport;
  /** The agent's safe-output requests, read once: threat detection scans the very requests that are applied. */
  requests?: Promise<RequestsFile>;
  /** phase run: what the detection agent said, for this job's summary (the publish job holds the run back on it). */
  judged?: string;
  safeOutputs?: SafeOutputsReport;
  delivered?: Delivered;
  /** `approval: required`: staged for a person's approval; nothing is applied or delivered in this run. */
  staged?: { outputs: Outputs; summary: string };
  /** `/approve`: the staged run being published, and by whom (its stages replace the phase's). */
  approval?: { staging: import("./publish/approval/enact.js").Staging; by: string; at: string; digest: string };
  stages?: readonly Stage[];
  outputs?: Outputs;
}

type Stage = (step: Step) => Promise<void>;

function resultOf(step: Step): RunResult {
  if (!step.result) throw new Error("no run result yet: a phase lists its stages out of order");
  return step.result;
}

/**
 * Every phase opens the same way: settings from the inputs, then, with an
 * event, the trigger stage (who, what; it may skip the run) and the progress
 * comment; without one, the file inputs. Undefined: the run was skipped.
 */
async function openStep(io: ActionIO, log: Logger, redactor: Redactor): Promise<Step | undefined> {
  // The event first: whether it can supply the prompt decides if `prompt` is required (a thread named by `issue-number` has a default request).
  const event = await readEvent(io.host);
  const eventProvidesPrompt = eventMayProvidePrompt(event) || inputsNameThread(io.inputs);
  // Read once: the fingerprint later steps compare and the settings come from the same bytes.
  const checkedOut = readConfigFile(io.inputs, io.host.workspace);
  const configFile = checkedOut.full;
  // A file that cannot be read as the settings would (a symlink out of the workspace) fails the parse; its fingerprint is still the file's.
  const config = checkedOut.error === undefined ? fingerprintOf(checkedOut.bytes) : await configFingerprint(configFile);
  const origins = await configOrigins(io, configFile, config);
  const noticed = new Set<string>();
  const notice = (m: string) => {
    if (!noticed.has(m)) (log.notice ? log.notice(m) : log.info(m));
    noticed.add(m);
  };
  // The file as checked out, or (PR events) as on the base commit: whose it is decides what it may set.
  const { text, source, error } = checkedOut;
  const parse = (baseFile?: ConfigFileText) =>
    parseSettings(io.inputs, {
      cwd: io.host.workspace,
      cloudDefaults: io.host.cloud,
      ...(io.keyEnv ? { keyEnv: io.keyEnv } : {}),
      eventProvidesPrompt,
      configOrigin: baseFile ? origins.base : origins.checkedOut,
      notice,
      configFile: baseFile ?? { text, source, ...(error !== undefined ? { error } : {}) },
    });
  const settings = parse();
  const runDir = path.join(io.host.runnerTemp, "agent-runner", randomUUID());
  const resultsDir = io.resultsDir ?? path.join(runDir, "results");
  io.saveState(STATE.runTemp, runDir);
  io.saveState(STATE.resultsDir, resultsDir);
  const ctx: StageContext = { io, settings, log, redactor, resultsDir, runDir, configFingerprint: config, ...(origins.checkout ? { configCheckout: origins.checkout } : {}) };
  if (event) return openGitHubStep(ctx, event, parse);
  const admitted = await admitAcrossRuns(ctx, { repository: io.inputs.repository?.trim() || io.host.repository || "", ...(io.inputs["issue-number"]?.trim() ? { thread: io.inputs["issue-number"].trim() } : {}) });
  if (admitted.skip !== undefined) return skipped(admitted.ctx, admitted.skip);
  if (admitted.reserved !== undefined) return reservedOnly(admitted.ctx, admitted.reserved);
  return { ctx: { ...admitted.ctx, settings: await readInputFiles(admitted.ctx.settings, { cwd: io.host.workspace, stagingDir: inputStagingDir(runDir) }) }, ...admitted.step };
}

/** Which leg of a workflow run a step is: the item's repository and thread (the reserve job's key for it, `legRun`). */
interface Leg {
  repository: string;
  thread?: string;
}

/**
 * Budgets across runs (ledger/): before anything is posted or the agent
 * starts, the run's cap is reserved on the ledger and the run's max-cost-usd
 * becomes at most the reservation. Nothing left: the run is skipped.
 * - all: this step reserves (and settles, settleBudget).
 * - reserve: this step reserves under the leg's key, and the step ends there.
 * - run: the reserve job's reservation, read from the ledger, is the cap; none: skipped.
 * - publish: the same reservation, settled to the artifact's claim (settleBudget); none: skipped.
 */
async function admitAcrossRuns(ctx: StageContext, leg: Leg): Promise<{ ctx: StageContext; skip?: string; reserved?: string; step?: Pick<Step, "settleBudget"> }> {
  const ledger = ctx.settings.ledger;
  if (!ledger) return { ctx };
  const { io, settings } = ctx;
  const phase = settings.delivery.phase;
  const ledgerRun = await import("./ledger/run.js");
  const repository = io.host.repository ?? "";
  const [owner = "", name = ""] = repository.split("/");
  const where = {
    token: settings.github.token,
    apiUrl: io.host.apiUrl,
    repository: { owner, name, fullName: repository },
    log: ctx.log,
    now: () => (io.host.now ? new Date(io.host.now) : new Date()),
  };
  const legRun = ledgerRun.legRun(io.host.runId ?? "local", leg.thread ? `${leg.repository}#${leg.thread}` : leg.repository);
  if (phase === "run" || phase === "publish") {
    const found = await ledgerRun.findLegReservation({ ...where, run: legRun, for: phase });
    if (found.kind === "none") {
      if (phase === "run") io.setOutput("budget-exceeded", "true");
      return { ctx, skip: found.message };
    }
    if (phase === "publish") return { ctx, ...(found.kind === "held" ? { step: { settleBudget: found.settle! } } : {}) };
    return { ctx: cappedAt(ctx, found.reservation.amountUsd) };
  }
  const runCap = settings.budget?.maxCostUsd;
  const admitted = await ledgerRun.admitRun({
    ...where,
    run: phase === "reserve" ? legRun : `${io.host.runId ?? "local"}-${io.host.runAttempt ?? "1"}`,
    workflow: workflowIdentity(io.host.workflowRef) ?? io.host.workflow ?? "local",
    ...(leg.thread ? { thread: leg.thread } : {}),
    ...(settings.agent.model ? { model: settings.agent.model } : {}),
    ...(runCap !== undefined ? { runCapUsd: runCap } : {}),
    ...(ledger.dailyCapUsd !== undefined ? { daily: { capUsd: ledger.dailyCapUsd, scope: ledger.scope } } : {}),
    ...(ledger.totalCapUsd !== undefined ? { pool: { capUsd: ledger.totalCapUsd, id: io.host.runId ?? "local" } } : {}),
    timeoutSeconds: settings.run.timeoutSeconds,
  });
  if (admitted.admission.kind === "no-room") {
    io.setOutput("budget-exceeded", "true");
    return { ctx, skip: admitted.admission.message };
  }
  const amount = admitted.admission.reservation.amountUsd;
  if (phase === "reserve") return { ctx, reserved: `reserved $${amount.toFixed(2)} for run ${legRun}; the run job takes it as its cap, the publish job settles it` };
  return { ctx: cappedAt(ctx, amount), step: { settleBudget: admitted.settle! } };
}

/** Held like a cap the workflow set: the gateway stops the agent at the reservation. */
function cappedAt(ctx: StageContext, amountUsd: number): StageContext {
  const { settings } = ctx;
  const maxCostUsd = Math.min(amountUsd, settings.budget?.maxCostUsd ?? amountUsd);
  return { ...ctx, settings: { ...settings, budget: { modelPrices: {}, ...settings.budget, maxCostUsd, costCapIsDefault: false } } };
}

/** `phase: reserve`: the reservation is on the ledger, and that is all this step does. */
function reservedOnly(ctx: StageContext, line: string): undefined {
  ctx.log.info(`Budget ledger: ${line}.`);
  ctx.io.setOutput("conclusion", "success");
  ctx.io.setOutput("budget-exceeded", "false");
  ctx.io.saveState(STATE.finished, "true");
  return undefined;
}

/**
 * The GitHub stages (Markdown and HTML parsers, the API client) load only for runs with an event; the
 * trigger's first, the rest (attachments, the progress comment, delivery) once the ledger admitted the
 * run: a step the trigger or the ledger skips loads none of them.
 */
async function openGitHubStep(ctx: StageContext, event: GitHubEvent, reparse: Parameters<GitHubStages["prepareTrigger"]>[0]["reparse"]): Promise<Step | undefined> {
  const { io, log } = ctx;
  if (ctx.settings.approval.mode === "required") {
    const request = (await import("./trigger/approval-command.js")).approvalCommand(event);
    if (request) return openApprovalStep(ctx, event, request, await loadGitHubStages(), reparse);
  }
  const { prepareTrigger } = await import("./trigger/stage.js");
  const trigger = await prepareTrigger({ event, settings: ctx.settings, raw: io.inputs, host: io.host, log, reparse, runDir: ctx.runDir });
  if (trigger.kind === "skip") return skipped(ctx, trigger.reason);
  const thread = trigger.run.trigger.thread?.number;
  const leg = { repository: trigger.run.trigger.repo.fullName, ...(thread !== undefined ? { thread: String(thread) } : {}) };
  const admitted = await admitAcrossRuns({ ...ctx, settings: trigger.settings }, leg);
  if (admitted.skip !== undefined) return skipped(admitted.ctx, admitted.skip);
  if (admitted.reserved !== undefined) return reservedOnly(admitted.ctx, admitted.reserved);
  const item = reviewShardItem(trigger.run.trigger, admitted.ctx.settings, io.host.repository);
  const triggered = { ...admitted.ctx, ...(item ? { item } : {}) };
  const stages = await loadGitHubStages();
  return { ctx: triggered, github: { stage: await stages.startProgress(triggered, trigger.run), stages }, ...admitted.step };
}

/**
 * A review shard's job is an item of its own: its artifact's key ends in `-shard-<n>`, which gather reads.
 * Without `issue-number` (the event's pull request) the key is the pull request's, as gather computes it.
 */
function reviewShardItem(trigger: GitHubRun["trigger"], settings: Settings, thisRepository: string | undefined): StageContext["item"] {
  const shard = settings.review?.shard;
  if (!shard) return trigger.item;
  const pr = trigger.pullRequest?.number;
  const key = trigger.item?.key ?? (pr !== undefined ? itemKey(trigger.repo, pr, thisRepository) : undefined);
  return { ref: trigger.item?.ref ?? trigger.repo.fullName, key: shardKey(key, shard.index) };
}

/**
 * `/approve <digest>` or `/reject` under `approval: required` (publish/approval/enact.ts): the checks
 * that need no artifact, then (approve) the run on this thread as the trigger stage builds it for the
 * approver, the staged artifact verified against the digest and the decision taken once. What
 * follows is the publish phase's own checks and delivery, on exactly those bytes (ENACT).
 */
async function openApprovalStep(
  ctx: StageContext,
  event: GitHubEvent,
  request: import("./publish/approval/enact.js").ApprovalRequest,
  stages: GitHubStages,
  reparse: Parameters<GitHubStages["prepareTrigger"]>[0]["reparse"],
): Promise<Step | undefined> {
  const { io, log, settings } = ctx;
  if (settings.delivery.phase === "run" || settings.delivery.phase === "reserve") return skipped(ctx, "an approval comment is decided by the publish job");
  const [approval, { createOctokit }, { GitHubApi }] = await Promise.all([import("./publish/approval/enact.js"), import("./github/client.js"), import("./github/api.js")]);
  const [owner = "", name = ""] = request.repository.split("/");
  const api = new GitHubApi(await createOctokit({ token: settings.github.token, apiUrl: io.host.apiUrl, log }), { owner, name, fullName: request.repository });
  const refuse = async (reason: string, silent = false) => {
    await (silent ? approval.noteSilentRefusal(ctx, request, reason) : approval.replyRefusal(ctx, api, request, reason));
    return decided(ctx, approval.approvalOutputs("refused"));
  };
  const checked = await approval.checkRequest(ctx, api, request);
  if (checked.kind === "refused") return refuse(checked.reason, checked.silent);
  const { staging } = checked;
  const by = request.actor.login;
  const at = (io.host.now ? new Date(io.host.now) : new Date()).toISOString();
  if (request.verb.kind === "reject") {
    // The same lock as an approval: a /reject racing an /approve, or a second /reject, decides nothing.
    if (!(await approval.takeDecision(api, staging.record.digest, "reject")))
      return refuse(`the staged run \`${staging.record.digest.slice(0, 12)}\` was already decided by another \`/approve\` or \`/reject\``);
    await approval.recordDecision(ctx, api, staging, { ...staging.record, state: "rejected", decision: { by, at } }, `🚫 Rejected by @${by} at ${at}. Nothing was published.`);
    await approval.reply(ctx, api, request.thread, `🚫 @${by} rejected the staged run \`${staging.record.digest.slice(0, 12)}\`: nothing was published.`, [by]);
    return decided(ctx, approval.approvalOutputs("rejected", staging.record.digest));
  }
  // The approver is who the run is for now: the trigger stage checks them again, as for any comment.
  const asApprover = { ...settings, github: { ...settings.github, triggerPhrase: "/approve", ...(settings.approval.approvers.length ? { allowedUsers: settings.approval.approvers } : {}) } };
  const trigger = await stages.prepareTrigger({ event, settings: asApprover, raw: io.inputs, host: io.host, log, reparse, runDir: ctx.runDir });
  if (trigger.kind === "skip") return refuse(trigger.reason);
  // Enactment is a publish phase whatever the step's phase: no agent ran here, the artifact is what is checked and delivered.
  const triggered: StageContext = { ...ctx, settings: { ...trigger.settings, delivery: { ...trigger.settings.delivery, phase: "publish" } } };
  const verified = await approval.verifyStaged(triggered, api, trigger.run, staging);
  if ("refused" in verified) return refuse(verified.refused);
  if (!(await approval.takeDecision(api, verified.digest, "approve")))
    return refuse(`another approval of \`${verified.digest.slice(0, 12)}\` was taken first; a staged run is published once`);
  const enacting = await approval.recordDecision(ctx, api, staging, { ...staging.record, state: "enacting", decision: { by, at } }, `⏳ Approved by @${by} at ${at}: publishing.`);
  const run = { ...trigger.run, approval: { by, digest: verified.digest } };
  return {
    ctx: triggered,
    github: { stage: await stages.startProgress(triggered, run), stages },
    result: verified.result,
    artifact: verified.artifact,
    approval: { staging: enacting, by, at, digest: verified.digest },
    stages: ENACT,
  };
}

/** An approval or rejection decided without publishing: the outputs, and nothing else. */
function decided(ctx: StageContext, outputs: Outputs): undefined {
  for (const [name, value] of Object.entries(outputs) as [OutputName, string][]) ctx.io.setOutput(name, value);
  ctx.io.setOutput("conclusion", "skipped");
  ctx.io.saveState(STATE.finished, "true");
  return undefined;
}

// --- The stages, in the order the phases run them.

/** The task written from the thread, the PR checked out, pasted files attached (events only). */
async function prepareWorkspace(step: Step): Promise<void> {
  if (!step.github) return;
  const { ctx, github } = step;
  const prompt = await github.stages.prepareWorkspace(github.stage.run, ctx.settings, ctx.resultsDir, ctx.io.host, ctx.log);
  step.ctx = await github.stages.withCommentAttachments(withPrompt(ctx, prompt), github.stage.run);
}

/**
 * `@agent continue` or `resume: checkpoint`: the thread's checkpoint, fetched with the job's token into a
 * private repository, before the session is looked up (a continued run continues the thread's session).
 */
async function resumeCheckpoint(step: Step): Promise<void> {
  const { ctx, github } = step;
  const continues = ctx.settings.run.resumeCheckpoint || (github?.stage.run.trigger.requestSource === "comment" && (await import("./session/checkpoint.js")).asksToContinue(github.stage.run.trigger.request));
  if (!continues) return;
  if (!github) throw new ConfigurationError("Input 'resume': 'checkpoint' continues an issue's or pull request's checkpoint; this run has no event to name one.");
  const { fetchCheckpoint, continuedSettings } = await import("./session/checkpoint.js");
  const run = github.stage.run;
  step.checkpoint = await fetchCheckpoint({
    thread: run.trigger.thread?.number,
    remoteUrl: run.remoteUrl,
    token: ctx.settings.github.token,
    serverUrl: ctx.io.host.serverUrl,
    gitEnv: ctx.io.host.gitEnv,
    runDir: ctx.runDir,
    log: ctx.log,
  });
  step.ctx = { ...ctx, settings: continuedSettings(ctx.settings, step.checkpoint, ctx.log) };
}

async function startSession(step: Step): Promise<void> {
  step.session = await (await import("./session/stage.js")).openSession(step.ctx);
}

/** The agent itself, its events feeding the progress comment. */
async function runTheAgent(step: Step): Promise<void> {
  const { github } = step;
  const carried = step.session ? { ...step.ctx, settings: { ...step.ctx.settings, run: step.session.run } } : step.ctx;
  const [{ runAgent }, { hostInstallOptions }, { hostRepoDir }] = await Promise.all([
    import("./runner.js"),
    import("./agents/install.js"),
    import("./git/host-repo.js"),
  ]);
  const touched = TouchedWorkspaces.forJob(carried.io.host.runnerTemp, carried.configFingerprint, carried.configCheckout);
  const ctx = !github && carried.settings.approval.mode === "required" && !carried.settings.attempts ? await inStagingCopy(carried, touched) : carried;
  const runId = randomUUID();
  const attempts = ctx.settings.attempts ? await import("./attempts/run.js") : undefined;
  // Every marker the agents' processes will carry, saved before any starts: post kills what a killed main left behind.
  ctx.io.saveState(STATE.agentRunId, attempts ? attempts.allRunIds(runId, ctx.settings.attempts!.count).join(" ") : runId);
  const deps = {
    runId,
    log: ctx.log,
    redactor: ctx.redactor,
    resultsDir: ctx.resultsDir,
    scratchDir: path.join(ctx.runDir, "scratch"),
    searchPath: ctx.io.host.path,
    sandboxHost: ctx.io.host.sandbox,
    gitEnv: ctx.io.host.gitEnv,
    hostGitDir: hostRepoDir(ctx.runDir),
    touched,
    install: hostInstallOptions(ctx.io.host),
    ...(step.session ? { session: step.session.hooks } : {}),
    ...(step.checkpoint ? { checkpoint: step.checkpoint } : {}),
    ...(github ? { onEvent: github.stage.progress.onEvent } : {}),
    ...(ctx.io.signal ? { signal: ctx.io.signal } : {}),
  };
  step.result = attempts ? await attempts.runAttempts(ctx.settings, deps) : await runAgent(ctx.settings, deps);
  // From here on the agent's text leaves only once threat detection has passed: no more progress edits.
  if (ctx.settings.delivery.threatDetection !== "none") github?.stage.progress.pause();
}

/**
 * `approval: required` without an event (`agent-runner run`): the agent works in a copy of the
 * checkout, as an attempt does (attempts/workspaces.ts), so the working tree changes only when
 * `agent-runner approve` applies the staged patch (publish/approval/local.ts).
 */
async function inStagingCopy(ctx: StageContext, touched: TouchedWorkspaces): Promise<StageContext> {
  const { checkoutOf, copyCheckout } = await import("./attempts/workspaces.js");
  const copy = await copyCheckout(await checkoutOf(ctx.settings.workspace, ctx.io.host.gitEnv, touched), path.join(ctx.runDir, "scratch", "staging-workspace"));
  ctx.log.info(`Approval: the agent works in a copy of the checkout; ${ctx.settings.workspace} is left as it is until the staged patch is approved.`);
  return { ...ctx, settings: { ...ctx.settings, workspace: copy.workspace } };
}

/** A held run's results stay on the runner: the artifact would carry what detection held back. */
async function uploadArtifact(step: Step): Promise<void> {
  if (step.threats?.held) {
    step.ctx.log.warning(`Artifacts: not uploaded, threat detection held this run back. The results stay on the runner in ${step.ctx.resultsDir}.`);
    return;
  }
  step.artifact = await (await import("./publish/artifact-stage.js")).uploadRunArtifact(step.ctx, resultOf(step));
}

async function endSession(step: Step): Promise<void> {
  if (step.threats?.held) return;
  if (step.session) await (await import("./session/stage.js")).saveSession(step.ctx, resultOf(step), step.session);
}

/**
 * `threat-detection: agent`, where the model key is (phase run or all): the
 * detection agent judges the patch, the safe-output requests and the final
 * message, reading copies in a read-only folder, before any of it leaves.
 * The host writes its verdict into the results (publish/threats/detection.ts);
 * detectThreats holds the run back on it, here or in the publish job.
 */
async function judgeOutput(step: Step): Promise<void> {
  const { ctx } = step;
  if (ctx.settings.delivery.threatDetection !== "agent") return;
  step.github?.stage.progress.pause();
  const [detection, { runReviewAgent }, { hostInstallOptions }, { redactTreeInPlace }, { agentBackend }] = await Promise.all([
    import("./publish/threats/detection.js"),
    import("./runner.js"),
    import("./agents/install.js"),
    import("./trace/redact-files.js"),
    import("./agents/registry.js"),
  ]);
  // Judged as it will be uploaded: the agent's outputs folder redacted first.
  await redactTreeInPlace(path.join(ctx.resultsDir, RESULTS_FILES.outputs), ctx.redactor);
  const result = resultOf(step);
  const judged = await detection.judgedContent(ctx.resultsDir, result);
  const digest = detection.judgedDigest(judged);
  const choice = detection.detectorChoice(ctx.settings);
  if (detection.nothingToJudge(judged)) {
    await detection.writeVerdict(ctx.resultsDir, { version: 1, digest, agent: choice.backend, status: "nothing-to-judge" });
    return;
  }
  const dataDir = path.join(ctx.runDir, "detection-data");
  const task = ctx.settings.run.prompt;
  await detection.writeDetectionData(dataDir, task, judged);
  // A detector that sends no model requests through the gateway (`command`) gets no model budget: it would refuse one.
  const usesModelGateway = agentBackend(choice.backend).provider !== undefined;
  const settings = detection.detectorSettings(ctx.settings, dataDir, detection.detectorPrompt(dataDir, task, judged), { usesModelGateway });
  ctx.log.info(`Threat detection: the ${choice.backend} detection agent judges the output.`);
  const ran = await runReviewAgent(settings, {
    log: ctx.log,
    redactor: ctx.redactor,
    resultsDir: path.join(ctx.resultsDir, RESULTS_FILES.detection),
    scratchDir: path.join(ctx.runDir, "detection-scratch"),
    searchPath: ctx.io.host.path,
    sandboxHost: ctx.io.host.sandbox,
    install: hostInstallOptions(ctx.io.host),
    runContext: detection.detectorRunContext(dataDir),
    ...(ctx.io.signal ? { signal: ctx.io.signal } : {}),
  }).catch((e: unknown) => ({ error: `the detection agent could not run: ${errorMessage(e)}` }));
  const record = detection.verdictRecord(choice, digest, ran);
  await detection.writeVerdict(ctx.resultsDir, record);
  step.judged = detection.detectionLine(record, ctx.settings.delivery.detectionFailOpen);
  ctx.log.info(`Threat detection: ${step.judged}${record.error ? ` (${record.error})` : ""}`);
  // Its usage is the run's too; result.json carries it to the publish job.
  step.result = detection.withDetectorUsage(result, record);
  await writeFile(path.join(ctx.resultsDir, RESULTS_FILES.result), JSON.stringify(step.result, null, 2) + "\n");
}

/** The reservation settled to the gateway's measured cost (the detection agent's included), once. */
async function settleBudget(step: Step): Promise<void> {
  if (!step.settleBudget) return;
  const usage = step.result?.usage;
  await step.settleBudget(usage?.costUsd, usage ? usage.inputTokens + usage.outputTokens : undefined);
}

async function downloadArtifact(step: Step): Promise<void> {
  ({ result: step.result, artifact: step.artifact } = await (await import("./publish/artifact-stage.js")).downloadRunArtifact(step.ctx));
}

async function checkThePatch(step: Step): Promise<void> {
  const checked = await (await import("./publish/patch-stage.js")).checkPatch(step.ctx, resultOf(step), step.artifact);
  step.refusal = checked.refusal;
  step.postImage = checked.postImage;
}

/** The requests file of the results, read on first use and kept for the next stage. */
function safeOutputRequests(step: Step): Promise<RequestsFile> {
  step.requests ??= Promise.all([import("./publish/safe-outputs/requests.js"), import("./publish/safe-outputs/stage.js")]).then(([requests, stage]) =>
    requests.readRequests(stage.safeOutputsFile(step.ctx.resultsDir)),
  );
  return step.requests;
}

/** Before anything is published: a secret holds everything back, protected files go for review (publish/threats/). */
async function detectThreats(step: Step): Promise<void> {
  const threats = await import("./publish/threats/stage.js");
  step.threats = await threats.detectThreats(step.ctx, resultOf(step), step.postImage, () => safeOutputRequests(step));
  if (!step.threats?.held) return;
  step.result = threats.heldResult(resultOf(step), step.threats);
  // A patch already refused keeps its reasons: the hold adds to them.
  step.refusal = step.refusal && step.threats.message ? `${step.refusal}\n${step.threats.message}` : step.threats.message;
}

/** `approval: required`: everything checked and nothing held back or refused, the one comment shows what an approval would publish. */
async function stageApproval(step: Step): Promise<void> {
  const { ctx, github } = step;
  if (ctx.settings.approval.mode !== "required" || step.threats?.held || step.refusal) return;
  // The CLI: the record in the results folder, for `agent-runner approve`.
  if (!github) {
    step.staged = await (await import("./publish/approval/local.js")).stageLocally(ctx, resultOf(step), await safeOutputRequests(step));
    return;
  }
  const { stageForApproval } = await import("./publish/approval/stage.js");
  step.staged = await stageForApproval(ctx, github.stage, resultOf(step), step.artifact, await safeOutputRequests(step));
}

/** The agent's GitHub requests, checked again and applied here with the host's token (before the final comment, which lists them). */
async function applySafeOutputs(step: Step): Promise<void> {
  if (step.staged || step.threats?.held || (!step.github && !step.ctx.settings.agent.safeOutputs)) return;
  // task: review: the review request is posted by postReview (or gather), merged and marked, not applied on its own.
  const requests = step.ctx.settings.review
    ? () => safeOutputRequests(step).then((f) => ({ ...f, requests: f.requests.filter((r) => !("value" in r) || r.value["type"] !== "create_pull_request_review") }))
    : () => safeOutputRequests(step);
  step.safeOutputs = await (await import("./publish/safe-outputs/stage.js")).safeOutputsStage(step.ctx, step.github?.stage.run, resultOf(step), requests);
}

/**
 * `task: review` without shards: the agent's review request, merged and posted as gather posts a sharded
 * one (fanout/review.ts): checked against the local diff, deduplicated, capped, marked with the head it
 * covered. In one job (phase all) or in the publish job after a run job (its artifact holds the request).
 */
async function postReview(step: Step): Promise<void> {
  const { ctx, github } = step;
  const review = ctx.settings.review;
  const pr = github?.stage.run.trigger.pullRequest;
  if (!review || review.shard || !github || !pr || step.staged || step.threats?.held) return;
  const [{ reviewInOneJob }, { patchRepository }] = await Promise.all([import("./fanout/review.js"), import("./publish/patch-stage.js")]);
  const git = patchRepository(ctx);
  await reviewInOneJob({ io: ctx.io, log: ctx.log, redactor: ctx.redactor, review, pr: pr.number, git, resultsDir: ctx.resultsDir, api: github.stage.run.api });
}

/** Commit, pull request or comment, and the final comment (events only). */
async function deliver(step: Step): Promise<void> {
  if (!step.github || step.staged) return;
  step.delivered = await step.github.stages.deliverToGitHub(step.ctx, step.github.stage, resultOf(step), step.refusal, step.safeOutputs?.note, step.threats);
}

/** The staging comment says who approved which digest, when, and what it became. */
async function recordApproval(step: Step): Promise<void> {
  const { ctx, approval, github } = step;
  if (!approval || !github) return;
  const enact = await import("./publish/approval/enact.js");
  const failed = failure(step);
  const where = step.delivered?.outputs["pull-request-url"] ?? step.delivered?.outputs["commit-sha"] ?? step.delivered?.outputs["comment-url"];
  const line = failed
    ? `⚠️ Approved by @${approval.by} at ${approval.at} (digest \`${approval.digest}\`), but nothing was published: ${failed}`
    : `✅ Approved by @${approval.by} at ${approval.at}: digest \`${approval.digest}\` published${where ? `: ${where}` : ""}.`;
  const record = { ...approval.staging.record, state: "enacted" as const, decision: { by: approval.by, at: approval.at, ...(failed ? { note: "not published" } : {}) } };
  await enact.recordDecision(ctx, github.stage.run.api, approval.staging, record, line);
  step.staged = { outputs: enact.approvalOutputs("enacted", approval.digest), summary: `### Approval\n\n- ${line}\n` };
}

/** Outputs, job summary and the step's own conclusion. */
async function report(step: Step): Promise<void> {
  const { ctx, artifact, delivered, safeOutputs, refusal, threats } = step;
  const result = resultOf(step);
  // One verdict for the `conclusion` output, the summary's headline and (delivered) the comment's.
  const verdict = delivered?.verdict ?? runVerdict({ result, held: threats?.held === true, refused: refusal !== undefined });
  step.outputs = {
    ...resultOutputs(result),
    conclusion: verdict.conclusion,
    ...artifactOutputs(artifact),
    ...delivered?.outputs,
    ...safeOutputs?.outputs,
    ...step.staged?.outputs,
    ...(threats ? { threats: JSON.stringify(threats.findings) } : {}),
  };
  await finish(ctx, result, step.outputs);
  const refusalSection = refusal ? (await import("./publish/deliver-report.js")).refusalSummary(refusal) : undefined;
  const threatSection =
    threats && (threats.findings.length || threats.review.length || threats.detection)
      ? (await import("./publish/threats/stage.js")).threatMarkdown(threats)
      : step.judged
        ? `### Threat detection\n\n- ${step.judged} The publish job checks this verdict before any write.\n`
        : undefined;
  await writeJobSummary(ctx, [summaryMarkdown(result, verdict), threatSection, safeOutputs?.summary, delivered?.summary, step.staged?.summary, refusalSection]);
}

/** After delivery, bounded (trace/otel.ts): a dead collector never fails or stalls the step. The step's outputs carry its verdict. */
async function exportTrace(step: Step): Promise<void> {
  const { ctx } = step;
  if (!ctx.settings.otel && !ctx.io.host.otel) return;
  await (await import("./trace/otel.js")).exportTraceStage(ctx, resultOf(step), step.github?.stage.run.trigger.thread?.number, step.outputs ?? step.delivered?.outputs);
}

/** A fan-out item's publish step says what it delivered, for gather (the run artifact predates delivery). */
async function recordForGather(step: Step): Promise<void> {
  if (step.ctx.item) await (await import("./fanout/record.js")).recordDelivery(step.ctx, resultOf(step), step.outputs ?? {}, failure(step));
}

/** The result is saved and the outputs are set; a refused patch or a failed delivery still fails the step. */
async function conclude(step: Step): Promise<void> {
  const message = failure(step);
  if (message) step.ctx.io.setFailed(step.ctx.redactor.redact(message));
}

function failure(step: Step): string | undefined {
  return step.refusal ?? step.delivered?.error;
}

/** Outputs and the step's own conclusion (the job summary follows, once every section is known). */
async function finish(ctx: StageContext, result: RunResult, outputs: Outputs): Promise<void> {
  const { io, redactor, log } = ctx;
  for (const [name, value] of Object.entries(outputs) as [OutputName, string][]) io.setOutput(name, redactor.redact(value));
  io.saveState(STATE.finished, "true");
  log.info(`Results: ${ctx.resultsDir}`);
  // The `conclusion` output is the verdict (checks and delivery included); the step fails for a refusal or a failed delivery in `conclude`.
  if (result.conclusion === "success" || result.conclusion === "skipped") log.info(`Conclusion: ${outputs.conclusion ?? result.conclusion}`);
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
  const local = io.localConfig ? localConfigOrigin(io.inputs) : undefined;
  if (local) return { checkedOut: local, base: local, ...(checkout ? { checkout } : {}) };
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
