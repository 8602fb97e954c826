/**
 * The pipeline: prepare → materialise → run → collect → cleanup → RunResult.
 * Every other module is a step it calls. Once the agent has started, nothing
 * is lost: whatever happens, the trace, the patch and result.json are written.
 */
import { randomUUID } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { installAgent, type InstallContext } from "./agents/install.js";
import { agentBackend } from "./agents/registry.js";
import { runContextText } from "./agents/run-context.js";
import type { AgentBackend, AgentContext, AgentInvocation } from "./agents/types.js";
import type { Settings } from "./config/schema.js";
import { RESULTS_FILES } from "./constants.js";
import { ConfigurationError, errorMessage } from "./errors.js";
import { HostRepo } from "./git/host-repo.js";
import { collectChanges, takeBaseline, type Collected } from "./git/snapshot.js";
import type { Logger } from "./logger.js";
import type { Conclusion, RunResult } from "./result.js";
import { buildAgentEnv } from "./sandbox/env.js";
import { runProcessTree, type ProcessOutcome } from "./sandbox/process.js";
import { chooseSandbox } from "./sandbox/registry.js";
import { baseUrlFor, startModelGateway, type ModelGateway } from "./sandbox/gateway.js";
import type { PreparedSandbox, SandboxHost, SandboxLayout, SpawnSpec } from "./sandbox/types.js";
import type { TracedEvent } from "./trace/events.js";
import { formatEvent } from "./trace/live-log.js";
import { redactFileInPlace, type Redactor } from "./trace/redact.js";
import { SummaryBuilder, type EventSummary } from "./trace/summary.js";
import { TraceWriter } from "./trace/writer.js";
import { writeTranscriptFiles } from "./trace/transcript-files.js";

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
  signal?: AbortSignal;
  /** Called for every event as it happens (progress comment). */
  onEvent?: (e: TracedEvent) => void;
  /** Carrying session state across runs (src/session). */
  session?: SessionHooks;
  /** Where and how agent CLIs are installed (tool cache, npm's environment, Actions cache). */
  install?: Pick<InstallContext, "toolCache" | "env" | "cache">;
}

/** Where the runner lets session carrying in: HOME is fresh before, intact after. */
export interface SessionHooks {
  /** Before the backend writes its config into HOME, so current config wins over saved state. */
  restore(backend: AgentBackend, ctx: AgentContext): Promise<void>;
  /** After result.json is written, HOME still holding the CLI's session files. */
  capture(backend: AgentBackend, ctx: AgentContext, result: RunResult): Promise<void>;
}

