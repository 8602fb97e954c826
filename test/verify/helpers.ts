/** Shared by the verify tests: one step through dist/main.js and what it left behind. */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { RunResult } from "../../src/result.js";
import type { TracedEvent } from "../../src/shared/events.js";
import { AGENT_PATH } from "../agents/helpers.js";
import { runStep } from "../support/harness.js";

export interface VerifyRunOutcome {
  exitCode: number | null;
  outputs: Record<string, string>;
  result: RunResult;
  trace: TracedEvent[];
  resultsDir: string;
  log: string;
  summary: string;
  runnerTemp: string;
}

/** One step through dist/main.js: no event, nothing delivered, bwrap. */
export async function runWithVerify(
  workspace: string,
  inputs: Record<string, string>,
  env: Record<string, string> = {},
  githubToken?: string,
  /** A RUNNER_TEMP shared with earlier steps: the same job. Default: a fresh one. */
  runnerTemp?: string,
): Promise<VerifyRunOutcome> {
  const main = await runStep("main", {
    workspace,
    ...(runnerTemp ? { runnerTemp } : {}),
    ...(githubToken ? { githubToken } : {}),
    inputs: { "agent-version": "preinstalled", sandbox: "bwrap", "upload-artifacts": "false", comment: "none", deliver: "none", ...inputs },
    env: { PATH: AGENT_PATH, ...env },
    timeoutMs: 240_000,
  });
  const patch = main.outputs["patch-path"];
  if (!patch) throw new Error(`the run wrote no results (exit ${main.exitCode}):\n${main.log}\n${main.stderr}`);
  const resultsDir = path.dirname(patch);
  const result = JSON.parse(readFileSync(path.join(resultsDir, "result.json"), "utf8")) as RunResult;
  const trace = readFileSync(path.join(resultsDir, "trace.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TracedEvent);
  return { exitCode: main.exitCode, outputs: main.outputs, result, trace, resultsDir, log: main.log, summary: main.summary, runnerTemp: main.runnerTemp };
}

