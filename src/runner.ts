/**
 * The pipeline: prepare → materialise → run → collect → cleanup → RunResult.
 * Every other module is a step it calls. Once the agent has started, nothing
 * is lost: whatever happens, the trace, the patch and result.json are written.
 */
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { installAgent, type InstallContext } from "./agents/install.js";
import { agentBackend } from "./agents/registry.js";
import { chooseProvider, type ProviderChoice } from "./agents/providers.js";
import { runContextText } from "./agents/run-context.js";
import type { AgentBackend, AgentContext, AgentInvocation, InstalledAgent } from "./agents/types.js";
import { stageAttachments, type StagedAttachments } from "./config/attachments.js";
import type { Settings } from "./config/schema.js";
import { RESULTS_FILES } from "./constants.js";
import { ConfigurationError, errorMessage } from "./errors.js";
import { oneLine } from "./text.js";
import { HostRepo } from "./git/host-repo.js";
import type { TouchedRepo, TouchedWorkspaces } from "./git/touched.js";
import { snapshotIgnored, type IgnoredSnapshot } from "./git/clean-copy.js";
import { collectChanges, takeBaseline, type Baseline, type Collected } from "./git/snapshot.js";
import type { Logger } from "./logger.js";
import type { CheckpointCause, Conclusion, RunResult } from "./result.js";
import { restoreCheckpoint, type CheckpointToRestore } from "./git/checkpoint.js";
import { watchForStall } from "./runner/stall.js";
import { checkBudget, gatewayBudget } from "./sandbox/budget.js";
import { retryPolicy } from "./sandbox/gateway-retry.js";
import { buildAgentEnv } from "./sandbox/env.js";
import { runProcessTree, type ProcessOutcome } from "./sandbox/process.js";
import { chooseSandbox } from "./sandbox/registry.js";
import { baseUrlFor, startModelGateway, type ModelGateway } from "./sandbox/gateway.js";
import { isCloud } from "./shared/agents.js";
import { GHA_CREDS_FILE, isCloudCredentialName } from "./shared/cloud.js";
import type { DotGitWalk, PreparedSandbox, SandboxBackend, SandboxHost, SandboxLayout, SpawnSpec } from "./sandbox/types.js";
import { walkWorkspaceForGit } from "./sandbox/hostfs.js";
import type { TracedEvent } from "./shared/events.js";
import { LiveLog } from "./trace/live-log.js";
import { splitPatch } from "./shared/patch-pieces.js";
import { redactPatchInPlace, type Redactor } from "./shared/redact.js";
import { SummaryBuilder, type EventSummary } from "./trace/summary.js";
import { TraceWriter } from "./trace/writer.js";
import { agentVerifyFixRounds, describeVerifyRun, displayCommand, runVerifyCommand, uncheckedRun, type RoundsOutcome, type RoundSteps, type VerifyStepResult } from "./runner/verify.js";
import { prepareCleanCheck, type CheckSource } from "./runner/clean-check.js";

export interface RunnerDeps {
  log: Logger;
  redactor: Redactor;
  /** Where result.json, patch.diff and the trace go. */
  resultsDir: string;
  /** Private scratch space for this run (the agent's HOME and TMPDIR live here). */
  scratchDir: string;
  /** The marker value the agent's processes carry (RUN_MARKER_VAR); default: a fresh one. */
  runId?: string;
  /** PATH used to find the agent's program. */
  searchPath: string;
  /** The runner as the sandbox backends need it (tools, folders to hide, Docker settings). */
  sandboxHost: SandboxHost;
  /** Environment of the git calls that snapshot the workspace. */
  gitEnv: Record<string, string>;
  /** Where the host's private repository goes (outside the sandbox's view; see src/git/host-repo.ts). */
  hostGitDir: string;
  /** The workspaces an agent of this job already ran in (src/git/touched.ts). */
  touched: TouchedWorkspaces;
  signal?: AbortSignal;
  /** Called for every event as it happens (progress comment). */
  onEvent?: (e: TracedEvent) => void;
  /** Carrying session state across runs (src/session). */
  session?: SessionHooks;
  /** Where and how agent CLIs are installed (tool cache, npm's environment, Actions cache). */
  install?: Pick<InstallContext, "toolCache" | "env" | "cache">;
  /**
   * A model gateway the caller owns (startGatewayFor), shared by several runs so that one
   * budget covers them all (src/attempts/): used instead of starting one, and left open.
   */
  gateway?: ModelGateway;
  /** `@agent continue` / `resume: checkpoint`: the earlier runs' work, put into the workspace after the baseline is taken (git/checkpoint.ts). */
  checkpoint?: CheckpointToRestore;
}

/**
 * How long before `timeout-minutes` runs out the agent is stopped: 10 % of the
 * limit, at most a minute. The rest is for collecting the patch and keeping it
 * as a checkpoint (artifact, session state, the checkpoint ref) within the limit.
 */
export function checkpointMarginMs(timeoutSeconds: number): number {
  return Math.min(60_000, timeoutSeconds * 100);
}

/** What the steps shared by the agent's run and a reviewing agent's run need (RunnerDeps has it all). */
type LaunchDeps = Pick<RunnerDeps, "log" | "redactor" | "resultsDir" | "scratchDir" | "runId" | "searchPath" | "sandboxHost" | "signal" | "onEvent" | "session" | "install"> & {
  /** Set for the task's own agent (runAgent): the margin before `timeout-minutes` and the stall watchdog apply. */
  checkpoints?: boolean;
};

/** What starting a model gateway needs: the log and the runner's cloud environment. */
type GatewayDeps = Pick<RunnerDeps, "log" | "sandboxHost">;

/** Where the runner lets session carrying in: HOME is fresh before, intact after. */
export interface SessionHooks {
  /** Before the backend writes its config into HOME, so current config wins over saved state. */
  restore(backend: AgentBackend, ctx: AgentContext): Promise<void>;
  /** After result.json is written, HOME still holding the CLI's session files. */
  capture(backend: AgentBackend, ctx: AgentContext, result: RunResult): Promise<void>;
}

