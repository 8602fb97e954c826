/**
 * Gather's half of a sharded review: every shard job's review request
 * (hostile input, from its artifact) merged into ONE review. A comment is
 * kept only on a file of the shard that asked for it, on a line the pull
 * request's diff shows and the reviewed range changed; duplicates (within
 * this review and of earlier reviews' comments) go; the rest is capped,
 * the most severe first. The summary names every shard, and any shard not
 * reviewed with its files: the review never claims what it did not cover.
 */
import { createHash } from "node:crypto";
import { SEVERITIES } from "../safe-outputs/create-pull-request-review.js";
import type { DiffLines, Side } from "../safe-outputs/diff-lines.js";
import { codeName } from "../shared/markdown-code.js";
import { shardDirs, type Shard } from "./shards.js";

export type Severity = (typeof SEVERITIES)[number];

export interface LegComment {
  path: string;
  line: number;
  side?: Side;
  start_line?: number;
  body: string;
  severity?: Severity;
}

export interface LegReview {
  body: string;
  event: "COMMENT" | "REQUEST_CHANGES";
  comments: LegComment[];
}

/** What gather learned of one shard's job. */
export interface Leg {
  shard: Shard;
  /**
   * `reviewed`: the job succeeded and asked for a review; anything else: not reviewed, `reason` says why.
   * `out-of-budget`: a budget stopped its agent (what it asked for before the stop may be kept in `review`).
   */
  status: "reviewed" | "failed" | "out-of-budget" | "missing" | "refused";
  reason?: string;
  costUsd?: number;
  durationMs?: number;
  review?: LegReview;
}

export interface MergeInput {
  legs: Leg[];
  /** Lines of the pull request's diff (where GitHub accepts comments). */
  prDiff: DiffLines;
  /** Lines of the reviewed range (all of the PR, or since the last review). */
  rangeDiff: DiffLines;
  /** This project's own earlier inline comments (path, line, the key their marker records): not repeated. */
  earlier: EarlierComment[];
  maxComments: number;
  canBlock: boolean;
  head: string;
  /** A line on what was reviewed (the scope), shown under the headline. */
  scopeNote: string;
}

export interface MergedReview {
  event: "COMMENT" | "REQUEST_CHANGES";
  /** Markdown with agent text in it: posted through the safe-markdown renderer. */
  body: string;
  comments: { path: string; line: number; side: Side; start_line?: number; start_side?: Side; body: string }[];
  /** `success` every shard reviewed; `partial` some; `failure` none (the review covered nothing). */
  conclusion: "success" | "partial" | "failure";
  dropped: { outside: number; duplicate: number; overCap: number; otherShard: number };
  costUsd: number;
}

export const REVIEW_MARKER = "agent-runner-review";
export const COMMENT_MARKER = "agent-runner-review-comment";

/** An inline comment of an earlier review of ours, where it sits now (null: outdated) and its marker's key. */
export interface EarlierComment {
  path: string;
  line: number | null;
  key: string;
}

/** What an inline comment says, as a short digest (rendering for GitHub may change the text; the key does not). */
export function commentKey(text: string): string {
  return createHash("sha256").update(norm(text)).digest("hex").slice(0, 16);
}

/** Each inline comment's hidden marker, first: what it said, for the next review's dedup. */
export function commentMarker(text: string): string {
  return `<!-- ${COMMENT_MARKER} k=${commentKey(text)} -->`;
}

/** The key an inline comment's marker records, only when the marker starts it (ours is first). */
export function markedCommentKey(body: string): string | undefined {
  return new RegExp(`^<!-- ${COMMENT_MARKER} k=([0-9a-f]{16}) -->`).exec(body)?.[1];
}

/** The hidden marker: the head this review covered (what `since-last-review` starts from next time). */
export function reviewMarker(head: string): string {
  return `<!-- ${REVIEW_MARKER} head=${head} -->`;
}

/** The head a review's marker records; undefined when it has none. Only the first marker counts (ours is first). */
export function markedHead(body: string): string | undefined {
  return new RegExp(`<!-- ${REVIEW_MARKER} head=([0-9a-f]{40}(?:[0-9a-f]{24})?) -->`).exec(body)?.[1];
}

/** Agent text cannot plant a marker (nor any HTML comment) in the summary. */
function defang(text: string): string {
  return text.replace(/<!--/g, "&lt;!--");
}

/** How the summary names a shard's outcome: a budget stop is not a failure, and says so. */
const STATUS_WORDS: Record<Leg["status"], string> = {
  reviewed: "reviewed",
  failed: "failed",
  "out-of-budget": "ran out of budget",
  missing: "left no result",
  refused: "its result was refused",
};
const RESULT_CELL: Record<Leg["status"], string> = {
  reviewed: "✅ reviewed",
  failed: "❌ not reviewed (failed)",
  "out-of-budget": "⛔ not reviewed (ran out of budget)",
  missing: "❌ not reviewed (missing)",
  refused: "❌ not reviewed (refused)",
};

const rank = (s: Severity | undefined) => (s ? SEVERITIES.indexOf(s) : SEVERITIES.indexOf("minor"));
const norm = (s: string) => s.replace(/\s+/g, " ").trim();
const FILES_NAMED = 50;
const LEG_BODY_MAX = 6000;

function listFiles(files: string[]): string {
  // File names are the pull request's (anyone's): shown as code nothing in them can end, line breaks as \xNN.
  const shown = files.slice(0, FILES_NAMED).map((f) => codeName(f));
  return `${shown.join(", ")}${files.length > FILES_NAMED ? ` and ${files.length - FILES_NAMED} more` : ""}`;
}

