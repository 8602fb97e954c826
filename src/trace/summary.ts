/**
 * Folds the event stream into what the RunResult needs, in bounded memory:
 * no event is kept, only the running totals and the tail of assistant text.
 */
import { addUsage, emptyUsage, type AgentEvent, type Usage } from "../shared/events.js";

const FINAL_TEXT_LIMIT = 64 * 1024;

export interface EventSummary {
  sessionId?: string;
  model?: string;
  finalMessage: string;
  usage: Usage;
  numTurns: number;
  toolCalls: number;
  permissionDenials: { tool: string; detail?: string }[];
  networkBlocked: number;
  errors: string[];
  result?: Extract<AgentEvent, { type: "result" }>;
}

export class SummaryBuilder {
  private s: EventSummary = { finalMessage: "", usage: emptyUsage(), numTurns: 0, toolCalls: 0, permissionDenials: [], networkBlocked: 0, errors: [] };
  /**
   * Text since the last tool call: the final answer when the CLI gives no
   * explicit result. Kept as parts and joined once at the end: re-joining a
   * 64 KB tail per line would allocate gigabytes on a long stream.
   */
  private trailing: string[] = [];
  private trailingLength = 0;
  private cumulativeUsage: Usage | undefined;
  private incrementalUsage = emptyUsage();

  add(e: AgentEvent): void {
    const s = this.s;
    switch (e.type) {
      case "session":
        s.sessionId = e.sessionId;
        if (e.model) s.model = e.model;
        break;
      case "text":
        this.trailing.push(e.text);
        this.trailingLength += e.text.length + 1;
        while (this.trailingLength - (this.trailing[0]?.length ?? 0) - 1 >= FINAL_TEXT_LIMIT && this.trailing.length > 1)
          this.trailingLength -= this.trailing.shift()!.length + 1;
        break;
      case "tool_call":
        s.toolCalls++;
        this.trailing = [];
        this.trailingLength = 0;
        break;
      case "usage":
        if (e.cumulative) this.cumulativeUsage = e.usage;
        else this.incrementalUsage = addUsage(this.incrementalUsage, e.usage);
        s.numTurns++;
        break;
      case "permission_denied":
        if (s.permissionDenials.length < 100) s.permissionDenials.push({ tool: e.tool, ...(e.detail ? { detail: e.detail } : {}) });
        break;
      case "network_blocked":
        s.networkBlocked++;
        break;
      case "error":
        if (s.errors.length < 20) s.errors.push(e.message.slice(0, 2000));
        break;
      case "result":
        s.result = e;
        if (e.numTurns !== undefined) s.numTurns = e.numTurns;
        break;
      case "reasoning":
      case "tool_result":
        break;
    }
  }

  /**
   * A new agent process of the same run begins (a fix round): its answer
   * replaces the last one, while the session, counts and usage carry on.
   */
  newRound(): void {
    this.trailing = [];
    this.trailingLength = 0;
    delete this.s.result;
  }

  summary(): EventSummary {
    const result = this.s.result;
    const usage = result?.usage ?? this.cumulativeUsage ?? this.incrementalUsage;
    const trailingText = this.trailing.join("\n").slice(-FINAL_TEXT_LIMIT);
    return { ...this.s, usage, finalMessage: (result?.text ?? trailingText).trim() };
  }
}
