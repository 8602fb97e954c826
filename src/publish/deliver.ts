/**
 * Delivery: the run's patch becomes a commit on the pull request's branch or
 * a pull request, or stays in the comment. Works from the results alone
 * (RunResult + patch.diff), so the publish phase of a two-phase run calls the
 * same `deliver()`. Whatever fails here, the results folder already holds the
 * patch; failures come back as `error` in the outcome, never as a throw.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { DeliverySettings } from "../config/schema.js";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { GitHubApi, PullRequestRef } from "../github/api.js";
import { apiErrorMessage } from "../github/client.js";
import { gitAuthEnv } from "../github/git-auth.js";
import type { Logger } from "../logger.js";
import type { RunResult } from "../result.js";
import { sanitizeLine } from "../shared/sanitize.js";
import type { Trigger } from "../shared/trigger.js";
import { agentMarkdown } from "./comment.js";
import { codeName } from "./markdown-code.js";
import { toSafeMarkdown, type SafeMarkdown } from "./safe-markdown.js";
import { ApiCommitTooLargeError, createApiCommit, type ApiCommit } from "./deliver-api.js";
import { BOT_IDENTITY, DeliveryRepo, validBranchName, type Identity } from "./deliver-git.js";
import type { DeliveryMode, DeliveryPlan } from "../config/deliver-plan.js";
import { describeProblems } from "./patch-rules.js";
import { pushCheckpoint, removeCheckpoint } from "./deliver-checkpoint.js";
import { apiFailure, compareUrl, pullRequestRefusal, pushRefusal, type Refusal } from "./deliver-refusals.js";

export interface DeliveryContext {
  plan: DeliveryPlan;
  settings: DeliverySettings;
  trigger: Trigger;
  api: GitHubApi;
  /** Used for git pushes only, through the environment of each git call. */
  token: string;
  serverUrl: string;
  /** `allowed-domains`: links and images there may render in the pull request body. */
  allowedDomains?: readonly string[];
  /** The runner's git environment (HostContext.gitEnv); the token is added to it. */
  gitEnv: Record<string, string>;
  /** The repository to push to, as git addresses it (the workspace's origin, read before the agent ran). */
  remoteUrl: string;
  runUrl?: string;
  /** Names the stable branch of schedule/dispatch runs. */
  workflowName?: string;
  workflowRef?: string;
  /** GITHUB_REF: a dispatch run started on a branch delivers its pull request against that branch. */
  ref?: string;
  /** Scratch folder for the delivery repository. */
  workDir: string;
  /** `protected-files: review`: protected paths the change touches; the pull request is a draft that names them. */
  reviewFiles?: readonly string[];
  /** `trigger-phrase`, for the comment's "how to continue" (`@agent continue`). */
  triggerPhrase?: string;
  /**
   * `approval: required`: who approved which digest. The commit and the pull request name them, and
   * the patch must apply as it is (no three-way merge onto a moved base: that would publish other bytes).
   */
  approval?: { by: string; digest: string };
  log: Logger;
}

export interface DeliveryOutcome {
  /** What actually happened. */
  mode: DeliveryMode;
  /** For the comment: what happened to the changes and why. */
  note?: string;
  /** The changes were not pushed: the comment carries the patch. */
  showPatch: boolean;
  branch?: string;
  commitSha?: string;
  commitUrl?: string;
  /** GitHub's verification of the delivered commit, read back (commit-method: api); absent for git pushes. */
  verified?: boolean;
  pullRequest?: PullRequestRef & { created: boolean };
  /** Files under .github/workflows/ that stopped delivery. */
  refusedFiles?: string[];
  /** Delivery was attempted and failed; the step fails with this, the results stay. */
  error?: string;
  /**
   * Delivered in part, and what was left undone (a short phrase for the
   * headline): the branch is pushed, but GitHub refused the pull request; or
   * a commit was asked on a fork's pull request and the patch went into the
   * comment instead. The step does not fail; the comment says what to do.
   */
  incomplete?: string;
  /** The compare page where a person opens the pull request GitHub refused to open. */
  compareUrl?: string;
  /** An `incomplete` run's work, kept on its checkpoint ref (deliver-checkpoint.ts). */
  checkpoint?: { ref: string; sha: string };
}

const PUSH_ATTEMPTS = 3;

