/**
 * The action's safe-outputs stage, after the agent (phase all) or after the
 * artifact was downloaded (phase publish): read the requests, apply them
 * with the host's token, and report them in the output `safe-outputs`, the
 * job summary and the final comment. Phase run only counts them: its job
 * holds a read-only token and its publish job applies them.
 */
import path from "node:path";
import { RESULTS_FILES } from "../../constants.js";
import type { RunResult } from "../../result.js";
import type { GitHubRun, StageContext } from "../../stage-context.js";
import { sanitizeLine } from "../../shared/sanitize.js";
import type { Outputs } from "../outputs.js";
import { codeName } from "../markdown-code.js";
import type { PostTextPolicy } from "../post-text.js";
import { toSafeMarkdown } from "../safe-markdown.js";
import { applyRequests, type SafeOutputResult } from "./apply.js";
import { hasSafeOutputs, SAFE_OUTPUTS_FILE } from "../../safe-outputs/config.js";
import type { ApplyContext } from "../../safe-outputs/kind.js";
import { readRequests, type RequestsFile } from "./requests.js";
import { defuseOurMarkers } from "../../shared/markers.js";

export interface SafeOutputsReport {
  results: SafeOutputResult[];
  outputs: Outputs;
  /** For the job summary (raw Markdown: the summary goes through the filter whole). */
  summary: string;
  /** For the final comment. */
  note: string;
}

export function safeOutputsFile(resultsDir: string): string {
  return path.join(resultsDir, RESULTS_FILES.outputs, SAFE_OUTPUTS_FILE);
}

export async function safeOutputsStage(
  ctx: StageContext,
  run: GitHubRun | undefined,
  result: RunResult,
  /** The requests, as threat detection read (and scanned) them when it ran. */
  requests: () => Promise<RequestsFile> = () => readRequests(safeOutputsFile(ctx.resultsDir)),
): Promise<SafeOutputsReport | undefined> {
  const { settings, log, redactor } = ctx;
  const config = settings.agent.safeOutputs;
  const file = await requests();
  if (!hasSafeOutputs(config) && !file.requests.length && !file.problems.length) return undefined;
  const policy: PostTextPolicy = { serverUrl: ctx.io.host.serverUrl, allowedDomains: settings.run.network.allowedDomains };
  // Posted under the action's own name: no marker of the agent's may turn it into a staging comment, a sticky
  // comment or a review marker (which `review-scope: since-last-review` would start from).
  const post = (markdown: string) => toSafeMarkdown(redactor.redact(defuseOurMarkers(markdown)), policy);
  for (const p of file.problems) log.warning(`Safe outputs: ${p}`);

  if (settings.delivery.phase === "run") {
    const text = `${file.requests.length} request(s) recorded; the publish job checks and applies them.`;
    log.info(`Safe outputs: ${text}`);
    return { results: [], outputs: {}, summary: `### Safe outputs\n\n- ${text}\n`, note: `**Safe outputs:** ${text}` };
  }

  const ctxOrReason = applyContext(ctx, run, result, post);
  const results = await applyRequests({
    config,
    requests: file.requests,
    ...(typeof ctxOrReason === "string" ? { notApplied: ctxOrReason } : { ctx: ctxOrReason }),
  });
  const all = [...results, ...file.problems.map((reason): SafeOutputResult => ({ type: "invalid", status: "refused", reason }))];
  for (const r of all) log.info(`Safe outputs: ${r.type} ${r.status}${r.url ? ` (${r.url})` : ""}${r.reason ? `: ${r.reason}` : ""}`);
  return {
    results: all,
    outputs: { "safe-outputs": JSON.stringify(redactor.redactValue(all)) },
    summary: reportMarkdown(all, "### Safe outputs"),
    note: reportMarkdown(all, "**Safe outputs:**"),
  };
}

/** Where the requests are applied, or why nothing is. */
function applyContext(ctx: StageContext, run: GitHubRun | undefined, result: RunResult, post: ApplyContext["post"]): ApplyContext | string {
  if (!run) return "not applied: this run has no GitHub event to apply requests to";
  // A run that failed, timed out or was cancelled may have been steered off course: none of its requests are applied.
  if (result.conclusion !== "success") return `not applied: the agent run ended '${result.conclusion}' (requests are applied only after a successful run)`;
  const thread = run.trigger.thread;
  return {
    api: run.api,
    ...(thread ? { thread: { number: thread.number, kind: thread.kind } } : {}),
    post,
    line: (text, max) => sanitizeLine(ctx.redactor.redact(text), max),
  };
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s+/g, " ");
}

export function reportMarkdown(results: SafeOutputResult[], heading: string): string {
  if (!results.length) return `${heading} none requested.\n`;
  const applied = results.filter((r) => r.status === "applied").length;
  const lines = [`${heading} ${applied} applied, ${results.length - applied} refused.`, "", "| request | status | detail |", "|---|---|---|"];
  for (const r of results) lines.push(`| ${codeName(r.type, "table-cell")} | ${r.status === "applied" ? "✅ applied" : "❌ refused"} | ${r.url ? r.url : cell(r.reason ?? "")} |`);
  return lines.join("\n") + "\n";
}
