/**
 * The review part of a review run's task: what to do, the pull request's
 * whole file list, and the diff of this run's part (its shard), from local
 * git. Diff and file names are data from the pull request, framed as such
 * by the caller's untrusted-data blocks.
 */
import type { ChangedPath } from "./diff.js";
import type { Shard } from "./shards.js";

export interface ReviewTaskInput {
  /** Every file the pull request changes (merge-base..head). */
  prFiles: ChangedPath[];
  /** This run's files and their diff. */
  shard: Shard;
  shardCount: number;
  diff: string;
  scopeNote: string;
  maxComments: number;
}

export function reviewInstructions(r: ReviewTaskInput): string {
  const part = r.shardCount > 1 ? `shard ${r.shard.index} of ${r.shardCount} (${r.shard.files.length} files, ${r.shard.lines} changed lines); other jobs review the other shards` : `all ${r.shard.files.length} changed files`;
  return [
    "## Review task",
    "",
    `Review this pull request: ${part}. ${r.scopeNote}`,
    "The whole checkout is in the workspace: read any file for context. Do not change files: a review run delivers no patch.",
    `Answer with exactly one create_pull_request_review request: a summary (body), event COMMENT (or REQUEST_CHANGES for problems that must be fixed before merging), and up to ${r.maxComments} inline comments, each on a line the diff below shows (RIGHT: the new file's line numbers; LEFT: deleted lines, old numbering), each with a severity (critical, major, minor, nit).`,
    "Comment only on the files of your part (listed with the diff below).",
    "",
  ].join("\n");
}

export function fileListText(files: ChangedPath[], shardFiles: ReadonlySet<string>): string {
  return files.map((f) => `${shardFiles.has(f.path) ? "*" : " "} ${f.binary ? "binary" : `+${f.added} -${f.deleted}`}\t${f.path}`).join("\n");
}
