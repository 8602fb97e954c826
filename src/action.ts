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
import { errorMessage, isConfigurationError } from "./errors.js";
import { filteredLogger, type Logger } from "./logger.js";
import { resultOutputs, type Outputs } from "./publish/outputs.js";
import { summaryMarkdown } from "./publish/summary.js";
import type { RunResult } from "./result.js";
import { runAgent } from "./runner.js";
import { Redactor } from "./trace/redact.js";

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
    const settings = parseSettings(raw, { cwd: io.host.workspace });
    const runDir = path.join(io.host.runnerTemp, "agent-runner", randomUUID());
    const resultsDir = io.resultsDir ?? path.join(runDir, "results");
    io.saveState(STATE.runTemp, runDir);
    io.saveState(STATE.resultsDir, resultsDir);
    const ctx: StageContext = { io, settings, log, redactor, resultsDir, runDir };

    const result = await runStage(ctx);
    const outputs: Outputs = resultOutputs(result);
    await finish(ctx, result, outputs);
    return result;
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
async function runStage(ctx: StageContext): Promise<RunResult> {
  return runAgent(ctx.settings, {
    log: ctx.log,
    redactor: ctx.redactor,
    resultsDir: ctx.resultsDir,
    scratchDir: path.join(ctx.runDir, "scratch"),
    searchPath: ctx.io.host.path,
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
