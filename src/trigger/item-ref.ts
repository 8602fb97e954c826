/**
 * Names of fan-out items and of the thread a step names (`issue-number`,
 * `repository`): small helpers kept apart from item.ts, which needs the
 * Markdown and HTML parsers, so that stages that only name items load neither.
 */
import type { RawInputs } from "../config/parse.js";
import type { RepoRef } from "../shared/trigger.js";

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
