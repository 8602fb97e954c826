/**
 * Event → trigger decision, without any API call: irrelevant events (a
 * comment without the phrase, an edited comment, an unsupported event) are
 * skipped here before anything else happens.
 */
import { ConfigurationError } from "../errors.js";
import { SUPPORTED_EVENTS, type EventUser, type GitHubEvent, type IssuePayload, type PullRequestPayload, type SupportedEvent } from "./event.js";
import { matchTrigger, SLASH_COMMAND } from "./phrase.js";
import { sanitizeLine, sanitizeUntrusted, stripInvisible } from "../shared/sanitize.js";
import { visibleText } from "../shared/visible-text.js";
import type { Actor, PullRequestInfo, RepoRef, Thread, Trigger, TriggerComment, TriggerDecision } from "../shared/trigger.js";

export interface ResolveOptions {
  triggerPhrase: string;
  /** The `prompt` input (or prompt-file), empty when not given. */
  prompt: string;
  /** GITHUB_REPOSITORY: wins over the payload's repository. */
  repository?: string;
  /** GITHUB_ACTOR: the actor when the payload has no sender. */
  hostActor?: string;
  /** GITHUB_WORKFLOW: keeps two workflows on one thread from sharing a sticky comment. */
  workflow?: string;
}

const ISSUE_ACTIONS = ["opened", "labeled", "assigned"];
const PR_ACTIONS_WITH_PHRASE = ["opened", "reopened", "ready_for_review"];

/**
 * The request when nobody with the right to give one wrote it: a fixed
 * sentence that names the thread. The thread's own text (anyone can open an
 * issue or a PR) only ever reaches the agent as untrusted context.
 */
export function defaultRequest(kind: Thread["kind"], number: number): string {
  return `Work on ${kind === "issue" ? "issue" : "pull request"} #${number}, described in the context below.`;
}

/** The phrase as a reader of the rendered text would see it (not in HTML attributes, link titles, comments). */
function mentionsTrigger(text: string, opts: ResolveOptions): boolean {
  return matchTrigger(visibleText(text), opts.triggerPhrase) !== undefined;
}

function actorOf(user: EventUser | undefined): Actor | undefined {
  if (!user) return undefined;
  return {
    login: user.login,
    ...(user.id !== undefined ? { id: user.id } : {}),
    isBot: user.type === "Bot" || /\[bot\]$/i.test(user.login),
  };
}

function repoOf(event: SupportedEvent, opts: ResolveOptions): RepoRef {
  const full = opts.repository || event.payload.repository?.full_name;
  if (!full || !/^[^/\s]+\/[^/\s]+$/.test(full))
    throw new ConfigurationError("GITHUB_REPOSITORY is not set (or not owner/name) and the event has no repository; the runner always sets it.");
  const [owner, name] = full.split("/") as [string, string];
  return { owner, name, fullName: full };
}

function pullRequestInfo(pr: PullRequestPayload, repo: RepoRef): PullRequestInfo {
  const headRepo = pr.head.repo?.full_name;
  return {
    number: pr.number,
    headRef: pr.head.ref,
    headSha: pr.head.sha,
    ...(headRepo ? { headRepo } : {}),
    baseRef: pr.base.ref,
    baseSha: pr.base.sha,
    // A deleted fork (repo null) is still someone else's code.
    isFork: !headRepo || headRepo.toLowerCase() !== repo.fullName.toLowerCase(),
    ...(pr.html_url ? { url: pr.html_url } : {}),
  };
}

function prThread(pr: PullRequestPayload): Thread {
  return {
    kind: "pull_request",
    number: pr.number,
    title: sanitizeLine(pr.title, 1000),
    body: sanitizeUntrusted(pr.body),
    ...(pr.html_url ? { url: pr.html_url } : {}),
    ...(pr.user ? { author: pr.user.login } : {}),
  };
}

/** An issue, or a pull request as issue_comment events carry it. */
function issueThread(issue: IssuePayload, kind: Thread["kind"]): Thread {
  return {
    kind,
    number: issue.number,
    title: sanitizeLine(issue.title, 1000),
    body: sanitizeUntrusted(issue.body),
    ...(issue.html_url ? { url: issue.html_url } : {}),
    ...(issue.user ? { author: issue.user.login } : {}),
  };
}

/**
 * The request from a comment (its author's write access is checked later):
 * the visible text after the trigger, else the prompt input, else the
 * visible comment minus the phrase, else the fixed default.
 */
