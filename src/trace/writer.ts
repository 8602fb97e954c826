/**
 * Writes the run's trace files while the agent runs: raw stdout lines, raw
 * stderr, and normalized events — all redacted before they touch the disk.
 */
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import path from "node:path";
import { once } from "node:events";
import { RESULTS_FILES } from "../constants.js";
import type { AgentEvent, TracedEvent } from "../shared/events.js";
import type { Redactor } from "../shared/redact.js";

/** A raw line longer than this is cut in the trace (the CLI's stdout file keeps it whole). */
const RAW_IN_EVENT_LIMIT = 16 * 1024;

/** trace.jsonl is written in pieces of about this many characters: a write per event costs more than the event. */
const TRACE_BATCH_CHARS = 256 * 1024;

/** Bytes a trace file may hold unwritten before the agent's output is paused (bounds memory). */
const WRITE_MARK = 1024 * 1024;

export class TraceWriter {
  private readonly stdout: WriteStream;
  private readonly stderr: WriteStream;
  private readonly trace: WriteStream;
  private stderrPending = "";
  private stderrTail = "";

  constructor(
    readonly dir: string,
    private readonly redactor: Redactor,
  ) {
    mkdirSync(path.join(dir, "raw"), { recursive: true });
    // The agent is paused while a file is over its mark: a mark of a few pipe reads lets the disk
    // write one piece while the next is read, instead of stopping the agent at every read.
    this.stdout = createWriteStream(path.join(dir, RESULTS_FILES.stdout), { highWaterMark: WRITE_MARK });
    this.stderr = createWriteStream(path.join(dir, RESULTS_FILES.stderr));
    this.trace = createWriteStream(path.join(dir, RESULTS_FILES.trace), { highWaterMark: WRITE_MARK });
  }

  /** Lines of trace.jsonl not yet handed to the file: one write per stdout read, not per event. */
  private tracePending: string[] = [];
  private tracePendingChars = 0;

  /**
   * Whole lines of stdout (each ending with a line end), redacted and written
   * as one. The block is cut at line ends only, so every match a line holds is
   * a match in the block (one pass instead of one per line); like stderr's
   * blocks, a match may also span a line end (a multi-line secret whole).
   */
  stdoutBlock(text: string): void {
    this.stdout.write(this.redactor.redact(text));
  }

  /** Redacts whole lines, so a secret split across chunks is still caught. */
  stderrChunk(chunk: string): void {
    const text = this.stderrPending + chunk;
    const cut = text.lastIndexOf("\n");
    if (cut === -1) {
      this.stderrPending = text.length > 1 << 20 ? (this.flushStderr(text), "") : text;
      return;
    }
    this.flushStderr(text.slice(0, cut + 1));
    this.stderrPending = text.slice(cut + 1);
  }

  private flushStderr(text: string): void {
    const clean = this.redactor.redact(text);
    this.stderr.write(clean);
    this.stderrTail = (this.stderrTail + clean).slice(-4000);
  }

  /** Last lines of stderr (redacted), for one-line failure reasons. */
  lastStderr(): string {
    return (this.stderrTail + this.redactor.redact(this.stderrPending)).trim();
  }

  event(e: AgentEvent, raw?: string): TracedEvent {
    // A plain-text line (the command agent's output) is its own raw form: keep it once.
    const keepRaw = raw !== undefined && !(e.type === "text" && e.text === raw);
    const traced: TracedEvent = this.redactor.redactValue({
      ts: new Date().toISOString(),
      ...e,
      ...(keepRaw ? { raw: raw.length > RAW_IN_EVENT_LIMIT ? `${raw.slice(0, RAW_IN_EVENT_LIMIT)}…` : raw } : {}),
    });
    const line = JSON.stringify(traced) + "\n";
    this.tracePending.push(line);
    this.tracePendingChars += line.length;
    if (this.tracePendingChars >= TRACE_BATCH_CHARS) this.flush();
    return traced;
  }

  /** Hands the buffered trace.jsonl lines to the file (after each stdout read, and before closing). */
  flush(): void {
    if (!this.tracePending.length) return;
    this.trace.write(this.tracePending.join(""));
    this.tracePending = [];
    this.tracePendingChars = 0;
  }

  /** True while a file's write buffer is over its high-water mark. */
  full(): boolean {
    this.flush();
    return this.stdout.writableNeedDrain || this.trace.writableNeedDrain;
  }

  async drained(): Promise<void> {
    await Promise.all([this.stdout, this.trace].filter((s) => s.writableNeedDrain).map((s) => once(s, "drain")));
  }

  async close(): Promise<void> {
    this.flush();
    if (this.stderrPending) this.flushStderr(this.stderrPending);
    this.stderrPending = "";
    await Promise.all(
      [this.stdout, this.stderr, this.trace].map(async (s) => {
        s.end();
        if (!s.closed) await once(s, "close");
      }),
    );
  }
}
