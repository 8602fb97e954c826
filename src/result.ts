/** What one run produced: written to result.json and turned into outputs. */
import type { Usage } from "./shared/events.js";

/** How the agent's run ended (result.json's `conclusion`), before the checks and delivery. */
export const RUN_CONCLUSIONS = ["success", "failure", "incomplete", "timeout", "cancelled", "skipped"] as const;
export type Conclusion = (typeof RUN_CONCLUSIONS)[number];
/** What the run came to, delivery included: the `conclusion` output (publish/verdict.ts; OUTPUTS in constants.ts lists the same). */
export const CONCLUSION_OUTPUTS = ["success", "partial", "failure", "incomplete", "timeout", "cancelled", "skipped"] as const;
export type ConclusionOutput = (typeof CONCLUSION_OUTPUTS)[number];

/** Why a run stopped with a checkpoint (conclusion `incomplete`): its work is kept to continue from. */
export type CheckpointCause = "time-limit" | "cancelled" | "stalled";

/** An `incomplete` run's checkpoint, and a continued run's origin (session/checkpoint.ts). */
export interface CheckpointInfo {
  /** Set on an `incomplete` run: why it stopped. */
  cause?: CheckpointCause;
  /** A continued run: the checkpoint commit it started from, and how many runs the work has taken so far (this one included). */
  resumedFrom?: { commit: string; runs: number };
  /** Runs the work has taken, this one included (1 without a checkpoint to continue). */
  runs: number;
  /** What the work has cost so far, the earlier runs included, when the gateway knew the prices (US dollars). */
  spentUsd?: number;
}

/** How `verify-command` ended: the last check passed, still failed, or never ran (no command, or the agent failed first). */
export type Verified = "passed" | "failed" | "not-run";

/** One run of `verify-command` (runner/verify.ts). */
export interface VerifyRun {
  /** 1 after the agent's first answer, 2 after the first fix round, … */
  run: number;
  passed: boolean;
  exitCode: number | null;
  signal?: string;
  /** Stopped by `verify-timeout-minutes` (or by what was left of `timeout-minutes`). */
  timedOut: boolean;
  /** The process could not be started. */
  spawnError?: string;
  durationMs: number;
  /** Bytes of output the check wrote (stdout and stderr); the log keeps a bounded, redacted part. */
  outputBytes: number;
  /** The log, relative to the results folder (verify/verify-1.log). */
  log: string;
}

/** `verify-command`'s record in result.json. */
export interface VerifyReport {
  /** argv of the check. */
  command: string[];
  maxFixRounds: number;
  /** Fix rounds the agent ran (resumed sessions after a failing check). */
  fixRounds: number;
  runs: VerifyRun[];
}

export interface RunResult {
  conclusion: Conclusion;
  /** Conclusion `incomplete`, or a run continued from a checkpoint. */
  checkpoint?: CheckpointInfo;
  /** One line saying why, when not success. */
  reason?: string;
  agentName: string;
  agentBackend: string;
  agentVersion?: string;
  model?: string;
  sandboxBackend: string;
  /** argv of the agent as started (never holds secrets). */
  command: string[];
  returncode: number | null;
  /** The agent's final message. */
  output: string;
  stdoutPath: string;
  stderrPath: string;
  tracePath: string;
  eventCount: number;
  toolCalls: number;
  numTurns: number;
  permissionDenials: { tool: string; detail?: string }[];
  networkBlocked: number;
  sessionId?: string;
  threadId?: string;
  /** The model gateway's figure for model-backed agents (the CLI's own report: metadata.cliUsage); the CLI's for `command`. */
  usage: Usage;
  /** A budget (max-cost-usd, max-tokens, max-model-requests) stopped the run; the reason says which, with the figure. */
  budgetExceeded?: boolean;
  /** `max-cost-usd` as the run had it (given, or the default: either is held the same). */
  costCap?: { maxUsd: number; isDefault: boolean };
  startedAt: string;
  durationMs: number;
  diff: {
    /** The commit the workspace had when the run started: the patch is made against it and applies to it. */
    baseCommit: string;
    /** baseCommit's tree. */
    baseTree: string;
    patchPath: string;
    changedFiles: string[];
    agentCommits: string[];
    /** A secret value of the run was redacted out of the patch: threat detection holds such a run back. */
    secretsRedacted?: boolean;
    /** The files whose added lines held a secret value of the run (before redaction). */
    secretFiles?: string[];
    /** Paths already changed relative to baseCommit before the agent started: left out of the patch (src/git/snapshot.ts). */
    excludedFiles?: string[];
    /** Of excludedFiles, those the agent changed too: its change to them is not delivered. */
    excludedTouched?: string[];
  };
  structuredOutput?: unknown;
  /** `verify-command`'s verdict; absent in results of older versions (read as `not-run`). */
  verified?: Verified;
  /** The checks and fix rounds, when `verify-command` was set. */
  verify?: VerifyReport;
  /** Every attempt when `attempts` > 1; the run's own fields are the chosen attempt's. */
  attempts?: AttemptRecord[];
  attemptSelection?: AttemptSelection;
  artifacts: { name: string; id?: string; url?: string }[];
  metadata: Record<string, unknown>;
}


/** One attempt of a run with `attempts` > 1 (src/attempts/): a row of output `attempts` and of the comment's table. */
export interface AttemptRecord {
  attempt: number;
  conclusion: Conclusion;
  verified: Verified;
  /** Added plus removed lines of the attempt's patch. */
  changedLines: number;
  changedFiles: number;
  exitCode: number | null;
  durationMs: number;
  /** The attempt delivered: its patch is the run's patch. */
  chosen: boolean;
}

/** How the delivered attempt was chosen: `select`, and what happened when the judge could not decide. */
export interface AttemptSelection {
  select: "verify" | "judge";
  /** Set when `select: judge` fell back to `verify` (the judge failed or answered out of shape). */
  fallback?: string;
  /** The judge's reasons (agent text), when it chose. */
  reasons?: string[];
}
