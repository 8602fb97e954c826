/** What the trigger stage decided: who asked, about which thread, for what. */

export interface RepoRef {
  owner: string;
  name: string;
  /** `owner/name`. */
  fullName: string;
}

export interface Actor {
  login: string;
  id?: number;
  /** A GitHub App or other bot account (sender.type "Bot" or a `[bot]` login). */
  isBot: boolean;
}

/** The issue or pull request the event is about (title and body as in the event payload). */
export interface Thread {
  kind: "issue" | "pull_request";
  number: number;
  title: string;
  body: string;
  url?: string;
  author?: string;
}

export interface TriggerComment {
  kind: "issue_comment" | "review_comment" | "review";
  id: number;
  /** Sanitized body, as it was when the event fired (never re-fetched). */
  body: string;
  author: string;
  url?: string;
  /** Review comments: the file and the diff hunk they are attached to. */
  path?: string;
  diffHunk?: string;
}

export interface PullRequestInfo {
  number: number;
  headRef: string;
  headSha: string;
  /** `owner/name` of the head repository; undefined when the fork was deleted. */
  headRepo?: string;
  baseRef: string;
  baseSha: string;
  /** Head lives in another repository: never pushed to, and its agent instructions are untrusted too. */
  isFork: boolean;
  url?: string;
}

export interface Trigger {
  eventName: string;
  action?: string;
  repo: RepoRef;
  /** Who must be authorized; undefined for schedule/dispatch runs, which need no actor check. */
  actor?: Actor;
  /** The person the work is for (commit co-author, mentions), also on dispatch runs. */
  requester?: Actor;
  thread?: Thread;
  comment?: TriggerComment;
  /** From the payload when it has one; issue_comment on a PR needs an API call (`needsPullRequest`). */
  pullRequest?: PullRequestInfo;
  needsPullRequest: boolean;
  /**
   * The request: the `prompt` input, a comment's visible text after the trigger (its author's
   * write access is checked), a dispatch's prompt, or a fixed default naming the thread. Never
   * an issue's or PR's body: anyone can write one, so it stays in the untrusted context.
   */
  request: string;
  requestSource: "comment" | "input" | "event" | "default";
  defaultBranch?: string;
  /** Identifies the trigger across reruns: the sticky comment's marker is derived from it. */
  stickyKey: string;
  /**
   * Set when the `issue-number` / `repository` inputs chose the thread or repository (no event
   * names it: a schedule, a dispatch, a fan-out item): `owner/repo#n` and its artifact-name key.
   */
  item?: { ref: string; key: string };
}

export type TriggerDecision = { kind: "run"; trigger: Trigger } | { kind: "skip"; reason: string };
