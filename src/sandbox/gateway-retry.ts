/**
 * Rate limits absorbed at the model gateway, as pure functions: which
 * upstream answers are worth another try, how long to wait before it
 * (`Retry-After` when the provider says, else bounded jittered exponential
 * backoff), when to stop, and how a request is rewritten for a fallback
 * model. gateway.ts applies them; tests read them directly.
 *
 * Bounds hold whatever the provider (or anything answering in its place)
 * says: a `Retry-After` beyond what is left of the request's wait allowance
 * is not waited for at all, so one request waits at most
 * `model-retry-max-wait-seconds` in total, and makes at most
 * (1 + `model-retries`) upstream attempts per model it is tried on.
 */
import type { ModelRetrySettings } from "../config/schema.js";
import type { ModelProvider } from "../shared/agents.js";

/** `model-retries`, `model-retry-max-wait-seconds`, `fallback-models` as the gateway holds them. */
export interface RetryPolicy {
  /** Retries per model after the first attempt (0: none). */
  retries: number;
  /** Total waiting allowed for one request, across its retries and fallbacks, in ms. */
  maxWaitMs: number;
  /** Models to send the request to, in order, once the one asked for stays rate-limited or overloaded. */
  fallbackModels: readonly string[];
}

export function retryPolicy(s: ModelRetrySettings): RetryPolicy {
  return { retries: s.retries, maxWaitMs: s.maxWaitSeconds * 1000, fallbackModels: s.fallbackModels };
}

/** First backoff step, and the largest one (before jitter). */
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 30_000;
/** How much of an error body is read to tell an overloaded 503 from another one. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Why an upstream answer is retried (`rate_limited`, `overloaded`), or
 * undefined: 429, Anthropic's 529, and a 503 whose body says overloaded.
 * Any other 503 may be a proxy's or a deployment's answer that a retry
 * would not change.
 */
export function retryableReason(status: number, body: string): "rate_limited" | "overloaded" | undefined {
  if (status === 429) return "rate_limited";
  if (status === 529) return "overloaded";
  if (status === 503 && /overloaded/i.test(body)) return "overloaded";
  return undefined;
}

/** Statuses whose body must be read before deciding (the answer is then held until it is known). */
export function mayRetry(status: number): boolean {
  return status === 429 || status === 529 || status === 503;
}

/** `Retry-After` in ms: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  // An HTTP date names its day and month: anything else Date.parse might take ("-5") is not one.
  const at = /[A-Za-z]{3}/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Full-jitter exponential backoff for the n-th retry (0-based): between half and all of min(cap, base·2ⁿ). */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(retry, 16));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * What to do after a retryable answer: wait `waitMs` and try the same model
 * again, move to the next model now, or give up. `retriesOnModel` counts the
 * retries already made on the current model; `waitedMs` the request's
 * waiting so far; `hasFallback` whether a model is left to move to.
 */
export type RetryStep = { kind: "retry"; waitMs: number } | { kind: "fallback" } | { kind: "give-up"; why: string };

export function nextStep(policy: RetryPolicy, o: { retriesOnModel: number; waitedMs: number; retryAfter: number | undefined; hasFallback: boolean; random?: () => number }): RetryStep {
  const left = policy.maxWaitMs - o.waitedMs;
  const exhausted = (why: string): RetryStep => (o.hasFallback ? { kind: "fallback" } : { kind: "give-up", why });
  if (o.retriesOnModel >= policy.retries) return exhausted(`${policy.retries} retr${policy.retries === 1 ? "y" : "ies"} used`);
  const waitMs = o.retryAfter ?? backoffMs(o.retriesOnModel, o.random);
  // A Retry-After past the allowance is not waited for in part: the provider said not before then.
  if (waitMs > left) return exhausted(o.retryAfter !== undefined ? `Retry-After ${Math.ceil(o.retryAfter / 1000)} s is beyond the ${Math.round(left / 1000)} s of waiting left` : "the waiting allowance is used up");
  return { kind: "retry", waitMs };
}

/** Gemini names the model in the path: `/v1beta/models/<model>:<method>`. */
const GEMINI_MODEL_PATH = /^(\/v1beta\/models\/)([A-Za-z0-9._-]+)(:[A-Za-z]+)$/;

/**
 * The request rewritten for another model: the body's `model` (Anthropic,
 * OpenAI), or the path's (Gemini). `text` is the decoded JSON body; the
 * result's body is plain JSON (no Content-Encoding). Undefined when the
 * request names no model where the rewrite expects one.
 */
export function withModel(provider: ModelProvider, pathname: string, text: string, model: string): { pathname: string; body: Buffer } | undefined {
  if (provider === "gemini") {
    const m = GEMINI_MODEL_PATH.exec(pathname);
    return m ? { pathname: `${m[1]}${model}${m[3]}`, body: Buffer.from(text) } : undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || typeof (parsed as { model?: unknown }).model !== "string") return undefined;
  return { pathname, body: Buffer.from(JSON.stringify({ ...parsed, model })) };
}
