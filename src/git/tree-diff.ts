/**
 * The difference of two trees, read once: the raw entries (modes and blobs on
 * both sides) and the paths git takes as binary (numstat's `-\t-`), from one
 * `git diff-tree --raw --numstat`. The patch rules, the API commit and the
 * threat detection's binary files all ask it about the same two trees in one
 * step; `byObjectIds` (git.ts) answers the repeats without a process.
 * Renames and copies are not paired: a move is a deletion and an addition.
 */
import type { Git } from "./git.js";

export interface RawChange {
  path: string;
  oldMode: string;
  newMode: string;
  oldSha: string;
  newSha: string;
  /** git's status letter (A, D, M, T). */
  status: string;
}

export interface TreeDiff {
  changes: RawChange[];
  /** Paths git takes as binary (no attributes are configured: by content), in git's order. */
  binary: string[];
}

/** The one command for both answers; no textconv or external diff, whatever a config said. */
export const TREE_DIFF = (fromTree: string, toTree: string) => [
  "diff-tree",
  "-r",
  "-z",
  "--no-renames",
  "--no-ext-diff",
  "--no-textconv",
  "--raw",
  "--numstat",
  "--abbrev=40",
  fromTree,
  toTree,
];

const RAW = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([A-Z])\d*$/;
const NUMSTAT = /^(-|\d+)\t(-|\d+)\t(.+)$/s;

/**
 * Parses `diff-tree -z --raw --numstat`: first every raw record (":modes shas status\0path\0"),
 * then every numstat record ("added\tdeleted\tpath\0"). A path sits only after a raw record, so a
 * file named like a record is never read as one.
 */
export function parseTreeDiff(stdout: string): TreeDiff {
  const fields = stdout.split("\0");
  const changes: RawChange[] = [];
  let i = 0;
  for (; i < fields.length && fields[i]!.startsWith(":"); i += 2) {
    const m = RAW.exec(fields[i]!);
    if (!m || i + 1 >= fields.length) throw new Error(`unexpected 'git diff-tree' output: ${JSON.stringify(fields[i]!.slice(0, 80))}`);
    changes.push({ oldMode: m[1]!, newMode: m[2]!, oldSha: m[3]!, newSha: m[4]!, status: m[5]!, path: fields[i + 1]! });
  }
  const binary: string[] = [];
  for (; i < fields.length; i++) {
    if (!fields[i]) continue;
    const m = NUMSTAT.exec(fields[i]!);
    if (!m) throw new Error(`unexpected 'git diff-tree' output: ${JSON.stringify(fields[i]!.slice(0, 80))}`);
    if (m[1] === "-" && m[2] === "-") binary.push(m[3]!);
  }
  return { changes, binary };
}

export async function treeDiff(git: Git, fromTree: string, toTree: string): Promise<TreeDiff> {
  return parseTreeDiff((await git.exec(TREE_DIFF(fromTree, toTree), { byObjectIds: true })).stdout);
}