export async function runAgent(settings: Settings, deps: RunnerDeps): Promise<RunResult> {
  const startedAt = new Date();
  const backend = agentBackend(settings.agent.backend);
  // --- prepare: nothing below may start the agent until every check passed.
  const choice = chooseProvider(backend, settings.agent);
  await checkOptions(settings, backend, deps.log);
  const { repo, baseline, walk, ignored, earlierAgent } = await measureStart(settings, deps);
  if (deps.checkpoint) {
    const restored = await restoreCheckpoint(repo, baseline, deps.checkpoint, deps.scratchDir);
    deps.log.info(`Checkpoint: restored ${restored.files} changed path(s) from ${deps.checkpoint.commit.slice(0, 12)} on top of ${baseline.commit.slice(0, 12)}; the patch stays relative to that commit.`);
  }
  const stage = { ...(await layOut(settings, backend, deps)), walk };
  const sandboxBackend = await chooseSandbox(settings.sandbox.choice, deps.log, deps.sandboxHost, { dockerImage: settings.sandbox.dockerImage });
  const checks: CheckSource = { repo, baseline, ignored, sandboxBackend, earlierAgent };
  // The model key stays on the host: the agent talks to a loopback gateway that injects it.
  const gateway = deps.gateway ?? (choice ? await startGatewayFor(choice, backend, settings, deps) : undefined);
  const ownGateway = gateway && gateway !== deps.gateway ? gateway : undefined;
  const launch = await prepareLaunch(settings, deps, backend, stage, sandboxBackend, gateway && choice ? { gateway, choice } : undefined, ownGateway);
  // --- run: from here on, failures become the result instead of exceptions.
  const ran = await runTraced(settings, { ...deps, checkpoints: true }, backend, launch, gateway, ownGateway, stage, checks);
  // --- collect
  const collected = await collect(repo, baseline, deps);
  const result = buildResult({ settings, deps, backend, startedAt, baseline, stage, launch, ran, collected, gateway });
  await writeResultFiles(result, deps, launch, stage);
  await deps.session?.capture(backend, launch.ctx, result).catch((e: unknown) => deps.log.warning(`Saving the session state failed: ${errorMessage(e)}`));
  await rm(path.join(deps.scratchDir, "tmp"), { recursive: true, force: true }).catch(() => undefined);
  return result;
}

/** What a reviewing agent (threat detection's) left: its final text, how it ended and what it used. No patch, no session. */
export interface ReviewRun {
  conclusion: Conclusion;
  reason?: string;
  /** Its final message (redacted). */
  output: string;
  usage: RunResult["usage"];
  agentVersion: string;
  sandboxBackend: string;
  durationMs: number;
}

export interface ReviewDeps extends Pick<RunnerDeps, "log" | "redactor" | "searchPath" | "sandboxHost" | "signal" | "install"> {
  /** Where its trace goes (a folder of its own in the run's results). */
  resultsDir: string;
  /** Its HOME, TMPDIR and outputs folder: private, thrown away after. */
  scratchDir: string;
  /** What the reviewer is told about where it is, instead of the run context of an agent whose changes are delivered. */
  runContext: string;
}

/**
 * A second agent that only reads: the same install, sandbox, gateway and
 * trace as runAgent, with `settings.workspace` mounted read-only, no host
 * repository, no patch and no session. Model keys are its only secrets.
 */
export async function runReviewAgent(settings: Settings, deps: ReviewDeps): Promise<ReviewRun> {
  const backend = agentBackend(settings.agent.backend);
  // Its model key (or the cloud credentials the gateway signs with) is all it keeps; no check, no attempts of its own.
  const own = Object.fromEntries(Object.entries(settings.run.secrets).filter(([name]) => backend.keyNames.includes(name) || isCloudCredentialName(name)));
  const { verify: _verify, attempts: _attempts, ...rest } = settings;
  const reviewer: Settings = { ...rest, run: { ...settings.run, secrets: own } };
  await checkOptions(reviewer, backend, deps.log);
  await mkdir(deps.scratchDir, { recursive: true });
  await mkdir(deps.resultsDir, { recursive: true });
  const stage = await layOut(reviewer, backend, deps, true);
  const sandboxBackend = await chooseSandbox(reviewer.sandbox.choice, deps.log, deps.sandboxHost, { dockerImage: reviewer.sandbox.dockerImage });
  const gateway = await startRunGateway(backend, reviewer, deps);
  const choice = chooseProvider(backend, reviewer.agent);
  const launch = await prepareLaunch(reviewer, deps, backend, stage, sandboxBackend, gateway && choice ? { gateway, choice } : undefined, gateway, deps.runContext);
  const ran = await runTraced(reviewer, deps, backend, launch, gateway, gateway, stage);
  await rm(path.join(deps.scratchDir, "tmp"), { recursive: true, force: true }).catch(() => undefined);
  const budgetStop = gateway?.budgetStopReason();
  const { conclusion, reason } =
    budgetStop && !ran.outcome.spawnError && !ran.outcome.cancelled
      ? { conclusion: "failure" as const, reason: budgetStop }
      : conclude(ran.outcome, ran.events, ran.stderrTail, undefined, (code, tail) => backend.describeExit?.(code, tail));
  const review = deps.redactor.redactValue({
    conclusion,
    ...(reason ? { reason } : {}),
    output: ran.events.finalMessage,
    usage: gateway ? gateway.usage() : ran.events.usage,
    agentVersion: stage.installed.version,
    sandboxBackend: launch.sandbox.name,
    durationMs: ran.outcome.durationMs,
  });
  await writeReviewTranscripts(reviewer, deps, launch, ran, review);
  return review;
}

/** transcript.md and .html next to its trace, rendered as for a run with no patch (a rendering problem only warns). */
async function writeReviewTranscripts(settings: Settings, deps: ReviewDeps, launch: Launch, ran: Ran, review: ReviewRun): Promise<void> {
  const result: RunResult = {
    ...review,
    agentName: settings.agent.name,
    agentBackend: settings.agent.backend,
    ...(settings.agent.model || ran.events.model ? { model: settings.agent.model ?? ran.events.model } : {}),
    command: [launch.invocation.file, ...launch.invocation.args],
    returncode: ran.outcome.exitCode,
    stdoutPath: path.join(deps.resultsDir, RESULTS_FILES.stdout),
    stderrPath: path.join(deps.resultsDir, RESULTS_FILES.stderr),
    tracePath: path.join(deps.resultsDir, RESULTS_FILES.trace),
    eventCount: ran.eventCount,
    toolCalls: ran.events.toolCalls,
    numTurns: ran.events.numTurns,
    permissionDenials: ran.events.permissionDenials,
    networkBlocked: ran.events.networkBlocked,
    startedAt: new Date(ran.spawnedAt).toISOString(),
    diff: { baseCommit: "", baseTree: "", patchPath: path.join(deps.resultsDir, RESULTS_FILES.patch), changedFiles: [], agentCommits: [] },
    artifacts: [],
    metadata: {},
  };
  const { writeTranscriptFiles } = await import("./trace/transcript-files.js");
  await writeTranscriptFiles(deps.resultsDir, deps.redactor.redactValue(result), { prompt: launch.ctx.run.prompt, redactor: deps.redactor }).catch((e: unknown) =>
    deps.log.warning(`Writing the detection agent's transcripts failed: ${errorMessage(e)}`),
  );
}

