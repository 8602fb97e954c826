/**
 * The event that started the workflow, read from GITHUB_EVENT_PATH and
 * validated with zod. Only the fields Agent Runner uses are declared; the
 * rest of GitHub's payload passes through unread. A payload that does not
 * have them is a ConfigurationError naming GITHUB_EVENT_PATH.
 */
import { readFile } from "node:fs/promises";
import * as z from "../shared/zod.js";
import type { HostContext } from "../config/host.js";
import { ConfigurationError } from "../errors.js";

const User = z.object({
  login: z.string().check(z.minLength(1)),
  id: z.optional(z.number().check(z.int())),
  type: z.optional(z.string()),
});
export type EventUser = z.infer<typeof User>;

const Repository = z.object({
  full_name: z.string().check(z.regex(/^[^/\s]+\/[^/\s]+$/)),
  default_branch: z.optional(z.string()),
  html_url: z.optional(z.string()),
});

const Issue = z.object({
  number: z.number().check(z.int(), z.positive()),
  title: z.string(),
  body: z.nullish(z.string()),
  user: z.optional(User),
  html_url: z.optional(z.string()),
  /** Present (an object) when the issue is a pull request. */
  pull_request: z.nullish(z.object({ url: z.optional(z.string()) })),
});
export type IssuePayload = z.infer<typeof Issue>;

const Comment = z.object({
  id: z.number().check(z.int()),
  body: z.nullish(z.string()),
  user: User,
  html_url: z.optional(z.string()),
});

const ReviewComment = z.extend(Comment, {
  path: z.optional(z.string()),
  diff_hunk: z.optional(z.string()),
});

const Review = z.object({
  id: z.number().check(z.int()),
  body: z.nullish(z.string()),
  user: User,
  html_url: z.optional(z.string()),
  state: z.optional(z.string()),
});

const GitRef = z.object({
  ref: z.string().check(z.minLength(1)),
  sha: z.string().check(z.regex(/^[0-9a-f]{40}$/i)),
  /** Null when the fork was deleted. */
  repo: z.optional(z.nullable(z.object({ full_name: z.string() }))),
});

export const PullRequestPayload = z.object({
  number: z.number().check(z.int(), z.positive()),
  title: z.string(),
  body: z.nullish(z.string()),
  user: z.optional(User),
  html_url: z.optional(z.string()),
  head: GitRef,
  base: GitRef,
});
export type PullRequestPayload = z.infer<typeof PullRequestPayload>;

const common = { repository: z.optional(Repository), sender: z.optional(User) };

const SCHEMAS = {
  issue_comment: z.object({ action: z.string(), issue: Issue, comment: Comment, ...common }),
  pull_request_review_comment: z.object({ action: z.string(), pull_request: PullRequestPayload, comment: ReviewComment, ...common }),
  pull_request_review: z.object({ action: z.string(), pull_request: PullRequestPayload, review: Review, ...common }),
  issues: z.object({
    action: z.string(),
    issue: Issue,
    label: z.optional(z.object({ name: z.string() })),
    assignee: z.nullish(User),
    ...common,
  }),
  pull_request: z.object({ action: z.string(), pull_request: PullRequestPayload, ...common }),
  pull_request_target: z.object({ action: z.string(), pull_request: PullRequestPayload, ...common }),
  workflow_dispatch: z.object({ inputs: z.nullish(z.record(z.string(), z.unknown())), ...common }),
  repository_dispatch: z.object({ action: z.optional(z.string()), client_payload: z.nullish(z.record(z.string(), z.unknown())), ...common }),
  schedule: z.object({ schedule: z.optional(z.string()), ...common }),
} as const;

export type SupportedEventName = keyof typeof SCHEMAS;
export const SUPPORTED_EVENTS = Object.keys(SCHEMAS) as SupportedEventName[];

type Payloads = { [K in SupportedEventName]: z.infer<(typeof SCHEMAS)[K]> };

/** A validated event of a kind Agent Runner handles. */
export type SupportedEvent = { [K in SupportedEventName]: { name: K; payload: Payloads[K] } }[SupportedEventName];

/** Any event: supported ones validated, others kept by name only (they are skipped). */
export type GitHubEvent = SupportedEvent | { name: "unsupported"; eventName: string };

function isSupportedEventName(name: string): name is SupportedEventName {
  return Object.hasOwn(SCHEMAS, name);
}

/** Parse a payload for a named event (also used by unit tests and the publish phase). */
export function parseEvent(eventName: string, doc: unknown, source = "GITHUB_EVENT_PATH"): GitHubEvent {
  if (!isSupportedEventName(eventName)) return { name: "unsupported", eventName };
  const parsed = SCHEMAS[eventName].safeParse(doc);
  if (!parsed.success) {
    const first = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new ConfigurationError(
      `The '${eventName}' event payload at ${source} is not what GitHub sends (${first.join("; ")}). Agent Runner reads the event the runner wrote there; do not replace it.`,
    );
  }
  return { name: eventName, payload: parsed.data } as SupportedEvent;
}

async function readEventJson(eventPath: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(eventPath, "utf8");
  } catch (e) {
    throw new ConfigurationError(`GITHUB_EVENT_PATH (${eventPath}) cannot be read: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ConfigurationError(`GITHUB_EVENT_PATH (${eventPath}) is not valid JSON: ${(e as Error).message}`);
  }
}

/** The run's event, or undefined outside GitHub Actions (CLI, no GITHUB_EVENT_NAME). */
export async function readEvent(host: HostContext): Promise<GitHubEvent | undefined> {
  if (!host.eventName) return undefined;
  if (!isSupportedEventName(host.eventName)) return { name: "unsupported", eventName: host.eventName };
  if (!host.eventPath)
    throw new ConfigurationError(`GITHUB_EVENT_PATH is not set although GITHUB_EVENT_NAME is '${host.eventName}'; the runner always sets both.`);
  return parseEvent(host.eventName, await readEventJson(host.eventPath), `GITHUB_EVENT_PATH (${host.eventPath})`);
}

/** Why an existing event file cannot be parsed as JSON (message for the user), or undefined. */
export async function unreadableEvent(host: Pick<HostContext, "eventPath">): Promise<string | undefined> {
  if (!host.eventPath) return undefined;
  try {
    await readEventJson(host.eventPath);
    return undefined;
  } catch (e) {
    // A missing file is @actions/github's warning, not a crash; readEvent reports it when it matters.
    if ((e as { message?: string }).message?.includes("cannot be read")) return undefined;
    return (e as Error).message;
  }
}

/** Events whose payload may hold the request, so an empty `prompt` input is not an error while parsing. */
export function eventMayProvidePrompt(event: GitHubEvent | undefined): boolean {
  return event !== undefined && event.name !== "schedule";
}
