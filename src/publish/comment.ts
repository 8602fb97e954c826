/**
 * The text of the progress/result comment. Pure functions: what the comment
 * says while the agent works, and what it says at the end, sized to fit
 * GitHub's 65,536-character limit (the patch gives way first, with a pointer
 * to the full file).
 */
import { createHash } from "node:crypto";
import type { RunResult } from "../result.js";
import { COMMENT_LIMIT } from "../github/limits.js";
import { sanitizeUntrusted } from "../shared/sanitize.js";
import { codeName, fenced } from "./markdown-code.js";
import { attemptsSection } from "./attempts-table.js";
import { excludedNote, formatDuration, verifyLine, verifyRunRows } from "./summary.js";
import { groupDigits } from "../shared/plain-format.js";
import { headline, runVerdict, type Verdict } from "./verdict.js";

export { COMMENT_LIMIT };
/** Keep a margin for the counting differences. */
const SAFE_LIMIT = COMMENT_LIMIT - 1_000;
const MAX_FINAL_MESSAGE = 20_000;
const MAX_FILES_LISTED = 50;

/** The hidden marker that finds the sticky comment again; a hash, so no event text ends up in it. */
export function stickyMarker(key: string): string {
  return `<!-- agent-runner:sticky:${createHash("sha256").update(key).digest("hex").slice(0, 20)} -->`;
}

export interface CommentLinks {
  runUrl?: string;
  artifactUrl?: string;
  pullRequest?: { number: number; url: string };
  commit?: { sha: string; url?: string };
}

/**
 * Agent output shown as markdown: no hidden markers (it cannot plant a sticky
 * marker), cut to `max`. Outside images and links and the mentions are
 * neutralized on the whole posted text, by neutralizeForGitHub (post-text.ts),
 * where every body we post goes through.
 */
export function agentMarkdown(text: string, max = MAX_FINAL_MESSAGE): string {
  const t = sanitizeUntrusted(text);
  return t.length > max ? `${t.slice(0, max)}\n\n… (truncated; the full message is in the run's \`final-message\` output and result.json)` : t;
}

function linkLine(links: CommentLinks): string {
  const parts: string[] = [];
  if (links.pullRequest) parts.push(`[Pull request #${links.pullRequest.number}](${links.pullRequest.url})`);
  if (links.commit) parts.push(links.commit.url ? `[Commit ${links.commit.sha.slice(0, 7)}](${links.commit.url})` : `Commit \`${links.commit.sha.slice(0, 7)}\``);
  if (links.runUrl) parts.push(`[Run](${links.runUrl})`);
  if (links.artifactUrl) parts.push(`[Artifact](${links.artifactUrl})`);
  return parts.join(" · ");
}

export function workingBody(opts: { marker: string; runUrl?: string; requester?: string; activity: string[] }): string {
  const lines = [
    opts.marker,
    `### 👀 Agent Runner is working…`,
    "",
    `${opts.requester ? `Requested by @${opts.requester}. ` : ""}${opts.runUrl ? `[Follow the run](${opts.runUrl}).` : ""}`.trim(),
  ];
  if (opts.activity.length) lines.push("", "<details open><summary>Latest activity</summary>", "", fenced(opts.activity.join("\n"), "text"), "", "</details>");
  return lines.join("\n").slice(0, SAFE_LIMIT);
}

export interface FinalCommentInput {
  marker: string;
  result: RunResult;
  /** What the run came to, delivery included; without it, the agent run's own ending. */
  verdict?: Verdict;
  links: CommentLinks;
  /** What happened to the changes, in one or more markdown lines (delivery's own words). */
  deliveryNote?: string;
  /** Patch text to include in a collapsed block, when the changes were not pushed (or always). */
  patch?: { text: string; bytes: number; path: string };
}