/** Options the backend cannot honour (an error when strict) and a budget it cannot be held to. */
async function checkOptions(settings: Settings, backend: AgentBackend, log: Logger): Promise<void> {
  const unsupported = backend.unsupported(settings.agent, settings.run);
  if (unsupported.length) {
    if (settings.agent.strict) throw new ConfigurationError([...unsupported.map((p) => `${p} (set strict: false to only warn)`)]);
    for (const p of unsupported) log.warning(`${p} Ignored because strict is false.`);
  }
  await checkBudget(settings, backend);
}

/**
 * Before the agent starts: from here on, host git reads the workspace only through this private repository.
 * With `verify-command`, the ignored files (dependencies) are copied too: the checks run on them, not on the agent's.
 * After an earlier agent of this job (`prior`), the checks use the ignored files kept before that first agent, and
 * the base commit's side of earlier-changed paths (`earlierAgent`): nothing that agent left counts.
 */
async function measureStart(settings: Settings, deps: RunnerDeps): Promise<{ repo: HostRepo; baseline: Baseline; walk: DotGitWalk; ignored: IgnoredSnapshot | undefined; earlierAgent: boolean }> {
  await mkdir(deps.scratchDir, { recursive: true });
  await mkdir(deps.resultsDir, { recursive: true });
  const prior = await deps.touched.lookup(settings.workspace);
  if (prior) deps.log.info("An agent of this job already ran in this repository: host git treats it as the agent left it (no settings, no index taken over).");
  const repo = await HostRepo.create({ cwd: settings.workspace, dir: deps.hostGitDir, env: deps.gitEnv, ...(prior ? { prior } : {}) });
  // The sandbox's search for nested checkouts, made while git hashes the workspace (both only read it).
  const [baseline, walk, kept] = await Promise.all([
    takeBaseline(repo, deps.scratchDir),
    walkWorkspaceForGit(settings.workspace),
    settings.verify && !prior ? keepIgnoredFiles(repo, deps) : undefined,
  ]);
  // Recorded before the agent can touch it: a later step of this job must not trust this repository,
  // and its checks take the ignored files kept here (the record lives in RUNNER_TEMP, hidden from every sandbox).
  await deps.touched.mark(repo.workspace, kept ? { dir: kept.dir, entries: kept.entries } : undefined);
  const ignored = prior ? (settings.verify ? await priorIgnored(prior, repo, deps.log) : undefined) : kept?.entries ? kept : undefined;
  return { repo, baseline, walk, ignored, earlierAgent: prior !== undefined };
}

/** The ignored files as they are now, for verify-command's clean copies; credentials files are never copied. */
async function keepIgnoredFiles(repo: HostRepo, deps: RunnerDeps): Promise<IgnoredSnapshot> {
  const named = new Set((deps.sandboxHost.credentialFiles ?? []).map((f) => path.resolve(f)));
  const skip = (rel: string) => GHA_CREDS_FILE.test(path.basename(rel)) || named.has(path.resolve(repo.workspace.workTree, rel));
  const kept = await snapshotIgnored(repo, path.join(deps.scratchDir, "verify-ignored"), skip);
  deps.log.info(`verify-command: kept ${kept.entries} ignored path(s) as they are before the agent starts, for the checks (${(kept.durationMs / 1000).toFixed(1)} s).`);
  return kept;
}

/**
 * The ignored files kept before this job's first agent in this repository: the workspace's now are what that
 * agent left (a `node_modules/.bin` shim the patch never shows). None when that step kept none (it had no
 * `verify-command`) or they are gone: the checks then run without ignored files, and the log says so.
 */
async function priorIgnored(prior: TouchedRepo, repo: HostRepo, log: Logger): Promise<IgnoredSnapshot | undefined> {
  const kept = prior.verifyIgnored;
  const usable = kept && prior.workTree === repo.workspace.workTree && (await stat(kept.dir).then((s) => s.isDirectory(), () => false));
  if (kept && usable) {
    log.info(`verify-command: an agent already ran in this repository earlier in this job; the checks use the ${kept.entries} ignored path(s) kept before that first agent started, not the workspace's.`);
    return kept.entries ? { dir: kept.dir, entries: kept.entries, durationMs: 0 } : undefined;
  }
  const notice = log.notice?.bind(log) ?? log.info.bind(log);
  notice(
    "verify-command: an agent already ran in this repository earlier in this job, and no ignored files (such as installed dependencies) were kept from before it " +
      "(that step had no verify-command, or they are gone), so the checks run without any: the workspace's ignored files are what that agent left. " +
      "Install dependencies inside verify-command, or give the first agent step of the job the verify-command.",
  );
  return undefined;
}

/** The agent's folders, its installed CLI and its attachments, before any sandbox exists. */
interface Stage {
  layout: SandboxLayout;
  installed: InstalledAgent;
  attachments: StagedAttachments | undefined;
  /** The workspace's nested checkouts, found before the agent started (absent: the sandbox walks). */
  walk?: DotGitWalk;
}

async function layOut(settings: Settings, backend: AgentBackend, deps: LaunchDeps, readOnlyWorkspace = false): Promise<Stage> {
  const layout: SandboxLayout = {
    workspace: settings.workspace,
    ...(readOnlyWorkspace ? { workspaceReadOnly: true } : {}),
    home: path.join(deps.scratchDir, "home"),
    tmp: path.join(deps.scratchDir, "tmp"),
    outputsDir: path.join(deps.resultsDir, RESULTS_FILES.outputs),
    // A reviewing agent reads its workspace and writes nothing there.
    readOnlyPaths: readOnlyWorkspace ? [settings.workspace] : [],
  };
  await Promise.all([layout.home, layout.tmp, layout.outputsDir].map((d) => mkdir(d, { recursive: true })));
  const installed = await installAgent(backend, settings.agent, { searchPath: deps.searchPath, cwd: settings.workspace, log: deps.log, ...deps.install });
  layout.readOnlyPaths.push(...installed.readOnlyPaths);
  // Checked and copied before the agent starts, into a folder it can only read.
  const attachments = await stageAttachments({
    workspace: settings.workspace,
    patterns: settings.run.attachments,
    fetched: settings.run.fetchedAttachments,
    dir: path.join(deps.scratchDir, "attachments"),
    artifactDir: path.join(deps.resultsDir, RESULTS_FILES.attachments),
    log: deps.log,
    redactor: deps.redactor,
  });
  if (attachments) layout.readOnlyPaths.push(attachments.dir);
  return { layout, installed, attachments };
}

