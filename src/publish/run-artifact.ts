/**
 * The run artifact: the results folder as uploaded by `phase: run` (or `all`)
 * and read back by `phase: publish`.
 *
 * Going out, every file has passed the redactor: the trace files, patch and
 * result.json when they were written, the agent's outputs/ folder here.
 * Coming back, nothing is trusted: result.json is validated with zod, the
 * folder must hold only regular files, and paths inside result.json are
 * rewritten to where the files now are.
 */
import { lstat, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import * as z from "../shared/zod.js";
import type { HostContext } from "../config/host.js";
import { MAX_ATTEMPTS } from "../config/schema.js";
import { RESULTS_FILES } from "../constants.js";
import { ConfigurationError } from "../errors.js";
import { unuploadablePath } from "../shared/artifact-name.js";
import { OUTPUTS_LIMITS, describeLimits, treeOverLimits } from "./limits.js";
import { RUN_CONCLUSIONS, type RunResult } from "../result.js";
import { redactTreeInPlace, regularFiles } from "../trace/redact-files.js";
import type { Redactor } from "../shared/redact.js";

/** Files of an earlier version of a file being redacted: never uploaded. */
const TEMP_FILE = /\.redacting(-\d+)?$/;

/**
 * `agent-run-<run id>-<attempt>`, or the `artifact-name` input. A fan-out item
 * adds its key (`agent-run-<run id>-<attempt>-<key>`): the matrix's jobs share
 * one workflow run, where artifact names must differ.
 */
export function runArtifactName(input: string | undefined, host: Pick<HostContext, "runId" | "runAttempt">, itemKey?: string): string {
  return input ?? `agent-run-${host.runId ?? "local"}-${host.runAttempt ?? "1"}${itemKey ? `-${itemKey}` : ""}`;
}

export interface RunUpload {
  /** Absolute paths of the files to upload. */
  files: string[];
  /** Relative paths left out: symlinks and devices (never followed), names the service refuses. */
  skipped: string[];
}

/**
 * Redact the agent's outputs folder in place and list what goes into the
 * artifact. An outputs folder over its limits (limits.ts) is left out whole,
 * unread: the agent wrote it, and it must not fill the artifact or the disk.
 */
export async function prepareRunUpload(resultsDir: string, redactor: Redactor): Promise<RunUpload> {
  const outputsDir = path.join(resultsDir, RESULTS_FILES.outputs);
  const over = await treeOverLimits(outputsDir, OUTPUTS_LIMITS);
  // Moved out of the results folder, so nothing walks it again; it stays on the runner for a look.
  const asideDir = `${resultsDir}-${RESULTS_FILES.outputs}-over-limit`;
  if (over) {
    await rm(asideDir, { recursive: true, force: true });
    await rename(outputsDir, asideDir);
  }
  const outputs = over ? { files: [], skipped: [] } : await redactTreeInPlace(outputsDir, redactor);
  const all = await regularFiles(resultsDir);
  const files = all.files.filter((f) => !TEMP_FILE.test(f));
  // One file the service refuses would fail the whole upload: leave it out and say so.
  const refused = files.filter((f) => unuploadablePath(path.relative(resultsDir, f)));
  return {
    files: files.filter((f) => !refused.includes(f)),
    skipped: [
      ...(over ? [`${RESULTS_FILES.outputs}/ (all of it: ${over}, over the outputs limit of ${describeLimits(OUTPUTS_LIMITS)}; moved to ${asideDir})`] : []),
      ...all.skipped,
      ...outputs.skipped.map((s) => path.join(RESULTS_FILES.outputs, s)),
      ...refused.map((f) => `${path.relative(resultsDir, f)} (a character artifacts cannot hold)`),
    ].filter((v, i, a) => a.indexOf(v) === i),
  };
}

const UsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cachedTokens: z.number(),
  costUsd: z.optional(z.number()),
  requests: z.optional(z.number().check(z.int(), z.nonnegative())),
});

const Sha = z.string().check(z.regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, "a full git object id"));

