/**
 * Small HTTP plumbing shared by the fake GitHub REST API and the fake Actions
 * results service: a loopback server on a random port, request recording and
 * fault injection ("the next N requests matching METHOD + path answer 502").
 *
 * Test code normally uses this through `FakeGitHub.failNext` /
 * `FakeActionsResults.failNext`; it is exported for the odd custom fake.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedRequest {
  /** Sequence number, shared by all requests of one fake. */
  seq: number;
  method: string;
  /** Path without the query string, e.g. `/repos/o/r/issues/1/comments`. */
  path: string;
  query: Record<string, string>;
  /** Full path and query as received. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw `authorization` header, if any. */
  authorization?: string;
  /** JSON-decoded body when the body was JSON, else the text (or undefined when empty). */
  body: unknown;
  rawBody: Buffer;
  /** Status the fake answered with (0 if the connection was reset). */
  status: number;
  /** True when a `failNext` rule answered instead of the normal handler. */
  injected: boolean;
  at: number;
}

export type FaultKind =
  /** Plain error status (default 502) with a JSON body. */
  | "error"
  /** Primary rate limit: 403 (or `status`), `x-ratelimit-remaining: 0`, `x-ratelimit-reset`. */
  | "rate-limit"
  /** Secondary rate limit: 403 (or 429 via `status`) with `retry-after` and GitHub's message. */
  | "secondary-rate-limit"
  /** Destroy the socket without answering (ECONNRESET / "socket hang up" on the client). */
  | "reset";

export interface FaultOptions {
  /** How many matching requests fail (default 1). */
  times?: number;
  /** Let this many matching requests through first (e.g. the first comment post succeeds, the next fails). */
  skip?: number;
  kind?: FaultKind;
  /** Status for `error` (default 502), `rate-limit` (403), `secondary-rate-limit` (403). */
  status?: number;
  /** `retry-after` seconds for rate limits (default 1 for secondary, absent for primary). */
  retryAfter?: number;
  /** Replace the JSON body. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
}

export interface FaultRule extends Required<Pick<FaultOptions, "times">> {
  method: string;
  pattern: RegExp;
  source: string;
  options: FaultOptions;
  /** How many requests this rule has answered so far. */
  hits: number;
  /** How many matching requests it let through because of `skip`. */
  skipped: number;
  /** Requests still to fail. */
  readonly remaining: number;
}

/**
 * Turn a route pattern into a RegExp over the path (no query string).
 * `{name}` and `*` match one path segment, `**` matches anything.
 */
export function routePattern(path: string | RegExp): RegExp {
  if (path instanceof RegExp) return path;
  const body = path
    .split(/(\{[^}]+\}|\*\*|\*)/)
    .map((part) => {
      if (part === "**") return ".*";
      if (part === "*" || /^\{[^}]+\}$/.test(part)) return "[^/]+";
      return part.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("");
  return new RegExp(`^${body}/?$`);
}

/** Parse `"POST /repos/{o}/{r}/issues/*\/comments"` (method optional, `*` = any). */
export function parseRoute(route: string | { method?: string; path: string | RegExp }): { method: string; pattern: RegExp; source: string } {
  if (typeof route !== "string") {
    return { method: (route.method ?? "*").toUpperCase(), pattern: routePattern(route.path), source: String(route.path) };
  }
  const m = /^([A-Za-z*]+)\s+(\S+)$/.exec(route.trim());
  const method = m ? m[1]!.toUpperCase() : "*";
  const path = m ? m[2]! : route.trim();
  return { method, pattern: routePattern(path), source: route };
}

export class FaultInjector {
  readonly rules: FaultRule[] = [];

  add(route: string | { method?: string; path: string | RegExp }, options: FaultOptions = {}): FaultRule {
    const { method, pattern, source } = parseRoute(route);
    const rule: FaultRule = {
      method,
      pattern,
      source,
      options,
      times: options.times ?? 1,
      hits: 0,
      skipped: 0,
      get remaining() {
        return Math.max(0, this.times - this.hits);
      },
    };
    this.rules.push(rule);
    return rule;
  }

  /**
   * The first rule with failures left that matches, consuming one. A matching
   * rule still in its `skip` phase counts the request and lets later rules see it.
   */
  take(method: string, path: string): FaultRule | undefined {
    for (const r of this.rules) {
      if (r.remaining === 0 || (r.method !== "*" && r.method !== method) || !r.pattern.test(path)) continue;
      if (r.skipped < (r.options.skip ?? 0)) {
        r.skipped++;
        continue;
      }
      r.hits++;
      return r;
    }
    return undefined;
  }

