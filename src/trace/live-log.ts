/** One readable line per event for the Actions log: tool calls on one line each. */
import { oneLine } from "../text.js";
import type { AgentEvent } from "../shared/events.js";
import { groupDigits } from "../shared/plain-format.js";

const WIDTH = 200;


function describeInput(input: unknown): string {
  if (input && typeof input === "object") {
    const o = input as Record<string, unknown>;
    for (const key of ["command", "cmd", "file_path", "filePath", "path", "pattern", "url", "query"]) {
      const v = o[key];
      if (typeof v === "string" || Array.isArray(v)) return oneLine(Array.isArray(v) ? v.join(" ") : v, WIDTH);
    }
    return oneLine(JSON.stringify(input), WIDTH);
  }
  return oneLine(String(input ?? ""), WIDTH);
}

export function formatEvent(e: AgentEvent): string | undefined {
  switch (e.type) {
    case "session":
      return `session ${e.sessionId}${e.model ? ` (model ${e.model})` : ""}`;
    case "text":
      return `💬 ${oneLine(e.text, 400)}`;
    case "reasoning":
      return undefined;
    case "tool_call":
      return `🔧 ${e.name}: ${describeInput(e.input)}`;
    case "tool_result":
      return e.isError ? `   ✗ ${oneLine(e.output, WIDTH)}` : undefined;
    case "usage":
      return undefined;
    case "permission_denied":
      return `⛔ permission denied: ${e.tool}${e.detail ? ` (${oneLine(e.detail, WIDTH)})` : ""}`;
    case "network_blocked":
      return `⛔ network blocked: ${e.host}`;
    case "error":
      return `❗ ${oneLine(e.message, 400)}`;
    case "result":
      return e.isError ? `✗ finished with an error: ${e.reason ?? ""}` : "✓ finished";
  }
}

/** Whether formatEvent gives `e` a line, without making it. */
function hasLine(e: AgentEvent): boolean {
  return e.type !== "reasoning" && e.type !== "usage" && (e.type !== "tool_result" || e.isError === true);
}

/** Characters of ordinary event lines the live log shows (a long agent's run is well under it). */
const LIVE_LOG_BUDGET = 2 * 1024 * 1024;

/** Lines that say a run went wrong or ended: still shown past the budget, up to this much more. */
const IMPORTANT_BUDGET = 512 * 1024;
const IMPORTANT: ReadonlySet<AgentEvent["type"]> = new Set(["error", "permission_denied", "network_blocked", "result"]);

/**
 * The Actions log as the events arrive, bounded: a stream of hundreds of
 * megabytes would otherwise be copied line by line into the job's log, where
 * nobody reads it and writing it costs more than tracing it. Past the budget
 * only the lines that say something went wrong (or the run ended) are shown;
 * every event stays in trace.jsonl and the transcripts.
 */
export class LiveLog {
  private shown = 0;
  private important = 0;
  private leftOut = 0;

  constructor(
    private readonly info: (line: string) => void,
    private readonly budget = LIVE_LOG_BUDGET,
    private readonly importantBudget = IMPORTANT_BUDGET,
  ) {}

  event(e: AgentEvent): void {
    const over = this.shown >= this.budget;
    if (over && (!IMPORTANT.has(e.type) || this.important >= this.importantBudget)) {
      if (hasLine(e)) this.leftOut++;
      return;
    }
    const line = formatEvent(e);
    if (line === undefined) return;
    if (over) this.important += line.length;
    else this.shown += line.length;
    this.info(line);
    if (!over && this.shown >= this.budget)
      this.info("… The live log stops here except for errors, refusals and the result; every event is in trace.jsonl and the transcripts.");
  }

  /** Says how many lines were left out, once the stream is over. */
  end(): void {
    if (this.leftOut) this.info(`… ${groupDigits(this.leftOut)} event line(s) left out of the live log (all are in trace.jsonl and the transcripts).`);
  }
}
