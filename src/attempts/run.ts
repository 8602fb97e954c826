/**
 * `attempts: N`: N independent runs of the agent from the same start state,
 * each in its own copy of the checkout (workspaces.ts), its own results folder
 * (`attempt-<n>/`, all kept in the artifact) and its own sandbox, but one model
 * gateway: one budget covers every attempt (and the judge). Each attempt is
 * verified; one is chosen (select.ts, judge.ts) and becomes the run: its
 * patch, trace and outputs are copied to the top of the results folder, where
 * every later stage (patch checks, threat detection, delivery) finds them.
 *
 * Parallel, at most min(N, cores) at once: an agent run mostly waits on the
 * model, so attempts overlap well; `npm run bench` (section attempts) measured
 * it against one after another (README, "Attempts").
 */
import { cp, mkdir, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { agentBackend } from "../agents/registry.js";
import type { AgentBackend, AgentContext } from "../agents/types.js";
import type { Settings } from "../config/schema.js";
import { RESULTS_FILES } from "../constants.js";
import { errorMessage, isConfigurationError } from "../errors.js";
import type { AttemptRecord, AttemptSelection, RunResult } from "../result.js";
import { runAgent, startRunGateway, type RunnerDeps, type SessionHooks } from "../runner.js";
import type { ModelGateway } from "../sandbox/gateway.js";
import type { Usage } from "../shared/events.js";
import { chooseByJudge, judgeRunId } from "./judge.js";
import { changedLines, judgeCandidates, rankByVerify, type Finished } from "./select.js";
import { checkoutOf, copyCheckout } from "./workspaces.js";

/** The variable each attempt's agent gets: its attempt number (1…N), e.g. for a seed. */
export const ATTEMPT_VAR = "AGENT_RUNNER_ATTEMPT";

/** One attempt's run: the agent, and its verify rounds when there is a verify command. */
export type RunOne = (settings: Settings, deps: RunnerDeps) => Promise<RunResult>;

/** The marker of each attempt's processes (RUN_MARKER_VAR): the post step kills what each left behind. */
export function attemptRunIds(base: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${base}-attempt-${i + 1}`);
}

/** Every marker a run with `count` attempts may use: the attempts' and the judge's. */
export function allRunIds(base: string, count: number): string[] {
  return [...attemptRunIds(base, count), judgeRunId(base)];
}

/** The folder of attempt `n` in the results folder (kept in the artifact). */
export function attemptDirName(n: number): string {
  return `attempt-${n}`;
}

/** Attempt `n`'s private folder: its workspace copy, HOME and host repository (hidden from every sandbox with the run's temp folder). */
function attemptScratch(deps: RunnerDeps, n: number): string {
  return path.join(deps.scratchDir, "attempts", attemptDirName(n));
}

/** How many attempts run at once: all of them, up to the runner's cores. */
export function attemptConcurrency(count: number, cores = os.availableParallelism()): number {
  return Math.max(1, Math.min(count, cores));
}

interface Outcome {
  attempt: number;
  result?: RunResult;
  error?: unknown;
}

export async function runAttempts(settings: Settings, deps: RunnerDeps & { runId: string }): Promise<RunResult> {
  const count = settings.attempts?.count ?? 1;
  const startedAt = new Date();
  const backend = agentBackend(settings.agent.backend);
  // Asked before any copy or gateway exists: a configuration problem stops the run here.
  const source = await checkoutOf(settings.workspace, deps.gitEnv, deps.touched);
  const gateway = await startRunGateway(backend, settings, deps);
  const sessions = deferredSessions(deps.session);
  try {
    const ids = attemptRunIds(deps.runId, count);
    const limit = attemptConcurrency(count);
    deps.log.info(`Running ${count} attempts, ${limit} at a time, each in its own copy of the workspace${gateway ? " (one model gateway and budget for all)" : ""}.`);
    const outcomes = await pool(count, limit, async (i): Promise<Outcome> => {
      const n = i + 1;
      // A cancelled run starts no further attempt (an already aborted signal would not stop it).
      if (deps.signal?.aborted) return { attempt: n, error: new Error("the run was cancelled before this attempt started") };
      try {
        return { attempt: n, result: await runAttempt(n, ids[i]!) };
      } catch (e) {
        return { attempt: n, error: e };
      }
    });
    const failed = outcomes.filter((o) => !o.result);
    const configError = failed.find((o) => isConfigurationError(o.error));
    if (configError || failed.length === count) throw failed[0]!.error;
    for (const o of failed) deps.log.warning(`Attempt ${o.attempt} ended without a result: ${errorMessage(o.error)}`);
    const finished: Finished[] = await Promise.all(
      outcomes.flatMap((o) => (o.result ? [{ attempt: o.attempt, result: o.result }] : [])).map(async ({ attempt, result }) => ({
        attempt,
        result,
        verified: result.verified ?? "not-run",
        changedLines: await changedLines(result.diff.patchPath),
      })),
    );
    const { chosen, selection } = await choose(settings, deps, finished, gateway, backend);
    const result = await becomeTheRun(settings, deps, { chosen, finished, failed, selection, startedAt, gateway });
    await sessions.captureChosen(backend, chosen.attempt, result).catch((e: unknown) => deps.log.warning(`Saving the session state failed: ${errorMessage(e)}`));
    return result;
  } finally {
    await gateway?.close();
    // The copies (and the attempts' HOMEs, the chosen one's session already saved) are not needed any more.
    for (const dir of ["attempts", "judge"]) await rm(path.join(deps.scratchDir, dir), { recursive: true, force: true }).catch(() => undefined);
  }

  async function runAttempt(n: number, runId: string): Promise<RunResult> {
    const base = attemptScratch(deps, n);
    const copy = await copyCheckout(source, path.join(base, "workspace"));
    const attemptSettings: Settings = { ...settings, workspace: copy.workspace, run: { ...settings.run, env: { ...settings.run.env, [ATTEMPT_VAR]: String(n) } } };
    // The agent, then its verify and fix rounds when there is a verify command (runner/verify.ts).
    return runAgent(attemptSettings, {
      ...deps,
      runId,
      resultsDir: path.join(deps.resultsDir, attemptDirName(n)),
      scratchDir: path.join(base, "scratch"),
      hostGitDir: path.join(base, "host-git"),
      ...(gateway ? { gateway } : {}),
      ...(sessions.hooks ? { session: sessions.hooks(n) } : {}),
    });
  }
}

async function choose(
  settings: Settings,
  deps: RunnerDeps & { runId: string },
  finished: Finished[],
  gateway: ModelGateway | undefined,
  backend: AgentBackend,
): Promise<{ chosen: Finished; selection: AttemptSelection }> {
  const ranked = rankByVerify(finished);
  if (settings.attempts?.select !== "judge") return { chosen: ranked[0]!, selection: { select: "verify" } };
  const candidates = judgeCandidates(finished);
  if (candidates.length < 2) return { chosen: ranked[0]!, selection: { select: "judge", fallback: candidates.length ? "one attempt passed: nothing to judge" : "no attempt passed: nothing to judge" } };
  const judged = await chooseByJudge(settings, deps, candidates, gateway, backend);
  if ("fallback" in judged) {
    deps.log.warning(`select: judge fell back to select: verify: ${judged.fallback}`);
    return { chosen: ranked[0]!, selection: { select: "judge", fallback: judged.fallback } };
  }
  return { chosen: candidates.find((c) => c.attempt === judged.best)!, selection: { select: "judge", reasons: judged.reasons } };
}

interface Composition {
  chosen: Finished;
  finished: Finished[];
  failed: Outcome[];
  selection: AttemptSelection;
  startedAt: Date;
  gateway: ModelGateway | undefined;
}

/**
 * The chosen attempt becomes the run: its files copied to the top of the
 * results folder (the other attempts' patches and traces stay in their
 * folders), its result with the run's figures (the whole gateway's usage, the
 * wall time of all attempts) and the table of attempts. The agent-written
 * outputs folder is kept for the chosen attempt only: it is the one whose
 * requests may be applied, and the artifact's redaction covers that folder.
 */
async function becomeTheRun(settings: Settings, deps: RunnerDeps, c: Composition): Promise<RunResult> {
  const { chosen, finished, gateway } = c;
  const chosenDir = path.join(deps.resultsDir, attemptDirName(chosen.attempt));
  await cp(chosenDir, deps.resultsDir, { recursive: true, force: true, verbatimSymlinks: true });
  // Every attempt's, a failed one's too: an agent that makes its own attempt fail must not get its files into the artifact unchecked.
  for (const { attempt } of [...finished, ...c.failed])
    for (const dir of [RESULTS_FILES.outputs, RESULTS_FILES.attachments]) await rm(path.join(deps.resultsDir, attemptDirName(attempt), dir), { recursive: true, force: true });
  await mkdir(path.join(deps.resultsDir, RESULTS_FILES.outputs), { recursive: true });
  // The chosen attempt's private repository is the run's: the patch checks read the base commit from it.
  await rm(deps.hostGitDir, { recursive: true, force: true });
  await rename(path.join(attemptScratch(deps, chosen.attempt), "host-git"), deps.hostGitDir);

  const records: AttemptRecord[] = [
    ...finished.map((f) => ({
      attempt: f.attempt,
      conclusion: f.result.conclusion,
      verified: f.verified,
      changedLines: f.changedLines,
      changedFiles: f.result.diff.changedFiles.length,
      exitCode: f.result.returncode,
      durationMs: f.result.durationMs,
      chosen: f === chosen,
    })),
    ...c.failed.map((o) => ({ attempt: o.attempt, conclusion: "failure" as const, verified: "not-run" as const, changedLines: 0, changedFiles: 0, exitCode: null, durationMs: 0, chosen: false })),
  ].sort((a, b) => a.attempt - b.attempt);
  const timings = finished.map((f) => f.result.metadata.timings as { spawnedAt: number; exitedAt: number } | undefined).filter((t) => t !== undefined);
  const at = (name: string) => path.join(deps.resultsDir, name);
  const r = chosen.result;
  const budgetExceeded = gateway?.budgetStop()?.kind === "exceeded" || finished.some((f) => f.result.budgetExceeded);
  const result: RunResult = deps.redactor.redactValue({
    ...r,
    stdoutPath: at(RESULTS_FILES.stdout),
    stderrPath: at(RESULTS_FILES.stderr),
    tracePath: at(RESULTS_FILES.trace),
    usage: gateway ? gateway.usage() : sumUsage(finished.map((f) => f.result.usage)),
    ...(budgetExceeded ? { budgetExceeded: true } : {}),
    ...(gateway?.costCap() ? { costCap: gateway.costCap()! } : {}),
    startedAt: c.startedAt.toISOString(),
    durationMs: Date.now() - c.startedAt.getTime(),
    diff: { ...r.diff, patchPath: at(RESULTS_FILES.patch) },
    attempts: records,
    attemptSelection: c.selection,
    metadata: {
      ...r.metadata,
      ...(gateway ? { gateway: gateway.stats(), cliUsage: r.usage, modelRequests: gateway.requestLog() } : {}),
      ...(timings.length ? { timings: { spawnedAt: Math.min(...timings.map((t) => t.spawnedAt)), exitedAt: Math.max(...timings.map((t) => t.exitedAt)) } } : {}),
    },
  });
  await writeFile(at(RESULTS_FILES.result), JSON.stringify(result, null, 2) + "\n");
  const verdict = (f: AttemptRecord) => `attempt ${f.attempt}: ${f.conclusion}, verify ${f.verified}, ${f.changedLines} changed line(s)${f.chosen ? " (chosen)" : ""}`;
  deps.log.info(`Attempts (select: ${settings.attempts?.select ?? "verify"}): ${records.map(verdict).join("; ")}`);
  return result;
}

function sumUsage(all: Usage[]): Usage {
  const out: Usage = { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
  for (const u of all) {
    out.inputTokens += u.inputTokens;
    out.outputTokens += u.outputTokens;
    out.cachedTokens += u.cachedTokens;
    if (u.costUsd !== undefined) out.costUsd = (out.costUsd ?? 0) + u.costUsd;
    if (u.requests !== undefined) out.requests = (out.requests ?? 0) + u.requests;
  }
  return out;
}

/**
 * Session carrying across attempts: every attempt restores the same saved
 * state; only the chosen attempt's session is saved (its HOME is still in its
 * scratch folder when the choice is made).
 */
function deferredSessions(session: SessionHooks | undefined) {
  const captured = new Map<number, AgentContext>();
  return {
    hooks: session
      ? (n: number): SessionHooks => ({
          restore: (backend, ctx) => session.restore(backend, ctx),
          capture: async (_backend, ctx) => void captured.set(n, ctx),
        })
      : undefined,
    captureChosen: async (backend: AgentBackend, attempt: number, result: RunResult) => {
      const ctx = captured.get(attempt);
      if (session && ctx) await session.capture(backend, ctx, result);
    },
  };
}

/** Runs `count` tasks, at most `limit` at once; results in task order. */
async function pool<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      out[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return out;
}