/** result.json as read from an artifact. Unknown keys are dropped. */
const RunResultSchema = z.object({
  conclusion: z.enum(RUN_CONCLUSIONS),
  reason: z.optional(z.string()),
  checkpoint: z.optional(
    z.object({
      cause: z.optional(z.enum(["time-limit", "cancelled", "stalled"])),
      resumedFrom: z.optional(z.object({ commit: Sha, runs: z.number().check(z.int(), z.positive(), z.lte(1000)) })),
      runs: z.number().check(z.int(), z.positive(), z.lte(1000)),
      spentUsd: z.optional(z.number().check(z.nonnegative())),
    }),
  ),
  agentName: z.string(),
  agentBackend: z.string(),
  agentVersion: z.optional(z.string()),
  model: z.optional(z.string()),
  sandboxBackend: z.string(),
  command: z.array(z.string()),
  returncode: z.nullable(z.number().check(z.int())),
  output: z.string(),
  stdoutPath: z.string(),
  stderrPath: z.string(),
  tracePath: z.string(),
  eventCount: z.number().check(z.int(), z.nonnegative()),
  toolCalls: z.number().check(z.int(), z.nonnegative()),
  numTurns: z.number().check(z.int(), z.nonnegative()),
  permissionDenials: z.array(z.object({ tool: z.string(), detail: z.optional(z.string()) })),
  networkBlocked: z.number().check(z.int(), z.nonnegative()),
  sessionId: z.optional(z.string()),
  threadId: z.optional(z.string()),
  usage: UsageSchema,
  budgetExceeded: z.optional(z.boolean()),
  startedAt: z.string(),
  durationMs: z.number().check(z.nonnegative()),
  diff: z.object({
    baseCommit: Sha,
    baseTree: Sha,
    patchPath: z.string(),
    changedFiles: z.array(z.string()),
    agentCommits: z.array(z.string()),
    excludedFiles: z.optional(z.array(z.string())),
    excludedTouched: z.optional(z.array(z.string())),
    secretsRedacted: z.optional(z.boolean()),
    secretFiles: z.optional(z.array(z.string()).check(z.maxLength(10_000))),
  }),
  structuredOutput: z.optional(z.unknown()),
  attempts: z.optional(
    z
      .array(
        z.object({
          attempt: z.number().check(z.int(), z.gte(1), z.lte(MAX_ATTEMPTS)),
          conclusion: z.enum(RUN_CONCLUSIONS),
          verified: z.enum(["passed", "failed", "not-run"]),
          changedLines: z.number().check(z.int(), z.nonnegative()),
          changedFiles: z.number().check(z.int(), z.nonnegative()),
          exitCode: z.nullable(z.number().check(z.int())),
          durationMs: z.number().check(z.nonnegative()),
          chosen: z.boolean(),
        }),
      )
      .check(z.maxLength(MAX_ATTEMPTS)),
  ),
  attemptSelection: z.optional(
    z.object({ select: z.enum(["verify", "judge"]), fallback: z.optional(z.string()), reasons: z.optional(z.array(z.string()).check(z.maxLength(20))) }),
  ),
  verified: z.optional(z.enum(["passed", "failed", "not-run"])),
  verify: z.optional(
    z.object({
      command: z.array(z.string()),
      maxFixRounds: z.number().check(z.int(), z.nonnegative()),
      fixRounds: z.number().check(z.int(), z.nonnegative()),
      runs: z
        .array(
          z.object({
            run: z.number().check(z.int(), z.positive()),
            passed: z.boolean(),
            exitCode: z.nullable(z.number().check(z.int())),
            // Shown in the comment's table: only what the runner writes there.
            signal: z.optional(z.string().check(z.regex(/^SIG[A-Z0-9]+$/))),
            timedOut: z.boolean(),
            spawnError: z.optional(z.string()),
            durationMs: z.number().check(z.nonnegative()),
            outputBytes: z.number().check(z.int(), z.nonnegative()),
            log: z.string().check(z.regex(/^verify\/verify-\d+\.log$/)),
          }),
        )
        .check(z.maxLength(11)),
    }),
  ),
  artifacts: z.array(z.object({ name: z.string(), id: z.optional(z.string()), url: z.optional(z.string()) })),
  metadata: z.record(z.string(), z.unknown()),
});

// Compile-time check that the schema and the RunResult interface agree.
type Parsed = z.infer<typeof RunResultSchema>;
const agree = (p: Parsed): RunResult => p;
void agree;

export interface DownloadedRun {
  result: RunResult;
  resultsDir: string;
}

/**
 * Read a downloaded run artifact: validate result.json, require the patch,
 * refuse anything but regular files, and point the result's paths at `dir`.
 * result.json is rewritten with the new paths so later steps read one truth.
 */
export async function readDownloadedRun(dir: string, artifactName: string, localHint?: string): Promise<DownloadedRun> {
  // localHint: a results folder on this machine (`agent-runner approve`), named by its path.
  const bad = (what: string) =>
    new ConfigurationError(
      localHint
        ? `'${artifactName}' is not a usable results folder: ${what} ${localHint}`
        : `The artifact '${artifactName}' is not a usable Agent Runner run artifact: ${what} Was it produced by 'phase: run' of this workflow run?`,
    );
  const walk = await regularFiles(dir);
  if (walk.skipped.length) throw bad(`it holds entries that are not regular files (${walk.skipped.join(", ")}).`);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path.join(dir, RESULTS_FILES.result), "utf8"));
  } catch (e) {
    throw bad(`${RESULTS_FILES.result} is missing or not JSON (${(e as Error).message}).`);
  }
  const parsed = RunResultSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw bad(`${RESULTS_FILES.result} does not have the expected shape (${issues.join("; ")}).`);
  }
  const patchPath = path.join(dir, RESULTS_FILES.patch);
  const st = await lstat(patchPath).catch(() => undefined);
  if (!st?.isFile()) throw bad(`${RESULTS_FILES.patch} is missing.`);
  const result: RunResult = {
    ...parsed.data,
    stdoutPath: path.join(dir, RESULTS_FILES.stdout),
    stderrPath: path.join(dir, RESULTS_FILES.stderr),
    tracePath: path.join(dir, RESULTS_FILES.trace),
    diff: { ...parsed.data.diff, patchPath },
  };
  await writeFile(path.join(dir, RESULTS_FILES.result), JSON.stringify(result, null, 2) + "\n");
  return { result, resultsDir: dir };
}