/** Everything the agent's process needs, prepared; on failure the sandbox and gateway are torn down. */
interface Launch {
  sandbox: PreparedSandbox;
  ctx: AgentContext;
  invocation: AgentInvocation;
  spawnSpec: SpawnSpec;
  /** The agent's environment before wrapping: fix rounds start with it again. */
  env: Record<string, string>;
  runId: string;
}

async function prepareLaunch(
  settings: Settings,
  deps: LaunchDeps,
  backend: AgentBackend,
  { layout, installed, attachments, walk }: Stage,
  sandboxBackend: SandboxBackend,
  model: { gateway: ModelGateway; choice: ProviderChoice } | undefined,
  ownGateway: ModelGateway | undefined,
  runContext = runContextText(layout),
): Promise<Launch> {
  const gateway = model?.gateway;
  const { log } = deps;
  const runId = deps.runId ?? randomUUID();
  // Set once prepared, so a failure before the agent starts still tears it down.
  let prepared: PreparedSandbox | undefined;
  try {
    const sandbox = (prepared = await sandboxBackend.prepare({
      layout,
      network: settings.run.network,
      log,
      ...(deps.sandboxHost.credentialFiles?.length ? { credentialFiles: deps.sandboxHost.credentialFiles } : {}),
      ...(gateway ? { gateway: { host: "127.0.0.1", port: gateway.port } } : {}),
      ...(settings.sandbox.dockerImage ? { dockerImage: settings.sandbox.dockerImage } : {}),
      ...(walk ? { workspaceWalk: walk } : {}),
    }));
    if (gateway && settings.run.network.mode === "none")
      log.warning("network: none leaves the agent no route to the model gateway; use network: model-only for model-backed agents.");
    const endpoint = model
      ? {
          baseUrl: sandbox.reachable(baseUrlFor(model.choice.wire, model.gateway.url)),
          apiKey: model.gateway.placeholderKey,
          provider: model.choice.provider,
          cloud: settings.agent.cloud,
        }
      : undefined;
    const ctx: AgentContext = {
      agent: settings.agent,
      run: attachments ? { ...settings.run, prompt: settings.run.prompt + attachments.promptText } : settings.run,
      layout,
      ...(attachments ? { attachments } : {}),
      ...(endpoint ? { endpoint } : {}),
      runContext,
      log,
    };
    await deps.session?.restore(backend, ctx);
    const materialised = await backend.materialise(ctx);
    const invocation = backend.command(ctx, installed);
    const agentEnv = buildAgentEnv({
      layout,
      run: settings.run,
      backendEnv: { ...materialised.env, ...attachments?.env },
      pathPrepend: [path.dirname(installed.binPath)],
      runId,
    });
    for (const name of agentEnv.missingForwards) log.warning(`Input 'forward-env': ${name} is not set on the runner; not passed.`);
    for (const name of agentEnv.withheldCloud)
      log.warning(`Input 'secrets': ${name} is a cloud credential; it stays on the runner (the model gateway signs cloud requests) and is not passed to the agent.`);
    // With a gateway its own key is expected there; without one a script may have counted on the variable.
    if (!gateway && agentEnv.withheldModelKeys.length)
      log.info(`Input 'secrets': ${agentEnv.withheldModelKeys.join(", ")} ${agentEnv.withheldModelKeys.length === 1 ? "is a model key" : "are model keys"}, given only to a model gateway, never to the agent's environment.`);
    const env = { ...agentEnv.env, ...sandbox.env() };
    const spawnSpec = sandbox.wrap({ file: invocation.file, args: invocation.args, cwd: settings.workspace, env });
    return { sandbox, ctx, invocation, spawnSpec, env, runId };
  } catch (e) {
    await prepared?.cleanup().catch(() => undefined);
    await ownGateway?.close();
    throw e;
  }
}

interface Ran {
  /** The last agent round's process; durationMs and leftoversKilled cover every round and check. */
  outcome: ProcessOutcome;
  events: EventSummary;
  eventCount: number;
  spawnedAt: number;
  stderrTail: string;
  verify: RoundsOutcome;
  /** `timeout-minutes` ran out during a check. */
  verifyTimedOut: boolean;
  /** The stall watchdog stopped the agent (runner/stall.ts). */
  stalled: boolean;
}

/**
 * The agent's process tree, its output parsed into events as it streams; with
 * `verify-command`, the checks and fix rounds after it (runner/verify.ts), all
 * within `timeout-minutes`, each check on a clean copy in a sandbox of its own
 * (runner/clean-check.ts). Sandbox and gateway closed after.
 */