export function slugify(text: string, max = 40): string {
  const slug = text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, max)
    .replace(/-+$/, "");
  return slug || "task";
}

/** `<prefix><n>-<slug>` for a thread; `<prefix><workflow>` for schedule/dispatch (one branch per workflow). */
export function deliveryBranch(ctx: Pick<DeliveryContext, "settings" | "trigger" | "workflowName" | "workflowRef">): string {
  const t = ctx.trigger;
  if (t.thread) return `${ctx.settings.branchPrefix}${t.thread.number}-${slugify(t.thread.title)}`;
  const file = /\/\.github\/workflows\/([^@/]+?)\.ya?ml@/.exec(ctx.workflowRef ?? "")?.[1];
  return `${ctx.settings.branchPrefix}${slugify(file ?? ctx.workflowName ?? t.eventName, 60)}`;
}

function coAuthor(t: Trigger): string | undefined {
  const r = t.requester;
  if (!r || r.isBot) return undefined;
  const email = r.id !== undefined ? `${r.id}+${r.login}@users.noreply.github.com` : `${r.login}@users.noreply.github.com`;
  return `Co-authored-by: ${r.login} <${email}>`;
}

function whereRequested(t: Trigger): string {
  const url = t.comment?.url ?? t.thread?.url;
  const who = t.requester ? ` by @${t.requester.login}` : "";
  if (t.thread) return `Requested${who} on #${t.thread.number}${url ? ` (${url})` : ""}.`;
  return `Requested${who} by a '${t.eventName}' run.`;
}

export function commitMessage(ctx: Pick<DeliveryContext, "trigger" | "runUrl" | "approval">): string {
  const t = ctx.trigger;
  const firstLine = t.requestSource === "default" && t.thread ? t.thread.title : t.request.split("\n").find((l) => l.trim()) ?? "";
  const subject = sanitizeLine(firstLine, 72) || "Changes by Agent Runner";
  const lines = [subject, "", whereRequested(t)];
  if (ctx.runUrl) lines.push(`Agent Runner run: ${ctx.runUrl}`);
  const trailers = [coAuthor(t), ...(ctx.approval ? [`Approved-by: ${ctx.approval.by}`, `Approval-digest: ${ctx.approval.digest}`] : [])].filter(Boolean);
  if (trailers.length) lines.push("", ...(trailers as string[]));
  return lines.join("\n") + "\n";
}

