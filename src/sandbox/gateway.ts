/**
 * The model gateway: a reverse proxy on the host's 127.0.0.1 that holds the
 * real model API key. The agent talks to it with a placeholder key; the
 * gateway forwards only the provider's model API paths, replaces whatever
 * credentials the client sent with the real key, streams responses through
 * unbuffered, and enforces an optional request budget.
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { Socket } from "node:net";
import type { ModelProvider } from "../agents/types.js";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";

export interface ModelGatewayOptions {
  provider: ModelProvider;
  /** Provider base URL as its SDK takes it (OpenAI-style ends in /v1; Anthropic and Gemini have no version path). */
  upstream: string;
  apiKey: string;
  /** Maximum number of model requests forwarded; later ones get 429. */
  requestBudget?: number;
  log: Logger;
  /** Listen port on 127.0.0.1 (default: ephemeral). */
  port?: number;
}

export interface ModelGatewayStats {
  /** Requests forwarded upstream. */
  requests: number;
  /** Request body bytes received from the agent. */
  bytesIn: number;
  /** Response body bytes sent back to the agent. */
  bytesOut: number;
  /** Requests refused (path not allowed, budget exhausted, bad request). */
  rejected: number;
}

export interface ModelGateway {
  /** `http://127.0.0.1:<port>` (add `/v1` for OpenAI-style clients: see baseUrlFor). */
  readonly url: string;
  readonly port: number;
  /** The key to give the agent: not a secret, never forwarded. */
  readonly placeholderKey: string;
  stats(): ModelGatewayStats;
  close(): Promise<void>;
}

/** Placeholders shaped like each provider's keys, so CLIs that check the shape accept them. */
export const PLACEHOLDER_KEYS: Record<ModelProvider, string> = {
  anthropic: "sk-ant-api03-agent-runner-placeholder-not-a-key",
  openai: "sk-agent-runner-placeholder-not-a-key",
  gemini: "agent-runner-placeholder-not-a-key",
};

/** The base URL an agent's SDK should be given for a gateway at `url`. */
export function baseUrlFor(provider: ModelProvider, url: string): string {
  return provider === "openai" ? `${url.replace(/\/$/, "")}/v1` : url.replace(/\/$/, "");
}

