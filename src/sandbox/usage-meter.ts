/**
 * The run's model usage as the gateway saw it, and the budget it enforces:
 * reserve before forwarding, settle on the real usage.
 *
 * The gateway's request recorder (trace/model-requests.ts) reads each
 * response's usage as it streams by and hands the finished record here
 * (`completed`): tokens are added to the running total and the request is
 * priced (prices.ts). Before forwarding a billed model request the gateway
 * asks `refuseForLimit()` (a limit already reached) and, under `max-tokens`
 * or `max-cost-usd`, `admit()`: the request is let through only if the
 * settled usage plus every reservation in flight plus its own reservation
 * (input estimated from its body, plus the output limit the gateway writes
 * into it: budget-admission.ts) stays within each limit. Its reservation is
 * settled when its response ends: at the usage the response reported, or at
 * the whole reservation when that cannot be read (cut off, undecodable, too
 * large). Once a request is refused every further billed request is, and the
 * run ends `failure` with `Budget exceeded:` (runner.ts); so does a run whose
 * settled usage went past a limit anyway (input beyond its estimate).
 *
 * Requests are counted when forwarded, so `max-model-requests` is exact. This
 * is the one usage figure of a run, the same for every agent: the `usage`
 * output, the summary, the comment and the transcript show it; the CLI's own
 * report stays in result.json.
 */
import type { Usage } from "../shared/events.js";
import type { ModelRequestRecord, ModelRequestUsage } from "../trace/model-requests.js";
import { DEFAULT_OUTPUT_CAP, MIN_THINKING_OUTPUT, type BudgetedRequest } from "./budget-admission.js";
import type { PriceBook } from "./prices.js";
import { groupDigits } from "../shared/plain-format.js";

export interface BudgetLimits {
  maxCostUsd?: number;
  /**
   * `maxCostUsd` is the input's default, not the workflow's choice: only
   * shown as such. Whether it applies was decided before the gateway started
   * (sandbox/budget.ts gatewayBudget); here it is held like any cap.
   */
  costCapIsDefault?: boolean;
  maxTokens?: number;
  maxModelRequests?: number;
}

/** The run's cost cap: the `Cost cap` line of the summary. */
export interface CostCap {
  maxUsd: number;
  /** The input's default (not set by the workflow). */
  isDefault: boolean;
}

/** The gateway's usage figure: the `usage` output's JSON shape. */
export interface GatewayUsage extends Usage {
  /** Billed model requests forwarded (not token counts or model lists). */
  requests: number;
}

export type BudgetLimitName = "max-model-requests" | "max-tokens" | "max-cost-usd";

/** Why the gateway stopped forwarding model requests. */
export type BudgetStop =
  | { kind: "exceeded"; limit: BudgetLimitName; max: number; refused: number; /** Stopped by admission: no room for a request's reservation. */ noRoom?: boolean }
  | { kind: "unpriced"; model: string; refused: number };

/** What one admitted request may cost at most: held against the budget until its response ends. */
export interface Reservation {
  /** Input tokens estimated from the request body. */
  inputTokens: number;
  /** The output limit written into the request, times the answers it asks for. */
  outputTokens: number;
  /** The price of the two, when max-cost-usd is set (else 0). */
  costUsd: number;
  model: string | undefined;
  settled: boolean;
}

export type Admission =
  | { ok: true; reservation: Reservation; outputCap: number }
  | { ok: false; limit: BudgetLimitName; max: number; figure: string; message: string; first: boolean };

export interface BudgetRefusal {
  limit: BudgetLimitName;
  max: number;
  figure: string;
  message: string;
  first: boolean;
}

