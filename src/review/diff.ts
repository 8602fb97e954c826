/**
 * A pull request's diff from local git, never from the API: no size caps
 * (the API omits patches of large files and stops at 3,000 files). The
 * range is `merge-base(base, head)..head` as GitHub shows it, or, reviewing
 * only what is new, `last reviewed head..head`.
 */
import type { Git as GitClass } from "../git/git.js";

/** What the review reads git with: the host's Git (or any runner of the same two calls). */
export type Git = Pick<GitClass, "exec" | "text">;
import { ConfigurationError } from "../errors.js";
import type { ShardFile } from "./shards.js";

export interface ChangedPath extends ShardFile {
  added: number;
  deleted: number;
  binary: boolean;
}

/**
 * Every diff: no external diff program and no textconv (a repository's config and attributes
 * could name one), literal pathspecs (a changed file named `*.ts` or `:(glob)x` means that file;
 * the flag, not `:(literal)`, so it holds in the host's private repository, which sets
 * GIT_LITERAL_PATHSPECS and would read the prefix as part of the name).
 */
const DIFF = ["--literal-pathspecs", "-c", "core.quotePath=false", "diff", "--no-renames", "--no-ext-diff", "--no-textconv"];

/** Full id of a commit, or a configuration error naming what the checkout lacks. */
export async function resolveCommit(git: Git, rev: string, what: string): Promise<string> {
  try {
    return await git.text(["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
  } catch {
    throw new ConfigurationError(
      `Input 'task': the review needs the ${what} commit ${rev.slice(0, 40)} in the checkout; check out with the full history (actions/checkout with fetch-depth: 0).`,
    );
  }
}

export async function mergeBase(git: Git, base: string, head: string): Promise<string> {
  try {
    return await git.text(["merge-base", base, head]);
  } catch {
    throw new ConfigurationError("Input 'task': the pull request's base and head have no common commit in the checkout; check out with the full history (actions/checkout with fetch-depth: 0).");
  }
}

/** Whether `ancestor` is an ancestor of (or equal to) `of`: false also when it is not in the checkout. */
export async function isAncestor(git: Git, ancestor: string, of: string): Promise<boolean> {
  const r = await git.exec(["merge-base", "--is-ancestor", ancestor, of], { okCodes: [1, 128] }).catch(() => undefined);
  return r?.exitCode === 0;
}

/** Every file changed in from..head, with its added and deleted lines (renames as a deletion and an addition). */
export async function changedPaths(git: Git, from: string, head: string): Promise<ChangedPath[]> {
  const out = (await git.exec([...DIFF, "--numstat", "-z", from, head])).stdout;
  const files: ChangedPath[] = [];
  for (const entry of out.split("\0")) {
    const m = /^(-|\d+)\t(-|\d+)\t([\s\S]+)$/.exec(entry);
    if (!m) continue;
    const binary = m[1] === "-";
    const added = binary ? 0 : Number(m[1]);
    const deleted = binary ? 0 : Number(m[2]);
    files.push({ path: m[3]!, added, deleted, binary, lines: added + deleted });
  }
  return files;
}

/** The unified diff of some files of from..head, split per file (the `@@` hunks GitHub's review comments sit on). */
export async function filePatches(git: Git, from: string, head: string, paths: readonly string[]): Promise<Map<string, string>> {
  const patches = new Map<string, string>();
  if (!paths.length) return patches;
  const wanted = new Set(paths);
  // In batches: a pull request of thousands of files must not meet the argument list's limit.
  for (let i = 0; i < paths.length; i += 500) {
    const batch = paths.slice(i, i + 500);
    const text = (await git.exec([...DIFF, "--no-color", from, head, "--", ...batch])).stdout;
    for (const [file, patch] of splitDiff(text)) if (wanted.has(file)) patches.set(file, patch);
  }
  return patches;
}

/**
 * `diff --git a/P b/P` sections → P → the section (header included). Without
 * renames both names are the same path, so P is read off the header's length
 * (a path holding " b/" stays whole).
 */
export function splitDiff(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const starts: number[] = [];
  const re = /^diff --git /gm;
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index);
  starts.forEach((start, i) => {
    const section = text.slice(start, starts[i + 1] ?? text.length);
    const header = section.slice(0, section.indexOf("\n") >= 0 ? section.indexOf("\n") : section.length);
    const names = header.slice("diff --git ".length);
    const half = (names.length - 1) / 2;
    if (!Number.isInteger(half)) return;
    const a = names.slice(0, half);
    const b = names.slice(half + 1);
    if (!a.startsWith("a/") || !b.startsWith("b/") || a.slice(2) !== b.slice(2)) return;
    out.set(a.slice(2), section.endsWith("\n") ? section : `${section}\n`);
  });
  return out;
}

/** The hunks of a file's section (from the first `@@`), as the API's `patch` field has them. */
export function hunksOf(section: string): string | undefined {
  const at = section.startsWith("@@") ? 0 : section.indexOf("\n@@");
  return at < 0 ? undefined : section.slice(at === 0 ? 0 : at + 1).replace(/\n$/, "");
}
