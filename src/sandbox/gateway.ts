/**
 * The model gateway: a reverse proxy on the host's 127.0.0.1 that holds the
 * real model API key. The agent talks to it with a per-run placeholder key;
 * the gateway forwards only the exact model API routes of the provider
 * (gateway-policy.ts), only from a client presenting that placeholder, with
 * an allowlist of request headers and the real key in place of the
 * placeholder. Unless the network is `open`, a request asking the provider
 * to reach the network for the agent (server-side web search or fetch,
 * remote MCP, a URL as a content source) is refused: that would be a way
 * around the network policy. Responses stream through unbuffered, read on
 * the side for their usage (usage-meter.ts): the run's one usage figure, and
 * an optional budget (model requests, tokens, cost) after which further model
 * requests get a provider-shaped 400 the CLIs stop on. Under a token or cost
 * budget each billed request is admitted against a reservation (its input
 * estimate plus the output limit the gateway writes into it:
 * budget-admission.ts) and settled on its real usage. Every refusal is
 * recorded for the trace (see refusals()).
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { Socket } from "node:net";
import type { ModelProvider } from "../shared/agents.js";
import type { ModelPriceSpec } from "../config/schema.js";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import { ModelRequestRecorder, type ModelRequestRecord } from "../trace/model-requests.js";
import {
  MAX_REQUEST_BYTES,
  credentialProblem,
  decodeBody,
  type DecodedBody,
  forwardedHeader,
  presentedCredentials,
  isBilledRoute,
  providerFetchProblem,
  requestModelOf,
  routeDecision,
  streamOmitsUsage,
} from "./gateway-policy.js";
import { budgetedRequest, clampedBody } from "./budget-admission.js";
import { MAX_ERROR_BODY_BYTES, mayRetry, nextStep, retryAfterMs, retryableReason, withModel, type RetryPolicy } from "./gateway-retry.js";
import { PriceBook } from "./prices.js";
import { UsageMeter, type BudgetLimits, type BudgetStop, type CostCap, type GatewayUsage, type Reservation } from "./usage-meter.js";
import type { CloudRoute, CloudUpstream } from "./cloud/types.js";


export interface ModelGatewayOptions {
  provider: ModelProvider;
  /** Provider base URL as its SDK takes it (OpenAI-style ends in /v1; Anthropic and Gemini have no version path). Ignored with `cloud`. */
  upstream: string;
  /**
   * A cloud the gateway signs for (cloud/registry.ts): its endpoint, its own
   * routes when the agent calls them (Bedrock's InvokeModel), and a signature
   * per request in place of `apiKey`. `provider` stays the wire API the agent speaks.
   */
  cloud?: CloudUpstream;
  apiKey: string;
  /** Limits on billed model requests, tokens and cost; once one is reached, further model requests get a 400 (usage-meter.ts). */
  budget?: BudgetLimits;
  /** `model-prices`: USD per million tokens for models the price table lacks (or to override it). */
  modelPrices?: Record<string, ModelPriceSpec>;
  log: Logger;
  /** Listen port on 127.0.0.1 (default: ephemeral). */
  port?: number;
  /**
   * Let requests through that make the provider fetch URLs or search the web
   * for the agent (server-side tools, remote MCP, URL content sources). Only
   * for `network: open`; otherwise such requests are refused.
   */
  allowProviderFetch?: boolean;
  /**
   * `model-retries`, `model-retry-max-wait-seconds`, `fallback-models`: how
   * rate-limited and overloaded answers are retried before the agent sees
   * them (gateway-retry.ts). Absent: passed through as they come.
   */
  retry?: RetryPolicy;
}

/** One kind of refused request, for the trace (as network_blocked). */
export interface GatewayRefusal {
  /** The provider API the request was for (upstream host). */
  host: string;
  detail: string;
}

export interface ModelGatewayStats {
  /** Requests forwarded upstream. */
  requests: number;
  /** Request body bytes received from the agent. */
  bytesIn: number;
  /** Response body bytes sent back to the agent. */
  bytesOut: number;
  /** Requests refused (route or key not allowed, provider-side fetch, budget reached, bad request). */
  rejected: number;
}