function pullRequestText(ctx: DeliveryContext, result: RunResult, branch: string): { title: string; body: SafeMarkdown } {
  const t = ctx.trigger;
  const title = t.thread
    ? sanitizeLine(`Agent: ${t.thread.kind === "pull_request" ? `follow-up to #${t.thread.number}: ` : ""}${t.thread.title}`, 120)
    : sanitizeLine(`Agent: ${ctx.workflowName ?? t.eventName}`, 120);
  const files = result.diff.changedFiles;
  const body = [
    ...(t.thread?.kind === "issue" ? [`Closes #${t.thread.number}`, ""] : t.thread ? [`Follow-up to #${t.thread.number}.`, ""] : []),
    whereRequested(t),
    "",
    ...(ctx.approval ? [`Approved by @${ctx.approval.by}: the staged outputs with digest \`${ctx.approval.digest}\`.`, ""] : []),
    ...reviewRequest(ctx.reviewFiles ?? []),
    "### Summary",
    "",
    result.output.trim() ? agentMarkdown(result.output, 30_000) : "_The agent gave no final message._",
    "",
    `<details><summary>Changed files (${files.length})</summary>`,
    "",
    ...files.slice(0, 100).map((f) => `- ${codeName(f)}`),
    ...(files.length > 100 ? [`- … and ${files.length - 100} more`] : []),
    "",
    "</details>",
    "",
    "---",
    `${ctx.runUrl ? `[Agent Runner run](${ctx.runUrl}). ` : ""}Branch ${codeName(branch)} belongs to Agent Runner: the next run ${t.thread ? `for #${t.thread.number}` : "of this workflow"} replaces its contents (force-push).`,
  ].join("\n");
  const keepMentions = [...(t.requester ? [t.requester.login] : []), ...(ctx.approval ? [ctx.approval.by] : [])];
  return { title, body: toSafeMarkdown(body, { serverUrl: ctx.serverUrl, allowedDomains: ctx.allowedDomains ?? [], keepMentions }) };
}

/** `protected-files: review`: the draft pull request names the protected files and asks for a person. */
function reviewRequest(files: readonly string[]): string[] {
  if (!files.length) return [];
  return [
    "> [!WARNING]",
    "> **Human review needed.** This change touches protected files (dependency manifests, CI or build config, agent instructions or ownership), so Agent Runner opened it as a draft. Review these before marking it ready:",
    ...files.slice(0, 50).map((f) => `> - ${codeName(f)}`),
    ...(files.length > 50 ? [`> - … and ${files.length - 50} more`] : []),
    "",
  ];
}

/** The comment's note when the tree to commit broke a patch rule: each problem, then where the patch is. */
function refusedNote(problems: string[]): string {
  return [`⚠️ **Not pushed:** the changes break Agent Runner's patch rules:`, ...problems.map((p) => `- ${p}`), "", "The patch is below for a person to review and apply."].join("\n");
}

/** Refusing is the safe default, but the requested delivery did not happen: the step fails, like a refused patch in validation. */
function refusedError(where: string, problems: string[]): string {
  const sentences = problems.map((p) => p.replace(/\.?$/, "."));
  const list = sentences.length === 1 ? sentences[0]! : sentences.map((p, i) => `(${i + 1}) ${p}`).join(" ");
  return `The changes were refused on top of ${where}: ${list} Nothing was pushed; the patch is in the results.`;
}

async function newRepo(ctx: DeliveryContext): Promise<DeliveryRepo> {
  return DeliveryRepo.create({
    dir: path.join(ctx.workDir, "delivery.git"),
    remoteUrl: ctx.remoteUrl,
    env: { ...ctx.gitEnv, ...gitAuthEnv(ctx.token, ctx.serverUrl) },
  });
}

type Prepared =
  | { kind: "commit"; sha: string; tip: string; tree: string; message: string }
  | { kind: "same" }
  | { kind: "refused"; files: string[]; problems: string[] }
  | { kind: "conflict"; detail: string };

/** Patch on top of `tip` → a commit (not pushed), after the patch rules passed on the tree it commits. */
async function prepareCommit(ctx: DeliveryContext, repo: DeliveryRepo, tip: string, result: RunResult, patchPath: string): Promise<Prepared> {
  const applied = await repo.apply(tip, patchPath, result.diff.baseCommit, { threeWay: !ctx.approval });
  if (!applied.ok) return { kind: "conflict", detail: applied.detail };
  // Checked on what git will actually commit, against its parent: not on the run's list of files, nor on the patch alone.
  const checked = await repo.check(tip, applied.tree, { allowWorkflowChanges: ctx.settings.allowWorkflowChanges });
  if (!checked.changedFiles.length) return { kind: "same" };
  if (checked.problems.length)
    return { kind: "refused", files: [...new Set(checked.problems.map((p) => p.file))], problems: describeProblems(checked.problems) };
  const author: Identity = BOT_IDENTITY;
  // Kept with the commit: the API commit carries the same message (commit-tree stores it as given).
  const message = commitMessage(ctx);
  const sha = await repo.commit(applied.tree, tip, message, author);
  return { kind: "commit", sha, tip, tree: applied.tree, message };
}

function commitUrl(ctx: DeliveryContext, sha: string): string {
  return `${ctx.serverUrl.replace(/\/+$/, "")}/${ctx.trigger.repo.fullName}/commit/${sha}`;
}

type Published = ({ ok: true; sha: string; via: "api" | "git"; verified?: boolean; reason?: string }) | { ok: false; rejected: boolean; detail: string };

/**
 * The prepared commit onto `branch`: through the Git Data API (GitHub signs
 * it) or, with `commit-method: git`, by git push. A change too large for the
 * API goes by git only with `allow-unsigned-commits`.
 */
async function publishCommit(
  ctx: DeliveryContext,
  repo: DeliveryRepo,
  prepared: Extract<Prepared, { kind: "commit" }>,
  branch: string,
  lease: { force: boolean; expect?: string | null },
): Promise<Published> {
  const byGit = async (): Promise<Published> => {
    const pushed = await repo.push(prepared.sha, branch, lease);
    return pushed.ok ? { ok: true, sha: prepared.sha, via: "git" } : pushed;
  };
  if (ctx.settings.commitMethod === "git") return byGit();
  let commit: ApiCommit;
  try {
    commit = await createApiCommit(ctx.api, repo, { parent: prepared.tip, tree: prepared.tree, message: prepared.message, scratch: ctx.workDir });
  } catch (e) {
    if (!(e instanceof ApiCommitTooLargeError)) throw e;
    if (!ctx.settings.allowUnsignedCommits)
      throw new ConfigurationError(
        `Input 'commit-method': the change is too large for GitHub's API (${e.message}), so it cannot be a signed commit. Set 'allow-unsigned-commits: true' to push it with git instead, or 'commit-method: git'.`,
      );
    ctx.log.warning(`The change is too large for GitHub's API (${e.message}); pushing it with git, unsigned (allow-unsigned-commits).`);
    return byGit();
  }
  const moved = await moveBranch(ctx, repo, branch, commit.sha, lease);
  if (!moved.ok) return moved;
  if (!commit.verified) ctx.log.warning(`GitHub did not sign commit ${commit.sha.slice(0, 7)} (${commit.verificationReason}).`);
  return { ok: true, sha: commit.sha, via: "api", verified: commit.verified, reason: commit.verificationReason };
}

/** The ref update of an API commit: fast-forward only for a PR's branch; our own branch is created or replaced. */
async function moveBranch(ctx: DeliveryContext, repo: DeliveryRepo, branch: string, sha: string, lease: { force: boolean; expect?: string | null }): Promise<Published> {
  // The REST ref update has no lease: look again right before replacing our own branch (a narrow window remains).
  if (lease.force && lease.expect !== undefined && (await repo.remoteTip(branch)) !== (lease.expect ?? undefined))
    return { ok: false, rejected: true, detail: `branch '${branch}' moved while delivering` };
  try {
    if (lease.force && lease.expect === null) await ctx.api.createBranch(branch, sha);
    else await ctx.api.updateBranch(branch, sha, lease.force);
    return { ok: true, sha, via: "api" };
  } catch (e) {
    const status = typeof e === "object" && e !== null && "status" in e ? (e as { status: unknown }).status : undefined;
    // 422: not a fast-forward, or the branch appeared since we looked: the caller fetches again. A rule's refusal stays a refusal.
    const detail = apiErrorMessage(e);
    return { ok: false, rejected: status === 422 && !pushRefusal(detail, { own: false, branch }), detail };
  }
}

function unsignedNote(p: Extract<Published, { ok: true }>): string {
  return p.verified === false ? ` ⚠️ GitHub did not sign this commit (${p.reason ?? "unverified"}).` : "";
}

async function deliverCommit(ctx: DeliveryContext, result: RunResult, patchPath: string): Promise<DeliveryOutcome> {
  const pr = ctx.trigger.pullRequest!;
  const branch = pr.headRef;
  const repo = await newRepo(ctx);
  for (let attempt = 1; attempt <= PUSH_ATTEMPTS; attempt++) {
    const tip = await repo.fetchBranch(branch);
    if (!tip) return { mode: "commit", showPatch: true, branch, error: `The pull request's branch '${branch}' no longer exists; nothing was pushed.` };
    // The agent worked on result.diff.baseCommit; the branch may have moved since (or the run used a merge checkout).
    const moved = tip !== result.diff.baseCommit;
    if (moved && attempt === 1) ctx.log.info(`Branch '${branch}' is at ${tip.slice(0, 7)}, the agent started from ${result.diff.baseCommit.slice(0, 7)}: applying the changes on top of the branch.`);
    const prepared = await prepareCommit(ctx, repo, tip, result, patchPath);
    if (prepared.kind === "refused")
      return { mode: "comment", showPatch: true, refusedFiles: prepared.files, note: refusedNote(prepared.problems), error: refusedError(`branch '${branch}' (${tip.slice(0, 7)})`, prepared.problems) };
    if (prepared.kind === "same") return { mode: "comment", showPatch: false, note: `The branch ${codeName(branch)} already has these changes; nothing was pushed.` };
    if (prepared.kind === "conflict")
      return {
        mode: "commit",
        showPatch: true,
        branch,
        error: moved
          ? `The agent's changes conflict with branch '${branch}' as it is now (${tip.slice(0, 7)}; the agent started from ${result.diff.baseCommit.slice(0, 7)}): ${prepared.detail}. Nothing was pushed; the patch is in the results.`
          : `The agent's changes do not apply to branch '${branch}': ${prepared.detail}. Nothing was pushed; the patch is in the results.`,
      };
    const pushed = await publishCommit(ctx, repo, prepared, branch, { force: false });
    if (pushed.ok) {
      ctx.log.info(`Pushed ${pushed.sha.slice(0, 7)} to '${branch}'${pushed.via === "api" ? " through the API" : ""}.`);
      return {
        mode: "commit",
        showPatch: false,
        branch,
        commitSha: pushed.sha,
        commitUrl: commitUrl(ctx, pushed.sha),
        ...(pushed.verified !== undefined ? { verified: pushed.verified } : {}),
        note: `Committed [\`${pushed.sha.slice(0, 7)}\`](${commitUrl(ctx, pushed.sha)}) to ${codeName(branch)}.${unsignedNote(pushed)}`,
      };
    }
    if (!pushed.rejected) return { mode: "commit", showPatch: true, branch, ...pushFailed(`Pushing to '${branch}' failed: ${pushed.detail}`, pushRefusal(pushed.detail, { own: false, branch })) };
    ctx.log.info(`Branch '${branch}' moved while delivering; fetching it again (attempt ${attempt + 1} of ${PUSH_ATTEMPTS}).`);
  }
  return { mode: "commit", showPatch: true, branch, error: `Branch '${branch}' kept moving; gave up after ${PUSH_ATTEMPTS} attempts. Nothing was pushed.` };
}

async function deliverPullRequest(ctx: DeliveryContext, result: RunResult, patchPath: string): Promise<DeliveryOutcome> {
  const t = ctx.trigger;
  const pr = t.pullRequest;
  const refBranch = !t.thread && ctx.ref?.startsWith("refs/heads/") ? ctx.ref.slice("refs/heads/".length) : undefined;
  // On a same-repo PR the new PR stacks onto its branch; a dispatch run targets the branch it ran on.
  const base =
    ctx.settings.baseBranch ??
    (t.thread?.kind === "pull_request" && pr && !pr.isFork ? pr.headRef : refBranch ?? t.defaultBranch ?? (await ctx.api.defaultBranch()));
  // Protected files go to a draft pull request of their own: an open pull request from the usual
  // branch may already be ready for review (or set to auto-merge), and must not take them unreviewed.
  const branch = deliveryBranch(ctx) + (ctx.reviewFiles?.length ? "-review" : "");
  const repo = await newRepo(ctx);
  if (!validBranchName(branch))
    throw new ConfigurationError(`Input 'branch-prefix': '${branch}' is not a valid branch name; use letters, digits, '-', '_' and '/'.`);
  for (let attempt = 1; attempt <= PUSH_ATTEMPTS; attempt++) {
    const tip = await repo.fetchBranch(base);
    if (!tip) throw new ConfigurationError(`Input 'base-branch': branch '${base}' does not exist in ${t.repo.fullName}.`);
    const prepared = await prepareCommit(ctx, repo, tip, result, patchPath);
    if (prepared.kind === "refused")
      return { mode: "comment", showPatch: true, refusedFiles: prepared.files, note: refusedNote(prepared.problems), error: refusedError(`'${base}' (${tip.slice(0, 7)})`, prepared.problems) };
    if (prepared.kind === "same") return { mode: "comment", showPatch: false, note: `${codeName(base)} already has these changes; no pull request was opened.` };
    if (prepared.kind === "conflict")
      return { mode: "pull-request", showPatch: true, error: `The agent's changes do not apply to '${base}' (${prepared.detail}). Nothing was pushed; the patch is in the results.` };
    // The branch is Agent Runner's own: replace it, but only if nobody pushed to it since we looked.
    const current = await repo.remoteTip(branch);
    const pushed = await publishCommit(ctx, repo, prepared, branch, { force: true, expect: current ?? null });
    if (!pushed.ok) {
      if (pushed.rejected && attempt < PUSH_ATTEMPTS) continue;
      return { mode: "pull-request", showPatch: true, branch, ...pushFailed(`Pushing branch '${branch}' failed: ${pushed.detail}`, pushRefusal(pushed.detail, { own: true, branchPrefix: ctx.settings.branchPrefix })) };
    }
    ctx.log.info(`Pushed ${pushed.sha.slice(0, 7)} to '${branch}' (base '${base}')${pushed.via === "api" ? " through the API" : ""}.`);
    const outcome: DeliveryOutcome = {
      mode: "pull-request",
      showPatch: false,
      branch,
      commitSha: pushed.sha,
      commitUrl: commitUrl(ctx, pushed.sha),
      ...(pushed.verified !== undefined ? { verified: pushed.verified } : {}),
    };
    try {
      const text = pullRequestText(ctx, result, branch);
      let existing = await ctx.api.openPullRequestFor(branch);
      let created = false;
      if (!existing) {
        try {
          existing = await ctx.api.createPullRequest({ ...text, head: branch, base, draft: ctx.settings.draft || Boolean(ctx.reviewFiles?.length) });
          created = true;
        } catch (e) {
          // A retried create whose first attempt went through: the PR exists now.
          existing = await ctx.api.openPullRequestFor(branch);
          if (!existing) throw e;
        }
      } else existing = await ctx.api.updatePullRequest(existing.number, text);
      outcome.pullRequest = { ...existing, created };
      outcome.note = `${created ? "Opened" : "Updated"} pull request [#${existing.number}](${existing.url}) from ${codeName(branch)}.${unsignedNote(pushed)}`;
      ctx.log.info(`${created ? "Opened" : "Updated"} pull request #${existing.number}: ${existing.url}`);
    } catch (e) {
      Object.assign(outcome, pullRequestNotOpened(ctx, e, base, branch, unsignedNote(pushed)));
    }
    return outcome;
  }
  return { mode: "pull-request", showPatch: true, branch, error: `Branch '${branch}' kept changing; gave up after ${PUSH_ATTEMPTS} attempts.` };
}

/** A refused push: GitHub's reason, when GitHub gave one it explains, goes into the comment with what to change. */
function pushFailed(error: string, refusal: Refusal | undefined): Pick<DeliveryOutcome, "error" | "note"> {
  return { error, ...(refusal ? { note: `⚠️ ${refusal.explanation}` } : {}) };
}

/**
 * The branch is pushed but GitHub did not open the pull request. A refusal
 * (403: the repository's setting or the token's permissions; 422) is
 * delivery in part: the comment links the compare page, where a person opens
 * it with one click, and names what to change. Any other failure (an outage)
 * fails the step, with the same link.
 */
function pullRequestNotOpened(ctx: DeliveryContext, e: unknown, base: string, branch: string, unsigned: string): Partial<DeliveryOutcome> {
  const failed = apiFailure(e);
  const link = compareUrl(ctx.serverUrl, ctx.trigger.repo.fullName, base, branch);
  const open = `[Open the pull request](${link}) from ${codeName(branch)} into ${codeName(base)}.`;
  if (failed?.status !== 403 && failed?.status !== 422)
    return {
      compareUrl: link,
      note: `Pushed branch ${codeName(branch)}, but the pull request could not be opened. ${open}${unsigned}`,
      error: `Branch '${branch}' was pushed, but opening the pull request failed: ${apiErrorMessage(e)}`,
    };
  const refusal = pullRequestRefusal(failed.status, failed.message);
  ctx.log.warning(`Branch '${branch}' was pushed, but GitHub refused to open the pull request (${failed.status}: ${failed.message}). Open it from ${link}`);
  return {
    compareUrl: link,
    incomplete: "the pull request was not opened",
    note: [`⚠️ **Pushed branch ${codeName(branch)}; the pull request was not opened.** ${open}${unsigned}`, "", refusal.explanation].join("\n"),
  };
}

function workSoFar(result: RunResult): string {
  const files = result.diff.changedFiles.length;
  return files ? `The work so far (${files} changed file${files === 1 ? "" : "s"}, patch below)` : "The agent changed no file yet; its session";
}

/** An `incomplete` run: its checked patch onto the thread's checkpoint ref, and the comment says how to go on. */
async function deliverCheckpoint(ctx: DeliveryContext, result: RunResult, patchPath: string): Promise<DeliveryOutcome> {
  const pushed = await pushCheckpoint(ctx, result, patchPath);
  const files = result.diff.changedFiles.length;
  const done = workSoFar(result);
  if (!pushed.ok) {
    if (pushed.refused)
      return { mode: "comment", showPatch: true, refusedFiles: pushed.refused.files, note: refusedNote(pushed.refused.problems), error: refusedError("its base commit (no checkpoint was kept)", pushed.refused.problems) };
    const noThread = !ctx.trigger.thread;
    return {
      mode: "comment",
      showPatch: true,
      note: `⏸️ **Stopped before finishing.** ${done} is in the run's artifact${noThread ? "" : "; the checkpoint ref could not be written"}.`,
      ...(noThread ? {} : { error: `The checkpoint could not be kept: ${pushed.detail}.` }),
    };
  }
  const phrase = ctx.triggerPhrase ?? "@agent";
  return {
    mode: "comment",
    showPatch: files > 0,
    checkpoint: { ref: pushed.ref, sha: pushed.sha },
    note: [
      `⏸️ **Stopped before finishing.** ${done} is kept as a checkpoint on ${codeName(pushed.ref)} and in the run's artifact, with the agent's session.`,
      "",
      `To go on, comment \`${phrase} continue\` here (or run the workflow with \`resume: checkpoint\`): the next run starts from this work and session, within the budget left, and delivers everything as one change against ${codeName(result.diff.baseCommit.slice(0, 12))}.`,
    ].join("\n"),
  };
}

/** An `incomplete` run that delivers by comment: the work stays in the artifact, no ref is written, so there is nothing to continue. */
function keptInArtifact(ctx: DeliveryContext, result: RunResult): DeliveryOutcome {
  const files = result.diff.changedFiles.length;
  const phrase = ctx.triggerPhrase ?? "@agent";
  const note = [
    `⏸️ **Stopped before finishing.** ${workSoFar(result)} is in the run's artifact. This run delivers by comment and pushes nothing, so no checkpoint was kept and \`${phrase} continue\` has nothing to continue: start the task anew (a run that delivers by pull request or commit keeps a checkpoint).`,
    ...(ctx.plan.note ? ["", ctx.plan.note] : []),
  ].join("\n");
  return { mode: "comment", showPatch: files > 0, note };
}

async function patchIsEmpty(patchPath: string): Promise<boolean> {
  const s = await stat(patchPath).catch(() => undefined);
  return !s || s.size === 0;
}

/** Deliver a finished run. Never throws for delivery failures: they come back in `error`. */
export async function deliver(ctx: DeliveryContext, result: RunResult, patchPath: string = result.diff.patchPath): Promise<DeliveryOutcome> {
  const { plan } = ctx;
  if (plan.mode === "none") return { mode: "none", showPatch: false, ...(plan.note ? { note: plan.note } : {}) };
  // Stopped before finishing: nothing goes to a branch, the work is kept to continue from. Only a run whose
  // delivery may push anyway writes the checkpoint ref: a comment-only run (`deliver: comment`, a fork) pushes nothing.
  if (result.conclusion === "incomplete") return plan.mode === "comment" ? keptInArtifact(ctx, result) : deliverCheckpoint(ctx, result, patchPath);
  if (!result.diff.changedFiles.length || (await patchIsEmpty(patchPath))) return { mode: "comment", showPatch: false, note: "No changes were made." };
  // A fallback to a comment (`deliver: commit` on a fork's pull request) delivers the patch, not what was asked: in part.
  if (plan.mode === "comment") return { mode: "comment", showPatch: true, ...(plan.note ? { note: plan.note } : {}), ...(plan.notDone ? { incomplete: plan.notDone } : {}) };
  // A change that never passed the project's check is never committed onto a branch: it is held here.
  if (result.verified === "failed")
    return {
      mode: "comment",
      showPatch: true,
      note: `❌ **Held back:** the changes still fail \`verify-command\`, so nothing was committed or pushed (a ${plan.mode === "commit" ? "commit" : "pull request"} was asked for). The patch is below and in the run's artifact.`,
    };
  if (result.conclusion !== "success")
    return {
      mode: "comment",
      showPatch: true,
      note: `The agent did not finish (${result.conclusion}), so its changes were not pushed; the patch is below.`,
    };
  try {
    const outcome = plan.mode === "commit" ? await deliverCommit(ctx, result, patchPath) : await deliverPullRequest(ctx, result, patchPath);
    if (result.checkpoint?.resumedFrom && outcome.commitSha && !outcome.error) await removeCheckpoint(ctx);
    return outcome;
  } catch (e) {
    if (e instanceof ConfigurationError) return { mode: plan.mode, showPatch: true, error: e.message };
    return { mode: plan.mode, showPatch: true, error: apiErrorMessage(e) || errorMessage(e) };
  }
}
