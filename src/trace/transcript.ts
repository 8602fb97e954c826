/**
 * Human-readable transcripts of a run (transcript.md and a self-contained
 * transcript.html), built from the normalized events of trace.jsonl.
 *
 * The primary API streams: `writeTranscriptHtml` / `writeTranscriptMarkdown`
 * read events from an (async) iterable and write to a `Writable`, honouring
 * back-pressure. Memory stays bounded however long the trace is:
 *  - every tool input/output, text and error is cut to `maxToolOutputBytes`
 *    (head and tail kept, with a note pointing to trace.jsonl);
 *  - events that follow a tool call still waiting for its result are held
 *    back only up to `maxBufferedBytes`; beyond that the call is written
 *    without its result and the result is shown where it arrives;
 *  - after `maxTotalBytes` of output the rest of the conversation is omitted
 *    (a note says so); the final result and the footer are still written.
 *
 * `renderTranscriptHtml` / `renderTranscriptMarkdown` are synchronous
 * conveniences returning a string.
 */
import { once } from "node:events";
import type { Writable } from "node:stream";
import { addUsage, emptyUsage, type TracedEvent, type Usage } from "../shared/events.js";
import {
  clip,
  safeJson,
  summarizeToolInput,
  toolInputText,
  type RenderContext,
  type ToolCallView,
  type ToolResultView,
  type TranscriptFormatter,
  type TranscriptHeader,
  type TranscriptStats,
  type UsageRun,
} from "./transcript-format.js";
import { htmlFormatter } from "./transcript-html.js";
import { markdownFormatter } from "./transcript-markdown.js";

export type { TranscriptHeader, TranscriptStats } from "./transcript-format.js";
export { escapeHtml } from "./transcript-format.js";

export interface TranscriptOptions {
  /** Per tool input/output (and per text, error, result) limit in UTF-8 bytes. Default 20 KB. */
  maxToolOutputBytes?: number;
  /** Cap on the whole transcript; the rest of the conversation is omitted past it. Default 10 MB. */
  maxTotalBytes?: number;
  /** Output held back behind a tool call awaiting its result. Default 1 MB. */
  maxBufferedBytes?: number;
}

const TRANSCRIPT_DEFAULTS = {
  maxToolOutputBytes: 20 * 1024,
  maxTotalBytes: 10 * 1024 * 1024,
  maxBufferedBytes: 1024 * 1024,
} as const satisfies Required<TranscriptOptions>;

/** Calls still waiting for a result that are remembered for matching. */
const MAX_UNRESOLVED = 2000;

export type TranscriptFormat = "html" | "markdown";

export function renderTranscriptHtml(header: TranscriptHeader, events: Iterable<TracedEvent>, options?: TranscriptOptions): string {
  return renderSync(htmlFormatter, header, events, options);
}

export function renderTranscriptMarkdown(header: TranscriptHeader, events: Iterable<TracedEvent>, options?: TranscriptOptions): string {
  return renderSync(markdownFormatter, header, events, options);
}

/**
 * Stream a transcript (self-contained HTML, or Markdown) into `out`. The
 * stream is not ended: the caller owns it (end it and await 'finish' for a file).
 */
export function writeTranscript(
  format: TranscriptFormat,
  out: Writable,
  header: TranscriptHeader,
  events: AsyncIterable<TracedEvent> | Iterable<TracedEvent>,
  options?: TranscriptOptions,
): Promise<TranscriptStats> {
  return writeStreaming(format === "html" ? htmlFormatter : markdownFormatter, out, header, events, options);
}

/** Everything a formatter was handed, as text: what its `plain` shows when the method threw. */
function argumentText(args: readonly unknown[]): string {
  const parts: string[] = [];
  for (const a of args) {
    if (typeof a === "string") parts.push(a);
    else if (a && typeof a === "object" && "head" in a && typeof a.head === "string") {
      const c = a as { head: string; tail?: string; truncated?: boolean };
      parts.push(c.truncated ? `${c.head}\n…\n${c.tail ?? ""}` : c.head);
    } else if (a && typeof a === "object" && !("header" in a)) parts.push(safeJson(a, 2));
  }
  return parts.filter((p) => p !== "").join("\n");
}

