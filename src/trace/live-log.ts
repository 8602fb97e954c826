/** One readable line per event for the Actions log: tool calls on one line each. */
import { oneLine } from "../text.js";
import type { AgentEvent } from "../shared/events.js";

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