export interface ModelGateway {
  /** `http://127.0.0.1:<port>` (add `/v1` for OpenAI-style clients: see baseUrlFor). */
  readonly url: string;
  readonly port: number;
  /** The key to give the agent: random per gateway, never forwarded; requests without it are refused. */
  readonly placeholderKey: string;
  stats(): ModelGatewayStats;
  /** One record per forwarded request (model, tokens, latency, status), for per-request spans (trace/otel.ts). */
  requestLog(): ModelRequestRecord[];
  /** Refused requests, one entry per kind (method, path, reason), with a count. */
  refusals(): GatewayRefusal[];
  /** Tokens, cost and billed requests of every forwarded model request: the run's usage figure. */
  usage(): GatewayUsage;
  /** Set once the budget (or an unpriced model under max-cost-usd) stopped model requests. */
  budgetStop(): BudgetStop | undefined;
  /** The run's one-line reason when budgetStop() is set (`Budget exceeded: …`). */
  budgetStopReason(): string | undefined;
  /** The cost cap (`max-cost-usd`, given or the default) and whether it is the default. */
  costCap(): CostCap | undefined;
  close(): Promise<void>;
}

/**
 * Placeholders shaped like each provider's keys, so CLIs that check the shape
 * accept them. Each gateway inserts a random part (placeholderFor), so only
 * the agent it was given to can use the gateway, not another process on the
 * host's loopback.
 */
export const PLACEHOLDER_KEYS: Record<ModelProvider, string> = {
  anthropic: "sk-ant-api03-agent-runner-placeholder-not-a-key",
  openai: "sk-agent-runner-placeholder-not-a-key",
  gemini: "agent-runner-placeholder-not-a-key",
};

function placeholderFor(provider: ModelProvider): string {
  return PLACEHOLDER_KEYS[provider].replace(/placeholder-not-a-key$/, `${randomBytes(16).toString("hex")}-placeholder-not-a-key`);
}

/** The base URL an agent's SDK should be given for a gateway at `url`. */
export function baseUrlFor(provider: ModelProvider, url: string): string {
  return provider === "openai" ? `${url.replace(/\/$/, "")}/v1` : url.replace(/\/$/, "");
}

/** Claude Code honours this header; the 400 status alone keeps codex, gemini and opencode from retrying. */
const NO_RETRY: http.OutgoingHttpHeaders = { "x-should-retry": "false" };

/** An upstream error body as text (decoded per its Content-Encoding), or "" when it cannot be decoded. */
function decodedText(body: Buffer, encoding: string | string[] | undefined): string {
  const d = decodeBody(body, headerValue(encoding));
  return "text" in d ? d.text : "";
}
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade", "host"]);
const MAX_RECORDED_REFUSALS = 200;
/** Upstream errors that mean the request never reached the provider (so nothing was billed). */
const CONNECT_ERRORS = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** A request admitted under the budget: its reservation, and its body when the output limit was rewritten. */
interface Admitted {
  reservation: Reservation | undefined;
  body: Buffer | undefined;
}

/** One upstream attempt of a request: its route and body as the agent sent them (or as rewritten for a fallback model), and its admission. */
interface Attempt {
  route: AdmittedRoute;
  /** The body admission read (the agent's, or the fallback rewrite), and its Content-Encoding. */
  body: Buffer;
  encoding: string | undefined;
  admitted: Admitted;
  /** The model the agent asked for, when this attempt goes to a fallback model. */
  fallbackFor?: string;
}

/** A rate-limited or overloaded answer held back from the agent: nothing of it was sent downstream. */
interface HeldAnswer {
  status: number;
  statusMessage: string | undefined;
  headers: http.OutgoingHttpHeaders;
  body: Buffer;
  reason: "rate_limited" | "overloaded";
  retryAfter: number | undefined;
  record: ModelRequestRecord | undefined;
}

/**
 * The upstream URL for an allowed request path. OpenAI-style base URLs carry
 * the version (`http://host/v1`, `https://gw.example/openai/v1`): the
 * client's `/v1` maps onto the base's path. Anthropic and Gemini base URLs
 * have none, so the client's path is appended to the base's path.
 */
export function upstreamUrl(provider: ModelProvider, upstream: URL, pathname: string, search: URLSearchParams): URL {
  let prefix = upstream.pathname.replace(/\/+$/, "");
  let rest = pathname;
  if (provider === "openai") {
    rest = pathname.replace(/^\/v1(?=\/|$)/, "");
    if (prefix === "") prefix = "/v1";
  }
  const target = new URL(upstream.origin);
  target.pathname = prefix + rest;
  const params = new URLSearchParams(search);
  params.delete("key");
  const q = params.toString();
  target.search = q ? `?${q}` : "";
  return target;
}

/**
 * A cloud route's upstream URL: the base's path, then the path as the agent
 * sent it (still percent-encoded, as signed), or as the route rewrites it.
 */