const int = (n: number) => groupDigits(n);

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
  /** Responses counted at their whole reservation because their usage could not be read. */
  private chargedReservations = 0;
  private readonly inflight = new Set<Reservation>();
  /** Answers held back and retried (or moved past to a fallback), and the time waited before them. */
  private retries = 0;
  private retryWaitMs = 0;
  /** Successful answers per model, and which of them were fallback models. */
  private readonly served = new Map<string, { requests: number; costUsd?: number; fallback?: boolean }>();
  private stop: BudgetStop | undefined;
  private readonly limits: BudgetLimits;
  private readonly cap: CostCap | undefined;

  constructor(
    limits: BudgetLimits,
    private readonly prices: PriceBook,
  ) {
    this.limits = { ...limits };
    this.cap = limits.maxCostUsd !== undefined ? { maxUsd: limits.maxCostUsd, isDefault: limits.costCapIsDefault === true } : undefined;
  }

  /** The cost cap the run holds (the default one included: it is never lifted). */
  costCap(): CostCap | undefined {
    return this.cap && { ...this.cap };
  }

  /** Whether a token or cost limit is set: requests are then admitted against reservations. */
  reserves(): boolean {
    return this.limits.maxTokens !== undefined || this.limits.maxCostUsd !== undefined;
  }

  /** A billed model request is being forwarded. */
  started(): void {
    this.requests++;
  }

  /**
   * A forwarded request's response ended (or was cut off): add what it used,
   * and price it on the record. With a reservation, a response whose usage
   * could not be read counts as the whole reservation, and the reservation is
   * released.
   */
  completed(record: ModelRequestRecord, reservation?: Reservation): void {
    const charged = reservation ? this.chargeFor(record, reservation) : record.usage;
    if (reservation) this.release(reservation);
    if (!charged) {
      if (record.operation && record.status !== undefined && record.status < 300) this.unread++;
      return;
    }
    const model = record.requestModel ?? record.responseModel;
    const cost = this.add(charged, model);
    if (cost !== undefined && charged === record.usage) record.costUsd = cost;
    if (record.operation && model !== undefined && record.status !== undefined && record.status < 300) this.countServed(model, cost, record.fallbackFor !== undefined);
  }

  private countServed(model: string, cost: number | undefined, fallback: boolean): void {
    const s = this.served.get(model) ?? { requests: 0, costUsd: 0 };
    s.requests++;
    s.costUsd = s.costUsd !== undefined && cost !== undefined ? roundUsd(s.costUsd + cost) : undefined;
    if (fallback) s.fallback = true;
    this.served.set(model, s);
  }

  /** The gateway held back a rate-limited or overloaded answer and waited `waitMs` before trying again (0: straight to a fallback model). */
  retried(waitMs: number): void {
    this.retries++;
    this.retryWaitMs += waitMs;
  }

  /**
   * The request never got a response (upstream unreachable, or the agent hung
   * up first). `reachedProvider`: it may have been billed, so it counts as its
   * whole reservation; otherwise the reservation is simply released.
   */
  abandoned(reservation: Reservation, reachedProvider: boolean): void {
    if (reservation.settled) return;
    this.release(reservation);
    if (!reachedProvider) return;
    this.chargedReservations++;
    this.add({ inputTokens: reservation.inputTokens, outputTokens: reservation.outputTokens, cachedTokens: 0 }, reservation.model);
  }

  /** What a response is counted at: its usage, or its whole reservation when the usage could not be read. */
  private chargeFor(record: ModelRequestRecord, r: Reservation): ModelRequestUsage | undefined {
    const u = record.usage;
    // An error status is not billed, cut off or not.
    if (record.status !== undefined && record.status >= 300) return u;
    if (u && !record.errorType?.match(/^(aborted|undecodable|too_large)$/)) return u;
    this.chargedReservations++;
    return {
      inputTokens: Math.max(u?.inputTokens ?? 0, r.inputTokens),
      outputTokens: Math.max(u?.outputTokens ?? 0, r.outputTokens),
      cachedTokens: u?.cachedTokens ?? 0,
    };
  }

  private release(r: Reservation): void {
    r.settled = true;
    this.inflight.delete(r);
  }

  /** Adds one response's usage to the totals; its price, or undefined when the model has none. */
  private add(u: ModelRequestUsage, model: string | undefined): number | undefined {
    this.inputTokens += u.inputTokens;
    this.outputTokens += u.outputTokens;
    this.cachedTokens += u.cachedTokens;
    const cost = model !== undefined ? this.prices.costUsd(model, u) : undefined;
    if (cost === undefined) this.unpriced++;
    else this.cost += cost;
    return cost;
  }

  /**
   * A limit already reached (or an earlier refusal: once the budget stopped a
   * request, it stops all), or undefined: asked before each billed request.
   * Counts the refusal.
   */
  refuseForLimit(): BudgetRefusal | undefined {
    const s = this.stop;
    const reached = s?.kind === "exceeded" ? { limit: s.limit, max: s.max } : this.reached();
    if (!reached) return undefined;
    const figure = this.figure(reached.limit, reached.max);
    return this.refuse(reached.limit, reached.max, figure, `budget exceeded: ${figure}. This run may make no more model requests: stop now.`);
  }

  /**
   * Admission under max-tokens / max-cost-usd, right before forwarding: the
   * output limit to write into the request and its reservation, or a refusal
   * when the budget has no room left for it.
   */
  admit(req: BudgetedRequest, model: string | undefined): Admission {
    const wanted = req.requestedOutput ?? DEFAULT_OUTPUT_CAP;
    const tokenCap = this.tokenRoom(req);
    const costCap = this.costRoom(req, model, Math.min(wanted, tokenCap?.cap ?? wanted));
    const cap = Math.min(wanted, tokenCap?.cap ?? wanted, costCap?.cap ?? wanted);
    // Compaction names no output limit: it is admitted only with room for the whole default.
    // A request's own smaller limit is its business, not the budget's.
    const least = Math.min(wanted, !req.clampable ? wanted : req.thinkingBudget !== undefined ? MIN_THINKING_OUTPUT : 1);
    if (cap >= least) {
      const outputTokens = cap * req.choices;
      const reservation: Reservation = { inputTokens: req.inputEstimate, outputTokens, costUsd: this.limits.maxCostUsd !== undefined && model ? this.costOf(model, req.inputEstimate, outputTokens) : 0, model, settled: false };
      this.inflight.add(reservation);
      return { ok: true, reservation, outputCap: cap };
    }
    const short = tokenCap && tokenCap.cap < least ? tokenCap : (costCap ?? tokenCap)!;
    const refused = this.refuse(short.limit, short.max, short.figure, "", true);
    const need = `this request needs room for its input (${int(req.inputEstimate)} tokens estimated from its body) and ${int(least * req.choices)} output token${least * req.choices === 1 ? "" : "s"}`;
    return { ok: false, ...refused, message: `budget exceeded: ${short.figure}; ${need}. This run may make no more model requests: stop now.` };
  }

  private tokenRoom(req: BudgetedRequest): { cap: number; limit: BudgetLimitName; max: number; figure: string } | undefined {
    const max = this.limits.maxTokens;
    if (max === undefined) return undefined;
    const reserved = [...this.inflight].reduce((n, r) => n + r.inputTokens + r.outputTokens, 0);
    const room = max - this.inputTokens - this.outputTokens - reserved - req.inputEstimate;
    const figure = `${int(this.inputTokens + this.outputTokens)} tokens used and ${int(reserved)} reserved by ${this.inflight.size} request${this.inflight.size === 1 ? "" : "s"} in flight, max-tokens is ${int(max)}`;
    return { cap: Math.max(0, Math.floor(room / req.choices)), limit: "max-tokens", max, figure };
  }

  private costRoom(req: BudgetedRequest, model: string | undefined, upper: number): { cap: number; limit: BudgetLimitName; max: number; figure: string } | undefined {
    const max = this.limits.maxCostUsd;
    if (max === undefined) return undefined;
    const reserved = [...this.inflight].reduce((n, r) => n + r.costUsd, 0);
    const room = max - this.cost - reserved;
    const figure = `${usd(this.cost)} spent and ${usd(reserved)} reserved by ${this.inflight.size} request${this.inflight.size === 1 ? "" : "s"} in flight, max-cost-usd is ${usd(max)}`;
    // No price (refused before admission under max-cost-usd): nothing to hold it to.
    if (!model) return { cap: 0, limit: "max-cost-usd", max, figure };
    const fits = (out: number) => this.costOf(model, req.inputEstimate, out * req.choices) <= room;
    if (!fits(0)) return { cap: 0, limit: "max-cost-usd", max, figure };
    // Cost rises with output (tiers included): the largest output that fits, by bisection.
    let lo = 0;
    let hi = upper;
    if (fits(hi)) lo = hi;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (fits(mid)) lo = mid;
      else hi = mid;
    }
    return { cap: lo, limit: "max-cost-usd", max, figure };
  }

  /** The dearer of the input as plain input or as Anthropic cache writes (1.25×): the estimate cannot tell which. */
  private costOf(model: string, input: number, output: number): number {
    const plain = this.prices.costUsd(model, { inputTokens: input, outputTokens: output, cachedTokens: 0 }) ?? Infinity;
    const written = this.prices.costUsd(model, { inputTokens: input, outputTokens: output, cachedTokens: 0, cacheWriteTokens: input });
    return Math.max(plain, written ?? plain);
  }

  private refuse(limit: BudgetLimitName, max: number, figure: string, message: string, noRoom = false): BudgetRefusal {
    const first = this.stop?.kind !== "exceeded";
    if (this.stop?.kind === "exceeded") this.stop.refused++;
    else this.stop ??= { kind: "exceeded", limit, max, refused: 1, ...(noRoom ? { noRoom } : {}) };
    return { limit, max, figure, message, first };
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

  /** Responses (or requests without one) counted at their whole reservation. */
  reservationsCharged(): number {
    return this.chargedReservations;
  }

  /**
   * Under max-tokens or max-cost-usd, a request whose response would carry no
   * usage (a Chat Completions stream without `stream_options.include_usage`)
   * is refused: it could not be counted. opencode asks for usage; others should too.
   */
  refuseUncountable(omitsUsage: boolean): string | undefined {
    if (!omitsUsage || !this.reserves()) return undefined;
    return "the request streams without usage (set stream_options.include_usage: true), so its tokens cannot be counted against max-tokens or max-cost-usd.";
  }

  /** What stopped the run's model requests, if anything did; or the limit its settled usage went past. */
  stopped(): BudgetStop | undefined {
    if (this.stop) return { ...this.stop };
    const over = this.over();
    return over && { kind: "exceeded", ...over, refused: 0 };
  }

  /** The one-line reason for the run's result, starting `Budget exceeded:` when a limit stopped it. */
  stopReason(): string | undefined {
    const s = this.stopped();
    if (!s) return undefined;
    const refused = `${s.refused} model request${s.refused === 1 ? "" : "s"} refused`;
    if (s.kind === "unpriced")
      return `The model gateway refused model requests for '${s.model}' (${refused}): no price is known for it and 'max-cost-usd' is set. Add it to 'model-prices'.`;
    // Refused at admission, the settled figure may be under the limit: what did not fit was the next reservation.
    const why = s.noRoom ? "the budget left no room for the next request's estimated input and output limit; " : "";
    return `Budget exceeded: ${this.figure(s.limit, s.max)} (${refused}; ${why}requests already admitted were let finish within their reservations).`;
  }

  usage(): GatewayUsage {
    return {
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      cachedTokens: this.cachedTokens,
      ...(this.unpriced === 0 ? { costUsd: roundUsd(this.cost) } : {}),
      requests: this.requests,
      ...(this.retries || [...this.served.values()].some((s) => s.fallback) ? this.retryFigures() : {}),
    };
  }

  /** Retries, the time waited, and which model answered how many requests (at what cost). */
  private retryFigures(): Pick<GatewayUsage, "retries" | "retryWaitSeconds" | "models"> {
    const models: NonNullable<GatewayUsage["models"]> = {};
    for (const [model, s] of this.served) {
      const { costUsd, ...rest } = s;
      models[model] = { ...rest, ...(costUsd !== undefined ? { costUsd } : {}) };
    }
    return { retries: this.retries, retryWaitSeconds: Math.round(this.retryWaitMs / 100) / 10, models };
  }

  private reached(): { limit: BudgetLimitName; max: number } | undefined {
    const { maxModelRequests, maxTokens, maxCostUsd } = this.limits;
    if (maxModelRequests !== undefined && this.requests >= maxModelRequests) return { limit: "max-model-requests", max: maxModelRequests };
    if (maxTokens !== undefined && this.inputTokens + this.outputTokens >= maxTokens) return { limit: "max-tokens", max: maxTokens };
    if (maxCostUsd !== undefined && this.cost >= maxCostUsd) return { limit: "max-cost-usd", max: maxCostUsd };
    return undefined;
  }

  /** A token or cost limit the settled usage went past without a refusal (input beyond its estimate). */
  private over(): { limit: BudgetLimitName; max: number } | undefined {
    const { maxTokens, maxCostUsd } = this.limits;
    if (maxTokens !== undefined && this.inputTokens + this.outputTokens > maxTokens) return { limit: "max-tokens", max: maxTokens };
    if (maxCostUsd !== undefined && this.cost > maxCostUsd) return { limit: "max-cost-usd", max: maxCostUsd };
    return undefined;
  }

  /** "3,120 tokens used, max-tokens is 3,000": the figure, then the limit. */
  private figure(limit: BudgetLimitName, max: number): string {
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
