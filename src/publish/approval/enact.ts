/**
 * `/approve <digest>` and `/reject` on a thread with a staging comment.
 * Every check reads what the action wrote itself (the staging comment, found
 * by its author and marker) or GitHub (permissions, the artifact); the
 * approver's comment supplies only the digest prefix. A refusal of someone
 * who may decide answers with one reply naming the reason; a stranger's
 * command (no right to decide, or no staging comment on the thread) is
 * refused silently (the log and step summary only), so that anyone who
 * can comment cannot make the bot write. Nothing else is written. The approval
 * itself is taken once: a ref created through the Git Data API, which
 * GitHub creates for exactly one of two callers. The ref lies outside
 * refs/tags and refs/heads (creating a tag or branch can start push/create
 * workflows) and points at a commit the action makes itself, never at the
 * staged base commit, which can be a fork's.
 */
import { errorMessage } from "../../errors.js";
import type { IssueComment, GitHubApi } from "../../github/api.js";
import type { RunResult } from "../../result.js";
import type { GitHubRun, StageContext } from "../../stage-context.js";
import type { RunArtifactRef } from "../artifact-stage.js";
import { ActionsArtifactService, repositoryAccess } from "../artifacts.js";
import type { Outputs } from "../outputs.js";
import { readDownloadedRun } from "../run-artifact.js";
import { toSafeMarkdown } from "../safe-markdown.js";
import { readRequests } from "../safe-outputs/requests.js";
import { safeOutputsFile } from "../safe-outputs/stage.js";
import { DIGEST_PREFIX_LENGTH, digestMatches, stagedContent, stagedDigest } from "./digest.js";
import { readApprovalMarker, saveRecord, withRecord, type ApprovalRecord } from "./record.js";
import { stagedPlan } from "./stage.js";
import { workflowIdentity } from "../../shared/workflow-identity.js";

/** What the trigger stage's parser made of the comment (trigger/approval-command.ts). */
export interface ApprovalRequest {
  verb: { kind: "approve"; digest: string } | { kind: "reject" } | { kind: "malformed" };
  action: string;
  repository: string;
  thread: number;
  commentId: number;
  actor: { login: string; isBot: boolean };
}

export interface Staging {
  comment: IssueComment;
  record: ApprovalRecord;
}

/** `silent`: a stranger's command, refused without a reply. */
export type Checked = { kind: "refused"; reason: string; silent?: boolean } | { kind: "ok"; staging: Staging };

const WRITE_PERMISSIONS = ["admin", "maintain", "write"];
/** The ref that takes a decision once: neither a tag nor a branch, so creating it starts no workflow. */
export const approvalLockRef = (digest: string): string => `refs/agent-runner/approvals/${digest}`;

const normalize = (login: string) => login.trim().toLowerCase();
/** Who writes with the workflow's own token: the only bot whose comments count when the token cannot say who it is. */
export const ACTIONS_BOT = "github-actions[bot]";

function now(ctx: StageContext): Date {
  return ctx.io.host.now ? new Date(ctx.io.host.now) : new Date();
}

/**
 * The staging comments of the thread the action wrote: its own identity when
 * the token can say who it is (a personal token), else the workflow token's
 * `github-actions[bot]` exactly (any other bot, another app's included, may
 * post what it likes), never a person's, whose pasted marker means nothing.
 * Only records this workflow staged count: another workflow's approve job
 * (other approvers, other rules) never publishes them.
 */
export async function stagingComments(api: GitHubApi, req: Pick<ApprovalRequest, "repository" | "thread"> & { workflow: string | undefined }): Promise<Staging[]> {
  const workflow = req.workflow?.toLowerCase();
  if (!workflow) return [];
  const comments = await api.issueComments(req.thread);
  const me = await api.authenticatedLogin();
  const own = comments.filter((c) => c.author !== undefined && (me ? c.author === me : c.author === ACTIONS_BOT));
  return own.flatMap((comment) => {
    const record = readApprovalMarker(comment.body);
    const ours = record && record.repository.toLowerCase() === req.repository.toLowerCase() && record.thread === req.thread && record.workflow.toLowerCase() === workflow;
    return ours ? [{ comment, record }] : [];
  });
}

