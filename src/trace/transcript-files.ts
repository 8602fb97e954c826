/**
 * Writes transcript.md and transcript.html into the results folder once a run
 * is over. trace.jsonl is streamed (one pass per format), never loaded whole,
 * so a trace of hundreds of megabytes renders in bounded memory; the
 * renderers cap the transcripts themselves.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import { open } from "node:fs/promises";
import path from "node:path";
import { RESULTS_FILES } from "../constants.js";
import type { RunResult } from "../result.js";
import type { TracedEvent } from "../shared/events.js";
import type { Redactor } from "../shared/redact.js";
import type { TranscriptAttachment, TranscriptPatch } from "./transcript-format.js";
import { writeTranscripts, type TranscriptFormat, type TranscriptHeader, type TranscriptStats } from "./transcript.js";

/** How much of patch.diff the transcripts show; the whole patch is always in patch.diff. */
export const TRANSCRIPT_PATCH_LIMIT = 1024 * 1024;

/** The header both transcripts (and the job summary) show. */
function transcriptHeader(result: RunResult, prompt?: string, patch?: TranscriptPatch): TranscriptHeader {
  return {
    agent: result.agentName,
    backend: result.agentBackend,
    ...(result.model ? { model: result.model } : {}),
    sandbox: result.sandboxBackend,
    conclusion: result.conclusion,
    ...(result.reason ? { reason: result.reason } : {}),
    durationMs: result.durationMs,
    usage: result.usage,
    ...(result.sessionId ? { sessionId: result.sessionId } : {}),
    startedAt: result.startedAt,
    ...(prompt ? { prompt } : {}),
    ...(patch ? { patch } : {}),
  };
}

/** The head of patch.diff (redacted when it was written), or undefined when there is none. */
export async function readTranscriptPatch(file: string, files: string[], limit = TRANSCRIPT_PATCH_LIMIT): Promise<TranscriptPatch | undefined> {
  let fh;
  try {
    fh = await open(file, "r");
  } catch {
    return undefined;
  }
  try {
    const { size } = await fh.stat();
    if (size === 0 && files.length === 0) return undefined;
    const buf = Buffer.alloc(Math.min(size, limit));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    let text = buf.subarray(0, bytesRead).toString("utf8");
    const truncated = size > limit;
    // Cut at a line end, so the renderer never sees half a line (or half a character).
    if (truncated) text = text.slice(0, text.lastIndexOf("\n") + 1);
    return { text, truncated, totalBytes: size, files };
  } finally {
    await fh.close();
  }
}

/** Events of a trace.jsonl file, one line at a time; lines that are not JSON objects are skipped. */
export async function* readTraceEvents(file: string): AsyncGenerator<TracedEvent> {
  for await (const batch of readTraceBatches(file)) yield* batch;
}

/**
 * trace.jsonl's events, a batch per read of the file: the lines of a read are
 * split in one go, not one line at a time (the file's own line ends are LF).
 * The reads stay at the stream's default size: much larger strings make
 * joining and splitting them cost more than they save.
 */
async function* readTraceBatches(file: string): AsyncGenerator<TracedEvent[]> {
  let pending = "";
  const parseLines = (text: string): TracedEvent[] => {
    const events: TracedEvent[] = [];
    for (const line of text.split("\n")) {
      const event = parseTraceLine(line);
      if (event) events.push(event);
    }
    return events;
  };
  for await (const chunk of createReadStream(file, { encoding: "utf8" })) {
    const text = pending + (chunk as string);
    const cut = text.lastIndexOf("\n");
    if (cut === -1) {
      pending = text;
      continue;
    }
    pending = text.slice(cut + 1);
    const events = parseLines(text.slice(0, cut));
    if (events.length) yield events;
  }
  const last = parseLines(pending);
  if (last.length) yield last;
}

/** One line of trace.jsonl as an event, or undefined (blank, not JSON, not an event object). */
function parseTraceLine(line: string): TracedEvent | undefined {
  if (!line.trim()) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  return typeof parsed === "object" && parsed !== null && typeof (parsed as { type?: unknown }).type === "string" ? (parsed as TracedEvent) : undefined;
}

export interface TranscriptFiles {
  markdown: TranscriptStats;
  html: TranscriptStats;
}

/**
 * Render both transcripts from `<resultsDir>/trace.jsonl`. The prompt is
 * redacted here; events and the result were redacted when they were written.
 */
export async function writeTranscriptFiles(
  resultsDir: string,
  result: RunResult,
  opts: { prompt?: string; redactor: Redactor; attachments?: TranscriptAttachment[] },
): Promise<TranscriptFiles> {
  const patch = await readTranscriptPatch(result.diff.patchPath, result.diff.changedFiles);
  const header = {
    ...transcriptHeader(result, opts.prompt !== undefined ? opts.redactor.redact(opts.prompt) : undefined, patch),
    ...(opts.attachments?.length ? { attachments: opts.attachments } : {}),
  };
  const trace = path.join(resultsDir, RESULTS_FILES.trace);
  const [markdown, html] = await renderTo(["markdown", "html"], trace, header, [
    path.join(resultsDir, RESULTS_FILES.transcriptMd),
    path.join(resultsDir, RESULTS_FILES.transcriptHtml),
  ]);
  return { markdown: markdown!, html: html! };
}

/** transcript.html from `<resultsDir>/trace.jsonl` into `outFile` (`show`: never the artifact's own copy). */
export async function writeTranscriptHtml(resultsDir: string, result: RunResult, outFile: string): Promise<TranscriptStats> {
  const patch = await readTranscriptPatch(result.diff.patchPath, result.diff.changedFiles);
  const [html] = await renderTo(["html"], path.join(resultsDir, RESULTS_FILES.trace), transcriptHeader(result, undefined, patch), [outFile]);
  return html!;
}

/** Each format into its file, from one read of the trace. */
async function renderTo(formats: TranscriptFormat[], trace: string, header: TranscriptHeader, files: string[]): Promise<TranscriptStats[]> {
  const outs = files.map((file) => createWriteStream(file));
  // Every error of the streams is ours to report: none may reach the process as an unhandled
  // 'error' event (a write still pending when the stream is torn down, ERR_STREAM_DESTROYED).
  let streamError: unknown;
  for (const out of outs) out.on("error", (e) => (streamError ??= e));
  try {
    const targets = formats.map((format, i) => ({ format, out: outs[i]! }));
    const stats = await writeTranscripts(targets, header, readTraceBatches(trace));
    await Promise.all(
      outs.map(async (out) => {
        out.end();
        await once(out, "close");
      }),
    );
    if (streamError) throw streamError;
    return stats;
  } catch (e) {
    for (const out of outs) out.destroy();
    throw e;
  }
}
