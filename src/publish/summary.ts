/**
 * The job summary: what happened, in a table a reviewer reads in five
 * seconds. Raw Markdown: the action posts it through the filter
 * (safe-markdown.ts); every agent-chosen text in it is code (codeName).
 */
import type { RunResult } from "../result.js";
import { attemptsSection } from "./attempts-table.js";
import { codeName, fenced } from "./markdown-code.js";
import { groupDigits } from "../shared/plain-format.js";
import { headline, runVerdict, type Verdict } from "./verdict.js";

export { fenced };

export function formatDuration(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** The cap and the spend: `$0.4210 of $5.00 (max-cost-usd default; none turns it off)`. */
function costCapLine(cap: NonNullable<RunResult["costCap"]>, spent: number | undefined): string {
  const max = `$${cap.maxUsd.toFixed(2)}`;
  const spend = spent !== undefined ? `$${spent.toFixed(4)}` : "unknown";
  return `${spend} of ${max} (${cap.isDefault ? "the default `max-cost-usd`; `max-cost-usd: none` turns it off" : "`max-cost-usd`"})`;
}

/** `verdict`: what the run came to, delivery included (verdict.ts); without it, the agent run's own ending. */
export function summaryMarkdown(result: RunResult, verdict: Verdict = runVerdict({ result })): string {
  // The transcript's header, as a table: agent, model, duration, tokens, cost, conclusion.
  const u = result.usage;
  const rows: [string, string][] = [
    // The reason can be the agent's last stderr line: code, like every text the agent chose.
    ["Conclusion", `${verdict.icon} ${verdict.conclusion}${result.reason ? ` — ${codeName(result.reason, "table-cell")}` : ""}`],
    ["Agent", `${result.agentName}${result.agentVersion && result.agentVersion !== "n/a" ? ` ${codeName(result.agentVersion, "table-cell")}` : ""}`],
    ["Model", result.model ? codeName(result.model, "table-cell") : "default"],
    ["Sandbox", result.sandboxBackend],
    ["Duration", formatDuration(result.durationMs)],
    ["Tokens", `${u.inputTokens} in · ${u.outputTokens} out · ${u.cachedTokens} cached`],
    ["Cost", u.costUsd !== undefined ? `$${u.costUsd.toFixed(4)}` : "unknown"],
  ];
  if (u.requests !== undefined) rows.push(["Model requests", String(u.requests)]);
  if (u.retries) rows.push(["Rate limits", `${u.retries} ${u.retries === 1 ? "answer" : "answers"} retried by the model gateway, ${u.retryWaitSeconds ?? 0} s waited (see Rate limits below)`]);
  if (result.costCap) rows.push(["Cost cap", costCapLine(result.costCap, u.costUsd)]);
  if (result.budgetExceeded) rows.push(["Budget", "⛔ exceeded: the model gateway stopped the agent's model requests (see Conclusion)"]);
  if (result.verify) rows.push(["Verify", verifyLine(result, "table-cell")]);
  if (result.sessionId) rows.push(["Session", codeName(result.sessionId, "table-cell")]);
  if (result.networkBlocked) rows.push(["Network attempts blocked", String(result.networkBlocked)]);
  if (result.permissionDenials.length) rows.push(["Permission denials", String(result.permissionDenials.length)]);

  const files = result.diff.changedFiles;
  return [
    `## ${headline(verdict)}`,
    "",
    "| | |",
    "|---|---|",
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    "",
    ...usageTable(result),
    ...rateLimitSection(result),
    ...verifySection(result),
    ...attemptsSection(result),
    ...artifactList(result),
    `### Changed files (${files.length})`,
    "",
    files.length ? pathList(files, 200) : "_No changes._",
    "",
    ...excludedSection(result.diff.excludedFiles ?? []),
    "### Final message",
    "",
    result.output ? fenced(result.output.slice(0, 20_000), "text") : "_The agent gave no final message._",
    "",
  ].join("\n");
}

const VERDICT: Record<NonNullable<RunResult["verified"]>, string> = { passed: "✅ passed", failed: "❌ failed", "not-run": "➖ not run" };

/** `verify-command`'s verdict in one line: how it ended, how many checks and fix rounds, which command (code: the workflow chose it, but it may hold anything). */
export function verifyLine(result: RunResult, where: "inline" | "table-cell" = "inline"): string {
  const v = result.verify;
  if (!v) return VERDICT[result.verified ?? "not-run"];
  const runs = `${v.runs.length} check${v.runs.length === 1 ? "" : "s"}`;
  const fixes = `${v.fixRounds} fix round${v.fixRounds === 1 ? "" : "s"} of ${v.maxFixRounds}`;
  return `${VERDICT[result.verified ?? "not-run"]} — ${codeName(v.command.join(" "), where)}, ${runs}, ${fixes}`;
}

/** One row per check: how it ended and where its log is. */
export function verifyRunRows(result: RunResult): string[] {
  const v = result.verify;
  if (!v?.runs.length) return [];
  return [
    "| Check | Result | Exit | Duration | Output | Log |",
    "|---:|---|---:|---:|---:|---|",
    ...v.runs.map(
      (r) =>
        `| ${r.run} | ${r.passed ? "✅ passed" : r.timedOut ? "⏱️ timed out" : r.spawnError ? "❌ not started" : "❌ failed"} | ${r.exitCode ?? r.signal ?? "–"} | ${formatDuration(r.durationMs)} | ${groupDigits(r.outputBytes)} B | ${codeName(r.log, "table-cell")} |`,
    ),
  ];
}

function verifySection(result: RunResult): string[] {
  if (!result.verify) return [];
  return ["### Verify", "", verifyLine(result), "", ...verifyRunRows(result), ""];
}

/** Paths (the agent chose them) as a Markdown list of inline code, cut at `max`. */
function pathList(files: readonly string[], max: number): string {
  return files.slice(0, max).map((f) => `- ${codeName(f)}`).join("\n") + (files.length > max ? `\n- … and ${files.length - max} more` : "");
}

/** Why the patch leaves out paths an earlier step changed, and which. */
export function excludedNote(files: readonly string[]): string {
  return (
    `⚠️ **Left out of the patch (${files.length}):** ${files.length === 1 ? "this path was" : "these paths were"} already changed relative to the base commit ` +
    "before the agent started (by an earlier step of the job, or the base branch's agent configuration put back on a pull request), so the patch, " +
    "made against the base commit, does not carry them, whether or not the agent changed them too."
  );
}

function excludedSection(files: readonly string[]): string[] {
  if (!files.length) return [];
  return [`### Left out of the patch (${files.length})`, "", excludedNote(files), "", pathList(files, 200), ""];
}

const int = (n: number) => groupDigits(n);

/**
 * What the run consumed, in one row: what a reviewer checks against a budget.
 * Model-backed agents: the model gateway's count (the CLI's own is in result.json, metadata.cliUsage).
 */
function usageTable(result: RunResult): string[] {
  const u = result.usage;
  const requests = u.requests !== undefined ? ` ${int(u.requests)} |` : "";
  return [
    "### Usage",
    "",
    `| Input tokens | Output tokens | Cached tokens | Cost |${requests ? " Model requests |" : ""} Turns | Tool calls | Events |`,
    `|---:|---:|---:|---:|${requests ? "---:|" : ""}---:|---:|---:|`,
    `| ${int(u.inputTokens)} | ${int(u.outputTokens)} | ${int(u.cachedTokens)} | ${u.costUsd !== undefined ? `$${u.costUsd.toFixed(4)}` : "unknown"} |${requests} ${int(result.numTurns)} | ${int(result.toolCalls)} | ${int(result.eventCount)} |`,
    "",
    ...(u.requests !== undefined ? ["_Counted by the model gateway from every response (the agent CLI's own figure is in `result.json`, `metadata.cliUsage`)._", ""] : []),
  ];
}

/** A model gateway request record, as far as the rate-limit lines read it (trace/model-requests.ts). */
interface RetriedRecord {
  status?: number;
  requestModel?: string;
  fallbackFor?: string;
  retry?: { reason: string; next: string; waitMs?: number };
}

const MAX_RETRY_LINES = 30;

/**
 * One line per rate-limited or overloaded answer the gateway held back, and
 * what it did (retry after a wait, a fallback model, give up); then which
 * model served how many requests. Model names are the agent's: code.
 */
function rateLimitSection(result: RunResult): string[] {
  const u = result.usage;
  if (!u.retries && !u.models) return [];
  const records = (Array.isArray(result.metadata.modelRequests) ? (result.metadata.modelRequests as RetriedRecord[]) : []).filter((r) => r.retry);
  const what = (r: RetriedRecord): string => {
    const model = r.requestModel ? codeName(r.requestModel) : "the model";
    const answer = `${model} answered ${r.status ?? "?"} (${r.retry!.reason.replace("_", "-")})`;
    if (r.retry!.next === "retry") return `${answer}: retried after ${((r.retry!.waitMs ?? 0) / 1000).toFixed(1)} s`;
    if (r.retry!.next === "fallback") return `${answer}: sent to the next fallback model`;
    return `${answer}: the gateway gave up; the agent's request failed`;
  };
  const lines = records.slice(0, MAX_RETRY_LINES).map((r) => `- ${what(r)}`);
  if (records.length > MAX_RETRY_LINES) lines.push(`- … and ${records.length - MAX_RETRY_LINES} more (all in the trace)`);
  const models = Object.entries(u.models ?? {}).map(
    ([m, s]) => `| ${codeName(m, "table-cell")}${s.fallback ? " (fallback)" : ""} | ${int(s.requests)} | ${s.costUsd !== undefined ? `$${s.costUsd.toFixed(4)}` : "unknown"} |`,
  );
  return [
    "### Rate limits",
    "",
    ...lines,
    ...(lines.length ? [""] : []),
    ...(models.length ? ["| Model | Requests served | Cost |", "|---|---:|---:|", ...models, ""] : []),
  ];
}

/** Links to the run's artifacts; the run artifact holds the readable transcript. */
function artifactList(result: RunResult): string[] {
  if (!result.artifacts.length) return [];
  const what = (name: string) =>
    name.startsWith("agent-session-")
      ? "session state, resumed by `session: continue` on this thread"
      : "transcript (`transcript.html`, `transcript.md`), trace, patch, `result.json` and the agent's `outputs/`";
  return [
    "### Artifacts",
    "",
    ...result.artifacts.map((a) => `- ${a.url ? `[${escapeCell(a.name)}](${a.url})` : codeName(a.name)} — ${what(a.name)}`),
    "",
  ];
}