/** The checks that need no artifact: the comment as posted, who wrote it, the staging comment, its state, expiry. */
export async function checkRequest(ctx: StageContext, api: GitHubApi, req: ApprovalRequest): Promise<Checked> {
  const refused = (reason: string): Checked => ({ kind: "refused", reason });
  const verb = req.verb;
  // First whether this is anyone's business: strangers and threads without a staging comment get no reply.
  const all = await stagingComments(api, { ...req, workflow: workflowIdentity(ctx.io.host.workflowRef) });
  if (!all.length) return { kind: "refused", reason: "there is no staging comment of this workflow on this thread", silent: true };
  if (!(await mayDecide(ctx, api, req.actor.login)))
    return { kind: "refused", reason: `@${req.actor.login} is neither listed in 'approvers' nor has write, maintain or admin permission`, silent: true };
  if (req.action !== "created")
    return refused(`the comment was ${req.action === "edited" ? "edited" : `'${req.action}'`}; only a newly posted \`/approve\` or \`/reject\` counts, so post a new comment`);
  if (req.actor.isBot) return refused(`@${req.actor.login} is a bot, and bots never approve or reject`);
  if (verb.kind === "malformed") return refused(`\`/approve\` needs the digest from the staging comment: \`/approve <first ${DIGEST_PREFIX_LENGTH} hex digits>\``);
  if (verb.kind === "approve" && verb.digest.length < DIGEST_PREFIX_LENGTH) return refused(`give at least ${DIGEST_PREFIX_LENGTH} hex digits of the digest`);
  const matching = verb.kind === "approve" ? all.filter((s) => digestMatches(s.record.digest, verb.digest)) : all.filter((s) => s.record.state === "staged");
  const staging = matching.at(-1) ?? (verb.kind === "reject" ? all.at(-1) : undefined);
  if (!staging) return refused(verb.kind === "approve" ? `no staged run on this thread has the digest \`${verb.digest}\`` : "there is no staged run on this thread");
  const r = staging.record;
  if (r.state !== "staged") return refused(`the staged run \`${r.digest.slice(0, DIGEST_PREFIX_LENGTH)}\` was already ${r.state}${r.decision ? ` by @${r.decision.by} at ${r.decision.at}` : ""}`);
  const who = await approverCheck(ctx, api, req.actor.login, r);
  if (who) return refused(who);
  if (now(ctx).getTime() > Date.parse(r.expiresAt)) return refused(`the staged run expired at ${r.expiresAt}; ask the agent again`);
  return { kind: "ok", staging };
}

/** Whether `login` is someone who may decide at all: listed in `approvers`, or with write, maintain or admin permission. */
async function mayDecide(ctx: StageContext, api: GitHubApi, login: string): Promise<boolean> {
  if (ctx.settings.approval.approvers.some((a) => normalize(a) === normalize(login))) return true;
  return WRITE_PERMISSIONS.includes(await api.permission(login));
}

/** Why `login` may not decide, or undefined. */
async function approverCheck(ctx: StageContext, api: GitHubApi, login: string, record: ApprovalRecord): Promise<string | undefined> {
  const { approvers, self } = ctx.settings.approval;
  if (!self && record.actor && normalize(record.actor) === normalize(login))
    return `@${login} triggered this run, and 'approval-self' is false: another approver must decide`;
  if (approvers.length) return approvers.some((a) => normalize(a) === normalize(login)) ? undefined : `@${login} is not listed in 'approvers'`;
  const permission = await api.permission(login);
  return WRITE_PERMISSIONS.includes(permission) ? undefined : `@${login} has '${permission}' permission (write, maintain or admin needed to approve)`;
}

/** The one reply a refusal writes. */
export async function replyRefusal(ctx: StageContext, api: GitHubApi, req: Pick<ApprovalRequest, "thread" | "actor" | "verb">, reason: string): Promise<void> {
  const what = req.verb.kind === "reject" ? "rejection" : "approval";
  ctx.log.warning(`Approval: refused: ${reason}.`);
  await api.createComment(req.thread, post(ctx, `❌ @${req.actor.login}, this ${what} was refused: ${reason}. Nothing was published.`, [req.actor.login]));
}

