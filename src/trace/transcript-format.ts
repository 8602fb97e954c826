/**
 * Shared pieces of the transcript renderers (HTML and Markdown): the view
 * model the assembler hands to a formatter, text clipping, cleaning and
 * escaping, and the small number/duration formatters both outputs use.
 */
import type { TranscriptAttachment } from "../shared/attachments.js";
import type { AgentEvent, Usage } from "../shared/events.js";
import { groupDigits } from "../shared/plain-format.js";

/** What the run looked like from outside: written at the top of a transcript. */
export interface TranscriptHeader {
  agent: string;
  backend: string;
  model?: string;
  sandbox?: string;
  conclusion: string;
  reason?: string;
  durationMs: number;
  usage?: Usage;
  sessionId?: string;
  /** ISO timestamp; event times are shown relative to it. */
  startedAt: string;
  prompt?: string;
  /** The run's patch (patch.diff), shown after the conversation. */
  patch?: TranscriptPatch;
  /** Files attached to the task (config/attachments.ts), shown after the prompt. */
  attachments?: TranscriptAttachment[];
}

export type { TranscriptAttachment };

/** patch.diff as the transcripts show it: cut at a size past which a browser page would be unreadable anyway. */
export interface TranscriptPatch {
  /** The diff text (the head of it when truncated). */
  text: string;
  truncated: boolean;
  totalBytes: number;
  /** Every changed path (result.json), also when the diff text is cut. */
  files: string[];
}

/**
 * A piece of text cut to a byte budget. Long text keeps its head and its tail
 * (the end of a test run or a stack trace is usually what matters), with the
 * middle omitted.
 */
export interface Clipped {
  head: string;
  /** Empty unless truncated. */
  tail: string;
  truncated: boolean;
  /** UTF-8 size of the original text. */
  totalBytes: number;
  /** UTF-8 bytes left out between head and tail. */
  omittedBytes: number;
}

export interface ToolCallView {
  /** 1-based position among the transcript's tool calls. */
  index: number;
  id?: string;
  name: string;
  /** One line describing the input (the command, the path, …). */
  summary: string;
  /** Pretty JSON (or the raw string) of the input, clipped. */
  input: Clipped;
  ts: string;
}

export interface ToolResultView {
  id?: string;
  name?: string;
  output: Clipped;
  isError: boolean;
  ts: string;
}

/** Consecutive usage events, folded into one line. */
export interface UsageRun {
  count: number;
  /** Sum of incremental events, or the last cumulative one. */
  usage: Usage;
  cumulative: boolean;
  ts: string;
}

/** Counts cover the whole trace, including events past the size cap. */
export interface TranscriptStats {
  events: number;
  toolCalls: number;
  /** Tool results flagged isError. */
  failedToolCalls: number;
  /** `error` events. */
  errors: number;
  /** Tool inputs/outputs and texts that were cut to the per-item limit. */
  truncatedItems: number;
  /** True when the total size cap was reached. */
  capped: boolean;
  /** Events not rendered because of the cap. */
  omittedEvents: number;
  /** Usage totals seen in the events (last cumulative, else the sum). */
  usage?: Usage;
  /** Bytes written, header and footer included. */
  bytes: number;
}

export interface RenderContext {
  header: TranscriptHeader;
  /** header.startedAt in ms, or NaN. */
  startMs: number;
  maxToolOutputBytes: number;
  maxTotalBytes: number;
}

/** How a tool call ended, as far as the transcript knows when it renders it. */
export type ToolCallState =
  | { kind: "done"; result: ToolResultView }
  /** Rendered before its result arrived (memory bound); the result follows later. */
  | { kind: "deferred" }
  /** The trace ended without a result for it. */
  | { kind: "missing" };

/** One output format. Every method returns a self-contained chunk. */
export interface TranscriptFormatter {
  begin(ctx: RenderContext): string;
  prompt(text: Clipped, ctx: RenderContext): string;
  /** The attachments, after the prompt (optional: formatters without it skip them). */
  attachments?(list: TranscriptAttachment[], ctx: RenderContext): string;
  session(ev: { sessionId: string; model?: string; ts: string }, ctx: RenderContext): string;
  text(text: Clipped, ts: string, ctx: RenderContext): string;
  reasoning(text: Clipped, ts: string, ctx: RenderContext): string;
  toolCall(call: ToolCallView, state: ToolCallState, ctx: RenderContext): string;
  /** A result whose call was already rendered (deferred) or never seen (call undefined). */
  lateResult(call: Pick<ToolCallView, "index" | "name" | "summary"> | undefined, result: ToolResultView, ctx: RenderContext): string;
  usage(run: UsageRun, ctx: RenderContext): string;
  permissionDenied(ev: { tool: string; detail?: string; ts: string }, ctx: RenderContext): string;
  networkBlocked(ev: { host: string; detail?: string; ts: string }, ctx: RenderContext): string;
  error(message: Clipped, ts: string, ctx: RenderContext): string;
  result(ev: Extract<AgentEvent, { type: "result" }> & { ts: string }, text: Clipped | undefined, ctx: RenderContext): string;
  unknown(type: string, json: Clipped, ts: string, ctx: RenderContext): string;
  capNote(ctx: RenderContext): string;
  end(stats: TranscriptStats, ctx: RenderContext): string;
  /** What a method that threw shows instead (src/trace/transcript.ts): the text it was given, escaped, nothing interpreted. */
  plain(label: string, text: string, ctx: RenderContext): string;
}

