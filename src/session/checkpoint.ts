/**
 * `@agent continue` and `resume: checkpoint` (git/checkpoint.ts): before the
 * agent starts, the thread's checkpoint ref is fetched into a private bare
 * repository of the run (never into the workspace's), checked, and turned
 * into a patch against its base commit; the runner puts it into the workspace
 * after its baseline (runner.ts). The run then continues the thread's session,
 * within the cost the earlier runs left of `max-cost-usd`, and its prompt says
 * that it continues.
 *
 * What is trusted of the ref: only its shape. One commit with one parent (the
 * original base), whose message carries the record the publishing job wrote;
 * the tree is the agent's, and goes through the patch rules and threat
 * detection again when the finished work is delivered.
 */
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { Settings } from "../config/schema.js";
import { ConfigurationError } from "../errors.js";
import { checkpointRef, parseCheckpointMessage, type CheckpointToRestore } from "../git/checkpoint.js";
import { Git } from "../git/git.js";
import { gitAuthEnv } from "../github/git-auth.js";
import type { Logger } from "../logger.js";

/** Whether the comment's request asks to continue (`@agent continue`, optionally with a few words after it). */
export function asksToContinue(request: string): boolean {
  return /^continue\b[\s\S]{0,200}$/i.test(request.trim());
}

export interface CheckpointFetch {
  /** The thread (issue or PR number) whose checkpoint to continue. */
  thread: number | undefined;
  remoteUrl: string;
  token: string;
  serverUrl: string;
  gitEnv: Record<string, string>;
  runDir: string;
  log: Logger;
}

/** Fetch and check the thread's checkpoint; a missing or malformed one is a configuration error before the agent starts. */
export async function fetchCheckpoint(o: CheckpointFetch): Promise<CheckpointToRestore> {
  if (o.thread === undefined) throw new ConfigurationError("Input 'resume': 'checkpoint' continues an issue's or pull request's checkpoint, and this run is on neither.");
  const ref = checkpointRef(o.thread);
  const dir = path.join(o.runDir, "checkpoint-in.git");
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  // Our own bare repository: no config, hooks or attributes of anyone else's; nothing is checked out here.
  const git = new Git(dir, { ...o.gitEnv, ...gitAuthEnv(o.token, o.serverUrl) }, ["-c", "core.attributesFile=/dev/null"]);
  await git.exec(["init", "--bare", "-q"]);
  const fetched = await git.exec(["fetch", "--no-tags", "--quiet", "--depth=2", o.remoteUrl, `+${ref}:refs/checkpoint`], { okCodes: [1, 128] });
  if (fetched.exitCode !== 0)
    throw new ConfigurationError(
      `Nothing to continue: #${o.thread} has no checkpoint (${ref} could not be fetched: ${fetched.stderr.trim().split("\n").pop() ?? ""}). A checkpoint is kept when a run that delivers by pull request or commit stops before finishing (conclusion 'incomplete'; a run with deliver 'comment' keeps none); start the task anew instead.`,
    );
  const [commit, ...parents] = (await git.text(["rev-list", "--parents", "-n", "1", "refs/checkpoint"])).split(" ");
  const message = await git.text(["log", "-1", "--format=%B", "refs/checkpoint"]);
  const record = parseCheckpointMessage(message);
  if (!commit || parents.length !== 1 || !record || record.base !== parents[0])
    throw new ConfigurationError(`Checkpoint: ${ref} is not a checkpoint Agent Runner wrote (one commit on its base, with its record); remove it or start anew.`);
  const patchPath = path.join(o.runDir, "checkpoint.diff");
  await git.exec(["diff", "--binary", "--full-index", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", record.base, commit], { stdoutFile: patchPath });
  o.log.info(`Checkpoint: continuing ${ref} (${commit.slice(0, 12)}, ${record.cause}, after ${record.runs} run${record.runs === 1 ? "" : "s"}) on ${record.base.slice(0, 12)}.`);
  return { commit, base: record.base, patchPath, runs: record.runs, cause: record.cause, ...(record.spentUsd !== undefined ? { spentUsd: record.spentUsd } : {}) };
}

const CAUSE_WORDS = { "time-limit": "it ran out of time", cancelled: "it was cancelled", stalled: "it stalled" } as const;

/**
 * The settings of a continued run: the thread's session continued (when
 * `session` is `new`), `max-cost-usd` lowered by what the earlier runs spent,
 * and the prompt saying that it continues.
 */
export function continuedSettings(settings: Settings, cp: CheckpointToRestore, log: Logger): Settings {
  const session = settings.session === "new" ? "continue" : settings.session;
  let budget = settings.budget;
  const cap = budget?.maxCostUsd;
  if (budget && cap !== undefined && cp.spentUsd !== undefined) {
    const left = cap - cp.spentUsd;
    if (left <= 0)
      throw new ConfigurationError(`Input 'max-cost-usd': the earlier runs of this work already spent $${cp.spentUsd.toFixed(4)} of $${cap}; raise max-cost-usd to continue.`);
    budget = { ...budget, maxCostUsd: left };
    log.info(`Checkpoint: the earlier runs spent $${cp.spentUsd.toFixed(4)}; this run may spend the $${left.toFixed(4)} left of max-cost-usd.`);
  }
  const preface = [
    `This run continues unfinished work: an earlier run on this task stopped before it finished (${CAUSE_WORDS[cp.cause]}; ${cp.runs} run${cp.runs === 1 ? "" : "s"} so far).`,
    "Its changes are already in the working tree (see `git status` and `git diff`). Pick up where it left off and finish the task; do not start over.",
    "",
  ].join("\n");
  return {
    ...settings,
    session,
    ...(budget ? { budget } : {}),
    run: { ...settings.run, prompt: preface + settings.run.prompt, continueLast: session === "continue" || settings.run.continueLast },
  };
}