function kb(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

function usageLine(r: RunResult): string {
  const u = r.usage;
  const tokens = u.inputTokens || u.outputTokens ? `${groupDigits(u.inputTokens)} in · ${groupDigits(u.outputTokens)} out${u.cachedTokens ? ` · ${groupDigits(u.cachedTokens)} cached` : ""} tokens` : "";
  const requests = u.requests ? `${u.requests} model request${u.requests === 1 ? "" : "s"}` : "";
  return [`⏲️ ${formatDuration(r.durationMs)}`, tokens, u.costUsd !== undefined ? `$${u.costUsd.toFixed(4)}` : "", requests, r.toolCalls ? `${r.toolCalls} tool calls` : ""]
    .filter(Boolean)
    .join(" · ");
}

/** Binary hunks are unreadable in a comment; they are replaced by a note (the file keeps them). */
function readablePatch(text: string): string {
  return text.replace(/^GIT binary patch\n[\s\S]*?(?=^diff --git |(?![\s\S]))/gm, "(binary change omitted here; it is in patch.diff)\n\n");
}

export function patchBlock(patch: NonNullable<FinalCommentInput["patch"]>, budget: number, artifactUrl: string | undefined): string {
  const where = artifactUrl ? `[the run's artifact](${artifactUrl}) (\`patch.diff\`)` : `the run's artifact and on the runner at \`${patch.path}\``;
  const head = (note: string) => `<details><summary>Patch (${kb(patch.bytes)})</summary>\n\n${note}`;
  const tail = "\n\n</details>";
  const text = readablePatch(patch.text).replace(/\n+$/, "");
  const whole = head("") + fenced(text, "diff") + tail;
  if (whole.length <= budget) return whole;
  const note = `⚠️ The patch is too long for a comment: the start is shown below. The full patch is in ${where}.\n\n`;
  const room = budget - head(note).length - tail.length - 200;
  if (room < 500) return `<details><summary>Patch (${kb(patch.bytes)})</summary>\n\nThe patch is too long for a comment; it is in ${where}.\n\n</details>`;
  let cut = text.slice(0, room);
  const nl = cut.lastIndexOf("\n");
  if (nl > room / 2) cut = cut.slice(0, nl);
  return head(note) + fenced(`${cut}\n… (truncated)`, "diff") + tail;
}

/** A collapsed list of (already escaped) items, cut at MAX_FILES_LISTED; nothing when there are none. */
function collapsedList(summary: string, items: string[], lead?: string): string[] {
  if (!items.length) return [];
  return [
    `<details><summary>${summary}</summary>`,
    "",
    ...(lead ? [lead, ""] : []),
    ...items.slice(0, MAX_FILES_LISTED).map((item) => `- ${item}`),
    ...(items.length > MAX_FILES_LISTED ? [`- … and ${items.length - MAX_FILES_LISTED} more`] : []),
    "",
    "</details>",
    "",
  ];
}

export function finalBody(input: FinalCommentInput): string {
  const r = input.result;
  const top: string[] = [input.marker, `### ${headline(input.verdict ?? runVerdict({ result: r }))}`, ""];
  if (r.conclusion !== "success" && r.reason) top.push(`**Reason:** ${agentMarkdown(r.reason, 2000)}`, "");
  if (r.verify) top.push(`**Verify:** ${verifyLine(r)}`, "");
  if (input.deliveryNote) top.push(input.deliveryNote, "");
  top.push(r.output.trim() ? agentMarkdown(r.output) : "_The agent gave no final message._", "");

  const excluded = r.diff.excludedFiles ?? [];
  const filesPart = [
    ...attemptsSection(r, "#### Attempts"),
    ...(r.verify?.runs.length ? [`<details><summary>Checks (${r.verify.runs.length})</summary>`, "", ...verifyRunRows(r), "", "</details>", ""] : []),
    ...collapsedList(`Changed files (${r.diff.changedFiles.length})`, r.diff.changedFiles.map((f) => codeName(f))),
    ...(excluded.length ? collapsedList(`Left out of the patch (${excluded.length})`, excluded.map((f) => codeName(f)), excludedNote(excluded)) : []),
  ];
  const footer = ["---", [usageLine(r), linkLine(input.links)].filter(Boolean).join(" · ")];

  let body = [...top, ...filesPart].join("\n");
  const footerText = "\n" + footer.join("\n");
  if (input.patch && input.patch.text.trim()) {
    const budget = SAFE_LIMIT - body.length - footerText.length - 2;
    body += "\n" + patchBlock(input.patch, budget, input.links.artifactUrl) + "\n";
  }
  return (body + footerText).slice(0, SAFE_LIMIT);
}

/** When the run ended before a result existed (a configuration error after the comment was posted). */
export function errorBody(opts: { marker: string; message: string; runUrl?: string }): string {
  return [
    opts.marker,
    "### ❌ Agent Runner could not run",
    "",
    agentMarkdown(opts.message, 4000),
    "",
    opts.runUrl ? `[Run](${opts.runUrl})` : "",
  ].join("\n").trim();
}