async function runTraced(
  settings: Settings,
  deps: LaunchDeps,
  backend: AgentBackend,
  launch: Launch,
  gateway: ModelGateway | undefined,
  ownGateway: ModelGateway | undefined,
  stage: Stage,
  checks?: CheckSource,
): Promise<Ran> {
  const { log } = deps;
  const { sandbox } = launch;
  const trace = new TraceWriter(deps.resultsDir, deps.redactor);
  // One summary across rounds: the final message and the session are the last round's, tool calls add up.
  const summary = new SummaryBuilder();
  const liveLog = new LiveLog((line) => log.info(line));
  let eventCount = 0;
  const emit: Emit = (e, raw, opts = { summary: true }) => {
    const traced = trace.event(e, raw);
    eventCount++;
    if (opts.summary) summary.add(traced);
    liveLog.event(traced);
    deps.onEvent?.(traced);
  };

  const spawnedAt = Date.now();
  // The task's agent stops a margin early: its work is then kept as a checkpoint within the limit.
  const deadline = spawnedAt + settings.run.timeoutSeconds * 1000 - (deps.checkpoints ? checkpointMarginMs(settings.run.timeoutSeconds) : 0);
  let stalled = false;
  let outcome: ProcessOutcome | undefined;
  let leftoversKilled = 0;
  let verifyTimedOut = false;
  let checkCancelled = false;
  const checkBlocked: { host: string; detail?: string }[] = [];
  log.info(`Starting ${settings.agent.name} (${stage.installed.version}) in sandbox '${sandbox.name}'.`);
  const steps: RoundSteps = {
    agent: async (round, prompt) => {
      if (round > 0) summary.newRound();
      const watched = await watchedRound(settings, deps, gateway, (d, onActivity) =>
        agentRound(settings, d, backend, launch, stage, { round, prompt, deadline, trace, emit, sessionId: summary.summary().sessionId, onActivity }),
      );
      outcome = watched.outcome;
      stalled ||= watched.stalled;
      leftoversKilled += outcome.leftoversKilled;
      const budgetStop = gateway?.budgetStopReason();
      return { ok: !budgetStop && conclude(outcome, summary.summary(), trace.lastStderr(), undefined).conclusion === "success" };
    },
    verify: async (n) => {
      const checked = await runCheck(settings, deps, { launch, backend, stage, checks, blocked: checkBlocked }, n, deadline, emit);
      if (checked.stoppedByDeadline) verifyTimedOut = true;
      if (deps.signal?.aborted) checkCancelled = true;
      return checked;
    },
    stopped: () => Date.now() >= deadline || Boolean(deps.signal?.aborted) || stalled,
  };
  let verify: RoundsOutcome;
  try {
    verify = await agentVerifyFixRounds(settings.verify, steps);
    for (const b of [...sandbox.blockedAttempts(), ...checkBlocked, ...(gateway?.refusals() ?? [])]) emit({ type: "network_blocked", host: b.host, ...(b.detail ? { detail: b.detail } : {}) });
    liveLog.end();
  } finally {
    await trace.close();
    await sandbox.cleanup().catch((e: unknown) => log.warning(`Sandbox cleanup failed: ${errorMessage(e)}`));
    await ownGateway?.close();
  }
  // The first round always runs: the loop starts with it.
  const last = outcome!;
  return {
    // A cancel that came during a check is still the run's cancel.
    outcome: { ...last, durationMs: Date.now() - spawnedAt, leftoversKilled, timedOut: last.timedOut || verifyTimedOut, cancelled: last.cancelled || checkCancelled },
    events: summary.summary(),
    eventCount,
    spawnedAt,
    stderrTail: trace.lastStderr(),
    verify,
    verifyTimedOut,
    stalled,
  };
}

/**
 * One agent round under the stall watchdog (`stall-minutes`, runner/stall.ts),
 * for the task's agent only: a stall aborts the round as a cancel would, and says so.
 */
async function watchedRound(
  settings: Settings,
  deps: LaunchDeps,
  gateway: ModelGateway | undefined,
  round: (deps: LaunchDeps, onActivity: () => void) => Promise<ProcessOutcome>,
): Promise<{ outcome: ProcessOutcome; stalled: boolean }> {
  const stallMs = settings.run.stallSeconds * 1000;
  if (!deps.checkpoints || stallMs <= 0) return { outcome: await round(deps, () => undefined), stalled: false };
  const stop = new AbortController();
  const watch = watchForStall({
    stallMs,
    workspace: settings.workspace,
    ...(gateway
      ? {
          modelActivity: () => {
            const s = gateway.stats();
            return `${s.requests}:${s.bytesIn}:${s.bytesOut}:${s.rejected}`;
          },
        }
      : {}),
    onStall: (idleMs) => {
      deps.log.warning(`Stall watchdog: no model request, output or file change for ${(idleMs / 1000).toFixed(0)} s ('stall-minutes'); stopping the agent and keeping its work as a checkpoint.`);
      stop.abort();
    },
  });
  const signal = deps.signal ? AbortSignal.any([deps.signal, stop.signal]) : stop.signal;
  try {
    const outcome = await round({ ...deps, signal }, () => watch.touch());
    return { outcome, stalled: watch.stalled && !deps.signal?.aborted };
  } finally {
    watch.stop();
  }
}

/** The name the checks carry in the trace (a tool call of the runner's, not the agent's). */
const VERIFY_TOOL = "verify-command";

type Emit = (e: Parameters<SummaryBuilder["add"]>[0], raw?: string, opts?: { summary: boolean }) => void;

/** What a check needs of the run: the agent's launch (its marker, its install), and where the clean copies come from. */
interface CheckParts {
  launch: Launch;
  backend: AgentBackend;
  stage: Stage;
  checks: CheckSource | undefined;
  /** Network attempts the checks' sandboxes blocked, reported with the agent's. */
  blocked: { host: string; detail?: string }[];
}

/**
 * One run of `verify-command` on a clean copy of what would be delivered
 * (runner/clean-check.ts), in a sandbox of its own with the run's network
 * policy and the agent's allowlisted environment (never the model key),
 * limited by `verify-timeout-minutes` and by what is left of
 * `timeout-minutes`. In the trace it is a tool call of the runner's (not
 * counted as the agent's). A copy that cannot be made is a check that could
 * not start: no fix round can mend it.
 */
async function runCheck(settings: Settings, deps: LaunchDeps, parts: CheckParts, n: number, deadline: number, emit: Emit): Promise<VerifyStepResult & { stoppedByDeadline: boolean }> {
  const command = settings.verify?.command ?? [];
  const ownLimit = (settings.verify?.timeoutSeconds ?? 0) * 1000;
  const started = Date.now();
  emit({ type: "tool_call", id: `verify-${n}`, name: VERIFY_TOOL, input: { command: displayCommand(command), run: n } }, undefined, { summary: false });
  let left = ownLimit;
  const checked = await deps.log.group(`Verify: ${displayCommand(command)} (run ${n})`, async () => {
    if (!parts.checks) return uncheckedRun(n, "the run recorded no start state to copy", deps.resultsDir, started);
    const prepared = await prepareCleanCheck({
      settings,
      source: parts.checks,
      installed: parts.stage.installed,
      runId: parts.launch.runId,
      scratchDir: deps.scratchDir,
      credentialFiles: deps.sandboxHost.credentialFiles,
      log: deps.log,
    }).catch((e: unknown) => errorMessage(e));
    if (typeof prepared === "string") return uncheckedRun(n, `the clean copy could not be made: ${prepared}`, deps.resultsDir, started);
    deps.log.info(`Runs on ${prepared.described}.`);
    left = Math.max(deadline - Date.now(), 1);
    try {
      // A cancel that came while the copy was made: a process started now would never hear it.
      if (deps.signal?.aborted) return await uncheckedRun(n, "the run was cancelled before the check started", deps.resultsDir, started);
      return await runVerifyCommand(prepared.spec, {
        n,
        timeoutMs: Math.min(ownLimit, left),
        runId: parts.launch.runId,
        resultsDir: deps.resultsDir,
        redactor: deps.redactor,
        ...(deps.signal ? { signal: deps.signal } : {}),
      });
    } finally {
      parts.blocked.push(...prepared.sandbox.blockedAttempts());
      await prepared.cleanup();
    }
  });
  emit({ type: "tool_result", id: `verify-${n}`, name: VERIFY_TOOL, output: checked.tail, isError: !checked.run.passed }, undefined, { summary: false });
  deps.log.info(`verify-command run ${n}: ${describeVerifyRun(checked.run)}; output in ${checked.run.log}.`);
  return { ...checked, stoppedByDeadline: checked.run.timedOut && left < ownLimit };
}

