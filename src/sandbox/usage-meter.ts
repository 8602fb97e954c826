/**
 * The run's model usage as the gateway saw it, and the budget it enforces.
 *
 * The gateway's request recorder (trace/model-requests.ts) reads each
 * response's usage as it streams by and hands the finished record here
 * (`completed`): tokens are added to the running total and the request is
 * priced (prices.ts). Before forwarding a billed model request the gateway
 * asks `limitReached()`; once a limit is reached every further billed request
 * is refused, and the run ends `failure` with `Budget exceeded:` (runner.ts).
 *
 * Requests are counted when forwarded, so `max-model-requests` is exact.
 * Tokens and cost are known only when a response has ended, so a response in
 * flight when the limit is reached is let finish: the overshoot is that one
 * response (or the few a CLI runs in parallel). This is the one usage figure
 * of a run, the same for every agent: the `usage` output, the summary, the
 * comment and the transcript show it; the CLI's own report stays in result.json.
 */
import type { Usage } from "../shared/events.js";
import type { ModelRequestRecord } from "../trace/model-requests.js";
import type { PriceBook } from "./prices.js";

export interface BudgetLimits {
  maxCostUsd?: number;
  maxTokens?: number;
  maxModelRequests?: number;
}

/** The gateway's usage figure: the `usage` output's JSON shape. */
export interface GatewayUsage extends Usage {
  /** Billed model requests forwarded (not token counts or model lists). */
  requests: number;
}

export type BudgetLimitName = "max-model-requests" | "max-tokens" | "max-cost-usd";

/** Why the gateway stopped forwarding model requests. */
export type BudgetStop =
  | { kind: "exceeded"; limit: BudgetLimitName; max: number; refused: number }
  | { kind: "unpriced"; model: string; refused: number };

export class UsageMeter {
  private requests = 0;
  private inputTokens = 0;
  private outputTokens = 0;
  private cachedTokens = 0;
  private cost = 0;
  /** Responses with usage but no price: the run's cost is then unknown. */
  private unpriced = 0;
  /** Successful model responses that carried no usage (cut off, or a stream without it): the figures are then lower bounds. */
  private unread = 0;
  private stop: BudgetStop | undefined;

  constructor(
    private readonly limits: BudgetLimits,
    private readonly prices: PriceBook,
  ) {}

  /** A billed model request is being forwarded. */
  started(): void {
    this.requests++;
  }

  /** A forwarded request's response ended (or was cut off): add what it used, and price it on the record. */
  completed(record: ModelRequestRecord): void {
    const u = record.usage;
    if (!u) {
      if (record.operation && record.status !== undefined && record.status < 300) this.unread++;
      return;
    }
    this.inputTokens += u.inputTokens;
    this.outputTokens += u.outputTokens;
    this.cachedTokens += u.cachedTokens;
    const model = record.requestModel ?? record.responseModel;
    const cost = model !== undefined ? this.prices.costUsd(model, u) : undefined;
    if (cost === undefined) this.unpriced++;
    else {
      record.costUsd = cost;
      this.cost += cost;
    }
  }

  /** The first limit reached, or undefined: asked before each billed request. Counts the refusal. */
  refuseForLimit(): { limit: BudgetLimitName; max: number; figure: string; message: string; first: boolean } | undefined {
    const reached = this.reached();
    if (!reached) return undefined;
    const first = this.stop?.kind !== "exceeded";
    if (this.stop?.kind === "exceeded") this.stop.refused++;
    else this.stop ??= { kind: "exceeded", ...reached, refused: 1 };
    const figure = this.figure(reached.limit, reached.max);
    return { ...reached, figure, first, message: `budget exceeded: ${figure}. This run may make no more model requests: stop now.` };
  }

  /**
   * Under `max-cost-usd`, a request for a model with no known price is
   * refused: its cost could not be counted against the limit.
   */
  refuseUnpriced(model: string | undefined): string | undefined {
    if (this.limits.maxCostUsd === undefined) return undefined;
    const name = model ?? "(none named)";
    if (model !== undefined && this.prices.knows(model)) return undefined;
    if (this.stop?.kind === "unpriced") this.stop.refused++;
    else this.stop ??= { kind: "unpriced", model: name, refused: 1 };
    return `no price is known for model '${name}', so its cost cannot be counted against max-cost-usd. Add it to model-prices or choose another model.`;
  }

  /** Model responses whose usage could not be read (so not counted). */
  unreadResponses(): number {
    return this.unread;
  }

  /**
   * Under max-tokens or max-cost-usd, a request whose response would carry no
   * usage (a Chat Completions stream without `stream_options.include_usage`)
   * is refused: it could not be counted. opencode asks for usage; others should too.
   */
  refuseUncountable(omitsUsage: boolean): string | undefined {
    if (!omitsUsage || (this.limits.maxTokens === undefined && this.limits.maxCostUsd === undefined)) return undefined;
    return "the request streams without usage (set stream_options.include_usage: true), so its tokens cannot be counted against max-tokens or max-cost-usd.";
  }

  /** What stopped the run's model requests, if anything did. */
  stopped(): BudgetStop | undefined {
    return this.stop && { ...this.stop };
  }

  /** The one-line reason for the run's result, starting `Budget exceeded:` when a limit stopped it. */
  stopReason(): string | undefined {
    const s = this.stop;
    if (!s) return undefined;
    const refused = `${s.refused} model request${s.refused === 1 ? "" : "s"} refused`;
    if (s.kind === "unpriced")
      return `The model gateway refused model requests for '${s.model}' (${refused}): no price is known for it and 'max-cost-usd' is set. Add it to 'model-prices'.`;
    return `Budget exceeded: ${this.figure(s.limit, s.max)} (${refused}; a response already streaming when the limit was reached was let finish).`;
  }

  usage(): GatewayUsage {
    return {
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      cachedTokens: this.cachedTokens,
      ...(this.unpriced === 0 ? { costUsd: roundUsd(this.cost) } : {}),
      requests: this.requests,
    };
  }

  private reached(): { limit: BudgetLimitName; max: number } | undefined {
    const { maxModelRequests, maxTokens, maxCostUsd } = this.limits;
    if (maxModelRequests !== undefined && this.requests >= maxModelRequests) return { limit: "max-model-requests", max: maxModelRequests };
    if (maxTokens !== undefined && this.inputTokens + this.outputTokens >= maxTokens) return { limit: "max-tokens", max: maxTokens };
    if (maxCostUsd !== undefined && this.cost >= maxCostUsd) return { limit: "max-cost-usd", max: maxCostUsd };
    return undefined;
  }

  /** "3,120 tokens used, max-tokens is 3,000": the figure, then the limit. */
  private figure(limit: BudgetLimitName, max: number): string {
    const int = (n: number) => n.toLocaleString("en-US");
    switch (limit) {
      case "max-model-requests":
        return `${int(this.requests)} model request${this.requests === 1 ? "" : "s"} made, max-model-requests is ${int(max)}`;
      case "max-tokens":
        return `${int(this.inputTokens + this.outputTokens)} tokens used (${int(this.inputTokens)} in, ${int(this.outputTokens)} out), max-tokens is ${int(max)}`;
      case "max-cost-usd":
        return `${usd(this.cost)} spent, max-cost-usd is ${usd(max)}`;
    }
  }
}

/** Enough digits for a cent fraction; no float noise in outputs. */
function roundUsd(n: number): number {
  return Math.round(n * 1e8) / 1e8;
}

function usd(n: number): string {
  return `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`;
}