  clear(): void {
    this.rules.length = 0;
  }
}

/** Write the response for an injected fault (GitHub-shaped bodies and headers). */
export async function answerFault(res: ServerResponse, rule: FaultRule): Promise<number> {
  const o = rule.options;
  if (o.delayMs) await new Promise((r) => setTimeout(r, o.delayMs));
  const kind = o.kind ?? "error";
  if (kind === "reset") {
    res.socket?.destroy();
    return 0;
  }
  const reset = Math.floor(Date.now() / 1000) + 60;
  let status: number;
  let body: unknown;
  const headers: Record<string, string> = {};
  switch (kind) {
    case "rate-limit":
      status = o.status ?? 403;
      headers["x-ratelimit-limit"] = "5000";
      headers["x-ratelimit-remaining"] = "0";
      headers["x-ratelimit-used"] = "5000";
      headers["x-ratelimit-reset"] = String(reset);
      headers["x-ratelimit-resource"] = "core";
      if (o.retryAfter !== undefined) headers["retry-after"] = String(o.retryAfter);
      body = {
        message: "API rate limit exceeded for installation ID 1.",
        documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        status: String(status),
      };
      break;
    case "secondary-rate-limit":
      status = o.status ?? 403;
      headers["retry-after"] = String(o.retryAfter ?? 1);
      headers["x-ratelimit-remaining"] = "4000";
      body = {
        message:
          "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.",
        documentation_url:
          "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
        status: String(status),
      };
      break;
    default:
      status = o.status ?? 502;
      body = status >= 500 ? { message: "Server Error" } : { message: `Injected ${status}`, status: String(status) };
  }
  if (o.body !== undefined) body = o.body;
  Object.assign(headers, o.headers);
  sendJson(res, status, body, headers);
  return status;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export function decodeBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString("utf8");
  if (!contentType || /json/i.test(contentType) || /^[[{]/.test(text.trimStart())) {
    try {
      return JSON.parse(text);
    } catch {
      /* not JSON after all */
    }
  }
  return /octet-stream|zip/i.test(contentType ?? "") ? undefined : text;
}

export interface Handled {
  /** Status written (returned so the recorder knows it). */
  status: number;
}

export type Handler = (ctx: {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  query: URLSearchParams;
  rawBody: Buffer;
  body: unknown;
  record: RecordedRequest;
}) => Promise<number> | number;

export interface LoopbackServer {
  url: string;
  port: number;
  server: Server;
  requests: RecordedRequest[];
  faults: FaultInjector;
  close(): Promise<void>;
}

/**
 * Start an HTTP server on 127.0.0.1 (random port) that records every request
 * and consults `faults` before calling `handler`. Handler exceptions become a
 * 500 JSON answer (and are kept in `errors` for the test to inspect).
 */
export async function startLoopbackServer(
  handler: Handler,
  opts: { record?: (r: RecordedRequest) => boolean; onError?: (e: unknown) => void } = {},
): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const faults = new FaultInjector();
  const sockets = new Set<Socket>();
  let seq = 0;
  const server = createServer(async (req, res) => {
    const method = (req.method ?? "GET").toUpperCase();
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    let rawBody: Buffer;
    try {
      rawBody = await readBody(req);
    } catch {
      return;
    }
    const body = decodeBody(rawBody, req.headers["content-type"]);
    const record: RecordedRequest = {
      seq: ++seq,
      method,
      path: safeDecode(u.pathname),
      query: Object.fromEntries(u.searchParams),
      url: req.url ?? "/",
      headers: req.headers,
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      body,
      rawBody,
      status: 0,
      injected: false,
      at: Date.now(),
    };
    if (opts.record?.(record) ?? true) requests.push(record);
    const rule = faults.take(method, record.path);
    if (rule) {
      record.injected = true;
      record.status = await answerFault(res, rule);
      return;
    }
    try {
      record.status = await handler({ req, res, method, path: record.path, query: u.searchParams, rawBody, body, record });
    } catch (e) {
      opts.onError?.(e);
      record.status = 500;
      if (!res.headersSent) sendJson(res, 500, { message: `fake server error: ${e instanceof Error ? e.message : String(e)}` });
      else res.end();
    }
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    requests,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