interface RoundRequest {
  round: number;
  /** A fix round's prompt; undefined for the task itself. */
  prompt: string | undefined;
  deadline: number;
  trace: TraceWriter;
  emit: Emit;
  /** The session the agent reported so far: a fix round resumes it. */
  sessionId: string | undefined;
  /** Output arrived (the stall watchdog's sign of life). */
  onActivity?: () => void;
}

/**
 * One agent process: the task (round 0), or a fix round resuming the session
 * with the check's output as its prompt (the command agent, which has no
 * session, starts again with that prompt in the workspace as it left it).
 */
async function agentRound(settings: Settings, deps: LaunchDeps, backend: AgentBackend, launch: Launch, stage: Stage, req: RoundRequest): Promise<ProcessOutcome> {
  const { invocation, spawnSpec, ctx } = req.round === 0 ? { ...launch } : fixLaunch(settings, backend, launch, stage, req);
  const parser = backend.createParser(ctx);
  const title = req.round === 0 ? `Agent: ${settings.agent.name}` : `Agent: ${settings.agent.name} (fix round ${req.round})`;
  const outcome = await deps.log.group(title, () =>
    runProcessTree(spawnSpec, {
      ...(invocation.stdin !== undefined ? { stdin: invocation.stdin } : {}),
      timeoutMs: Math.max(req.deadline - Date.now(), 1),
      runId: launch.runId,
      ...(deps.signal ? { signal: deps.signal } : {}),
      onStdoutBlock: (text) => {
        req.onActivity?.();
        req.trace.stdoutBlock(text);
      },
      onStdoutLine: (line) => {
        for (const e of safeParse(() => parser.push(line))) req.emit(e, line);
      },
      onStderr: (chunk) => {
        req.onActivity?.();
        req.trace.stderrChunk(chunk);
      },
      flowControl: req.trace,
    }),
  );
  for (const e of safeParse(() => parser.end())) req.emit(e);
  return outcome;
}

/** A fix round's command: the same agent, its session resumed (never forked), the check's output as the prompt, no attachments again. */
function fixLaunch(settings: Settings, backend: AgentBackend, launch: Launch, stage: Stage, req: RoundRequest): { invocation: AgentInvocation; spawnSpec: SpawnSpec; ctx: AgentContext } {
  const { attachments: _attachments, ...rest } = launch.ctx;
  void _attachments;
  const ctx: AgentContext = {
    ...rest,
    run: {
      ...launch.ctx.run,
      prompt: req.prompt ?? "",
      ...(req.sessionId ? { resumeSessionId: req.sessionId, continueLast: false } : { resumeSessionId: undefined, continueLast: backend.name !== "command" }),
      forkSession: false,
    },
  };
  const invocation = backend.command(ctx, stage.installed);
  return { invocation, ctx, spawnSpec: launch.sandbox.wrap({ file: invocation.file, args: invocation.args, cwd: settings.workspace, env: launch.env }) };
}

/** The patch from the private repository; a failure is recorded, not thrown, so the run still reports. */
async function collect(repo: HostRepo, baseline: Baseline, deps: RunnerDeps): Promise<{ collected: Collected; secretsRedacted?: boolean; secretFiles?: string[]; error?: string }> {
  const patchPath = path.join(deps.resultsDir, RESULTS_FILES.patch);
  try {
    const collected = await collectChanges(repo, baseline, deps.scratchDir, patchPath);
    const unseen = collected.changedOutsideSparse ?? [];
    if (unseen.length)
      deps.log.warning(
        `The patch changes or deletes ${unseen.length} file(s) the sparse checkout had left out, which the agent never saw: ${unseen.slice(0, 20).join(", ")}${unseen.length > 20 ? ", …" : ""}`,
      );
    // A secret the agent wrote into a file must not leave in the patch either.
    // Which files held a run secret is known only before redaction (threat detection names them).
    // The patch is read once here: most hold no secret, and then there is nothing to rewrite
    // (a text that redacts to itself is a patch that redactPatchInPlace gives back byte for byte).
    const patch = (await readFile(patchPath)).toString("utf8");
    const secretFiles = splitPatch(patch).filter((p) => deps.redactor.redact(p.text) !== p.text).map((p) => p.file ?? "");
    const secretsRedacted = deps.redactor.redact(patch) !== patch && (await redactPatchInPlace(patchPath, deps.redactor));
    warnExcluded(collected, deps.log);
    return { collected, ...(secretsRedacted ? { secretsRedacted } : {}), ...(secretFiles.length ? { secretFiles } : {}) };
  } catch (e) {
    await writeFile(patchPath, "");
    return {
      collected: { patchPath, changedFiles: [], agentCommits: [], endTree: baseline.tree, excludedFiles: [], excludedTouched: [] },
      error: `Collecting the agent's changes failed: ${errorMessage(e)}`,
    };
  }
}

/** Paths an earlier step changed before the agent started: named, since the patch leaves them out. */
function warnExcluded({ excludedFiles, excludedTouched }: Collected, log: Logger): void {
  if (!excludedFiles.length) return;
  const shown = excludedFiles.slice(0, 20).map((f) => (excludedTouched.includes(f) ? `${f} (the agent changed it too)` : f));
  const more = excludedFiles.length > shown.length ? `, and ${excludedFiles.length - shown.length} more` : "";
  log.warning(
    `Left out of the patch: ${shown.join(", ")}${more}. ${excludedFiles.length === 1 ? "This path was" : "These paths were"} already changed ` +
      "relative to the base commit before the agent started (by an earlier step of the job, or the base branch's agent configuration put back on a " +
      "pull request); the patch is made against the base commit and never carries them.",
  );
}

interface ResultParts {
  settings: Settings;
  deps: RunnerDeps;
  backend: AgentBackend;
  startedAt: Date;
  baseline: Baseline;
  stage: Stage;
  launch: Launch;
  ran: Ran;
  collected: { collected: Collected; secretsRedacted?: boolean; secretFiles?: string[]; error?: string };
  gateway: ModelGateway | undefined;
}