function commentRequest(body: string, opts: ResolveOptions, thread: Thread): Pick<Trigger, "request" | "requestSource"> | undefined {
  const m = matchTrigger(visibleText(body), opts.triggerPhrase);
  if (!m) return undefined;
  if (m.after) return { request: m.after, requestSource: "comment" };
  if (opts.prompt.trim()) return { request: opts.prompt, requestSource: "input" };
  if (m.without) return { request: m.without, requestSource: "comment" };
  return { request: defaultRequest(thread.kind, thread.number), requestSource: "default" };
}

function skip(reason: string): TriggerDecision {
  return { kind: "skip", reason };
}

type TriggerBase = Pick<Trigger, "eventName" | "repo" | "needsPullRequest" | "defaultBranch">;

/** A new comment, review comment or review on a thread: it triggers when it mentions the phrase. */
interface PostedComment {
  /** For the skip reason: what was posted. */
  what: string;
  action: string;
  thread: Thread;
  posted: { id: number; body?: string | null | undefined; user: EventUser; html_url?: string | undefined };
  kind: TriggerComment["kind"];
  /** What only a review comment has: its file and diff hunk. */
  location?: Pick<TriggerComment, "path" | "diffHunk">;
  pullRequest?: PullRequestInfo;
  /** issue_comment on a PR: the pull request is read from the API later. */
  needsPullRequest?: boolean;
  stickyKey: string;
}

function commentTrigger(base: TriggerBase, sender: Actor | undefined, opts: ResolveOptions, c: PostedComment): TriggerDecision {
  const body = sanitizeUntrusted(c.posted.body);
  const req = commentRequest(body, opts, c.thread);
  if (!req) return skip(`the ${c.what} does not start with ${SLASH_COMMAND} or mention ${opts.triggerPhrase}`);
  const actor = sender ?? actorOf(c.posted.user);
  return {
    kind: "run",
    trigger: {
      ...base,
      action: c.action,
      ...(actor ? { actor, requester: actor } : {}),
      thread: c.thread,
      comment: {
        kind: c.kind,
        id: c.posted.id,
        body,
        author: c.posted.user.login,
        ...(c.posted.html_url ? { url: c.posted.html_url } : {}),
        ...c.location,
      },
      ...(c.pullRequest ? { pullRequest: c.pullRequest } : {}),
      ...(c.needsPullRequest ? { needsPullRequest: true } : {}),
      ...req,
      stickyKey: c.stickyKey,
    },
  };
}