export async function runAgent(settings: Settings, deps: RunnerDeps): Promise<RunResult> {
  const { log, redactor } = deps;
  const startedAt = new Date();
  const backend = agentBackend(settings.agent.backend);

  // --- prepare: nothing below may start the agent until every check passed.
  const unsupported = backend.unsupported(settings.agent, settings.run);
  if (unsupported.length) {
    if (settings.agent.strict) throw new ConfigurationError([...unsupported.map((p) => `${p} (set strict: false to only warn)`)]);
    for (const p of unsupported) log.warning(`${p} Ignored because strict is false.`);
  }
  await mkdir(deps.scratchDir, { recursive: true });
  await mkdir(deps.resultsDir, { recursive: true });
  // Before the agent starts: from here on, host git reads the workspace only through this private repository.
  const repo = await HostRepo.create({ cwd: settings.workspace, dir: deps.hostGitDir, env: deps.gitEnv });
  const baseline = await takeBaseline(repo, deps.scratchDir);
  if (baseline.dirty) log.warning("The workspace had uncommitted changes before the agent started; they are not part of the patch.");

  const layout: SandboxLayout = {
    workspace: settings.workspace,
    home: path.join(deps.scratchDir, "home"),
    tmp: path.join(deps.scratchDir, "tmp"),
    outputsDir: path.join(deps.resultsDir, RESULTS_FILES.outputs),
    readOnlyPaths: [],
  };
  await Promise.all([layout.home, layout.tmp, layout.outputsDir].map((d) => mkdir(d, { recursive: true })));

  const installed = await installAgent(backend, settings.agent, { searchPath: deps.searchPath, cwd: settings.workspace, log, ...deps.install });
  layout.readOnlyPaths.push(...installed.readOnlyPaths);
  const sandboxBackend = await chooseSandbox(settings.sandbox.choice, log, deps.sandboxHost, { dockerImage: settings.sandbox.dockerImage });

  // The model key stays on the host: the agent talks to a loopback gateway that injects it.
  const gateway = await startGatewayFor(backend, settings, log);
  let sandbox: PreparedSandbox;
  let spawnSpec: SpawnSpec;
  let ctx: AgentContext;
  let invocation: AgentInvocation;
  const runId = deps.runId ?? randomUUID();
  // Set once prepared, so a failure before the agent starts still tears it down.
  let prepared: PreparedSandbox | undefined;
  try {
    prepared = sandbox = await sandboxBackend.prepare({
      layout,
      network: settings.run.network,
      log,
      ...(gateway ? { gateway: { host: "127.0.0.1", port: gateway.port } } : {}),
      ...(settings.sandbox.dockerImage ? { dockerImage: settings.sandbox.dockerImage } : {}),
    });
    if (gateway && settings.run.network.mode === "none")
      log.warning("network: none leaves the agent no route to the model gateway; use network: model-only for model-backed agents.");
    const endpoint =
      gateway && backend.provider
        ? { baseUrl: sandbox.reachable(baseUrlFor(backend.provider, gateway.url)), apiKey: gateway.placeholderKey }
        : undefined;
    ctx = {
      agent: settings.agent,
      run: settings.run,
      layout,
      ...(endpoint ? { endpoint } : {}),
      runContext: runContextText(layout),
      log,
    };
    await deps.session?.restore(backend, ctx);
    const materialised = await backend.materialise(ctx);
    invocation = backend.command(ctx, installed);
    const agentEnv = buildAgentEnv({
      layout,
      run: settings.run,
      withheldSecrets: gateway ? backend.keyNames : [],
      backendEnv: materialised.env,
      pathPrepend: [path.dirname(installed.binPath)],
      runId,
    });
    for (const name of agentEnv.missingForwards) log.warning(`Input 'forward-env': ${name} is not set on the runner; not passed.`);
    spawnSpec = sandbox.wrap({
      file: invocation.file,
      args: invocation.args,
      cwd: settings.workspace,
      env: { ...agentEnv.env, ...sandbox.env() },
    });
  } catch (e) {
    await prepared?.cleanup().catch(() => undefined);
    await gateway?.close();
    throw e;
  }

  // --- run: from here on, failures become the result instead of exceptions.
  const trace = new TraceWriter(deps.resultsDir, redactor);
  const summary = new SummaryBuilder();
  const parser = backend.createParser(ctx);
  let eventCount = 0;
  const emit = (e: Parameters<SummaryBuilder["add"]>[0], raw?: string) => {
    const traced = trace.event(e, raw);
    eventCount++;
    summary.add(traced);
    const line = formatEvent(traced);
    if (line) log.info(line);
    deps.onEvent?.(traced);
  };

  let outcome: ProcessOutcome;
  const spawnedAt = Date.now();
  log.info(`Starting ${settings.agent.name} (${installed.version}) in sandbox '${sandbox.name}'.`);
  try {
    outcome = await log.group(`Agent: ${settings.agent.name}`, () =>
      runProcessTree(spawnSpec, {
        ...(invocation.stdin !== undefined ? { stdin: invocation.stdin } : {}),
        timeoutMs: settings.run.timeoutSeconds * 1000,
        runId,
        ...(deps.signal ? { signal: deps.signal } : {}),
        onStdoutLine: (line) => {
          trace.stdoutLine(line);
          for (const e of safeParse(() => parser.push(line))) emit(e, line);
        },
        onStderr: (chunk) => trace.stderrChunk(chunk),
        flowControl: trace,
      }),
    );
    for (const e of safeParse(() => parser.end())) emit(e);
    for (const b of [...sandbox.blockedAttempts(), ...(gateway?.refusals() ?? [])]) emit({ type: "network_blocked", host: b.host, ...(b.detail ? { detail: b.detail } : {}) });
  } finally {
    await trace.close();
    await sandbox.cleanup().catch((e: unknown) => log.warning(`Sandbox cleanup failed: ${errorMessage(e)}`));
    await gateway?.close();
  }

  // --- collect
  const patchPath = path.join(deps.resultsDir, RESULTS_FILES.patch);
  let collected: Collected;
  let collectError: string | undefined;
  try {
    collected = await collectChanges(repo, baseline, deps.scratchDir, patchPath);
    // A secret the agent wrote into a file must not leave in the patch either.
    await redactFileInPlace(patchPath, redactor);
  } catch (e) {
    collectError = `Collecting the agent's changes failed: ${errorMessage(e)}`;
    await writeFile(patchPath, "");
    collected = { patchPath, changedFiles: [], agentCommits: [], endTree: baseline.tree };
  }

  const events = summary.summary();
  const { conclusion, reason } = conclude(outcome, events, trace.lastStderr(), collectError, (code, tail) => backend.describeExit?.(code, tail));
  const result: RunResult = redactor.redactValue({
    conclusion,
    ...(reason ? { reason } : {}),
    agentName: settings.agent.name,
    agentBackend: settings.agent.backend,
    agentVersion: installed.version,
    ...(settings.agent.model || events.model ? { model: settings.agent.model ?? events.model } : {}),
    sandboxBackend: sandbox.name,
    command: [invocation.file, ...invocation.args],
    returncode: outcome.exitCode,
    output: events.finalMessage,
    stdoutPath: path.join(deps.resultsDir, RESULTS_FILES.stdout),
    stderrPath: path.join(deps.resultsDir, RESULTS_FILES.stderr),
    tracePath: path.join(deps.resultsDir, RESULTS_FILES.trace),
    eventCount,
    toolCalls: events.toolCalls,
    numTurns: events.numTurns,
    permissionDenials: events.permissionDenials,
    networkBlocked: events.networkBlocked,
    ...(events.sessionId ? { sessionId: events.sessionId } : {}),
    ...(events.result?.structuredOutput !== undefined ? { structuredOutput: events.result.structuredOutput } : {}),
    usage: events.usage,
    startedAt: startedAt.toISOString(),
    durationMs: outcome.durationMs,
    diff: {
      baseCommit: baseline.commit,
      baseTree: baseline.tree,
      patchPath,
      changedFiles: collected.changedFiles,
      agentCommits: collected.agentCommits,
    },
    artifacts: [],
    metadata: {
      leftoverProcessesKilled: outcome.leftoversKilled,
      ...(installed.install ? { install: installed.install } : {}),
      ...(gateway ? { gateway: gateway.stats() } : {}),
      ...(gateway ? { modelRequests: gateway.requestLog() } : {}),
      // Epoch ms, for the benchmark's overhead numbers.
      timings: { spawnedAt, exitedAt: spawnedAt + outcome.durationMs },
    },
  });
  await writeFile(path.join(deps.resultsDir, RESULTS_FILES.result), JSON.stringify(result, null, 2) + "\n");
  if (result.structuredOutput !== undefined)
    await writeFile(path.join(deps.resultsDir, RESULTS_FILES.structuredOutput), JSON.stringify(result.structuredOutput, null, 2) + "\n");
  // Readable transcripts, streamed from trace.jsonl. A rendering problem must not lose the run.
  await writeTranscriptFiles(deps.resultsDir, result, { prompt: settings.run.prompt, redactor }).catch((e: unknown) =>
    log.warning(`Writing the transcripts failed: ${errorMessage(e)}`),
  );
  await deps.session?.capture(backend, ctx, result).catch((e: unknown) => log.warning(`Saving the session state failed: ${errorMessage(e)}`));
  await rm(path.join(deps.scratchDir, "tmp"), { recursive: true, force: true }).catch(() => undefined);
  return result;
}