function cloudRouteUrl(upstream: URL, route: CloudRoute, pathname: string, search: URLSearchParams): URL {
  const target = new URL(upstream.origin);
  const match = route.upstreamPath ? route.path.exec(pathname) : null;
  target.pathname = upstream.pathname.replace(/\/+$/, "") + (match ? route.upstreamPath!(match) : pathname);
  const q = search.toString();
  target.search = q ? `?${q}` : "";
  return target;
}

/**
 * A signed cloud request carries only the query parameters its API needs:
 * Google's system parameters (`$userProject`, `quotaUser`) would let the agent
 * bill another project under the workflow's credentials.
 */
function keepOnlyQueryParams(target: URL, allowed: readonly string[]): void {
  for (const name of [...new Set(target.searchParams.keys())]) if (!allowed.includes(name)) target.searchParams.delete(name);
}

function errorBody(provider: ModelProvider, status: number, message: string): string {
  switch (provider) {
    case "anthropic": {
      const type =
        { 400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error", 405: "invalid_request_error", 413: "request_too_large", 429: "rate_limit_error" }[status] ??
        "api_error";
      return JSON.stringify({ type: "error", error: { type, message } });
    }
    case "openai": {
      const type =
        { 400: "invalid_request_error", 401: "invalid_api_key", 403: "permission_denied", 404: "not_found", 405: "invalid_request_error", 413: "invalid_request_error", 429: "rate_limit_exceeded" }[status] ??
        "api_error";
      return JSON.stringify({ error: { message, type, code: type } });
    }
    case "gemini": {
      const s =
        { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 405: "UNIMPLEMENTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED" }[status] ??
        "UNAVAILABLE";
      return JSON.stringify({ error: { code: status, message, status: s } });
    }
  }
}

interface ParsedPath {
  pathname: string;
  search: URLSearchParams;
}

/**
 * An admitted request's route: `policyPath` is the wire route whose rules
 * apply (the same as the path, except on a cloud's own routes, where
 * `/model/<id>/invoke-with-response-stream` counts as `/v1/messages`), with
 * the model and stream flag the path names there.
 */
interface AdmittedRoute extends ParsedPath {
  policyPath: string;
  cloudRoute?: CloudRoute;
  pathModel?: string;
}

/** The cloud route a path matches, with its model; 404/405 as routeDecision says them. */
function cloudRouteDecision(routes: CloudRoute[], method: string, pathname: string): { ok: true; route: CloudRoute; model?: string } | { ok: false; status: 404 | 405; allow?: string } {
  const hits = routes.filter((r) => r.path.test(pathname));
  if (!hits.length) return { ok: false, status: 404 };
  const route = hits.find((r) => r.method === method);
  if (!route) return { ok: false, status: 405, allow: [...new Set(hits.map((r) => r.method))].join(", ") };
  const raw = route.path.exec(pathname)?.[1];
  let model: string | undefined;
  try {
    model = raw ? decodeURIComponent(raw) : undefined;
  } catch {
    model = raw;
  }
  return { ok: true, route, ...(model ? { model } : {}) };
}

/** Reject dot segments and encoded separators, which an upstream may resolve past the allowed prefix. */
function normalisedPath(rawUrl: string): ParsedPath | undefined {
  const q = rawUrl.indexOf("?");
  const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
  if (!rawPath.startsWith("/") || rawPath.startsWith("//")) return undefined;
  if (/%2e|%2f|%5c|\\/i.test(rawPath)) return undefined;
  if (rawPath.split("/").some((seg) => seg === "." || seg === "..")) return undefined;
  const u = new URL(rawUrl, "http://gateway.invalid");
  return { pathname: u.pathname.replace(/\/{2,}/g, "/"), search: u.searchParams };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(",") : v;
}

/** The whole request body, or undefined when it is larger than `max` (reading stops there). */
function readBody(req: http.IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > max) {
        // Answer now; the rest of the body is read and dropped.
        req.removeAllListeners("data");
        req.resume();
        resolve(undefined);
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export async function startModelGateway(opts: ModelGatewayOptions): Promise<ModelGateway> {
  const { provider, log, cloud } = opts;
  let upstream: URL;
  try {
    upstream = cloud ? cloud.upstream : new URL(opts.upstream);
  } catch {
    throw new ConfigurationError(`base-url: '${opts.upstream}' is not a URL`);
  }
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") {
    throw new ConfigurationError(`base-url: '${opts.upstream}' must be an http:// or https:// URL`);
  }
  if (upstream.username || upstream.password) {
    throw new ConfigurationError("base-url: put credentials in secrets, not in the URL");
  }
  const placeholderKey = placeholderFor(provider);
  const stats: ModelGatewayStats = { requests: 0, bytesIn: 0, bytesOut: 0, rejected: 0 };
  const meter = new UsageMeter(opts.budget ?? {}, await PriceBook.load(provider, opts.modelPrices, cloud?.priceTable));
  // One place reads per-request usage: the recorder; the meter adds up what it read.
  const recorder = new ModelRequestRecorder<Reservation>(provider, (record, reservation) => meter.completed(record, reservation));
  const refused = new Map<string, number>();
  const client = upstream.protocol === "https:" ? https : http;
  const agent = new client.Agent({ keepAlive: true });
  const sockets = new Set<Socket>();

  /** `blocked: false` for budget refusals: they are the run's reason, not network attempts for the trace. */
  const reject = (res: http.ServerResponse, status: number, what: string, message: string, extra: http.OutgoingHttpHeaders = {}, blocked = true) => {
    stats.rejected++;
    if (blocked && (refused.has(what) || refused.size < MAX_RECORDED_REFUSALS)) refused.set(what, (refused.get(what) ?? 0) + 1);
    log.debug(`gateway: refused ${what}`);
    const body = errorBody(provider, status, `Agent Runner model gateway: ${message}`);
    if (!res.headersSent) res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...extra });
    res.end(body);
  };

  /** Checks that need only the request line and headers; a refusal answers and returns false. */
  const admit = (req: http.IncomingMessage, res: http.ServerResponse, method: string, parsed: ParsedPath | undefined): AdmittedRoute | undefined => {
    const shown = `${method} ${parsed?.pathname ?? "(invalid path)"}`;
    const api = cloud ? `${cloud.provider} (${provider})` : provider;
    if (!parsed) {
      reject(res, 404, `${shown}: not a model API route`, `${shown} is not a model API path of the ${api} API; only model requests are forwarded.`);
      return undefined;
    }
    if (cloud?.quietlyRefused?.some((q) => q.method === method && q.path.test(parsed.pathname))) {
      reject(res, 404, `${shown}: not forwarded`, `${shown} is not forwarded to ${cloud.provider}; only model requests are.`, {}, false);
      return undefined;
    }
    const onCloud = cloud?.routes ? cloudRouteDecision(cloud.routes, method, parsed.pathname) : undefined;
    const route = onCloud ?? routeDecision(provider, method, parsed.pathname);
    if (!route.ok) {
      const why = route.status === 404 ? "not a model API route" : `method not allowed (only ${route.allow})`;
      reject(
        res,
        route.status,
        `${shown}: ${why}`,
        route.status === 404
          ? `${shown} is not a model API path of the ${api} API; only model requests are forwarded.`
          : `${shown}: this model API path takes only ${route.allow}.`,
        route.allow ? { allow: route.allow } : {},
      );
      return undefined;
    }
    const keyProblem = credentialProblem(presentedCredentials(req.headers, parsed.search), placeholderKey);
    if (keyProblem) {
      reject(res, 401, `${shown}: ${keyProblem}`, `the request ${keyProblem}. Use the key in the agent's environment.`);
      return undefined;
    }
    if (onCloud?.ok) return { ...parsed, policyPath: onCloud.route.canonical, cloudRoute: onCloud.route, ...(onCloud.model ? { pathModel: onCloud.model } : {}) };
    return { ...parsed, policyPath: parsed.pathname };
  };

  /** The body-level policy: no provider-side fetching unless the network is open. */
  const bodyProblem = (body: Buffer, decode: () => DecodedBody): string | undefined => {
    if (opts.allowProviderFetch || body.length === 0) return undefined;
    const decoded = decode();
    if ("problem" in decoded) return `has a body that ${decoded.problem}`;
    return providerFetchProblem(provider, decoded.text);
  };

  /**
   * Under a token or cost budget, a model request that could not be counted is
   * refused: a model without a price (max-cost-usd), a stream without usage.
   */
  const uncountedProblem = (billed: boolean, route: AdmittedRoute, decode: () => DecodedBody): string | undefined => {
    if (!meter.reserves() || !billed) return undefined;
    const decoded = decode();
    const text = "text" in decoded ? decoded.text : "";
    return meter.refuseUncountable(streamOmitsUsage(provider, route.policyPath, text)) ?? meter.refuseUnpriced(modelOf(route, text));
  };

  /** The model a request asks for: named by a cloud route's path, else as the wire API names it. */
  const modelOf = (route: AdmittedRoute, text: string) => route.pathModel ?? requestModelOf(provider, route.policyPath, text);

  const server = http.createServer((req, res) => {
    const method = (req.method ?? "GET").toUpperCase();
    const parsed = normalisedPath(req.url ?? "/");
    if (provider === "anthropic" && parsed?.pathname === "/" && method === "HEAD") {
      // Claude Code probes the base URL before starting.
      res.writeHead(200).end();
      req.resume();
      return;
    }
    const route = admit(req, res, method, parsed);
    if (!route) {
      req.resume();
      return;
    }
    readBody(req, MAX_REQUEST_BYTES).then(
      (body) => {
        stats.bytesIn += body?.length ?? 0;
        if (body === undefined) {
          reject(res, 413, `${method} ${route.pathname}: body larger than ${MAX_REQUEST_BYTES} bytes`, `the request body is larger than ${MAX_REQUEST_BYTES / 1024 / 1024} MiB.`, { connection: "close" });
          return;
        }
        // Decoded at most once, and only when a body check needs it; the route's billing once for the budget and the meter.
        let decoded: DecodedBody | undefined;
        const decode = () => (decoded ??= decodeBody(body, headerValue(req.headers["content-encoding"])));
        const billed = isBilledRoute(provider, method, route.policyPath);
        const problem = bodyProblem(body, decode);
        if (problem) {
          reject(
            res,
            403,
            `${method} ${route.pathname}: ${problem}`,
            `refused: the request ${problem}. Under this run's network policy the model provider may not fetch URLs, search the web or call remote MCP servers for the agent (only 'network: open' allows that).`,
          );
          return;
        }
        const admitted = admitBilled(res, method, route, billed, decode);
        if (!admitted) return;
        const attempt: Attempt = { route, body, encoding: headerValue(req.headers["content-encoding"]), admitted };
        forwardWithRetries(req, res, method, attempt, billed, decode).catch((e: unknown) => {
          log.warning(`gateway: could not sign ${method} ${route.pathname} for ${cloud?.provider ?? provider}: ${errorMessage(e)}`);
          if (!res.headersSent) {
            const errBody = errorBody(provider, 502, `Agent Runner model gateway: the request could not be signed for ${cloud?.provider ?? provider}: ${errorMessage(e)}`);
            res.writeHead(502, { "content-type": "application/json", "content-length": Buffer.byteLength(errBody) }).end(errBody);
          } else res.destroy();
        });
      },
      () => res.destroy(),
    );
  });

  /**
   * A billed request's admission: no budget limit reached, countable, and
   * under a token or cost budget reserved (admitUnderBudget). Asked before
   * the first attempt and again before every retry. A refusal answers.
   * Checked right before forwarding, with no await in between: concurrent
   * requests cannot both take the last slot.
   */
  const admitBilled = (res: http.ServerResponse, method: string, route: AdmittedRoute, billed: boolean, decode: () => DecodedBody): Admitted | undefined => {
    const none = { body: undefined, reservation: undefined };
    if (!billed) return none;
    const limit = meter.refuseForLimit();
    if (limit) {
      if (limit.first) log.warning(`Model gateway: budget reached (${limit.figure}); refusing further model requests.`);
      // 400 and x-should-retry: false: a status and body no CLI retries (429 and 5xx are retried, some for minutes).
      reject(res, 400, `${method} ${route.pathname}: ${limit.limit} reached`, limit.message, NO_RETRY, false);
      return undefined;
    }
    const uncounted = uncountedProblem(billed, route, decode);
    if (uncounted) {
      log.warning(`Model gateway: refused ${method} ${route.pathname}: ${uncounted}`);
      reject(res, 400, `${method} ${route.pathname}: not countable against the budget`, uncounted, NO_RETRY, false);
      return undefined;
    }
    return meter.reserves() ? admitUnderBudget(res, method, route, decode) : none;
  };

  /**
   * Under max-tokens / max-cost-usd: reserve the request's input estimate and
   * output limit, or refuse it (a route or request the gateway cannot meter,
   * or no room left in the budget). The body comes back rewritten (JSON,
   * uncompressed) when its output limit had to be clamped or set.
   */
  const admitUnderBudget = (res: http.ServerResponse, method: string, route: AdmittedRoute, decode: () => DecodedBody): Admitted | undefined => {
    const pathname = route.policyPath;
    const decoded = decode();
    const read = "problem" in decoded ? { ok: false as const, problem: `the request body ${decoded.problem}` } : budgetedRequest(provider, pathname, decoded.text);
    if (!read.ok) {
      log.warning(`Model gateway: refused ${method} ${pathname}: ${read.problem}`);
      reject(res, 400, `${method} ${pathname}: not meterable under the budget`, `refused: ${read.problem}. While max-tokens or max-cost-usd is set, only model requests the gateway can meter are forwarded.`, NO_RETRY, false);
      return undefined;
    }
    const admission = meter.admit(read.request, "text" in decoded ? modelOf(route, decoded.text) : route.pathModel);
    if (!admission.ok) {
      if (admission.first) log.warning(`Model gateway: budget reached (${admission.figure}); refusing further model requests.`);
      reject(res, 400, `${method} ${pathname}: ${admission.limit} reached`, admission.message, NO_RETRY, false);
      return undefined;
    }
    const clamped = clampedBody(provider, pathname, read.body, read.request, admission.outputCap);
    return { reservation: admission.reservation, body: clamped && Buffer.from(JSON.stringify(clamped)) };
  };

  const policy = opts.retry;
  /** Whether rate-limited answers are held back at all: with no retries and no fallback they pass through as they come. */
  const holdsAnswers = policy !== undefined && (policy.retries > 0 || policy.fallbackModels.length > 0);

  /**
   * Sends the request upstream, retrying rate-limited and overloaded answers
   * (gateway-retry.ts) as long as none of the answer has reached the agent:
   * each retry is admitted under the budget again, and after the model's
   * retries the next fallback model is tried. When it gives up, the agent
   * gets an answer its CLI does not retry (giveUp).
   */
  const forwardWithRetries = async (req: http.IncomingMessage, res: http.ServerResponse, method: string, first: Attempt, billed: boolean, decodeFirst: () => DecodedBody) => {
    let attempt = first;
    const hold = billed && holdsAnswers;
    const firstText = () => {
      const d = decodeFirst();
      return "text" in d ? d.text : "";
    };
    const asked = hold ? modelOf(first.route, firstText()) : undefined;
    // A cloud names the model in its own routes and signs for them: fallbacks are for the providers' own APIs.
    const fallbacks = hold && !cloud && asked !== undefined ? policy!.fallbackModels.filter((m) => m !== asked) : [];
    let retriesOnModel = 0;
    let waitedMs = 0;
    let attempts = 0;
    let model = asked;
    for (;;) {
      const held = await sendOnce(req, res, method, attempt, billed, hold);
      attempts++;
      if (!held) return;
      const step = nextStep(policy!, { retriesOnModel, waitedMs, retryAfter: held.retryAfter, hasFallback: fallbacks.length > 0 });
      if (held.record) held.record.retry = { reason: held.reason, next: step.kind, ...(step.kind === "retry" ? { waitMs: step.waitMs } : {}) };
      if (step.kind === "give-up") {
        giveUp(res, held, model, attempts, step.why);
        return;
      }
      let next: Attempt;
      if (step.kind === "retry") {
        meter.retried(step.waitMs);
        log.info(`Model gateway: ${model ?? "the model"} answered ${held.status} (${held.reason.replace("_", "-")}); retry ${retriesOnModel + 1} of ${policy!.retries} in ${(step.waitMs / 1000).toFixed(1)} s${held.retryAfter !== undefined ? " (Retry-After)" : ""}.`);
        if (!(await waitUnlessClosed(step.waitMs, res))) return;
        waitedMs += step.waitMs;
        retriesOnModel++;
        next = { ...attempt };
      } else {
        const to = fallbacks.shift()!;
        const rewritten = withModel(provider, attempt.route.policyPath, firstText(), to);
        if (!rewritten) {
          giveUp(res, held, model, attempts, "the request names no model to replace with a fallback");
          return;
        }
        meter.retried(0);
        log.warning(`Model gateway: ${model ?? "the model"} stayed ${held.reason.replace("_", "-")} (${held.status}); sending the request to fallback model ${to}.`);
        retriesOnModel = 0;
        model = to;
        const route = { ...first.route, pathname: rewritten.pathname, policyPath: rewritten.pathname };
        next = { route, body: rewritten.body, encoding: undefined, admitted: first.admitted, fallbackFor: asked! };
      }
      let decoded: DecodedBody | undefined;
      const decode = () => (decoded ??= decodeBody(next.body, next.encoding));
      const admitted = admitBilled(res, method, next.route, billed, decode);
      if (!admitted) return;
      attempt = { ...next, admitted };
    }
  };

  /** Waits `ms` unless the agent hangs up first; whether the agent is still there. */
  const waitUnlessClosed = (ms: number, res: http.ServerResponse) =>
    new Promise<boolean>((resolve) => {
      const done = (open: boolean) => {
        clearTimeout(timer);
        res.off("close", onClose);
        resolve(open);
      };
      const onClose = () => done(false);
      const timer = setTimeout(() => done(!res.destroyed), ms);
      res.on("close", onClose);
    });

  /**
   * The answer when the gateway stops trying: one no CLI retries. Each pinned
   * CLI retries a 429 on its own, 5 to 10 times over up to minutes (claude and
   * gemini past a Retry-After), and every one of those would go through the
   * gateway's retries again; a 400 with `x-should-retry: false` and a message
   * that names no status or busy-word is taken as final by all four
   * (measured: docs/rate-limits.md). So one agent request costs at most
   * (1 + model-retries) × (1 + fallback models) upstream attempts.
   */
  const giveUp = (res: http.ServerResponse, held: HeldAnswer, model: string | undefined, attempts: number, why: string) => {
    const what = held.reason === "rate_limited" ? "rate-limited" : "overloaded";
    log.warning(`Model gateway: ${model ?? "the model"} is still ${what} (${held.status}) after ${attempts} attempt(s); ${why}. The agent's request fails.`);
    stats.rejected++;
    // No status code, number or busy-word in it: OpenCode retries any error whose message matches /429|503|rate limit|overloaded|unavailable|…/.
    const message = "Agent Runner model gateway: the model provider kept turning this request away as busy, through every retry and fallback model this run allows. Stop now: trying again will not help (the run's log has the details).";
    const body = errorBody(provider, 400, message);
    if (res.headersSent || res.destroyed) return;
    res.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...NO_RETRY });
    res.end(body);
  };

  /**
   * One upstream attempt. The answer streams through to the agent as it
   * comes, except, with `hold`, a rate-limited or overloaded one: that is
   * read whole (it is a short error body) and handed back for a retry,
   * nothing of it sent downstream. Resolves once that is decided.
   */
  const sendOnce = async (req: http.IncomingMessage, res: http.ServerResponse, method: string, attempt: Attempt, billed: boolean, hold: boolean): Promise<HeldAnswer | undefined> => {
    const { route: parsed, admitted } = attempt;
    const body = admitted.body ?? attempt.body;
    const { reservation } = admitted;
    stats.requests++;
    if (billed) meter.started();
    const target = parsed.cloudRoute ? cloudRouteUrl(upstream, parsed.cloudRoute, parsed.pathname, parsed.search) : upstreamUrl(provider, upstream, parsed.pathname, parsed.search);
    if (cloud) keepOnlyQueryParams(target, cloud.queryParams);
    const headers: Record<string, string> = {};
    const cloudPrefixes = cloud?.forwardedHeaderPrefixes ?? [];
    for (const [k, v] of Object.entries(req.headers)) {
      const key = k.toLowerCase();
      if (v !== undefined && !HOP_BY_HOP.has(key) && (forwardedHeader(provider, key) || cloudPrefixes.some((p) => key.startsWith(p)))) headers[key] = Array.isArray(v) ? v.join(", ") : v;
    }
    // A clamped or rewritten body is re-serialised JSON, no longer in the agent's encoding.
    if (admitted.body || attempt.fallbackFor) delete headers["content-encoding"];
    headers.host = target.host;
    if (method !== "GET" || body.length) headers["content-length"] = String(body.length);
    if (cloud) {
      // Signed last, over exactly the headers and body that go upstream; a failure never reaches upstream unsigned.
      Object.assign(headers, await cloud.sign({ method, url: target, headers: { ...headers }, body }));
    } else if (opts.apiKey) {
      if (provider === "anthropic") headers["x-api-key"] = opts.apiKey;
      else if (provider === "openai") headers.authorization = `Bearer ${opts.apiKey}`;
      else headers["x-goog-api-key"] = opts.apiKey;
    }
    if (res.destroyed) {
      // The agent hung up while the request was signed.
      if (reservation) meter.abandoned(reservation, false);
      return undefined;
    }

    return new Promise<HeldAnswer | undefined>((resolve) => {
      const started = Date.now();
      let answered = false;
      let unreachable = false;
      const upReq = client.request(target, { method, headers, agent }, (upRes) => {
        answered = true;
        const record = recorder.observe(
          {
            method,
            path: parsed.policyPath,
            body,
            startedAt: started,
            tag: reservation,
            ...(parsed.pathModel ? { requestModel: parsed.pathModel } : {}),
            ...(parsed.cloudRoute?.stream ? { stream: true } : {}),
            ...(cloud?.frameReader ? { frames: cloud.frameReader(String(upRes.headers["content-type"] ?? "")) } : {}),
            ...(attempt.fallbackFor ? { fallbackFor: attempt.fallbackFor } : {}),
          },
          upRes,
        );
        const out: http.OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(upRes.headers)) {
          if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) out[k] = v;
        }
        const status = upRes.statusCode ?? 502;
        const sendHead = () => {
          if (upRes.statusMessage) res.writeHead(status, upRes.statusMessage, out);
          else res.writeHead(status, out);
          res.flushHeaders();
        };
        upRes.on("data", (chunk: Buffer) => {
          stats.bytesOut += chunk.length;
        });
        upRes.on("end", () => log.debug(`gateway: ${method} ${parsed.pathname} → ${upRes.statusCode} in ${Date.now() - started} ms`));
        upRes.on("error", () => res.destroy());
        if (!hold || !mayRetry(status)) {
          sendHead();
          upRes.pipe(res);
          resolve(undefined);
          return;
        }
        // Held until its body says whether it is retried: nothing reaches the agent before that.
        const chunks: Buffer[] = [];
        let size = 0;
        const passOn = () => {
          upRes.removeListener("data", collect);
          sendHead();
          for (const c of chunks) res.write(c);
          upRes.pipe(res);
          resolve(undefined);
        };
        const collect = (c: Buffer) => {
          chunks.push(c);
          size += c.length;
          if (size > MAX_ERROR_BODY_BYTES) passOn();
        };
        upRes.on("data", collect);
        upRes.on("end", () => {
          if (size > MAX_ERROR_BODY_BYTES) return;
          const whole = Buffer.concat(chunks);
          const reason = retryableReason(status, decodedText(whole, upRes.headers["content-encoding"]));
          // The bytes counted on the way in are not sent unless the agent gets them (giveUp).
          stats.bytesOut -= whole.length;
          if (!reason) {
            stats.bytesOut += whole.length;
            upRes.removeListener("data", collect);
            sendHead();
            res.end(whole);
            resolve(undefined);
            return;
          }
          resolve({ status, statusMessage: upRes.statusMessage, headers: out, body: whole, reason, retryAfter: retryAfterMs(upRes.headers["retry-after"]), record });
        });
      });
      upReq.on("error", (e) => {
        unreachable = CONNECT_ERRORS.has((e as NodeJS.ErrnoException).code ?? "");
        log.warning(`gateway: upstream ${target.origin} failed for ${method} ${parsed.pathname}: ${errorMessage(e)}`);
        if (!res.headersSent) {
          const errBody = errorBody(provider, 502, `Agent Runner model gateway: the model API at ${target.origin} could not be reached: ${errorMessage(e)}`);
          res.writeHead(502, { "content-type": "application/json", "content-length": Buffer.byteLength(errBody) }).end(errBody);
        } else res.destroy();
        resolve(undefined);
      });
      // No response: a request that reached the provider may be billed, so it counts as its whole reservation.
      upReq.on("close", () => {
        if (!answered && reservation) meter.abandoned(reservation, !unreachable);
        if (!answered) resolve(undefined);
      });
      // The agent hung up: stop the upstream request too.
      const onClose = () => {
        if (!res.writableFinished) upReq.destroy();
      };
      // A held answer's request is over; the next attempt listens for itself.
      upReq.on("close", () => {
        if (res.headersSent) return;
        res.off("close", onClose);
      });
      res.on("close", onClose);
      upReq.end(body);
    });
  };
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("clientError", (_e, s) => s.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", resolve);
  });
  const port = (server.address() as AddressInfo).port;
  if (cloud) log.info(`Model gateway: signing ${cloud.provider} requests with credentials from ${cloud.credentialSource}; the agent holds none.`);
  log.debug(`gateway: ${provider} model gateway on 127.0.0.1:${port} → ${upstream.origin}${upstream.pathname === "/" ? "" : upstream.pathname}`);

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    placeholderKey,
    stats: () => ({ ...stats }),
    requestLog: () => recorder.records(),
    usage: () => meter.usage(),
    budgetStop: () => meter.stopped(),
    budgetStopReason: () => meter.stopReason(),
    costCap: () => meter.costCap(),
    refusals: () =>
      [...refused.entries()].map(([detail, count]) => ({ host: `${upstream.host} (model gateway)`, detail: count > 1 ? `${detail} (${count} requests)` : detail })),
    close: () =>
      new Promise<void>((resolve) => {
        const unread = meter.unreadResponses();
        if (unread) log.warning(`Model gateway: ${unread} model response(s) carried no usage the gateway could read (cut off, or an unrecognised format); the usage figures leave them out.`);
        const charged = meter.reservationsCharged();
        if (charged)
          log.warning(`Model gateway: ${charged} model response(s) were cut off, undecodable or too large to read for usage; each is counted at its whole reservation (input estimate plus output limit).`);
        cloud?.close?.();
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