/**
 * `fmt` with every method guarded: one that throws (a renderer that gives up
 * on hostile text) yields that part as escaped plain text, and the rest of
 * the transcript, its closing tags included, is still written.
 */
function guarded(fmt: TranscriptFormatter): TranscriptFormatter {
  const out = { ...fmt } as Record<string, unknown>;
  for (const [name, method] of Object.entries(fmt)) {
    if (typeof method !== "function" || name === "plain") continue;
    out[name] = (...args: unknown[]): string => {
      try {
        return (method as (...a: unknown[]) => string).apply(fmt, args);
      } catch (e) {
        const ctx = args.find((a): a is RenderContext => typeof a === "object" && a !== null && "header" in a);
        return fmt.plain(`This part could not be rendered (${e instanceof Error ? e.message : String(e)}); as plain text:`, argumentText(args), ctx!);
      }
    };
  }
  return out as unknown as TranscriptFormatter;
}

function renderSync(fmt: TranscriptFormatter, header: TranscriptHeader, events: Iterable<TracedEvent>, options?: TranscriptOptions): string {
  const parts: string[] = [];
  const asm = new TranscriptAssembler(guarded(fmt), header, options, (s) => parts.push(s));
  asm.begin();
  for (const ev of events) asm.pushSafely(ev);
  asm.finish();
  return parts.join("");
}

async function writeStreaming(
  fmt: TranscriptFormatter,
  out: Writable,
  header: TranscriptHeader,
  events: AsyncIterable<TracedEvent> | Iterable<TracedEvent>,
  options?: TranscriptOptions,
): Promise<TranscriptStats> {
  const [stats] = await writeAll([{ fmt, out }], header, batches(events), options);
  return stats!;
}

export interface TranscriptTarget {
  format: TranscriptFormat;
  out: Writable;
}

/**
 * Several transcripts (one per target) from one pass over the events, which
 * come in batches (one per read of the trace file): a trace of hundreds of
 * megabytes is read and parsed once, not once per format.
 */
export function writeTranscripts(
  targets: TranscriptTarget[],
  header: TranscriptHeader,
  events: AsyncIterable<TracedEvent[]>,
  options?: TranscriptOptions,
): Promise<TranscriptStats[]> {
  return writeAll(
    targets.map((t) => ({ fmt: t.format === "html" ? htmlFormatter : markdownFormatter, out: t.out })),
    header,
    events,
    options,
  );
}

async function* batches(events: AsyncIterable<TracedEvent> | Iterable<TracedEvent>): AsyncGenerator<TracedEvent[]> {
  for await (const ev of events) yield [ev];
}

async function writeAll(
  targets: Array<{ fmt: TranscriptFormatter; out: Writable }>,
  header: TranscriptHeader,
  events: AsyncIterable<TracedEvent[]>,
  options?: TranscriptOptions,
): Promise<TranscriptStats[]> {
  const sinks = targets.map(({ fmt, out }) => {
    const sink = { out, pending: [] as string[], asm: undefined as unknown as TranscriptAssembler };
    sink.asm = new TranscriptAssembler(guarded(fmt), header, options, (s) => sink.pending.push(s));
    return sink;
  });
  const flush = async () => {
    for (const sink of sinks) {
      if (sink.pending.length === 0) continue;
      const { out } = sink;
      const chunk = sink.pending.join("");
      sink.pending = [];
      if (out.errored) throw out.errored;
      if (out.destroyed || out.writableEnded) throw new Error("transcript: the output stream was closed before the transcript was complete");
      // once() rejects if the stream errors while we wait.
      if (!out.write(chunk)) await once(out, "drain");
    }
  };
  for (const sink of sinks) sink.asm.begin();
  await flush();
  for await (const batch of events) {
    for (const ev of batch) for (const sink of sinks) sink.asm.pushSafely(ev);
    await flush();
  }
  for (const sink of sinks) sink.asm.finish();
  await flush();
  return sinks.map((sink) => sink.asm.stats);
}