/** A stranger's command: the log and the step summary say why, the thread gets nothing. */
export async function noteSilentRefusal(ctx: StageContext, req: Pick<ApprovalRequest, "thread" | "actor" | "verb">, reason: string): Promise<void> {
  const what = req.verb.kind === "reject" ? "/reject" : "/approve";
  ctx.log.info(`Approval: ignored ${what} from @${req.actor.login} on #${req.thread} without a reply: ${reason}.`);
  await ctx.io.appendSummary(post(ctx, `### Approval\n\n- Ignored \`${what}\` from @${req.actor.login} on #${req.thread}, without a reply: ${reason}.\n`));
}

/** A reply on the thread (a rejection's confirmation). */
export async function reply(ctx: StageContext, api: GitHubApi, thread: number, markdown: string, keepMentions: string[]): Promise<void> {
  await api.createComment(thread, post(ctx, markdown, keepMentions));
}

function post(ctx: StageContext, markdown: string, keepMentions: string[] = []) {
  return toSafeMarkdown(ctx.redactor.redact(markdown), { serverUrl: ctx.io.host.serverUrl, allowedDomains: ctx.settings.run.network.allowedDomains, keepMentions });
}

/**
 * Takes the decision for `digest` once; false when another `/approve` or `/reject` took it first.
 * The lock points at a root commit of the action's own (one small file naming the digest, as the
 * ledger's first commit), so no commit of the staged run's, which may come from a fork, is ever
 * referenced from the repository.
 */
export async function takeDecision(api: GitHubApi, digest: string, verb: "approve" | "reject"): Promise<boolean> {
  const blob = await api.createBlob(Buffer.from(`Agent Runner approval lock: ${verb} of the staged run ${digest} was decided once (docs/approval.md).\n`));
  const tree = await api.createRootTree([{ path: "DECISION", mode: "100644", sha: blob }]);
  const commit = await api.createCommit({ message: `agent-runner approval: ${verb} ${digest}\n`, tree, parents: [] });
  return (await api.createRefOnce(approvalLockRef(digest), commit.sha)) === "created";
}

