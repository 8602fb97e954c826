/**
 * Names of fan-out items and of the thread a step names (`issue-number`,
 * `repository`): small helpers kept apart from item.ts, which needs the
 * Markdown and HTML parsers, so that stages that only name items load neither.
 */
import type { InputName } from "../constants.js";
import { ConfigurationError } from "../errors.js";
import type { RepoRef } from "./trigger.js";

/** The step's inputs as given (config/parse.ts's RawInputs). */
type RawInputs = Partial<Record<InputName, string>>;

/** Started by the repository itself or by someone who already needed write access. */
export const AUTOMATION_EVENTS = ["schedule", "workflow_dispatch", "repository_dispatch"];

/** GitHub's owner and repository name characters; `.` and `..` are not names. */
const REPOSITORY = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/;

export function parseRepository(text: string): RepoRef | undefined {
  const m = REPOSITORY.exec(text.trim());
  if (!m || m[2] === "." || m[2] === "..") return undefined;
  return { owner: m[1]!, name: m[2]!, fullName: `${m[1]}/${m[2]}` };
}

export function sameRepo(a: string | undefined, b: string): boolean {
  return a !== undefined && a.toLowerCase() === b.toLowerCase();
}

/**
 * The name part one item adds to its artifact and session names: `12` for
 * this repository's #12, `owner-repo-12` for another's, `owner-repo` for
 * another repository as an item; none (`""`) for this repository itself as
 * an item, which is an ordinary run with the ordinary names. Only characters
 * artifact names may hold.
 */
export function itemKey(repo: RepoRef, number: number | undefined, thisRepository: string | undefined): string {
  if (sameRepo(thisRepository, repo.fullName)) return number !== undefined ? String(number) : "";
  return `${repo.owner}-${repo.name}${number !== undefined ? `-${number}` : ""}`;
}

/**
 * Where an item's session state is kept: for this repository's #12 the same
 * `agent-session-12` a comment on #12 uses (the conversation continues), for
 * another repository's a name of its own (two repositories' #12 never share one).
 */
export function itemSessionKey(key: string): string {
  return `agent-session-${key}`;
}

/** `owner/repo#12`, or `owner/repo` for a repository item. */
export function itemRef(repo: RepoRef, number: number | undefined): string {
  return `${repo.fullName}${number !== undefined ? `#${number}` : ""}`;
}

/** Whether the inputs name a thread, whose fixed default request stands in for a missing `prompt`. */
export function inputsNameThread(raw: RawInputs): boolean {
  return Boolean(raw["issue-number"]?.trim());
}

/** The owner (user or organization) of `owner/repo`, lower-cased; undefined when it is not a repository name. */
export function ownerOf(fullName: string | undefined): string | undefined {
  return fullName ? parseRepository(fullName)?.owner.toLowerCase() : undefined;
}

/**
 * `allow-foreign-items`, from the step only: whether items of repositories
 * another owner holds than the workflow's may be planned and run.
 */
export function allowForeignItems(raw: RawInputs): boolean {
  const v = raw["allow-foreign-items"]?.trim().toLowerCase() ?? "";
  if (["", "false", "no", "0", "off"].includes(v)) return false;
  if (["true", "yes", "1", "on"].includes(v)) return true;
  throw new ConfigurationError(`Input 'allow-foreign-items': '${v.slice(0, 20)}' is not a boolean; use true or false.`);
}

/** Whether `repo` belongs to another owner than the workflow's repository (unknown workflow: no). */
export function foreignOwner(repo: RepoRef, workflowRepository: string | undefined): boolean {
  const own = ownerOf(workflowRepository);
  return own !== undefined && own !== repo.owner.toLowerCase();
}

/**
 * The `owner/repo` a git remote URL names on the GitHub host, or undefined
 * for any other remote (another host, a mirror, a local path, ssh).
 */
export function repositoryOfRemote(remoteUrl: string, serverUrl: string): string | undefined {
  let remote: URL;
  let server: URL;
  try {
    remote = new URL(remoteUrl);
    server = new URL(serverUrl);
  } catch {
    return undefined;
  }
  if (!/^https?:$/.test(remote.protocol) || remote.host.toLowerCase() !== server.host.toLowerCase()) return undefined;
  return remote.pathname.replace(/^\/+|\/+$/g, "").replace(/\.git$/i, "");
}