const PROVIDER_DEFAULT_URL = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
  gemini: "https://generativelanguage.googleapis.com",
} as const;

/**
 * Starts the model gateway for backends that talk to a model. The key comes
 * from `secrets`; without one, only a custom base-url (a local server) may work.
 */
async function startGatewayFor(backend: AgentBackend, settings: Settings, log: Logger): Promise<ModelGateway | undefined> {
  if (!backend.provider) return undefined;
  const keyName = backend.keyNames.find((n) => settings.run.secrets[n]);
  if (!keyName && !settings.agent.baseUrl)
    throw new ConfigurationError(
      `Input 'secrets': agent '${settings.agent.name}' needs ${backend.keyNames.join(" or ")}; add a line like ${backend.keyNames[0]}=\${{ secrets.${backend.keyNames[0]} }}.`,
    );
  if (!keyName) log.warning(`No ${backend.keyNames.join("/")} in secrets: model requests to ${settings.agent.baseUrl} carry no key.`);
  return startModelGateway({
    provider: backend.provider,
    upstream: settings.agent.baseUrl ?? PROVIDER_DEFAULT_URL[backend.provider],
    apiKey: keyName ? settings.run.secrets[keyName]! : "",
    // Provider-side fetching would get around the network policy; only `open` has none to get around.
    allowProviderFetch: settings.run.network.mode === "open",
    log,
  });
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