// ---------------------------------------------------------------------------

interface CallState {
  view: ToolCallView;
  /** Set once a result matched. */
  result?: ToolResultView;
  /** Written before its result arrived. */
  deferred: boolean;
}

type QueueItem = { kind: "chunk"; text: string; bytes: number } | { kind: "call"; call: CallState; bytes: number };

/**
 * Turns events into formatter chunks, in order. Tool calls are held until
 * their result arrives so both render together; whatever follows a waiting
 * call queues behind it (bounded, see maxBufferedBytes).
 */
class TranscriptAssembler {
  readonly stats: TranscriptStats = {
    events: 0,
    toolCalls: 0,
    failedToolCalls: 0,
    errors: 0,
    truncatedItems: 0,
    capped: false,
    omittedEvents: 0,
    bytes: 0,
  };
  private readonly ctx: RenderContext;
  private readonly maxBuffered: number;
  private readonly queue: QueueItem[] = [];
  private queuedBytes = 0;
  /** Calls without a result yet, oldest first (queued or deferred). */
  private unresolved: CallState[] = [];
  private usageRun: UsageRun | undefined;
  private usageSum: Usage | undefined;
  private usageCumulative: Usage | undefined;
  private lastSession = "";
  private callIndex = 0;

  constructor(
    private readonly fmt: TranscriptFormatter,
    header: TranscriptHeader,
    options: TranscriptOptions | undefined,
    private readonly sink: (chunk: string) => void,
  ) {
    const o = { ...TRANSCRIPT_DEFAULTS, ...stripUndefined(options ?? {}) };
    this.ctx = {
      header,
      startMs: Date.parse(header.startedAt),
      maxToolOutputBytes: Math.max(256, o.maxToolOutputBytes),
      maxTotalBytes: o.maxTotalBytes,
    };
    this.maxBuffered = o.maxBufferedBytes;
  }

  begin(): void {
    this.write(this.fmt.begin(this.ctx));
    const prompt = this.ctx.header.prompt;
    if (prompt !== undefined && prompt.trim() !== "") this.enqueue(this.fmt.prompt(this.clip(prompt), this.ctx));
    const attachments = this.ctx.header.attachments;
    if (attachments?.length && this.fmt.attachments) this.enqueue(this.fmt.attachments(attachments, this.ctx));
  }

  /** push, except that an event nothing can render is shown as its JSON, escaped: the rest still renders. */
  pushSafely(ev: TracedEvent): void {
    try {
      this.push(ev);
    } catch (e) {
      this.enqueue(this.fmt.plain(`An event could not be rendered (${e instanceof Error ? e.message : String(e)}); as plain text:`, this.clip(safeJson(ev, 2)).head, this.ctx));
    }
  }