// ---------------------------------------------------------------------------
// Text

const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
// C0 controls except tab and newline, plus DEL.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/**
 * Make tool output displayable: drop ANSI colour/cursor sequences, turn
 * carriage returns into newlines and other control characters into their
 * visible Unicode "control picture" (NUL → ␀), so nothing invisible or
 * invalid reaches the HTML.
 */
export function cleanText(s: string): string {
  return s
    .replace(ANSI, "")
    .replace(/\r\n?/g, "\n")
    .replace(CONTROL, (c) => (c === "\u007f" ? "\u2421" : String.fromCharCode(0x2400 + c.charCodeAt(0))));
}

/** The first `maxBytes` UTF-8 bytes of `s`, never splitting a character. */
function headBytes(s: string, maxBytes: number): string {
  // Every UTF-16 unit is at least one UTF-8 byte, so this prefix is long enough.
  const cut = Buffer.from(s.slice(0, maxBytes), "utf8").subarray(0, maxBytes).toString("utf8");
  return cut.replace(/\uFFFD$/, "");
}

/** The last `maxBytes` UTF-8 bytes of `s`, never splitting a character. */
function tailBytes(s: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  const buf = Buffer.from(s.slice(-maxBytes), "utf8");
  return buf.subarray(Math.max(0, buf.length - maxBytes)).toString("utf8").replace(/^\uFFFD/, "");
}

/**
 * Cut `raw` to about `maxBytes` UTF-8 bytes (head three quarters, tail one
 * quarter) and clean both parts for display.
 */
export function clip(raw: string, maxBytes: number): Clipped {
  const totalBytes = Buffer.byteLength(raw, "utf8");
  if (totalBytes <= maxBytes) {
    return { head: cleanText(raw), tail: "", truncated: false, totalBytes, omittedBytes: 0 };
  }
  const tailBudget = Math.floor(maxBytes / 4);
  const head = headBytes(raw, maxBytes - tailBudget);
  const tail = tailBytes(raw, tailBudget);
  const shown = Buffer.byteLength(head, "utf8") + Buffer.byteLength(tail, "utf8");
  return { head: cleanText(head), tail: cleanText(tail), truncated: true, totalBytes, omittedBytes: Math.max(0, totalBytes - shown) };
}

/** Full text of a Clipped with a plain-text marker where the middle was omitted. */
export function clippedPlain(c: Clipped): string {
  if (!c.truncated) return c.head;
  return `${c.head}${c.head.endsWith("\n") ? "" : "\n"}${omissionMarker(c)}\n${c.tail}`;
}

export function omissionMarker(c: Clipped): string {
  return `[… ${formatBytes(c.omittedBytes)} omitted …]`;
}

