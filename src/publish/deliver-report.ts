/** A delivery's outcome as outputs, as the final comment, and as a job-summary section. */
import { open, stat } from "node:fs/promises";
import type { Outputs } from "./outputs.js";
import type { RunResult } from "../result.js";
import { finalBody } from "./comment.js";
import type { DeliveryOutcome } from "./deliver.js";
import { codeName, fenced } from "./markdown-code.js";
import type { Verdict } from "./verdict.js";

/** More than a comment can show; the rest stays in the file. */
const PATCH_READ_LIMIT = 256 * 1024;

async function readPatchHead(patchPath: string): Promise<{ text: string; bytes: number; path: string } | undefined> {
  const s = await stat(patchPath).catch(() => undefined);
  if (!s || s.size === 0) return undefined;
  const fh = await open(patchPath, "r");
  try {
    const buf = Buffer.alloc(Math.min(s.size, PATCH_READ_LIMIT));
    await fh.read(buf, 0, buf.length, 0);
    return { text: buf.toString("utf8"), bytes: s.size, path: patchPath };
  } finally {
    await fh.close();
  }
}

export function deliveryOutputs(outcome: DeliveryOutcome | undefined, commentUrl: string | undefined): Outputs {
  const out: Outputs = {};
  if (commentUrl) out["comment-url"] = commentUrl;
  if (!outcome) return out;
  if (outcome.pullRequest) {
    out["pull-request-url"] = outcome.pullRequest.url;
    out["pull-request-number"] = String(outcome.pullRequest.number);
  }
  if (outcome.branch && outcome.commitSha) out.branch = outcome.branch;
  if (outcome.commitSha) out["commit-sha"] = outcome.commitSha;
  if (outcome.commitSha && outcome.verified !== undefined) out["commit-verified"] = String(outcome.verified);
  if (outcome.checkpoint) out.checkpoint = outcome.checkpoint.ref;
  return out;
}

export function deliveryNote(outcome: DeliveryOutcome | undefined, extra?: string): string | undefined {
  const parts = [outcome?.note, outcome?.error ? `❌ **Delivery failed:** ${outcome.error}` : undefined, extra].filter((p): p is string => Boolean(p));
  return parts.length ? parts.join("\n\n") : undefined;
}

export async function renderFinalComment(opts: {
  marker: string;
  result: RunResult;
  outcome?: DeliveryOutcome;
  /** Shown even without an outcome (publish pending, a refused patch, an error after the run). */
  note?: string;
  showPatch: boolean;
  runUrl?: string;
  /** The headline: what the run came to, delivery included (verdict.ts). */
  verdict: Verdict;
}): Promise<string> {
  const { result, outcome } = opts;
  const patch = opts.showPatch ? await readPatchHead(result.diff.patchPath) : undefined;
  const artifactUrl = result.artifacts.find((a) => a.url && !a.name.startsWith("agent-session-"))?.url;
  const note = deliveryNote(outcome, opts.note);
  return finalBody({
    marker: opts.marker,
    result,
    verdict: opts.verdict,
    links: {
      ...(opts.runUrl ? { runUrl: opts.runUrl } : {}),
      ...(artifactUrl ? { artifactUrl } : {}),
      ...(outcome?.pullRequest ? { pullRequest: outcome.pullRequest } : {}),
      ...(outcome?.commitSha ? { commit: { sha: outcome.commitSha, ...(outcome.commitUrl ? { url: outcome.commitUrl } : {}) } } : {}),
    },
    ...(note ? { deliveryNote: note } : {}),
    ...(patch ? { patch } : {}),
  });
}

/**
 * The job summary's delivery section. Raw Markdown, posted through the filter
 * with the rest of the summary; branch and file names are code, and the
 * error (it names agent paths) is a code block.
 */
export function deliverySummary(outcome: DeliveryOutcome, commentUrl: string | undefined): string {
  const lines = ["### Delivery", ""];
  if (outcome.pullRequest) lines.push(`- Pull request [#${outcome.pullRequest.number}](${outcome.pullRequest.url}) (${outcome.pullRequest.created ? "opened" : "updated"})`);
  if (outcome.commitSha)
    lines.push(
      `- Commit ${codeName(outcome.commitSha.slice(0, 12))}${outcome.branch ? ` on ${codeName(outcome.branch)}` : ""}${outcome.verified === false ? " — ⚠️ not signed by GitHub" : outcome.verified ? " (verified)" : ""}`,
    );
  if (commentUrl) lines.push(`- [Comment](${commentUrl})`);
  if (outcome.incomplete)
    lines.push(`- ⚠️ Not done: ${outcome.incomplete}.${outcome.compareUrl ? ` [Open the pull request](${outcome.compareUrl}) (the comment says which setting refused it)` : ""}`);
  if (outcome.refusedFiles?.length) lines.push(`- Refused: changes to ${outcome.refusedFiles.map((f) => codeName(f)).join(", ")}`);
  if (outcome.note && !outcome.pullRequest && !outcome.commitSha) lines.push(`- ${outcome.note.split("\n")[0]}`);
  if (outcome.error) lines.push("- ❌ Delivery failed:", "", fenced(outcome.error, "text"));
  if (lines.length === 2) lines.push(`- ${outcome.mode === "none" ? "Nothing delivered (deliver: none)." : "Result posted as a comment."}`);
  return lines.join("\n") + "\n";
}

/** The job summary's delivery section when the patch was refused before delivery: the refusal names agent paths, so it is a code block. */
export function refusalSummary(refusal: string): string {
  return `### Delivery\n\n- ❌ Not delivered: the patch was refused.\n\n${fenced(refusal, "text")}\n`;
}