/** The RunResult, redacted. */
function buildResult({ settings, deps, backend, startedAt, baseline, stage, launch, ran, collected, gateway }: ResultParts): RunResult {
  const { outcome, events } = ran;
  const { installed, attachments } = stage;
  // A budget that stopped the model requests is the reason, whatever the CLI made of the refusal.
  const budgetStop = gateway?.budgetStopReason();
  const agentEnd =
    budgetStop && !outcome.spawnError && !outcome.cancelled
      ? { conclusion: "failure" as const, reason: budgetStop }
      : conclude(outcome, events, ran.stderrTail, collected.error, (code, tail) => backend.describeExit?.(code, tail));
  const cause = budgetStop && !outcome.spawnError && !outcome.cancelled ? undefined : checkpointCause(ran);
  const { conclusion, reason } = cause ? incomplete(cause, settings) : withVerdict(agentEnd, ran, settings);
  const runs = (deps.checkpoint?.runs ?? 0) + 1;
  const usage = gateway ? gateway.usage() : events.usage;
  const spent = deps.checkpoint?.spentUsd !== undefined || usage.costUsd !== undefined ? { spentUsd: (deps.checkpoint?.spentUsd ?? 0) + (usage.costUsd ?? 0) } : {};
  const checkpoint =
    cause || deps.checkpoint ? { checkpoint: { ...(cause ? { cause } : {}), ...(deps.checkpoint ? { resumedFrom: { commit: deps.checkpoint.commit, runs } } : {}), runs, ...spent } } : {};
  return deps.redactor.redactValue({
    conclusion,
    ...checkpoint,
    ...(reason ? { reason } : {}),
    agentName: settings.agent.name,
    agentBackend: settings.agent.backend,
    agentVersion: installed.version,
    ...(settings.agent.model || events.model ? { model: settings.agent.model ?? events.model } : {}),
    sandboxBackend: launch.sandbox.name,
    command: [launch.invocation.file, ...launch.invocation.args],
    returncode: outcome.exitCode,
    output: events.finalMessage,
    stdoutPath: path.join(deps.resultsDir, RESULTS_FILES.stdout),
    stderrPath: path.join(deps.resultsDir, RESULTS_FILES.stderr),
    tracePath: path.join(deps.resultsDir, RESULTS_FILES.trace),
    eventCount: ran.eventCount,
    toolCalls: events.toolCalls,
    numTurns: events.numTurns,
    permissionDenials: events.permissionDenials,
    networkBlocked: events.networkBlocked,
    ...(events.sessionId ? { sessionId: events.sessionId } : {}),
    ...(events.result?.structuredOutput !== undefined ? { structuredOutput: events.result.structuredOutput } : {}),
    verified: ran.verify.verified,
    ...(ran.verify.report ? { verify: ran.verify.report } : {}),
    // The gateway saw every model request: one figure, counted the same way for every CLI.
    usage: gateway ? gateway.usage() : events.usage,
    ...(gateway?.budgetStop()?.kind === "exceeded" ? { budgetExceeded: true } : {}),
    ...(gateway?.costCap() ? { costCap: gateway.costCap()! } : {}),
    startedAt: startedAt.toISOString(),
    durationMs: outcome.durationMs,
    diff: {
      baseCommit: baseline.commit,
      baseTree: baseline.commitTree,
      patchPath: collected.collected.patchPath,
      changedFiles: collected.collected.changedFiles,
      agentCommits: collected.collected.agentCommits,
      excludedFiles: collected.collected.excludedFiles,
      ...(collected.collected.excludedTouched.length ? { excludedTouched: collected.collected.excludedTouched } : {}),
      ...(collected.secretsRedacted ? { secretsRedacted: true } : {}),
      ...(collected.secretFiles ? { secretFiles: collected.secretFiles } : {}),
    },
    artifacts: [],
    metadata: {
      leftoverProcessesKilled: outcome.leftoversKilled,
      ...(installed.install ? { install: installed.install } : {}),
      ...(gateway ? { gateway: gateway.stats(), cliUsage: events.usage, modelRequests: gateway.requestLog() } : {}),
      // Input `provider` as used (the span's gen_ai.provider.name names a cloud).
      ...(settings.agent.provider ? { provider: settings.agent.provider } : {}),
      ...(attachments ? { attachments: attachments.record } : {}),
      // Epoch ms, for the benchmark's overhead numbers.
      timings: { spawnedAt: ran.spawnedAt, exitedAt: ran.spawnedAt + outcome.durationMs },
    },
  });
}

/** result.json, structured output and the readable transcripts (a rendering problem must not lose the run). */
async function writeResultFiles(result: RunResult, deps: RunnerDeps, launch: Launch, stage: Stage): Promise<void> {
  await writeFile(path.join(deps.resultsDir, RESULTS_FILES.result), JSON.stringify(result, null, 2) + "\n");
  if (result.structuredOutput !== undefined)
    await writeFile(path.join(deps.resultsDir, RESULTS_FILES.structuredOutput), JSON.stringify(result.structuredOutput, null, 2) + "\n");
  const attachments = stage.attachments ? { attachments: stage.attachments.transcript } : {};
  // The renderers (Markdown, diff) load after the agent, not before it starts.
  const { writeTranscriptFiles } = await import("./trace/transcript-files.js");
  await writeTranscriptFiles(deps.resultsDir, result, { prompt: launch.ctx.run.prompt, redactor: deps.redactor, ...attachments }).catch((e: unknown) =>
    deps.log.warning(`Writing the transcripts failed: ${errorMessage(e)}`),
  );
}

const PROVIDER_DEFAULT_URL = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
  gemini: "https://generativelanguage.googleapis.com",
} as const;

/**
 * The model gateway a run of this backend and settings needs, or undefined for
 * one that talks to no model: for callers that share one gateway (and budget)
 * across several runs (src/attempts/).
 */
export async function startRunGateway(backend: AgentBackend, settings: Settings, deps: GatewayDeps): Promise<ModelGateway | undefined> {
  const choice = chooseProvider(backend, settings.agent);
  return choice ? startGatewayFor(choice, backend, settings, deps) : undefined;
}

/**
 * Starts the model gateway for backends that talk to a model. The key comes
 * from `secrets`; without one, only a custom base-url (a local server) may work.
 */