export function truncationNote(c: Clipped, what: string): string {
  return `${what} truncated: showing ${formatBytes(c.totalBytes - c.omittedBytes)} of ${formatBytes(c.totalBytes)}; full text in trace.jsonl.`;
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escape for HTML text and (double- or single-quoted) attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** JSON.stringify that never throws (cycles, BigInt) and never returns undefined. */
export function safeJson(value: unknown, indent?: number): string {
  try {
    const seen = new WeakSet<object>();
    const out = JSON.stringify(
      value,
      (_k, v: unknown) => {
        if (typeof v === "bigint") return v.toString();
        if (typeof v === "object" && v !== null) {
          if (seen.has(v)) return "[Circular]";
          seen.add(v);
        }
        return v;
      },
      indent,
    );
    return out ?? String(value);
  } catch {
    return String(value);
  }
}

/** Pretty text of a tool input: JSON pretty-printed; a string that holds JSON parsed first. */
export function toolInputText(input: unknown): string {
  if (typeof input === "string") {
    const t = input.trim();
    if ((t.startsWith("{") && t.endsWith("}")) || (t.startsWith("[") && t.endsWith("]"))) {
      try {
        return JSON.stringify(JSON.parse(t), null, 2);
      } catch {
        /* not JSON: show as is */
      }
    }
    return input;
  }
  if (input === undefined) return "";
  return safeJson(input, 2);
}

const SUMMARY_KEYS = [
  "command",
  "cmd",
  "pattern",
  "query",
  "file_path",
  "filePath",
  "path",
  "notebook_path",
  "url",
  "description",
  "prompt",
  "subject",
  "name",
];

/** One line saying what a tool call does: its command, path, pattern, … */
export function summarizeToolInput(input: unknown, max = 120): string {
  let s: string;
  if (input === undefined || input === null) s = "";
  else if (typeof input === "string") s = input;
  else if (typeof input !== "object") s = String(input);
  else if (Array.isArray(input)) s = input.every((x) => typeof x === "string") ? input.join(" ") : safeJson(input);
  else {
    const obj = input as Record<string, unknown>;
    const key = SUMMARY_KEYS.find((k) => {
      const v = obj[k];
      return (typeof v === "string" && v.trim() !== "") || (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string"));
    });
    if (key !== undefined) {
      const v = obj[key];
      s = Array.isArray(v) ? (v as string[]).join(" ") : (v as string);
      // Codex wraps commands as ["bash", "-lc", "…"]: show the script.
      if (Array.isArray(v) && v.length === 3 && /(^|\/)(ba|z)?sh$/.test(v[0] as string) && /^-l?c$/.test(v[1] as string)) {
        s = v[2] as string;
      }
      // Grep/Glob: "pattern in path".
      const where = obj["path"] ?? obj["file_path"];
      if (key === "pattern" && typeof where === "string" && where !== "") s = `${s} in ${where}`;
    } else {
      const keys = Object.keys(obj);
      s = keys.length === 0 ? "" : safeJson(obj);
    }
  }
  s = cleanText(s).replace(/\s+/g, " ").trim();
  if (s.length > max) s = `${s.slice(0, max - 1).trimEnd()}…`;
  return s;
}

// ---------------------------------------------------------------------------
// Numbers

export function formatInt(n: number): string {
  return Number.isFinite(n) ? groupDigits(n) : "—";
}

/** "1 tool call", "3 tool calls" */
function plural(n: number, noun: string): string {
  return `${formatInt(n)} ${noun}${n === 1 ? "" : "s"}`;
}

export function formatCost(usd: number): string {
  if (!Number.isFinite(usd)) return "—";
  if (usd === 0) return "$0.00";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}h ${pad(m)}m ${pad(sec)}s` : `${m}m ${pad(sec)}s`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** "+12.3s" from the start of the run; empty when either time is unparseable. */
export function formatOffset(ts: string, startMs: number): string {
  const t = Date.parse(ts);
  if (!Number.isFinite(t) || !Number.isFinite(startMs)) return "";
  const d = Math.max(0, t - startMs) / 1000;
  if (d < 60) return `+${d.toFixed(1)}s`;
  const total = Math.round(d);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `+${h}h${pad(m)}m${pad(s)}s` : `+${m}m${pad(s)}s`;
}

/** "1,234 in · 567 out · 8,900 cached" */
export function formatUsage(u: Usage): string {
  return `${formatInt(u.inputTokens)} in · ${formatInt(u.outputTokens)} out · ${formatInt(u.cachedTokens)} cached`;
}

/** formatUsage, then the cost when known. */
export function usageWithCost(u: Usage): string {
  return `${formatUsage(u)}${u.costUsd !== undefined ? ` · ${formatCost(u.costUsd)}` : ""}`;
}

// ---------------------------------------------------------------------------
// Wording both formats share

export function usageLabel(run: UsageRun): string {
  return run.cumulative ? "Usage so far" : run.count > 1 ? `Usage (${run.count} updates)` : "Usage";
}

/** "3 turns · 1,234 in · …": the final result's turn count and usage, when it has them. */
export function resultMeta(ev: Extract<AgentEvent, { type: "result" }>): string {
  const meta: string[] = [];
  if (typeof ev.numTurns === "number") meta.push(`${formatInt(ev.numTurns)} turn${ev.numTurns === 1 ? "" : "s"}`);
  if (ev.usage) meta.push(usageWithCost(ev.usage));
  return meta.join(" · ");
}

/** The footer's counts line, and what was left out (empty when nothing was). */
export function footerLines(stats: TranscriptStats): { counts: string; omissions: string } {
  const parts = [
    plural(stats.events, "event"),
    `${plural(stats.toolCalls, "tool call")}${stats.failedToolCalls ? ` (${formatInt(stats.failedToolCalls)} failed)` : ""}`,
    plural(stats.errors, "error"),
  ];
  if (stats.usage) parts.push(`tokens from events: ${usageWithCost(stats.usage)}`);
  const notes: string[] = [];
  if (stats.truncatedItems) notes.push(`${formatInt(stats.truncatedItems)} long item${stats.truncatedItems === 1 ? " was" : "s were"} truncated`);
  if (stats.capped) notes.push(`${plural(stats.omittedEvents, "event")} after the size limit not shown`);
  return { counts: parts.join(" · "), omissions: notes.length ? `${notes.join("; ")}; the full trace is in trace.jsonl.` : "" };
}

export type ConclusionKind = "success" | "failure" | "incomplete" | "timeout" | "cancelled" | "skipped" | "other";

export function conclusionKind(conclusion: string): ConclusionKind {
  const c = conclusion.toLowerCase();
  return c === "success" || c === "failure" || c === "incomplete" || c === "timeout" || c === "cancelled" || c === "skipped" ? c : "other";
}
