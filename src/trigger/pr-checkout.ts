/**
 * `pr-checkout: auto`: on a pull request thread the workspace becomes the
 * PR's head before anything reads it for the agent, whatever the workflow
 * checked out (the README's comment workflow checks out the default branch;
 * `pull_request` checks out a merge commit). Same-repository PRs end on their
 * head branch, so the agent's own commits read naturally; fork PRs on their
 * head commit, detached (we never push to forks).
 *
 * Which head. A `pull_request*` event carries the head it was raised for
 * (`pull_request.head.sha`): if the PR's head is now another commit, the run
 * is refused rather than run on code the event never saw (a newer event
 * follows a push). An `issue_comment` carries no head: the head the API
 * reports when the run starts is what the commenter was looking at, and is
 * the one used. Either way the log and the prompt name the sha.
 *
 * How. The commit is fetched on the host (only when the clone lacks it),
 * from the repository the workflow checked out: `refs/heads/<branch>` for
 * same-repository PRs, `refs/pull/<n>/head` for forks (GitHub keeps it in the
 * base repository). The token reaches git through the environment of that one
 * call (gitAuthEnv), never argv or any git config, and nothing of it is kept.
 * This runs before the agent configuration guard, the agent-command file
 * check and the host's private repository, so those see the PR's head and the
 * baseline the patch is measured against is that head.
 */
import { ConfigurationError } from "../errors.js";
import type { Git } from "../git/git.js";
import { isBranchName } from "../git/ref-name.js";
import type { GitHubApi } from "../github/api.js";
import { GitHubApiError } from "../github/client.js";
import type { Logger } from "../logger.js";
import type { PullRequestInfo, Trigger } from "../shared/trigger.js";

/** The head the agent starts from, as the log, the prompt and delivery name it. */
export interface PullRequestHead {
  sha: string;
  /** Same-repository PRs: the local branch the workspace is on. Forks: undefined (detached). */
  branch?: string;
  /** The ref the commit belongs to on the base repository. */
  ref: string;
  /** "event": the sha the event carried; "api": the PR's head when the run started. */
  source: "event" | "api";
  isFork: boolean;
}

