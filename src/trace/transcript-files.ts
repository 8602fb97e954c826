/**
 * Writes transcript.md and transcript.html into the results folder once a run
 * is over. trace.jsonl is streamed (one pass per format), never loaded whole,
 * so a trace of hundreds of megabytes renders in bounded memory; the
 * renderers cap the transcripts themselves.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import path from "node:path";
import { createInterface } from "node:readline";
import { RESULTS_FILES } from "../constants.js";
import type { RunResult } from "../result.js";
import type { TracedEvent } from "./events.js";
import type { Redactor } from "./redact.js";
import { writeTranscript, type TranscriptFormat, type TranscriptHeader, type TranscriptStats } from "./transcript.js";

/** The header both transcripts (and the job summary) show. */
function transcriptHeader(result: RunResult, prompt?: string): TranscriptHeader {
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
  };
}

/** Events of a trace.jsonl file, one line at a time; lines that are not JSON objects are skipped. */
export async function* readTraceEvents(file: string): AsyncGenerator<TracedEvent> {
  const lines = createInterface({ input: createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as { type?: unknown }).type === "string") yield parsed as TracedEvent;
  }
}

export interface TranscriptFiles {
  markdown: TranscriptStats;
  html: TranscriptStats;
}

/**
 * Render both transcripts from `<resultsDir>/trace.jsonl`. The prompt is
 * redacted here; events and the result were redacted when they were written.
 */
export async function writeTranscriptFiles(resultsDir: string, result: RunResult, opts: { prompt?: string; redactor: Redactor }): Promise<TranscriptFiles> {
  const header = transcriptHeader(result, opts.prompt !== undefined ? opts.redactor.redact(opts.prompt) : undefined);
  const trace = path.join(resultsDir, RESULTS_FILES.trace);
  const one = async (format: TranscriptFormat, name: string): Promise<TranscriptStats> => {
    const out = createWriteStream(path.join(resultsDir, name));
    try {
      const stats = await writeTranscript(format, out, header, readTraceEvents(trace));
      out.end();
      await once(out, "close");
      return stats;
    } catch (e) {
      out.destroy();
      throw e;
    }
  };
  return {
    markdown: await one("markdown", RESULTS_FILES.transcriptMd),
    html: await one("html", RESULTS_FILES.transcriptHtml),
  };
}