  push(ev: TracedEvent): void {
    this.stats.events++;
    // trace.jsonl is data: tolerate a line that is not an event object.
    if (typeof ev !== "object" || ev === null) return;
    const e = ev as TracedEvent & Record<string, unknown>;
    const ts = typeof e.ts === "string" ? e.ts : "";
    // Counted whether shown or not, so the footer describes the whole run.
    if (e.type === "tool_call") this.stats.toolCalls++;
    else if (e.type === "tool_result" && e.isError === true) this.stats.failedToolCalls++;
    else if (e.type === "error") this.stats.errors++;
    if (this.stats.capped) {
      // Past the size cap only the final result is still shown.
      if (e.type === "result") this.writeAlways(this.renderResult(ev as Extract<TracedEvent, { type: "result" }>, ts));
      else this.stats.omittedEvents++;
      this.trackUsage(ev);
      return;
    }
    if (e.type !== "usage") this.flushUsage();
    switch (ev.type) {
      case "session": {
        const key = `${ev.sessionId}\u0000${ev.model ?? ""}`;
        if (key !== this.lastSession) {
          this.lastSession = key;
          this.enqueue(this.fmt.session({ sessionId: String(ev.sessionId), ...(ev.model ? { model: String(ev.model) } : {}), ts }, this.ctx));
        }
        break;
      }
      case "text":
        if (str(ev.text).trim() !== "") this.enqueue(this.fmt.text(this.clip(str(ev.text)), ts, this.ctx));
        break;
      case "reasoning":
        if (str(ev.text).trim() !== "") this.enqueue(this.fmt.reasoning(this.clip(str(ev.text)), ts, this.ctx));
        break;
      case "tool_call":
        this.toolCall(ev, ts);
        break;
      case "tool_result":
        this.toolResult(ev, ts);
        break;
      case "usage": {
        this.trackUsage(ev);
        if (!isUsage(ev.usage)) break;
        const cumulative = ev.cumulative === true;
        const run = this.usageRun;
        if (run && run.cumulative === cumulative) {
          run.count++;
          run.usage = cumulative ? ev.usage : addUsage(run.usage, ev.usage);
        } else {
          this.flushUsage();
          this.usageRun = { count: 1, usage: ev.usage, cumulative, ts };
        }
        break;
      }
      case "permission_denied":
        this.enqueue(this.fmt.permissionDenied({ tool: str(ev.tool), ...(ev.detail ? { detail: str(ev.detail) } : {}), ts }, this.ctx));
        break;
      case "network_blocked":
        this.enqueue(this.fmt.networkBlocked({ host: str(ev.host), ...(ev.detail ? { detail: str(ev.detail) } : {}), ts }, this.ctx));
        break;
      case "error":
        this.enqueue(this.fmt.error(this.clip(str(ev.message)), ts, this.ctx));
        break;
      case "result":
        this.trackUsage(ev);
        this.enqueue(this.renderResult(ev, ts));
        break;
      default: {
        const { raw: _raw, ts: _ts, ...rest } = e;
        this.enqueue(this.fmt.unknown(String(e.type), this.clip(safeJson(rest, 2)), ts, this.ctx));
      }
    }
  }

  finish(): void {
    this.flushUsage();
    // Calls that never got a result render as such; everything behind them follows.
    this.drain(true);
    this.unresolved = [];
    if (this.usageCumulative ?? this.usageSum) this.stats.usage = this.usageCumulative ?? this.usageSum;
    // The footer is always written, cap or not.
    this.writeAlways(this.fmt.end(this.stats, this.ctx));
  }

  // -------------------------------------------------------------------------

  private renderResult(ev: Extract<TracedEvent, { type: "result" }>, ts: string): string {
    const text = typeof ev.text === "string" && ev.text !== "" ? this.clip(ev.text) : undefined;
    return this.fmt.result({ ...ev, ts }, text, this.ctx);
  }

  private toolCall(ev: Extract<TracedEvent, { type: "tool_call" }>, ts: string): void {
    const view: ToolCallView = {
      index: ++this.callIndex,
      ...(typeof ev.id === "string" && ev.id !== "" ? { id: ev.id } : {}),
      name: str(ev.name) || "tool",
      summary: summarizeToolInput(ev.input),
      input: this.clip(toolInputText(ev.input)),
      ts,
    };
    const call: CallState = { view, deferred: false };
    this.unresolved.push(call);
    if (this.unresolved.length > MAX_UNRESOLVED) this.unresolved.shift();
    this.queue.push({ kind: "call", call, bytes: view.input.head.length + view.input.tail.length + 512 });
    this.queuedBytes += this.queue[this.queue.length - 1]!.bytes;
    this.drain(false);
  }

  private toolResult(ev: Extract<TracedEvent, { type: "tool_result" }>, ts: string): void {
    const isError = ev.isError === true;
    const result: ToolResultView = {
      ...(typeof ev.id === "string" && ev.id !== "" ? { id: ev.id } : {}),
      ...(typeof ev.name === "string" && ev.name !== "" ? { name: ev.name } : {}),
      output: this.clip(str(ev.output)),
      isError,
      ts,
    };
    const call = this.match(result);
    if (!call) {
      this.enqueue(this.fmt.lateResult(undefined, result, this.ctx));
      return;
    }
    this.unresolved.splice(this.unresolved.indexOf(call), 1);
    if (call.deferred) {
      this.enqueue(this.fmt.lateResult(call.view, result, this.ctx));
    } else {
      call.result = result;
      this.drain(false);
    }
  }

