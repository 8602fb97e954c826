/**
 * Shared pieces of the artifact tests: throwaway repositories, agent scripts,
 * and the action run through the harness against the fake results service.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runStep, type StepOptions, type StepResult } from "../support/harness.js";
import type { FakeActionsResults, RuntimeEnvOptions } from "../support/fake-actions-results.js";

export const REPOSITORY = "octo/repo";
export const RUN_ID = 1001;

const GIT_ENV = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" };

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, ...GIT_ENV } });
}

export function makeRepo(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ws-"));
  git(dir, "init", "-q", "-b", "main");
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "initial");
  return dir;
}

/** A fresh clone at the same commit: what a later job's actions/checkout gives. */
export function cloneRepo(from: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ws-clone-"));
  git(dir, "clone", "-q", from, ".");
  return dir;
}

/** An executable bash script (`set -e`) for `agent: command`. */
export function agentScript(body: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "agent-script-")), "agent.sh");
  writeFileSync(file, `#!/bin/bash\nset -e\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

export interface JobOptions extends Omit<StepOptions, "env"> {
  results: FakeActionsResults;
  /** Runtime env options (job name, run id…). */
  runtime?: RuntimeEnvOptions;
  env?: Record<string, string>;
}

/** The main step as one job of workflow run RUN_ID, with the artifact service wired to the fake. */
export function runJob(o: JobOptions): Promise<StepResult> {
  const { results, runtime, env, ...step } = o;
  return runStep("main", {
    ...step,
    env: {
      ...results.runtimeEnv({ runId: RUN_ID, repository: REPOSITORY, workspace: step.workspace, ...runtime }),
      ...env,
    },
  });
}

/** `::error::` lines of a step, decoded. */
export function errors(step: StepResult): string[] {
  return step.rawStdout
    .split("\n")
    .filter((l) => l.startsWith("::error::"))
    .map((l) => decodeURIComponent(l.slice("::error::".length).replace(/%0A/g, "\n").replace(/%0D/g, "\r")));
}