export function mergeReviews(m: MergeInput): MergedReview {
  const dropped = { outside: 0, duplicate: 0, overCap: 0, otherShard: 0 };
  const seen = new Set(m.earlier.map((c) => `${c.path}|${c.line ?? ""}|${c.key}`));
  const kept: (LegComment & { side: Side; order: number; text: string })[] = [];
  let order = 0;
  for (const leg of m.legs) {
    // A shard stopped by its budget keeps the findings it asked for before the stop.
    if ((leg.status !== "reviewed" && leg.status !== "out-of-budget") || !leg.review) continue;
    const own = new Set(leg.shard.files);
    for (const c of leg.review.comments) {
      const side = c.side ?? "RIGHT";
      // A shard job speaks only for its own files: a comment elsewhere is another shard's (or a forged) claim.
      if (!own.has(c.path)) {
        dropped.otherShard++;
        continue;
      }
      const where = { path: c.path, line: c.line, side, ...(c.start_line !== undefined ? { startLine: c.start_line } : {}) };
      if (m.prDiff.problem(where) || m.rangeDiff.problem(where)) {
        dropped.outside++;
        continue;
      }
      // As posted: an earlier comment's key is of this text.
      const text = `${c.severity ? `**${c.severity}:** ` : ""}${defang(c.body)}`;
      const key = `${c.path}|${c.line}|${commentKey(text)}`;
      if (seen.has(key)) {
        dropped.duplicate++;
        continue;
      }
      seen.add(key);
      kept.push({ ...c, side, order: order++, text });
    }
  }
  kept.sort((a, b) => rank(a.severity) - rank(b.severity) || a.order - b.order);
  const capped = kept.slice(0, m.maxComments);
  dropped.overCap = kept.length - capped.length;
  const reviewed = m.legs.filter((l) => l.status === "reviewed");
  const conclusion = !m.legs.length || !reviewed.length ? "failure" : reviewed.length === m.legs.length ? "success" : "partial";
  const wantsChanges = reviewed.some((l) => l.review?.event === "REQUEST_CHANGES");
  const costUsd = m.legs.reduce((n, l) => n + (l.costUsd ?? 0), 0);
  return {
    event: m.canBlock && wantsChanges ? "REQUEST_CHANGES" : "COMMENT",
    body: summary(m, capped.length, dropped, conclusion, costUsd),
    comments: capped.map((c) => ({
      path: c.path,
      line: c.line,
      side: c.side,
      ...(c.start_line !== undefined && c.start_line !== c.line ? { start_line: c.start_line, start_side: c.side } : {}),
      body: `${commentMarker(c.text)}\n${c.text}`,
    })),
    conclusion,
    dropped,
    costUsd,
  };
}

function summary(m: MergeInput, posted: number, dropped: MergedReview["dropped"], conclusion: MergedReview["conclusion"], costUsd: number): string {
  const shards = m.legs.length;
  const reviewed = m.legs.filter((l) => l.status === "reviewed");
  const lines = [
    // The marker says which head was covered (since-last-review starts there): a review that covered nothing carries none.
    ...(conclusion === "failure" ? [] : [reviewMarker(m.head)]),
    `## Agent Runner review`,
    "",
    conclusion === "failure"
      ? `**This review covered nothing:** ${shards ? `none of the ${shards} shard${shards === 1 ? "" : "s"} was reviewed` : "no shard was planned"}. No line of this pull request was reviewed.`
      : `Reviewed ${reviewed.length} of ${shards} shard${shards === 1 ? "" : "s"} at ${m.head.slice(0, 12)}. ${m.scopeNote}`,
    "",
    "| shard | files | changed lines | directories | result |",
    "|---|---|---|---|---|",
    ...m.legs.map(
      (l) =>
        `| ${l.shard.index} | ${l.shard.files.length} | ${l.shard.lines} | ${shardDirs(l.shard, 4, (d) => codeName(d, "table-cell"))} | ${RESULT_CELL[l.status]} |`,
    ),
    "",
  ];
  const missing = m.legs.filter((l) => l.status !== "reviewed");
  if (missing.length) {
    lines.push("### Not reviewed", "");
    for (const l of missing) lines.push(`- **Shard ${l.shard.index}** (${STATUS_WORDS[l.status]}${l.reason ? `: ${defang(l.reason).replace(/\s+/g, " ").slice(0, 300)}` : ""}): ${listFiles(l.shard.files)}`);
    lines.push("");
  }
  for (const l of m.legs.filter((x) => x.review && (x.status === "reviewed" || x.status === "out-of-budget"))) {
    const text = defang((l.review?.body ?? "").trim());
    const title = l.status === "reviewed" ? `### Shard ${l.shard.index}` : `### Shard ${l.shard.index} (ran out of budget: what it found before the stop)`;
    lines.push(title, "", text.length > LEG_BODY_MAX ? `${text.slice(0, LEG_BODY_MAX)}\n\n[… cut]` : text || "_No summary._", "");
  }
  const notes = [
    `${posted} inline comment${posted === 1 ? "" : "s"}`,
    dropped.overCap ? `${dropped.overCap} more over the cap of ${m.maxComments} (the least severe)` : "",
    dropped.duplicate ? `${dropped.duplicate} duplicate${dropped.duplicate === 1 ? "" : "s"} left out` : "",
    dropped.outside ? `${dropped.outside} outside the reviewed diff left out` : "",
    dropped.otherShard ? `${dropped.otherShard} on files of another shard left out` : "",
    costUsd ? `$${costUsd.toFixed(4)} across the shards` : "",
  ].filter(Boolean);
  lines.push(`_${notes.join("; ")}._`);
  return lines.join("\n");
}