/** The comment's heading (and an `enacting` line under it) replaced by the state and the outcome line. */
export function withOutcome(body: string, state: string, line: string): string {
  // A replacer function, not a string: `line` can quote a branch name or a refusal others chose, whose `$'`
  // or `$&` a replacement string would expand into pieces of the comment.
  return body.replace(/\n### [^\n]*\n(?:\n⏳ [^\n]*\n)?/, () => `\n### Agent Runner: ${state}\n\n${line}\n`);
}

/**
 * The staging comment with a new record and an audit line (who, what, when); its staged content stays.
 * The line replaces an `enacting` one (⏳ …: publishing), so a published run does not still say it is publishing.
 */
export async function recordDecision(ctx: StageContext, api: GitHubApi, staging: Staging, record: ApprovalRecord, line: string): Promise<Staging> {
  const body = withOutcome(withRecord(staging.comment.body, record), record.state, line);
  const comment = await api.updateComment(staging.comment.id, post(ctx, body, record.decision ? [record.decision.by] : []));
  await saveRecord(ctx.resultsDir, record).catch(() => undefined);
  return { comment, record };
}

export interface Verified {
  result: RunResult;
  artifact: RunArtifactRef;
  digest: string;
}

/**
 * The staged artifact downloaded again (from the run the staging comment names),
 * its digest recomputed with this run's delivery plan: it must be the staged one.
 */
export async function verifyStaged(ctx: StageContext, api: GitHubApi, run: GitHubRun, staging: Staging): Promise<Verified | { refused: string }> {
  const r = staging.record;
  const origin = await stagedOrigin(api, r, workflowIdentity(ctx.io.host.workflowRef)).catch((e: unknown) => `the staged run ${r.runId} or its artifact could not be read (${errorMessage(e)})`);
  if (origin) return { refused: origin };
  const access = repositoryAccess({ repository: r.repository, apiUrl: ctx.io.host.apiUrl }, ctx.settings.github.token);
  if (!access) return { refused: `the staging comment names no repository` };
  const dir = ctx.resultsDir;
  try {
    await new ActionsArtifactService().downloadFromRun({ id: r.artifactId, name: r.artifactName, runId: Number(r.runId), createdAt: "", size: 0 }, dir, access);
  } catch (e) {
    return { refused: `the staged artifact '${r.artifactName}' of run ${r.runId} could not be downloaded (${errorMessage(e)}); it may have expired` };
  }
  let result: RunResult;
  try {
    ({ result } = await readDownloadedRun(dir, r.artifactName));
  } catch (e) {
    return { refused: `the staged artifact is not what was staged: ${errorMessage(e)}` };
  }
  const requests = await readRequests(safeOutputsFile(dir));
  // This run's workflow, not the record's: a record of another workflow no longer matches its digest.
  const workflow = workflowIdentity(ctx.io.host.workflowRef) ?? "";
  const digest = stagedDigest(await stagedContent(result, requests, stagedPlan({ run }, result), { runId: r.runId, id: r.artifactId, name: r.artifactName }, workflow));
  if (digest !== r.digest)
    return { refused: `the digest does not match: the artifact or the delivery plan is not what was staged (staged \`${r.digest.slice(0, DIGEST_PREFIX_LENGTH)}\`, now \`${digest.slice(0, DIGEST_PREFIX_LENGTH)}\`)` };
  result.artifacts = [{ name: r.artifactName, id: String(r.artifactId) }];
  ctx.log.info(`Approval: artifact '${r.artifactName}' of run ${r.runId} downloaded again; digest ${digest} matches.`);
  return { result, artifact: { id: r.artifactId, name: r.artifactName }, digest };
}

/**
 * Why the record's run and artifact are not this workflow's own staging, or undefined. Read from
 * GitHub before anything is downloaded: the artifact must be the one named, of the run named, and
 * that run a run of this same workflow file on the repository's own branches (not a fork's pull
 * request, whose jobs can upload artifacts of any name).
 */
async function stagedOrigin(api: GitHubApi, r: ApprovalRecord, workflow: string | undefined): Promise<string | undefined> {
  const artifact = artifactProblem(await api.artifact(r.artifactId), r);
  if (artifact) return artifact;
  return runProblem(await api.workflowRun(Number(r.runId)), { repository: r.repository, workflow });
}

/** Why the artifact GitHub lists under the record's id is not the one staged, or undefined. */
export function artifactProblem(a: { name: string; runId?: number; expired: boolean }, r: Pick<ApprovalRecord, "artifactName" | "runId">): string | undefined {
  if (a.name !== r.artifactName) return `the staged artifact is called '${a.name}', not '${r.artifactName}' as staged`;
  if (a.runId === undefined || String(a.runId) !== r.runId) return `the artifact '${a.name}' belongs to run ${a.runId ?? "unknown"}, not to the staging run ${r.runId}`;
  if (a.expired) return `the staged artifact '${a.name}' of run ${r.runId} has expired`;
  return undefined;
}

/** Why the staging run is not a run of this workflow on the repository itself, or undefined. */
export function runProblem(run: { id: number; path: string; repository: string; headRepository?: string }, want: { repository: string; workflow: string | undefined }): string | undefined {
  const repo = want.repository.toLowerCase();
  if (run.repository.toLowerCase() !== repo) return `the staging run ${run.id} belongs to ${run.repository}, not ${want.repository}`;
  if (!run.headRepository || run.headRepository.toLowerCase() !== repo)
    return `the staging run ${run.id} ran for ${run.headRepository ?? "an unknown repository"} (a fork's pull request), not for ${want.repository} itself`;
  if (!want.workflow) return "this run does not know its workflow (GITHUB_WORKFLOW_REF), so it cannot tell whether the staging run was one of its own";
  const path = run.path.replace(/@.*$/, "");
  if (`${run.repository}/${path}`.toLowerCase() !== want.workflow.toLowerCase()) return `the staging run ${run.id} is of the workflow '${path}', not this one`;
  return undefined;
}

/** Outputs of a decision step. */
export function approvalOutputs(state: string, digest?: string): Outputs {
  return { "approval-state": state, ...(digest ? { "approval-digest": digest } : {}) };
}
