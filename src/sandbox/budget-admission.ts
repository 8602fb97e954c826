/**
 * Budget admission at the model gateway, the request side: what a billed
 * model request may cost at most, and the rewrite that makes that so.
 *
 * Under `max-tokens` or `max-cost-usd` the gateway reserves before it
 * forwards and settles on the real usage (usage-meter.ts). A reservation is
 * the request's input, estimated from its body (INPUT_BYTES_PER_TOKEN), plus
 * its output limit times the answers it asks for. The output limit is the
 * one number the provider itself holds to, so the gateway writes it: the
 * request's own limit clamped to what the budget still allows, or one set
 * where the request has none. The provider then cannot bill more output than
 * was reserved; the only thing a reservation can miss is input tokens beyond
 * the estimate (README "Budgets" states the bound).
 *
 * Every billed route the four CLIs use has a meter (routeMeter); a billed
 * route without one, and a request the gateway could not count (a background
 * response, billed after the gateway stops watching), is refused while a
 * token or cost budget is set.
 */
import * as z from "../shared/zod.js";
import type { ModelProvider } from "../shared/agents.js";

/**
 * Request body bytes per reserved input token. Byte-level BPE tokenizers
 * average 3.5 to 4.5 bytes per token on English prose, code and JSON, so
 * bytes/3 over-reserves ordinary requests; text denser than 3 bytes per token
 * (some non-Latin scripts), images or PDF pages billed by size rather than
 * bytes, and input the provider holds (previous_response_id, cached content)
 * are what the estimate can miss.
 */
export const INPUT_BYTES_PER_TOKEN = 3;

/**
 * Output limit written into a request that names none, when the budget allows
 * that much (opencode's own default; within every current model's maximum).
 * Compaction has no output-limit field: it is reserved at this and settled on
 * its usage.
 */
export const DEFAULT_OUTPUT_CAP = 32_000;

/** Where a route's request names its output limit, and the number of answers it asks for (each up to the limit). */
interface RouteMeter {
  /** Output-limit fields the provider honours; the first is written when none is set. Empty: the route has none. */
  caps: ReadonlyArray<readonly string[]>;
  /** A field asking for several answers (`n`, `candidateCount`). */
  choices?: readonly string[];
}

const GEMINI_GENERATE = /^\/v1beta\/models\/[A-Za-z0-9._-]+:(generateContent|streamGenerateContent)$/;

/** The billed routes the gateway meters (gateway-policy.ts ROUTES minus FREE_ROUTES). */
function routeMeter(provider: ModelProvider, pathname: string): RouteMeter | undefined {
  if (provider === "anthropic") return pathname === "/v1/messages" ? { caps: [["max_tokens"]] } : undefined;
  if (provider === "gemini") return GEMINI_GENERATE.test(pathname) ? { caps: [["generationConfig", "maxOutputTokens"]], choices: ["generationConfig", "candidateCount"] } : undefined;
  switch (pathname) {
    case "/v1/responses":
      return { caps: [["max_output_tokens"]] };
    // Codex's remote compaction takes no output limit.
    case "/v1/responses/compact":
      return { caps: [] };
    // Both fields are honoured (max_tokens is the older name): both are clamped.
    case "/v1/chat/completions":
      return { caps: [["max_completion_tokens"], ["max_tokens"]], choices: ["n"] };
    default:
      return undefined;
  }
}

type JsonObject = Record<string, unknown>;
const jsonObject = z.record(z.string(), z.unknown());
const count = z.number().check(z.int(), z.nonnegative());

/** What admission needs from a billed request. */
export interface BudgetedRequest {
  /** Reserved input tokens: ⌈decoded body bytes / INPUT_BYTES_PER_TOKEN⌉. */
  inputEstimate: number;
  /** The smallest output limit the request names, or undefined. */
  requestedOutput: number | undefined;
  /** Answers asked for (`n`, `candidateCount`), each up to the output limit. */
  choices: number;
  /** Whether the output limit can be written into the request (false for compaction). */
  clampable: boolean;
  /** Anthropic extended thinking's budget, which must stay below max_tokens. */
  thinkingBudget?: number;
}

export type BudgetedRequestResult = { ok: true; request: BudgetedRequest; body: JsonObject } | { ok: false; problem: string };

/**
 * Reads a billed request for admission under a token or cost budget, or says
 * why it cannot be metered (the route is named in the refusal).
 */
