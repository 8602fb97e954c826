/** The job summary: what happened, in a table a reviewer reads in five seconds. */
import type { RunResult } from "../result.js";

const ICON: Record<RunResult["conclusion"], string> = {
  success: "✅",
  failure: "❌",
  timeout: "⏱️",
  cancelled: "🚫",
  skipped: "⏭️",
};

export function formatDuration(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** A fence longer than any backtick run inside the text. */
export function fenced(text: string, lang = ""): string {
  let longest = 2;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = "`".repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

export function summaryMarkdown(result: RunResult): string {
  // The transcript's header, as a table: agent, model, duration, tokens, cost, conclusion.
  const u = result.usage;
  const rows: [string, string][] = [
    ["Conclusion", `${ICON[result.conclusion]} ${result.conclusion}${result.reason ? ` — ${escapeCell(result.reason)}` : ""}`],
    ["Agent", `${result.agentName}${result.agentVersion && result.agentVersion !== "n/a" ? ` ${result.agentVersion}` : ""}`],
    ["Model", result.model ? `\`${escapeCell(result.model)}\`` : "default"],
    ["Sandbox", result.sandboxBackend],
    ["Duration", formatDuration(result.durationMs)],
    ["Tokens", `${u.inputTokens} in · ${u.outputTokens} out · ${u.cachedTokens} cached`],
    ["Cost", u.costUsd !== undefined ? `$${u.costUsd.toFixed(4)}` : "unknown"],
  ];
  if (u.requests !== undefined) rows.push(["Model requests", String(u.requests)]);
  if (result.budgetExceeded) rows.push(["Budget", "⛔ exceeded: the model gateway stopped the agent's model requests (see Conclusion)"]);
  if (result.sessionId) rows.push(["Session", `\`${result.sessionId}\``]);
  if (result.networkBlocked) rows.push(["Network attempts blocked", String(result.networkBlocked)]);
  if (result.permissionDenials.length) rows.push(["Permission denials", String(result.permissionDenials.length)]);

  const files = result.diff.changedFiles;
  return [
    "## Agent Runner",
    "",
    "| | |",
    "|---|---|",
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    "",
    ...usageTable(result),
    ...artifactList(result),
    `### Changed files (${files.length})`,
    "",
    files.length ? files.slice(0, 200).map((f) => `- \`${f}\``).join("\n") + (files.length > 200 ? `\n- … and ${files.length - 200} more` : "") : "_No changes._",
    "",
    "### Final message",
    "",
    result.output ? fenced(result.output.slice(0, 20_000), "text") : "_The agent gave no final message._",
    "",
  ].join("\n");
}

const int = (n: number) => n.toLocaleString("en-US");

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
    ...result.artifacts.map((a) => `- ${a.url ? `[${escapeCell(a.name)}](${a.url})` : `\`${a.name}\``} — ${what(a.name)}`),
    "",
  ];
}
