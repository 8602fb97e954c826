/**
 * A past run as `agent-runner show` and `agent-runner logs` print it: read
 * from a results folder (the CLI's, or a downloaded run artifact) and turned
 * into one row of the same columns: conclusion, agent, model, duration, cost,
 * tools, changed files, delivery. result.json comes from an artifact a job
 * with agent code wrote, so it is validated, and only the fields shown are used.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as z from "../shared/zod.js";
import { RESULTS_FILES } from "../constants.js";
import { ConfigurationError } from "../errors.js";
import { readTraceEvents } from "../trace/transcript-files.js";
import { formatCost, formatDuration } from "../trace/transcript-format.js";
import { terminalText } from "./terminal.js";
import { CONCLUSION_OUTPUTS } from "../result.js";
import { byCodeUnits } from "../shared/plain-format.js";

const Usage = z.object({ inputTokens: z.number(), outputTokens: z.number(), cachedTokens: z.number(), costUsd: z.optional(z.number()) });

/** The part of result.json a row shows. */
const RunResultShape = z.object({
  conclusion: z.string(),
  reason: z.optional(z.string()),
  agentName: z.string(),
  agentBackend: z.string(),
  agentVersion: z.optional(z.string()),
  model: z.optional(z.string()),
  sandboxBackend: z.optional(z.string()),
  durationMs: z.number(),
  startedAt: z.optional(z.string()),
  toolCalls: z.optional(z.number()),
  sessionId: z.optional(z.string()),
  usage: Usage,
  diff: z.object({ changedFiles: z.array(z.string()), patchPath: z.optional(z.string()) }),
});
export type RunResultShape = z.infer<typeof RunResultShape>;

/** outputs.json (the CLI writes it; delivery outputs when the action delivered). */
const OutputsShape = z.record(z.string(), z.string());

export interface RunRow {
  /** Which run: a workflow run id, an artifact name or a folder. */
  run: string;
  started?: string;
  conclusion: string;
  reason?: string;
  agent: string;
  agentVersion?: string;
  model?: string;
  durationMs: number;
  tokens: z.infer<typeof Usage>;
  costUsd?: number;
  /** Tool calls, total and by tool name (from trace.jsonl when present). */
  tools: number;
  toolNames: Record<string, number>;
  changedFiles: string[];
  delivery?: string;
}

/** result.json (+ outputs.json, trace.jsonl) of a results folder as a row. */
export async function readRunRow(dir: string, run: string): Promise<RunRow> {
  const result = await readResult(dir);
  const outputs = await readOptionalJson(path.join(dir, "outputs.json"), OutputsShape);
  const toolNames = await countTools(path.join(dir, RESULTS_FILES.trace));
  const counted = Object.values(toolNames).reduce((a, b) => a + b, 0);
  return {
    run,
    ...(result.startedAt ? { started: result.startedAt } : {}),
    // outputs.json (a CLI run's folder) holds the verdict, checks and delivery included; a run artifact
    // is uploaded before delivery and has only the agent run's own conclusion.
    conclusion: verdictOf(outputs) ?? result.conclusion,
    ...(result.reason ? { reason: result.reason } : {}),
    agent: result.agentName,
    ...(result.agentVersion && result.agentVersion !== "n/a" ? { agentVersion: result.agentVersion } : {}),
    ...(result.model ? { model: result.model } : {}),
    durationMs: result.durationMs,
    tokens: result.usage,
    ...(result.usage.costUsd !== undefined ? { costUsd: result.usage.costUsd } : {}),
    tools: result.toolCalls ?? counted,
    toolNames,
    changedFiles: result.diff.changedFiles,
    ...(outputs ? deliveryOf(outputs) : {}),
  };
}

export async function readResult(dir: string): Promise<RunResultShape> {
  const file = path.join(dir, RESULTS_FILES.result);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new ConfigurationError(`${dir} has no ${RESULTS_FILES.result}: give a run's results folder or its artifact zip (agent-run-<run id>-<attempt>).`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ConfigurationError(`${file} is not valid JSON.`);
  }
  const parsed = RunResultShape.safeParse(doc);
  if (!parsed.success) throw new ConfigurationError(`${file} is not an Agent Runner result (${parsed.error.issues[0]?.path.join(".") || "shape"} is missing or wrong).`);
  return parsed.data;
}

