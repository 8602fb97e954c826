/**
 * One event model for every agent backend. Backends turn their CLI's output
 * lines into these; the trace, the live log, the progress comment and the
 * RunResult are all built from them.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  costUsd?: number;
  /** Billed model requests: only in the model gateway's figure (sandbox/usage-meter.ts). */
  requests?: number;
  /** Rate-limited or overloaded answers the gateway retried or moved past (sandbox/gateway-retry.ts); set only when there were any. */
  retries?: number;
  /** Seconds the gateway waited before retries, in total; with `retries`. */
  retryWaitSeconds?: number;
  /** Model → the requests it answered and their cost; set when the gateway retried or a fallback model served. */
  models?: Record<string, { requests: number; costUsd?: number; fallback?: boolean }>;
}

export type AgentEvent =
  | { type: "session"; sessionId: string; model?: string }
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool_call"; id?: string; name: string; input: unknown }
  | { type: "tool_result"; id?: string; name?: string; output: string; isError: boolean }
  | { type: "usage"; usage: Usage; cumulative?: boolean }
  | { type: "permission_denied"; tool: string; detail?: string }
  | { type: "error"; message: string }
  | { type: "network_blocked"; host: string; detail?: string }
  | {
      type: "result";
      /** Final assistant message, when the CLI reports one. */
      text?: string;
      isError: boolean;
      /** One-line reason when isError (turn limit, auth failure, …). */
      reason?: string;
      usage?: Usage;
      numTurns?: number;
      /** Parsed JSON result when the run had an output-schema. */
      structuredOutput?: unknown;
    };

/** An event as stored in trace.jsonl: timestamped, with the source line kept. */
export type TracedEvent = AgentEvent & { ts: string; raw?: string };

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
}

export function addUsage(a: Usage, b: Usage): Usage {
  const cost = a.costUsd !== undefined || b.costUsd !== undefined ? (a.costUsd ?? 0) + (b.costUsd ?? 0) : undefined;
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    ...(cost !== undefined ? { costUsd: cost } : {}),
  };
}