async function startGatewayFor({ provider, wire }: ProviderChoice, backend: AgentBackend, settings: Settings, deps: GatewayDeps): Promise<ModelGateway> {
  const { log } = deps;
  // The default cost cap is settled before the gateway exists: what the agent sends cannot lift it.
  const budget = await gatewayBudget(settings, wire, (m) => (log.notice ?? log.info).call(log, m));
  const common = {
    provider: wire,
    // Provider-side fetching would get around the network policy; only `open` has none to get around.
    allowProviderFetch: settings.run.network.mode === "open",
    ...(budget ? { budget, modelPrices: budget.modelPrices } : {}),
    ...(settings.modelRetry ? { retry: retryPolicy(settings.modelRetry) } : {}),
    log,
  };
  if (isCloud(provider)) {
    // The cloud's library is loaded only now; its credentials are resolved before any agent starts.
    const { cloudUpstream } = await import("./sandbox/cloud/registry.js");
    const cloud = await cloudUpstream(provider, {
      wire,
      cloud: settings.agent.cloud,
      ...(settings.agent.baseUrl ? { baseUrl: settings.agent.baseUrl } : {}),
      env: deps.sandboxHost.cloudEnv ?? {},
      secrets: settings.run.secrets,
      log,
    });
    return startModelGateway({ ...common, upstream: cloud.upstream.href, apiKey: "", cloud });
  }
  if (provider !== backend.provider)
    throw new ConfigurationError(`Input 'provider': agent '${settings.agent.name}' speaks '${backend.provider ?? "none"}' with a key of its own; 'provider: ${provider}' is not available for it.`);
  const keyName = backend.keyNames.find((n) => settings.run.secrets[n]);
  if (!keyName && !settings.agent.baseUrl)
    throw new ConfigurationError(
      settings.run.keysFromEnvironment
        ? `No model key: agent '${settings.agent.name}' needs ${backend.keyNames.join(" or ")} in the environment; run export ${backend.keyNames[0]}=… in this shell (or put it in --secrets), then run again.`
        : `Input 'secrets': agent '${settings.agent.name}' needs ${backend.keyNames.join(" or ")}; add a line like ${backend.keyNames[0]}=\${{ secrets.${backend.keyNames[0]} }}.`,
    );
  if (!keyName) log.warning(`No ${backend.keyNames.join("/")} in secrets: model requests to ${settings.agent.baseUrl} carry no key.`);
  return startModelGateway({
    ...common,
    upstream: settings.agent.baseUrl ?? PROVIDER_DEFAULT_URL[wire],
    apiKey: keyName ? settings.run.secrets[keyName]! : "",
  });
}

/**
 * The check's verdict on top of the agent's ending: a change that still fails
 * is not a success (delivery then holds it back), and `timeout-minutes`
 * running out during a check is a timeout.
 */
function withVerdict(agentEnd: { conclusion: Conclusion; reason?: string }, ran: Ran, settings: Settings): { conclusion: Conclusion; reason?: string } {
  const report = ran.verify.report;
  if (agentEnd.conclusion !== "success" && !(agentEnd.conclusion === "timeout" && ran.verifyTimedOut)) return agentEnd;
  if (ran.verifyTimedOut) return { conclusion: "timeout", reason: "The 'timeout-minutes' limit ran out during verify-command; the check was stopped." };
  if (ran.verify.verified !== "failed" || !report) return agentEnd;
  const last = report.runs.at(-1)!;
  const rounds = `${report.fixRounds} fix round${report.fixRounds === 1 ? "" : "s"}`;
  return {
    conclusion: "failure",
    reason: `verify-command \`${oneLine(displayCommand(settings.verify?.command ?? []), 120)}\` still fails after ${rounds} (run ${last.run}: ${describeVerifyRun(last)}); the changes are not delivered to a branch.`,
  };
}

/** Why the agent was stopped before it finished, when its work is to be kept as a checkpoint (conclusion `incomplete`). */
function checkpointCause(ran: Ran): CheckpointCause | undefined {
  const o = ran.outcome;
  if (o.spawnError) return undefined;
  if (ran.stalled) return "stalled";
  // Time running out during a check stays a timeout: the check, not the agent, was cut.
  if (o.timedOut && !ran.verifyTimedOut) return "time-limit";
  if (o.cancelled) return "cancelled";
  return undefined;
}

function incomplete(cause: CheckpointCause, settings: Settings): { conclusion: Conclusion; reason: string } {
  const stallMinutes = +(settings.run.stallSeconds / 60).toFixed(2);
  const why = {
    "time-limit": `The agent was stopped as the 'timeout-minutes' limit (${+(settings.run.timeoutSeconds / 60).toFixed(2)} min) ran out`,
    cancelled: "The run was cancelled",
    stalled: `The agent stalled: no model request, output or file change for ${stallMinutes} min ('stall-minutes'), so it was stopped`,
  }[cause];
  return { conclusion: "incomplete", reason: `${why}; its work so far is kept as a checkpoint.` };
}

/** A parser bug must not lose the run: the raw line is already in stdout.jsonl. */
function safeParse<T>(fn: () => T[]): T[] {
  try {
    return fn();
  } catch {
    return [];
  }
}

function conclude(
  outcome: ProcessOutcome,
  events: EventSummary,
  stderr: string,
  collectError: string | undefined,
  describeExit?: (exitCode: number, stderrTail: string) => string | undefined,
): { conclusion: Conclusion; reason?: string } {
  const lastLine = (s: string) => s.split("\n").filter((l) => l.trim()).pop()?.trim().slice(0, 300);
  if (outcome.spawnError) return { conclusion: "failure", reason: `The agent could not be started: ${outcome.spawnError}` };
  if (outcome.timedOut) return { conclusion: "timeout", reason: "The agent hit the 'timeout-minutes' limit and was stopped." };
  if (outcome.cancelled) return { conclusion: "cancelled", reason: "The run was cancelled." };
  if (events.result?.isError) return { conclusion: "failure", reason: events.result.reason ?? events.errors.at(-1) ?? "The agent reported an error." };
  if (outcome.exitCode !== 0) {
    // The backend may know what its CLI's exit codes mean (auth, input, turn limit).
    const described = outcome.exitCode !== null ? describeExit?.(outcome.exitCode, stderr) : undefined;
    if (described) return { conclusion: "failure", reason: described };
    const detail = events.errors.at(-1) ?? lastLine(stderr);
    const how = outcome.exitCode === null ? `was killed by ${outcome.signal}` : `exited with code ${outcome.exitCode}`;
    return { conclusion: "failure", reason: `The agent ${how}${detail ? `: ${detail}` : "."}` };
  }
  if (collectError) return { conclusion: "failure", reason: collectError };
  return { conclusion: "success" };
}