  /**
   * The call a result belongs to: same id; else (result without id, or an id
   * no call carries) the oldest waiting call, preferring one with the same
   * name and, for a result with an id, one whose call had no id.
   */
  private match(result: ToolResultView): CallState | undefined {
    if (result.id !== undefined) {
      const byId = this.unresolved.find((c) => c.view.id === result.id);
      if (byId) return byId;
    }
    const candidates = result.id !== undefined ? this.unresolved.filter((c) => c.view.id === undefined) : this.unresolved;
    if (result.name !== undefined) {
      const byName = candidates.find((c) => c.view.name === result.name);
      if (byName) return byName;
    }
    return candidates[0];
  }

  private flushUsage(): void {
    const run = this.usageRun;
    if (!run) return;
    this.usageRun = undefined;
    this.enqueue(this.fmt.usage(run, this.ctx));
  }

  private trackUsage(ev: TracedEvent): void {
    if (ev.type === "usage" && isUsage(ev.usage)) {
      if (ev.cumulative) this.usageCumulative = ev.usage;
      else this.usageSum = addUsage(this.usageSum ?? emptyUsage(), ev.usage);
    } else if (ev.type === "result" && isUsage(ev.usage)) {
      // The result's usage is the run's total.
      this.usageCumulative = ev.usage;
    }
  }

  private clip(text: string) {
    const c = clip(text, this.ctx.maxToolOutputBytes);
    if (c.truncated) this.stats.truncatedItems++;
    return c;
  }

  private enqueue(chunk: string): void {
    if (this.queue.length === 0) {
      this.write(chunk);
      return;
    }
    this.queue.push({ kind: "chunk", text: chunk, bytes: chunk.length });
    this.queuedBytes += chunk.length;
    this.drain(false);
  }

  /**
   * Write out the queue's head while it is ready. When too much is held back
   * (or at the end), a waiting call is written without its result.
   */
  private drain(final: boolean): void {
    while (this.queue.length > 0) {
      const item = this.queue[0]!;
      if (item.kind === "call" && !item.call.result) {
        if (!final && this.queuedBytes <= this.maxBuffered) return;
      }
      this.queue.shift();
      this.queuedBytes -= item.bytes;
      if (item.kind === "chunk") {
        this.write(item.text);
        continue;
      }
      const call = item.call;
      if (call.result) {
        this.write(this.fmt.toolCall(call.view, { kind: "done", result: call.result }, this.ctx));
      } else if (final) {
        this.write(this.fmt.toolCall(call.view, { kind: "missing" }, this.ctx));
      } else {
        call.deferred = true;
        this.write(this.fmt.toolCall(call.view, { kind: "deferred" }, this.ctx));
        // Only what a late result needs is kept.
        call.view = { ...call.view, input: clip("", 1) };
      }
    }
  }

  /** Write a chunk unless the size cap is reached; at the cap, write the note once. */
  private write(chunk: string): void {
    if (this.stats.capped) return;
    const bytes = Buffer.byteLength(chunk, "utf8");
    if (this.stats.bytes + bytes > this.ctx.maxTotalBytes && this.stats.bytes > 0) {
      this.stats.capped = true;
      this.queue.length = 0;
      this.queuedBytes = 0;
      this.writeAlways(this.fmt.capNote(this.ctx));
      return;
    }
    this.stats.bytes += bytes;
    this.sink(chunk);
  }

  /** Write past the cap: the note, the final result and the footer (each bounded). */
  private writeAlways(chunk: string): void {
    this.stats.bytes += Buffer.byteLength(chunk, "utf8");
    this.sink(chunk);
  }
}

function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : safeJson(v);
}

function isUsage(u: unknown): u is Usage {
  if (typeof u !== "object" || u === null) return false;
  const o = u as Record<string, unknown>;
  return typeof o.inputTokens === "number" && typeof o.outputTokens === "number" && typeof o.cachedTokens === "number";
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
