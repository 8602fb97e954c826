/**
 * `approval: required` on a laptop: `agent-runner run --approval required`
 * stages, `agent-runner approve <results folder> <digest>` applies.
 *
 * Staging. The agent worked in a copy of the checkout (action.ts), so the
 * working tree is untouched; after the same checks as any run (patch rules,
 * threat detection when configured, the safe-output policy), the record goes
 * into the results folder. Its digest is the action's (digest.ts) over the
 * patch, the requests and the final message, with the local delivery plan
 * (`working-tree`: the checkout's absolute path and the base commit), the
 * staging's own random id in place of a run artifact (two stagings of the same
 * patch are two decisions; the folder may be moved), the workflow `LOCAL_WORKFLOW`
 * and the expiry (the record beside it is anyone's to edit).
 *
 * Approval. The results folder is hostile input: the agent ran while it was
 * written, and anyone may edit it after. Its files are copied once, each a
 * regular file opened without following links and under a size cap, into a
 * private folder; result.json goes through the run artifact's door
 * (run-artifact.ts, zod); the digest is recomputed from those bytes and must
 * be the one the person typed. The decision is taken once by a ref in the
 * working tree's own repository (`refs/agent-runner/approvals/<digest>`,
 * created only if absent), never by the folder's record. Then `git apply`
 * (no three-way merge: the approved bytes or nothing) writes exactly the
 * copied patch into the working tree, as a local run leaves it: changed,
 * not committed. Safe-output requests are listed and checked against the
 * policy, and a local run applies none (there is no GitHub event).
 */
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { mkdir, mkdtemp, open, rename, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { SafeOutputsConfig } from "../../safe-outputs/config.js";
import { RESULTS_FILES } from "../../constants.js";
import { ConfigurationError, errorMessage } from "../../errors.js";
import { Git } from "../../git/git.js";
import type { RunResult } from "../../result.js";
import type { StageContext } from "../../stage-context.js";
import type { Outputs } from "../outputs.js";
import { readDownloadedRun } from "../run-artifact.js";
import { applyRequests } from "../safe-outputs/apply.js";
import { readRequests, type RequestsFile } from "../safe-outputs/requests.js";
import { safeOutputsFile } from "../safe-outputs/stage.js";
import { approvalLockRef } from "./enact.js";
import { DIGEST_PREFIX_LENGTH, digestMatches, stagedContent, stagedDigest, type StagedArtifact, type StagedPlan } from "./digest.js";
import { parseRecord, type LocalApprovalRecord } from "./record.js";

/** The `workflow` a local staging binds: only `agent-runner approve` publishes it. */
export const LOCAL_WORKFLOW = "agent-runner run (local)";
/** What a request that passes the policy is told by applyRequests (no GitHub to apply it to). */
const PASSES = "passes the safe-output policy; a local run applies no GitHub request";

/** Bytes read of each file of the folder, at most. */
const CAPS = { result: 64 * 1024 * 1024, patch: 512 * 1024 * 1024, approval: 1024 * 1024 } as const;

export function localPlan(workTree: string, baseCommit: string): StagedPlan {
  return { mode: "working-tree", repository: workTree, baseCommit };
}

function localArtifact(stagingId: string): StagedArtifact {
  return { runId: `local-${stagingId}`, id: 0, name: "results folder" };
}

/** The checkout holding `workspace` (its top level): where an approval applies the patch. */
export async function workTreeOf(workspace: string, gitEnv: Record<string, string>): Promise<string> {
  const r = await new Git(workspace, gitEnv).exec(["rev-parse", "--path-format=absolute", "--show-toplevel"], { okCodes: [128] }).catch(() => undefined);
  const top = r?.exitCode === 0 ? r.stdout.trim() : "";
  if (!top) throw new ConfigurationError(`Input 'working-directory': '${workspace}' is not in a git checkout; 'approval: required' applies the approved patch to one.`);
  return top;
}

export interface LocalStaged {
  record: LocalApprovalRecord;
  outputs: Outputs;
  summary: string;
}

/** Everything checked and nothing held back: the record of what `agent-runner approve` would apply. */
export async function stageLocally(ctx: StageContext, result: RunResult, requests: RequestsFile): Promise<LocalStaged> {
  const { settings, io } = ctx;
  if (settings.delivery.deliver === "none")
    throw new ConfigurationError("Input 'deliver': 'none' applies nothing, so 'approval: required' would stage nothing to approve; drop one of the two.");
  const workTree = await workTreeOf(settings.workspace, io.host.gitEnv);
  const stagingId = randomUUID();
  const now = io.host.now ? new Date(io.host.now) : new Date();
  const expiresAt = new Date(now.getTime() + settings.approval.expiresHours * 3600_000).toISOString();
  const content = await stagedContent(result, requests, localPlan(workTree, result.diff.baseCommit), localArtifact(stagingId), LOCAL_WORKFLOW, { expiresAt });
  const digest = stagedDigest(content);
  const record: LocalApprovalRecord = {
    v: 1,
    kind: "local",
    state: "staged",
    digest,
    stagingId,
    workTree,
    baseCommit: result.diff.baseCommit,
    stagedAt: now.toISOString(),
    expiresAt,
    requestVerdicts: await requestVerdicts(settings.agent.safeOutputs, requests),
  };
  await saveLocalRecord(ctx.resultsDir, record);
  ctx.log.info(`Approval: staged ${result.diff.changedFiles.length} changed file(s) and ${requests.requests.length} safe-output request(s); digest ${digest}. Nothing was applied to ${workTree}.`);
  return {
    record,
    outputs: { "approval-state": "staged", "approval-digest": digest },
    summary: `### Approval\n\n- Staged, waiting for approval: \`agent-runner approve <results folder> ${digest.slice(0, DIGEST_PREFIX_LENGTH)}\` applies it to \`${workTree}\`.\n- Digest: \`${digest}\`\n`,
  };
}

/** What the policy says of each request, in file order (applyRequests with nowhere to apply them). */
async function requestVerdicts(config: SafeOutputsConfig | undefined, file: RequestsFile): Promise<string[]> {
  const results = await applyRequests({ config, requests: file.requests, notApplied: PASSES });
  return results.map((r) => (r.reason?.endsWith(`: ${PASSES}`) ? PASSES : `refused by the policy: ${r.reason ?? r.status}`).slice(0, 2000));
}

/** What a results folder holds, read once into a private folder, with its digest recomputed from those bytes. */
export interface StagedFolder {
  dir: string;
  record: LocalApprovalRecord;
  result: RunResult;
  requests: RequestsFile;
  /** The digest of the folder's bytes as they are now (the record's own `digest` is not trusted). */
  digest: string;
  patchBytes: number;
}

/** Read a results folder staged by `agent-runner run --approval required`; `use` runs while its private copy exists. */
export async function withStagedFolder<T>(dir: string, use: (staged: StagedFolder, patchPath: string) => Promise<T>): Promise<T> {
  const folder = path.resolve(dir);
  if (!(await stat(folder).catch(() => undefined))?.isDirectory())
    throw new ConfigurationError(`'${dir}' is not a folder: give the results folder that \`agent-runner run --approval required\` printed.`);
  const copy = await mkdtemp(path.join(os.tmpdir(), "agent-runner-approve-"));
  try {
    const approvalText = (await copyRegularFile(folder, copy, RESULTS_FILES.approval, CAPS.approval)).toString("utf8");
    const record = parseRecord(approvalText);
    if (!record) throw new ConfigurationError(`'${dir}': ${RESULTS_FILES.approval} is not an approval record (was the folder edited?).`);
    if (!("kind" in record))
      throw new ConfigurationError(`'${dir}' was staged on GitHub (run ${record.runId}): approve it with \`/approve ${record.digest.slice(0, DIGEST_PREFIX_LENGTH)}\` on the thread.`);
    await copyRegularFile(folder, copy, RESULTS_FILES.result, CAPS.result);
    const patch = await copyRegularFile(folder, copy, RESULTS_FILES.patch, CAPS.patch);
    const { result } = await readDownloadedRun(copy, folder, "Was it written by 'agent-runner run --approval required'?");
    const requests = await readRequests(safeOutputsFile(folder));
    const content = await stagedContent(result, requests, localPlan(record.workTree, result.diff.baseCommit), localArtifact(record.stagingId), LOCAL_WORKFLOW, {
      expiresAt: record.expiresAt,
    });
    return await use({ dir: folder, record, result, requests, digest: stagedDigest(content), patchBytes: patch.length }, result.diff.patchPath);
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

/**
 * `name` of `from` copied to `to`: a regular file (never a link, a FIFO or a device), at most `cap`
 * bytes. Read through one descriptor, so what is checked is what is copied.
 */
async function copyRegularFile(from: string, to: string, name: string, cap: number): Promise<Buffer> {
  const missing = (why: string) => new ConfigurationError(`'${from}' is not a results folder staged for approval: ${name} ${why}.`);
  let fh;
  try {
    fh = await open(path.join(from, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw missing(code === "ENOENT" ? "is missing" : code === "ELOOP" ? "is a symbolic link, which is never followed" : `cannot be read (${code ?? errorMessage(e)})`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw missing("is not a regular file");
    if (st.size > cap) throw missing(`is larger than ${cap} bytes`);
    const bytes = await fh.readFile();
    if (bytes.length > cap) throw missing(`is larger than ${cap} bytes`);
    await mkdir(path.dirname(path.join(to, name)), { recursive: true });
    await writeFile(path.join(to, name), bytes, { flag: "wx" });
    return bytes;
  } finally {
    await fh.close();
  }
}

/** The record written into the folder by rename, so a link planted in its place is replaced, never followed. */
export async function saveLocalRecord(dir: string, record: LocalApprovalRecord): Promise<void> {
  const tmp = path.join(dir, `.${RESULTS_FILES.approval}.${randomUUID()}`);
  await writeFile(tmp, JSON.stringify(record, null, 2) + "\n", { flag: "wx" });
  await rename(tmp, path.join(dir, RESULTS_FILES.approval));
}

/** An approval or rejection refused: the reason, and nothing applied. */
export class ApprovalRefusedError extends ConfigurationError {
  constructor(reason: string) {
    super(`refused: ${reason}. Nothing was applied.`);
    this.name = "ApprovalRefusedError";
  }
}

export interface LocalDecisionOptions {
  gitEnv: Record<string, string>;
  /** Who decides (the local user's name). */
  by: string;
  now?: Date;
}

export interface Approved {
  record: LocalApprovalRecord;
  workTree: string;
  files: string[];
  /** HEAD when applied, when it is no longer the staged base commit (the patch still applied cleanly). */
  movedTo?: string;
}

/** `agent-runner approve <dir> <digest>`: the checks, the decision taken once, then exactly the staged patch into the working tree. */
export async function approveLocally(dir: string, given: string, opts: LocalDecisionOptions): Promise<Approved> {
  const typed = given.trim().toLowerCase();
  if (!/^[0-9a-f]+$/.test(typed) || typed.length < DIGEST_PREFIX_LENGTH || typed.length > 64)
    throw new ApprovalRefusedError(`'${given}' is not a digest: give at least the first ${DIGEST_PREFIX_LENGTH} hex digits printed by \`agent-runner run --approval required\``);
  return withStagedFolder(dir, async (staged, patchPath) => {
    const { record, digest } = staged;
    if (!digestMatches(digest, typed))
      throw new ApprovalRefusedError(
        digestMatches(record.digest, typed)
          ? `the results folder is not what was staged: its bytes (the patch, a request, the final message or the record) now have the digest \`${digest.slice(0, DIGEST_PREFIX_LENGTH)}\`, not the approved \`${typed.slice(0, DIGEST_PREFIX_LENGTH)}\``
          : `the digest \`${typed}\` is not this staged run's (\`${digest.slice(0, DIGEST_PREFIX_LENGTH)}\`); copy it from the output of \`agent-runner run\``,
      );
    const git = await checkDecidable(staged, opts);
    const head = await git.text(["rev-parse", "--verify", "HEAD"]);
    // An empty patch (only requests, or nothing) changes no file: `git apply` would call it no patch.
    const hasPatch = staged.patchBytes > 0;
    const check = hasPatch ? await git.exec(["apply", "--check", "--whitespace=nowarn", patchPath], { okCodes: [1, 128] }) : undefined;
    if (check && check.exitCode !== 0) {
      // A second approval at the same moment: the first took the decision and applied the patch between our checks.
      if (await isDecided(git, digest)) throw decidedFirst(digest);
      throw new ApprovalRefusedError(notApplying(record, head, check.stderr));
    }
    await takeLocalDecision(git, digest, head);
    const applied = hasPatch ? await git.exec(["apply", "--whitespace=nowarn", patchPath], { okCodes: [1, 128] }) : undefined;
    if (applied && applied.exitCode !== 0) {
      // Checked a moment ago: something changed the tree in between. The decision is given back.
      await git.exec(["update-ref", "-d", approvalLockRef(digest), head], { okCodes: [1, 128] });
      throw new ApprovalRefusedError(notApplying(record, head, applied.stderr));
    }
    const decided: LocalApprovalRecord = { ...record, digest, state: "enacted", decision: { by: opts.by, at: (opts.now ?? new Date()).toISOString() } };
    await saveLocalRecord(staged.dir, decided);
    return { record: decided, workTree: record.workTree, files: staged.result.diff.changedFiles, ...(head !== record.baseCommit ? { movedTo: head } : {}) };
  });
}

/** `agent-runner reject <dir>`: the staged run is never applied (the same decision an approval takes). */
export async function rejectLocally(dir: string, opts: LocalDecisionOptions): Promise<LocalApprovalRecord> {
  return withStagedFolder(dir, async (staged) => {
    const git = await checkDecidable(staged, opts, { expiry: false });
    await takeLocalDecision(git, staged.digest, await git.text(["rev-parse", "--verify", "HEAD"]));
    const decided: LocalApprovalRecord = { ...staged.record, digest: staged.digest, state: "rejected", decision: { by: opts.by, at: (opts.now ?? new Date()).toISOString() } };
    await saveLocalRecord(staged.dir, decided);
    return decided;
  });
}

/** The checks every decision makes: state, the lock, expiry, the working tree still a checkout at that place. */
async function checkDecidable(staged: StagedFolder, opts: LocalDecisionOptions, check = { expiry: true }): Promise<Git> {
  const { record, digest } = staged;
  const short = digest.slice(0, DIGEST_PREFIX_LENGTH);
  if (record.state !== "staged")
    throw new ApprovalRefusedError(`the staged run \`${short}\` was already ${record.state === "enacted" ? "approved and applied" : record.state}${record.decision ? ` by ${record.decision.by} at ${record.decision.at}` : ""}`);
  const top = await workTreeOf(record.workTree, opts.gitEnv).catch(() => undefined);
  if (top !== record.workTree) throw new ApprovalRefusedError(`the working tree '${record.workTree}' it was staged for is gone or no longer a git checkout`);
  const git = new Git(record.workTree, opts.gitEnv);
  if (await isDecided(git, digest)) throw new ApprovalRefusedError(`the staged run \`${short}\` was already approved or rejected (${approvalLockRef(digest)} exists in ${record.workTree})`);
  const now = opts.now ?? new Date();
  if (check.expiry && now.getTime() > Date.parse(record.expiresAt)) throw new ApprovalRefusedError(`the staged run \`${short}\` expired at ${record.expiresAt}; run the agent again`);
  return git;
}

/**
 * Whether the digest's lock ref exists, for the refusal's wording. `show-ref --verify` takes the full name as
 * it is; `rev-parse` would also find a branch or tag named `refs/agent-runner/approvals/…` (refs/heads/refs/…)
 * and call it a decision. Any git error reads as not decided: the create-only update-ref in takeLocalDecision
 * is what allows one decision.
 */
async function isDecided(git: Git, digest: string): Promise<boolean> {
  return (await git.exec(["show-ref", "--verify", "--quiet", approvalLockRef(digest)], { okCodes: [1, 128] })).exitCode === 0;
}

function decidedFirst(digest: string): ApprovalRefusedError {
  return new ApprovalRefusedError(`another \`agent-runner approve\` or \`reject\` of \`${digest.slice(0, DIGEST_PREFIX_LENGTH)}\` decided first`);
}

/** Creates the lock ref only if it does not exist (git checks the old value under its ref lock): one decision per digest. */
async function takeLocalDecision(git: Git, digest: string, at: string): Promise<void> {
  const taken = await git.exec(["update-ref", "-m", "agent-runner: approval decided", approvalLockRef(digest), at, ""], { okCodes: [1, 128] });
  if (taken.exitCode !== 0) throw decidedFirst(digest);
}

function notApplying(record: LocalApprovalRecord, head: string, stderr: string): string {
  const git = stderr.trim().split("\n").slice(-3).join(" ");
  if (head !== record.baseCommit)
    return `HEAD of ${record.workTree} moved from ${record.baseCommit.slice(0, 12)} (the staged base) to ${head.slice(0, 12)} and the patch no longer applies (git: ${git}); no merge is attempted: check out ${record.baseCommit.slice(0, 12)} or run the agent again`;
  return `the patch no longer applies to ${record.workTree} (git: ${git}); local changes to the same files? No merge is attempted`;
}