export interface PrCheckoutRequest {
  /** git in the workspace (the workflow's checkout; the agent has not started). */
  git: Git;
  trigger: Trigger;
  pr: PullRequestInfo;
  api: GitHubApi;
  /** Where the workflow's checkout came from (its origin URL, read before). */
  remoteUrl: string;
  /** The token as git environment for the fetch (gitAuthEnv). */
  authEnv: Record<string, string>;
  log: Logger;
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

function short(sha: string): string {
  return sha.slice(0, 12);
}

/** For the prompt and the log: "branch feature/x at abc123… (the head the event carried)". */
export function describeHead(h: PullRequestHead): string {
  const where = h.branch ? `branch ${h.branch}` : `${h.ref} (detached, from a fork)`;
  return `${where} at ${h.sha} (${h.source === "event" ? "the head the event was raised for" : "the pull request's head when this run started"})`;
}

/** The head the run must use: the event's, unless the PR moved since; an issue comment's is the current one. */
async function wantedHead(req: PrCheckoutRequest): Promise<{ sha: string; source: PullRequestHead["source"] }> {
  const { pr, trigger } = req;
  // An issue comment (or a run naming the PR, item.ts) carries no head: prepareTrigger read the PR from the API for this run.
  if (!trigger.eventName.startsWith("pull_request")) return { sha: pr.headSha, source: "api" };
  let current: string;
  try {
    current = (await req.api.pullRequest(pr.number)).info.headSha;
  } catch (e) {
    throw new GitHubApiError(`Reading pull request #${pr.number} to check its head (pr-checkout)`, e);
  }
  if (current !== pr.headSha)
    throw new ConfigurationError(
      `Input 'pr-checkout': pull request #${pr.number} moved since this '${trigger.eventName}' event: the event was raised for ${short(pr.headSha)}, the head is now ${short(current)}. Nothing ran on code the event did not see; the push that moved it starts its own run (or comment again). Set pr-checkout: none to run on whatever the workflow checked out.`,
    );
  return { sha: pr.headSha, source: "event" };
}

async function hasCommit(git: Git, sha: string): Promise<boolean> {
  return (await git.exec(["cat-file", "-e", `${sha}^{commit}`], { okCodes: [1, 128] })).exitCode === 0;
}

/**
 * Fetch `ref` from the checkout's remote when the commit is missing. The
 * clone's own credentials first (actions/checkout may persist them), then
 * ours: both at once would send two Authorization headers.
 */
async function fetchHead(req: PrCheckoutRequest, ref: string, sha: string): Promise<void> {
  const { git } = req;
  if (await hasCommit(git, sha)) return;
  const shallow = (await git.exec(["rev-parse", "--is-shallow-repository"], { okCodes: [128] })).stdout.trim() === "true";
  const args = ["fetch", "--no-tags", "--quiet", ...(shallow ? ["--depth=1"] : []), req.remoteUrl, ref];
  let detail = "";
  for (const env of [{}, req.authEnv]) {
    const r = await git.exec(args, { env, okCodes: [1, 128] });
    if (r.exitCode === 0) {
      const fetched = (await git.exec(["rev-parse", "--verify", "-q", "FETCH_HEAD^{commit}"], { okCodes: [1, 128] })).stdout.trim();
      if (fetched && fetched !== sha && !(await hasCommit(git, sha)))
        throw new ConfigurationError(
          `Input 'pr-checkout': pull request #${req.pr.number} moved while this run started: ${ref} is now ${short(fetched)}, not ${short(sha)}. Nothing ran; comment again to run on the new head.`,
        );
      if (await hasCommit(git, sha)) return;
    }
    detail = r.stderr.trim().split("\n").pop() ?? "";
  }
  throw new ConfigurationError(
    `Input 'pr-checkout': could not fetch pull request #${req.pr.number}'s head ${short(sha)} (${ref}) from the checked-out repository${detail ? `: ${detail}` : ""}. Give the job 'contents: read', or set pr-checkout: none and check the head out in the workflow.`,
  );
}

async function checkout(req: PrCheckoutRequest, args: string[], sha: string): Promise<void> {
  const r = await req.git.exec(["checkout", "-q", ...args], { okCodes: [1, 128] });
  if (r.exitCode === 0) return;
  throw new ConfigurationError(
    `Input 'pr-checkout': could not check out pull request #${req.pr.number}'s head ${short(sha)} in the workspace: ${r.stderr.trim().split("\n").slice(-3).join(" ")}. An earlier step left changes that the checkout would overwrite; commit or remove them, or set pr-checkout: none.`,
  );
}

/** A same-repository head branch as a local branch name git accepts (never one that reads as an option). */
function localBranchName(name: string): string | undefined {
  return isBranchName(name) ? name : undefined;
}

/** Make the workspace the PR's head (see the file comment). Throws a ConfigurationError naming `pr-checkout` when it cannot. */
export async function checkoutPullRequest(req: PrCheckoutRequest): Promise<PullRequestHead> {
  const { git, pr, log } = req;
  const wanted = await wantedHead(req);
  if (!SHA.test(wanted.sha)) throw new ConfigurationError(`Input 'pr-checkout': pull request #${pr.number} reports no valid head commit ('${wanted.sha}').`);
  const branch = pr.isFork ? undefined : localBranchName(pr.headRef);
  // A deleted fork, or a branch name git would not take locally: the base repository's PR ref still holds the head.
  const ref = branch ? `refs/heads/${branch}` : `refs/pull/${pr.number}/head`;
  await fetchHead(req, ref, wanted.sha);
  const before = (await git.exec(["rev-parse", "--verify", "-q", "HEAD"], { okCodes: [1, 128] })).stdout.trim();
  await checkout(req, branch ? ["-B", branch, wanted.sha] : ["--detach", wanted.sha], wanted.sha);
  const head: PullRequestHead = { sha: wanted.sha, ...(branch ? { branch } : {}), ref, source: wanted.source, isFork: pr.isFork };
  log.info(
    `pr-checkout: the workspace is pull request #${pr.number}'s ${describeHead(head)}${before && before !== wanted.sha ? `; the workflow had checked out ${short(before)}` : ""}.`,
  );
  return head;
}