export function budgetedRequest(provider: ModelProvider, pathname: string, text: string): BudgetedRequestResult {
  const meter = routeMeter(provider, pathname);
  if (!meter) return { ok: false, problem: `${pathname} is a billed route the gateway cannot meter` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, problem: `the request to ${pathname} is not JSON, so its output limit cannot be read` };
  }
  const body = jsonObject.safeParse(parsed);
  if (!body.success) return { ok: false, problem: `the request to ${pathname} is not a JSON object` };
  const problem = unmeterable(provider, pathname, body.data, meter);
  if (problem) return { ok: false, problem };
  const caps = meter.caps.map((p) => valueAt(body.data, p));
  const requested = caps.filter((v): v is number => typeof v === "number");
  const choices = meter.choices ? valueAt(body.data, meter.choices) : undefined;
  const thinking = provider === "anthropic" ? jsonObject.safeParse(body.data.thinking) : undefined;
  const thinkingBudget = thinking?.success && thinking.data.type === "enabled" ? count.safeParse(thinking.data.budget_tokens) : undefined;
  return {
    ok: true,
    body: body.data,
    request: {
      inputEstimate: Math.ceil(Buffer.byteLength(text, "utf8") / INPUT_BYTES_PER_TOKEN),
      requestedOutput: requested.length ? Math.min(...requested) : undefined,
      choices: typeof choices === "number" ? Math.max(1, choices) : 1,
      clampable: meter.caps.length > 0,
      ...(thinkingBudget?.success ? { thinkingBudget: thinkingBudget.data } : {}),
    },
  };
}

/** Why a request on a metered route still could not be counted, or undefined. */
function unmeterable(provider: ModelProvider, pathname: string, body: JsonObject, meter: RouteMeter): string | undefined {
  // Queued and billed after the request returns: the gateway never sees that usage.
  if (provider === "openai" && body.background === true) return `${pathname} with background: true is billed after the response returns, where the gateway cannot meter it`;
  for (const path of meter.caps) {
    const v = valueAt(body, path);
    if (v !== undefined && !count.safeParse(v).success) return `${pathname}: ${path.join(".")} is not a whole number`;
  }
  if (meter.choices) {
    const v = valueAt(body, meter.choices);
    if (v !== undefined && !count.safeParse(v).success) return `${pathname}: ${meter.choices.join(".")} is not a whole number`;
  }
  // The other spellings the Gemini API accepts would leave the clamped field ambiguous.
  if (provider === "gemini" && (body.generation_config !== undefined || valueAt(body, ["generationConfig", "max_output_tokens"]) !== undefined || valueAt(body, ["generationConfig", "candidate_count"]) !== undefined))
    return `${pathname}: spell the output limit generationConfig.maxOutputTokens (snake_case spellings are refused under a budget)`;
  return undefined;
}

/**
 * The request body with every output-limit field at most `cap` (the first
 * written when none is set), and Anthropic's thinking budget kept below it;
 * undefined when the original body already holds to `cap` as it is.
 */
export function clampedBody(provider: ModelProvider, pathname: string, body: JsonObject, request: BudgetedRequest, cap: number): JsonObject | undefined {
  const meter = routeMeter(provider, pathname);
  if (!meter?.caps.length) return undefined;
  const out = structuredClone(body);
  let changed = false;
  const present = meter.caps.filter((p) => valueAt(out, p) !== undefined);
  for (const path of present.length ? present : [meter.caps[0]!]) {
    const v = valueAt(out, path);
    if (typeof v === "number" && v <= cap) continue;
    setAt(out, path, cap);
    changed = true;
  }
  if (request.thinkingBudget !== undefined && request.thinkingBudget >= cap) {
    setAt(out, ["thinking", "budget_tokens"], cap - 1);
    changed = true;
  }
  return changed ? out : undefined;
}

/** Anthropic refuses a thinking budget under 1024: a request with thinking needs at least this much output room. */
export const MIN_THINKING_OUTPUT = 1025;

function valueAt(o: JsonObject, path: readonly string[]): unknown {
  let v: unknown = o;
  for (const key of path) {
    const obj = jsonObject.safeParse(v);
    if (!obj.success) return undefined;
    v = obj.data[key];
  }
  return v;
}

function setAt(o: JsonObject, path: readonly string[], value: number): void {
  let cur = o;
  for (const key of path.slice(0, -1)) {
    const next = jsonObject.safeParse(cur[key]);
    const child: JsonObject = next.success ? next.data : {};
    cur[key] = child;
    cur = child;
  }
  cur[path[path.length - 1]!] = value;
}
