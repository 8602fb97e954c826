/**
 * A run for one issue or pull request that no event names: `issue-number`
 * (and `repository` for another repository's items) on a schedule, a
 * dispatch, a fan-out item job. The thread is read from the API and becomes
 * a Trigger like the one its own event would have made, so context, session,
 * delivery and safe outputs work as if the run had been started there.
 *
 * Who asked: on schedule and dispatch nobody needs checking (the repository
 * itself, or someone who already needed write access to dispatch); on any
 * other event the event's actor is checked as usual. What is asked: the
 * `prompt` input, else a dispatch's own prompt, else the fixed default that
 * names the thread. The thread's
 * title and body are someone else's text: untrusted context, never the request.
 *
 * These inputs are read from the step only, never from the config file:
 * which thread and repository a step works on is the workflow's choice.
 */
import * as z from "../shared/zod.js";
import type { HostContext } from "../config/host.js";
import type { RawInputs } from "../config/parse.js";
import { ConfigurationError } from "../errors.js";
import type { GitHubApi } from "../github/api.js";
import { GitHubApiError, isNotFound } from "../github/client.js";
import type { GitHubEvent } from "./event.js";
import { defaultRequest, resolveTrigger, type ResolveOptions } from "./resolve.js";
import { sanitizeLine, sanitizeUntrusted } from "../shared/sanitize.js";
import type { Actor, PullRequestInfo, RepoRef, Thread, TriggerDecision } from "../shared/trigger.js";
import { allowForeignItems, AUTOMATION_EVENTS, foreignOwner, itemKey, itemRef, parseRepository, repositoryOfRemote, sameRepo } from "../shared/item-ref.js";

/** What `issue-number` and `repository` name. */
export interface ItemTarget {
  repo: RepoRef;
  /** Undefined for a repository item (one prompt across repositories). */
  number?: number;
  /** See itemKey. */
  key: string;
  /** See itemRef. */
  ref: string;
  /** The item is in another repository than the workflow's. */
  foreign: boolean;
}