async function readOptionalJson<T>(file: string, shape: z.ZodMiniType<T>): Promise<T | undefined> {
  try {
    const parsed = shape.safeParse(JSON.parse(await readFile(file, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

async function countTools(traceFile: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  try {
    for await (const e of readTraceEvents(traceFile)) {
      if (e.type !== "tool_call") continue;
      const name = typeof e.name === "string" && e.name ? e.name : "tool";
      counts[name] = (counts[name] ?? 0) + 1;
    }
  } catch {
    // No trace: the total from result.json stands alone.
  }
  return counts;
}

/** The `conclusion` output, when it is one of its values (outputs.json is read as hostile like the rest). */
function verdictOf(outputs: Record<string, string> | undefined): string | undefined {
  const said = outputs?.["conclusion"];
  return said !== undefined && (CONCLUSION_OUTPUTS as readonly string[]).includes(said) ? said : undefined;
}

/** What was delivered, from the step's outputs: a pull request, a commit, a comment. */
function deliveryOf(outputs: Record<string, string>): { delivery?: string } {
  if (outputs["pull-request-url"]) return { delivery: `pull request ${outputs["pull-request-url"]}` };
  if (outputs["commit-sha"]) return { delivery: `commit ${outputs["commit-sha"].slice(0, 12)}${outputs.branch ? ` on ${outputs.branch}` : ""}` };
  if (outputs["comment-url"]) return { delivery: `comment ${outputs["comment-url"]}` };
  return {};
}

// ------------------------------------------------------------------ printing

export function costText(row: Pick<RunRow, "costUsd">): string {
  return row.costUsd !== undefined ? formatCost(row.costUsd) : "unknown";
}

function toolsText(row: RunRow): string {
  const names = Object.entries(row.toolNames)
    .sort((a, b) => b[1] - a[1] || byCodeUnits(a[0], b[0]))
    .map(([n, c]) => `${n} ${c}`);
  return `${row.tools}${names.length ? ` (${names.join(", ")})` : ""}`;
}

/** `show`: one line per field. */
export function showLines(row: RunRow, transcript: string | undefined): string[] {
  const files = row.changedFiles;
  const fields: [string, string][] = [
    ["conclusion", `${row.conclusion}${row.reason ? ` (${row.reason})` : ""}`],
    ["agent", `${row.agent}${row.agentVersion ? ` ${row.agentVersion}` : ""}`],
    ["model", row.model ?? "default"],
    ["started", row.started ?? "unknown"],
    ["duration", formatDuration(row.durationMs)],
    ["tokens", `${row.tokens.inputTokens} in · ${row.tokens.outputTokens} out · ${row.tokens.cachedTokens} cached`],
    ["cost", costText(row)],
    ["tools", toolsText(row)],
    ["changed files", files.length ? `${files.length}: ${files.slice(0, 20).join(", ")}${files.length > 20 ? `, … ${files.length - 20} more` : ""}` : "none"],
    ["delivery", row.delivery ?? "not recorded in the results (the action delivers after uploading the artifact; see the run's job summary)"],
    ...(transcript ? ([["transcript", transcript]] as [string, string][]) : []),
  ];
  const width = Math.max(...fields.map(([k]) => k.length)) + 2;
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width)}${v}`);
}

export const TABLE_COLUMNS = ["run", "started", "conclusion", "agent", "model", "duration", "cost", "tools", "files", "delivery"] as const;

/** `logs`: the rows as a plain-text table, widths fitted to the content. */
export function tableLines(rows: RunRow[]): string[] {
  // Escaped before the widths are measured (what a run wrote: cli/terminal.ts); written through the door again.
  const cells = rows.map((r) => [
    r.run,
    r.started ? r.started.replace("T", " ").replace(/\.\d+Z$|Z$/, "") : "",
    r.conclusion,
    r.agent,
    r.model ?? "default",
    formatDuration(r.durationMs),
    costText(r),
    String(r.tools),
    String(r.changedFiles.length),
    r.delivery ?? "-",
  ].map(terminalText));
  const header = TABLE_COLUMNS.map((c) => c.toUpperCase());
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]) => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!))).join("  ");
  return [line(header), ...cells.map(line)];
}

export interface RunTotals {
  runs: number;
  succeeded: number;
  /** succeeded / runs, 0..1 (0 when there are no runs). */
  successRate: number;
  /** Sum over the runs whose cost is known. */
  costUsd: number;
  costKnownRuns: number;
}

export function totalsOf(rows: RunRow[]): RunTotals {
  const succeeded = rows.filter((r) => r.conclusion === "success").length;
  const known = rows.filter((r) => r.costUsd !== undefined);
  return {
    runs: rows.length,
    succeeded,
    successRate: rows.length ? succeeded / rows.length : 0,
    costUsd: known.reduce((a, r) => a + (r.costUsd ?? 0), 0),
    costKnownRuns: known.length,
  };
}

export function totalsLine(t: RunTotals): string {
  const rate = t.runs ? `${Math.round(t.successRate * 100)}%` : "—";
  const cost = t.costKnownRuns ? `${formatCost(t.costUsd)}${t.costKnownRuns < t.runs ? ` (known for ${t.costKnownRuns} of ${t.runs} runs)` : ""}` : "unknown";
  return `runs: ${t.runs}  success rate: ${rate} (${t.succeeded}/${t.runs})  cost: ${cost}`;
}