export function resolveTrigger(event: GitHubEvent, opts: ResolveOptions): TriggerDecision {
  if (event.name === "unsupported")
    return skip(`event '${event.eventName}' is not one Agent Runner acts on (it handles: ${SUPPORTED_EVENTS.join(", ")})`);
  const repo = repoOf(event, opts);
  const key = (k: string) => `${opts.workflow ?? ""}|${event.name}|${k}`;
  const base: TriggerBase = {
    eventName: event.name,
    repo,
    needsPullRequest: false,
    ...(event.payload.repository?.default_branch ? { defaultBranch: event.payload.repository.default_branch } : {}),
  };
  const sender = actorOf(event.payload.sender);

  switch (event.name) {
    case "issue_comment": {
      const p = event.payload;
      // An edit fires its own event: acting on it would let anyone who can edit a
      // comment after approval change what runs. Only new comments count.
      if (p.action !== "created") return skip(`issue_comment action '${p.action}' does not trigger (only new comments do)`);
      const isPr = Boolean(p.issue.pull_request);
      return commentTrigger(base, sender, opts, {
        what: "comment",
        action: p.action,
        thread: issueThread(p.issue, isPr ? "pull_request" : "issue"),
        posted: p.comment,
        kind: "issue_comment",
        needsPullRequest: isPr,
        stickyKey: key(`comment:${p.comment.id}`),
      });
    }
    case "pull_request_review_comment": {
      const p = event.payload;
      if (p.action !== "created") return skip(`pull_request_review_comment action '${p.action}' does not trigger (only new comments do)`);
      return commentTrigger(base, sender, opts, {
        what: "review comment",
        action: p.action,
        thread: prThread(p.pull_request),
        posted: p.comment,
        kind: "review_comment",
        location: {
          ...(p.comment.path ? { path: p.comment.path } : {}),
          ...(p.comment.diff_hunk ? { diffHunk: stripInvisible(p.comment.diff_hunk) } : {}),
        },
        pullRequest: pullRequestInfo(p.pull_request, repo),
        stickyKey: key(`review-comment:${p.comment.id}`),
      });
    }
    case "pull_request_review": {
      const p = event.payload;
      if (p.action !== "submitted") return skip(`pull_request_review action '${p.action}' does not trigger (only submitted reviews do)`);
      return commentTrigger(base, sender, opts, {
        what: "review",
        action: p.action,
        thread: prThread(p.pull_request),
        posted: p.review,
        kind: "review",
        pullRequest: pullRequestInfo(p.pull_request, repo),
        stickyKey: key(`review:${p.review.id}`),
      });
    }
    case "issues": {
      const p = event.payload;
      if (!ISSUE_ACTIONS.includes(p.action)) return skip(`issues action '${p.action}' does not trigger (only ${ISSUE_ACTIONS.join(", ")} do)`);
      const thread = issueThread(p.issue, "issue");
      let req: Pick<Trigger, "request" | "requestSource"> | undefined;
      if (opts.prompt.trim()) req = { request: opts.prompt, requestSource: "input" };
      // Labeling or assigning is a deliberate act by someone with triage rights; a new issue
      // asks by naming the phrase. Either way the body is never the request: anyone can write it.
      else if (p.action !== "opened" || mentionsTrigger(thread.body, opts) || mentionsTrigger(thread.title, opts))
        req = { request: defaultRequest("issue", thread.number), requestSource: "default" };
      if (!req) return skip(`the new issue does not mention ${opts.triggerPhrase} and no 'prompt' is set`);
      return {
        kind: "run",
        trigger: {
          ...base,
          action: p.action,
          ...(sender ? { actor: sender, requester: sender } : {}),
          thread,
          ...req,
          stickyKey: key(`issue:${p.issue.number}`),
        },
      };
    }
    case "pull_request":
    case "pull_request_target": {
      const p = event.payload;
      const thread = prThread(p.pull_request);
      let req: Pick<Trigger, "request" | "requestSource"> | undefined;
      if (opts.prompt.trim()) req = { request: opts.prompt, requestSource: "input" };
      // The description is the PR author's text: it may ask for a run, never say what the run does.
      else if (PR_ACTIONS_WITH_PHRASE.includes(p.action) && mentionsTrigger(thread.body, opts))
        req = { request: defaultRequest("pull_request", thread.number), requestSource: "default" };
      if (!req) return skip(`the pull request event '${p.action}' has no 'prompt' and its description does not mention ${opts.triggerPhrase}`);
      return {
        kind: "run",
        trigger: {
          ...base,
          action: p.action,
          ...(sender ? { actor: sender, requester: sender } : {}),
          thread,
          pullRequest: pullRequestInfo(p.pull_request, repo),
          ...req,
          stickyKey: key(`pr:${p.pull_request.number}`),
        },
      };
    }
    case "workflow_dispatch":
    case "repository_dispatch":
    case "schedule": {
      let request = opts.prompt;
      let requestSource: Trigger["requestSource"] = "input";
      if (!request.trim()) {
        // The dispatcher holds write access (dispatch) or is the repository itself (schedule).
        const fromEvent =
          event.name === "workflow_dispatch" ? event.payload.inputs?.prompt : event.name === "repository_dispatch" ? event.payload.client_payload?.prompt : undefined;
        if (typeof fromEvent === "string" && fromEvent.trim()) {
          request = fromEvent;
          requestSource = "event";
        }
      }
      if (!request.trim())
        throw new ConfigurationError(
          `Input 'prompt': is required for '${event.name}' runs${event.name === "workflow_dispatch" ? " (or a workflow_dispatch input named 'prompt')" : event.name === "repository_dispatch" ? " (or client_payload.prompt)" : ""}.`,
        );
      const requester = sender ?? (opts.hostActor ? { login: opts.hostActor, isBot: /\[bot\]$/i.test(opts.hostActor) } : undefined);
      return {
        kind: "run",
        trigger: {
          ...base,
          ...(event.name === "repository_dispatch" && event.payload.action ? { action: event.payload.action } : {}),
          ...(requester ? { requester } : {}),
          request,
          requestSource,
          stickyKey: key("automation"),
        },
      };
    }
  }
}