const IssueNumber = z
  .pipe(
    z.string().check(z.trim(), z.regex(/^#?\d{1,10}$/)),
    z.transform((s: string) => Number(s.replace(/^#/, ""))),
  )
  .check(z.refine((n) => n > 0 && n <= 2 ** 31));

/**
 * The item this step is for, or undefined for an ordinary run. `repository`
 * alone (this repository) changes nothing.
 */
export function itemTarget(raw: RawInputs, host: Pick<HostContext, "repository">): ItemTarget | undefined {
  const numberText = raw["issue-number"]?.trim();
  const repoText = raw.repository?.trim();
  if (!numberText && !repoText) return undefined;
  const problems: string[] = [];
  let number: number | undefined;
  if (numberText) {
    const parsed = IssueNumber.safeParse(numberText);
    if (parsed.success) number = parsed.data;
    else problems.push(`Input 'issue-number': '${numberText.slice(0, 40)}' is not an issue or pull request number; give a number like 12.`);
  }
  let repo: RepoRef | undefined;
  if (repoText) {
    repo = parseRepository(repoText);
    if (!repo) problems.push(`Input 'repository': '${repoText.slice(0, 140)}' is not owner/repo.`);
  } else if (host.repository) repo = parseRepository(host.repository);
  if (problems.length) throw new ConfigurationError(problems);
  if (!repo) throw new ConfigurationError("Input 'repository': is required here: GITHUB_REPOSITORY is not set, so name the item's repository as owner/repo.");
  const foreign = !sameRepo(host.repository, repo.fullName);
  if (number === undefined && !foreign) return undefined;
  if (foreignOwner(repo, host.repository) && !allowForeignItems(raw))
    throw new ConfigurationError(
      `Input 'allow-foreign-items': ${repo.fullName} belongs to another owner than this workflow's repository ${host.repository}; items of other owners run only with 'allow-foreign-items: true' (a plan drops them unless it is set).`,
    );
  return { repo, ...(number !== undefined ? { number } : {}), key: itemKey(repo, number, host.repository), ref: itemRef(repo, number), foreign };
}

/** Thread events name their own thread: a second one from `issue-number` would be ambiguous about whose comment asked for what. */
export function checkItemEvent(target: ItemTarget, event: GitHubEvent): void {
  if (target.number !== undefined || event.name === "unsupported" || AUTOMATION_EVENTS.includes(event.name)) return;
  throw new ConfigurationError(
    `Input 'repository': a '${event.name}' run is about its own issue or pull request in this repository; 'repository' alone applies to schedule and dispatch runs (add 'issue-number' to work on another repository's thread).`,
  );
}

export interface ItemThread {
  thread: Thread;
  pullRequest?: PullRequestInfo;
}

/** The thread `issue-number` names, read from the API; its text is sanitized like an event's. */
export async function readItemThread(api: GitHubApi, target: ItemTarget): Promise<ItemThread> {
  const number = target.number!;
  const reach = target.foreign
    ? ` The 'github-token' must reach ${target.repo.fullName}: use a GitHub App token (actions/create-github-app-token with 'owner' and 'repositories') or a token of a user with access.`
    : "";
  let found;
  try {
    found = await api.issueThread(number);
  } catch (e) {
    const status = (e as { status?: number }).status;
    if (status === 401 || status === 403) throw new ConfigurationError(`Input 'issue-number': reading #${number} of ${target.repo.fullName} was refused (${status}).${reach}`);
    throw new GitHubApiError(`Reading issue #${number} of ${target.repo.fullName}`, e);
  }
  if (!found)
    throw new ConfigurationError(
      `Input 'issue-number': ${target.ref} is not an issue or pull request of ${target.repo.fullName} (not found, deleted or transferred).${reach}`,
    );
  const thread: Thread = {
    kind: found.isPull ? "pull_request" : "issue",
    number,
    title: sanitizeLine(found.title, 1000),
    body: sanitizeUntrusted(found.body),
    url: found.url,
    ...(found.author ? { author: found.author } : {}),
  };
  if (!found.isPull) return { thread };
  try {
    return { thread, pullRequest: (await api.pullRequest(number)).info };
  } catch (e) {
    if (isNotFound(e)) throw new ConfigurationError(`Input 'issue-number': pull request ${target.ref} could not be read.${reach}`);
    throw new GitHubApiError(`Reading pull request #${number} of ${target.repo.fullName}`, e);
  }
}

function hostActor(login: string | undefined): Actor | undefined {
  return login ? { login, isBot: /\[bot\]$/i.test(login) } : undefined;
}

function eventSender(event: GitHubEvent): Actor | undefined {
  if (event.name === "unsupported") return undefined;
  const s = event.payload.sender;
  return s ? { login: s.login, ...(s.id !== undefined ? { id: s.id } : {}), isBot: s.type === "Bot" || /\[bot\]$/i.test(s.login) } : undefined;
}

/** A dispatch's own `prompt` (its dispatcher needed write access), as resolveTrigger takes it. */
function dispatchPrompt(event: GitHubEvent): string | undefined {
  const v = event.name === "workflow_dispatch" ? event.payload.inputs?.["prompt"] : event.name === "repository_dispatch" ? event.payload.client_payload?.["prompt"] : undefined;
  return typeof v === "string" && v.trim() ? v : undefined;
}

/**
 * The Trigger an item run gets: the thread from the API, the request from
 * `prompt` or the fixed default, the event's actor to check unless the event
 * is a schedule or dispatch.
 */
export function itemTrigger(event: GitHubEvent, target: ItemTarget, item: ItemThread, opts: ResolveOptions): TriggerDecision {
  const eventName = event.name === "unsupported" ? event.eventName : event.name;
  const automation = AUTOMATION_EVENTS.includes(eventName);
  const requester = eventSender(event) ?? hostActor(opts.hostActor);
  const fromEvent = dispatchPrompt(event);
  const request = opts.prompt.trim()
    ? { request: opts.prompt, requestSource: "input" as const }
    : fromEvent
      ? { request: fromEvent, requestSource: "event" as const }
      : { request: defaultRequest(item.thread.kind, item.thread.number), requestSource: "default" as const };
  return {
    kind: "run",
    trigger: {
      eventName,
      repo: target.repo,
      ...(!automation && requester ? { actor: requester } : {}),
      ...(requester ? { requester } : {}),
      thread: item.thread,
      ...(item.pullRequest ? { pullRequest: item.pullRequest } : {}),
      needsPullRequest: false,
      ...request,
      // One sticky comment per workflow and item, kept across the workflow's runs (as `issues` events keep one per issue).
      stickyKey: `${opts.workflow ?? ""}|item|${target.ref.toLowerCase()}`,
      item: { ref: target.ref, key: target.key },
    },
  };
}

/**
 * The trigger decision for this step: the named thread (once read), else the
 * event's own decision, for a repository item with that repository in place
 * of the workflow's.
 */
export function decideTrigger(event: GitHubEvent, opts: ResolveOptions, target: ItemTarget | undefined, item: ItemThread | undefined): TriggerDecision {
  if (target && item) return itemTrigger(event, target, item, opts);
  const decision = resolveTrigger(event, target ? { ...opts, repository: target.repo.fullName } : opts);
  if (!target || decision.kind === "skip") return decision;
  return { kind: "run", trigger: { ...decision.trigger, item: { ref: target.ref, key: target.key } } };
}

/**
 * The workspace must be a checkout of the item's repository, or delivery
 * would push this repository's code there. Only an origin on the GitHub host
 * can be compared; another origin (a mirror, a local path) is left alone.
 */
export function checkItemCheckout(target: ItemTarget, originUrl: string, serverUrl: string): void {
  if (!target.foreign) return;
  const checkedOut = repositoryOfRemote(originUrl, serverUrl);
  if (checkedOut === undefined || sameRepo(checkedOut, target.repo.fullName)) return;
  throw new ConfigurationError(
    `Input 'repository': the workspace is a checkout of ${checkedOut}, not ${target.repo.fullName}; check the item's repository out first (actions/checkout with 'repository: ${target.repo.fullName}' and a token that reaches it).`,
  );
}