/** Credentials a client may send, removed before forwarding. */
const CLIENT_CREDENTIAL_HEADERS = new Set(["authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "proxy-authorization"]);
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade", "host"]);
const FORWARDED_METHODS = new Set(["GET", "POST", "HEAD", "DELETE"]);

/**
 * Whether `pathname` (already normalised, no query) is a model API path of
 * the provider.
 */
export function isModelPath(provider: ModelProvider, pathname: string): boolean {
  const under = (p: string) => pathname === p || pathname.startsWith(p + "/");
  switch (provider) {
    case "anthropic":
      return under("/v1/messages");
    case "openai":
      return under("/v1/responses") || under("/v1/chat/completions") || under("/v1/models");
    case "gemini":
      return /^\/v1beta\/models\/[A-Za-z0-9._-]+:(generateContent|streamGenerateContent|countTokens)$/.test(pathname);
  }
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

function errorBody(provider: ModelProvider, status: number, message: string): string {
  switch (provider) {
    case "anthropic": {
      const type = status === 429 ? "rate_limit_error" : status === 403 ? "permission_error" : status === 400 ? "invalid_request_error" : "api_error";
      return JSON.stringify({ type: "error", error: { type, message } });
    }
    case "openai": {
      const type = status === 429 ? "rate_limit_exceeded" : status === 403 ? "permission_denied" : status === 400 ? "invalid_request_error" : "api_error";
      return JSON.stringify({ error: { message, type, code: type } });
    }
    case "gemini": {
      const s = status === 429 ? "RESOURCE_EXHAUSTED" : status === 403 ? "PERMISSION_DENIED" : status === 400 ? "INVALID_ARGUMENT" : "UNAVAILABLE";
      return JSON.stringify({ error: { code: status, message, status: s } });
    }
  }
}

/** Reject dot segments and encoded separators, which an upstream may resolve past the allowed prefix. */
function normalisedPath(rawUrl: string): { pathname: string; search: URLSearchParams } | undefined {
  const q = rawUrl.indexOf("?");
  const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
  if (!rawPath.startsWith("/") || rawPath.startsWith("//")) return undefined;
  if (/%2e|%2f|%5c|\\/i.test(rawPath)) return undefined;
  if (rawPath.split("/").some((seg) => seg === "." || seg === "..")) return undefined;
  const u = new URL(rawUrl, "http://gateway.invalid");
  return { pathname: u.pathname.replace(/\/{2,}/g, "/"), search: u.searchParams };
}

export async function startModelGateway(opts: ModelGatewayOptions): Promise<ModelGateway> {
  const { provider, log } = opts;
  let upstream: URL;
  try {
    upstream = new URL(opts.upstream);
  } catch {
    throw new ConfigurationError(`base-url: '${opts.upstream}' is not a URL`);
  }
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") {
    throw new ConfigurationError(`base-url: '${opts.upstream}' must be an http:// or https:// URL`);
  }
  if (upstream.username || upstream.password) {
    throw new ConfigurationError("base-url: put credentials in secrets, not in the URL");
  }
  if (!opts.apiKey) throw new ConfigurationError(`the model gateway for ${provider} has no API key`);
  const budget = opts.requestBudget;
  const stats: ModelGatewayStats = { requests: 0, bytesIn: 0, bytesOut: 0, rejected: 0 };
  const client = upstream.protocol === "https:" ? https : http;
  const agent = new client.Agent({ keepAlive: true });
  const sockets = new Set<Socket>();

  const reject = (res: http.ServerResponse, status: number, message: string) => {
    stats.rejected++;
    const body = errorBody(provider, status, message);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
  };

  const server = http.createServer((req, res) => {
    const method = (req.method ?? "GET").toUpperCase();
    const parsed = normalisedPath(req.url ?? "/");
    const shownPath = parsed?.pathname ?? "(invalid path)";
    if (provider === "anthropic" && parsed?.pathname === "/" && method === "HEAD") {
      // Claude Code probes the base URL before starting.
      res.writeHead(200).end();
      req.resume();
      return;
    }
    if (!parsed || !FORWARDED_METHODS.has(method) || !isModelPath(provider, parsed.pathname)) {
      log.debug(`gateway: refused ${method} ${shownPath}`);
      req.resume();
      reject(res, 403, `Agent Runner model gateway: ${method} ${shownPath} is not a model API path of the ${provider} API; only model requests are forwarded.`);
      return;
    }
    if (budget !== undefined && stats.requests >= budget) {
      log.warning(`gateway: request budget of ${budget} model requests exhausted; refusing ${method} ${shownPath}`);
      req.resume();
      reject(res, 429, `Agent Runner model gateway: the request budget of ${budget} model requests for this run is exhausted. Raise it or split the task.`);
      return;
    }
    stats.requests++;

    const target = upstreamUrl(provider, upstream, parsed.pathname, parsed.search);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) {
      const key = k.toLowerCase();
      if (v === undefined || HOP_BY_HOP.has(key) || CLIENT_CREDENTIAL_HEADERS.has(key)) continue;
      headers[key] = v;
    }
    headers.host = target.host;
    if (provider === "anthropic") headers["x-api-key"] = opts.apiKey;
    else if (provider === "openai") headers.authorization = `Bearer ${opts.apiKey}`;
    else headers["x-goog-api-key"] = opts.apiKey;

    const started = Date.now();
    const upReq = client.request(target, { method, headers, agent }, (upRes) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(upRes.headers)) {
        if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) out[k] = v;
      }
      if (upRes.statusMessage) res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, out);
      else res.writeHead(upRes.statusCode ?? 502, out);
      res.flushHeaders();
      upRes.on("data", (chunk: Buffer) => {
        stats.bytesOut += chunk.length;
      });
      upRes.pipe(res);
      upRes.on("end", () => log.debug(`gateway: ${method} ${parsed.pathname} → ${upRes.statusCode} in ${Date.now() - started} ms`));
      upRes.on("error", () => res.destroy());
    });
    upReq.on("error", (e) => {
      log.warning(`gateway: upstream ${target.origin} failed for ${method} ${parsed.pathname}: ${errorMessage(e)}`);
      if (!res.headersSent) {
        const body = errorBody(provider, 502, `Agent Runner model gateway: the model API at ${target.origin} could not be reached: ${errorMessage(e)}`);
        res.writeHead(502, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
      } else res.destroy();
    });
    req.on("data", (chunk: Buffer) => {
      stats.bytesIn += chunk.length;
    });
    // The agent hung up: stop the upstream request too.
    res.on("close", () => {
      if (!res.writableFinished) upReq.destroy();
    });
    req.pipe(upReq);
  });
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
  log.debug(`gateway: ${provider} model gateway on 127.0.0.1:${port} → ${upstream.origin}${upstream.pathname === "/" ? "" : upstream.pathname}`);

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    placeholderKey: PLACEHOLDER_KEYS[provider],
    stats: () => ({ ...stats }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
