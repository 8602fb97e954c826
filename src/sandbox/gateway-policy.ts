/**
 * What the model gateway lets through, as data and pure functions: the exact
 * routes of each provider's model API, the credential check, the request
 * headers forwarded, and the request bodies that would make the provider
 * fetch URLs (or search the web, or call a remote MCP server) on the agent's
 * behalf. gateway.ts applies them; tests read them directly.
 *
 * Everything here was decided from what the four CLIs actually send (claude
 * 2.1, codex 0.171, gemini 0.61, opencode 1.18, recorded against the stub
 * model): anything they do not need is refused, so a hostile agent holding
 * the gateway's URL cannot use the real key for batches, files, stored
 * responses or deletions.
 */
import zlib from "node:zlib";
import type { ModelProvider } from "../shared/agents.js";

export type RouteDecision = { ok: true } | { ok: false; status: 404 | 405; allow?: string };

interface Route {
  method: "GET" | "POST";
  path: string | RegExp;
}

/** The model API routes each provider's CLIs call, exactly; nothing under them. */
const ROUTES: Record<ModelProvider, Route[]> = {
  anthropic: [
    { method: "POST", path: "/v1/messages" },
    { method: "POST", path: "/v1/messages/count_tokens" },
  ],
  openai: [
    { method: "POST", path: "/v1/responses" },
    // Codex's remote compaction (x-codex-beta-features: remote_compaction_v2).
    { method: "POST", path: "/v1/responses/compact" },
    { method: "POST", path: "/v1/chat/completions" },
    // Codex lists models (GET only: the list is harmless, the path takes no other method).
    { method: "GET", path: "/v1/models" },
  ],
  gemini: [{ method: "POST", path: /^\/v1beta\/models\/[A-Za-z0-9._-]+:(generateContent|streamGenerateContent|countTokens)$/ }],
};

const matches = (r: Route, pathname: string) => (typeof r.path === "string" ? r.path === pathname : r.path.test(pathname));

/** Whether `method pathname` is a model API route of the provider: 404 for another path, 405 for another method. */
export function routeDecision(provider: ModelProvider, method: string, pathname: string): RouteDecision {
  const routes = ROUTES[provider].filter((r) => matches(r, pathname));
  if (routes.length === 0) return { ok: false, status: 404 };
  if (routes.some((r) => r.method === method)) return { ok: true };
  return { ok: false, status: 405, allow: routes.map((r) => r.method).join(", ") };
}

/** Routes that cost nothing: token counts and model lists. Every other allowed route is a billed model request. */
const FREE_ROUTES: Record<ModelProvider, Array<string | RegExp>> = {
  anthropic: ["/v1/messages/count_tokens"],
  openai: ["/v1/models"],
  gemini: [/:countTokens$/],
};

/** Whether `method pathname` is a model request the provider bills (counted against the budget). */
export function isBilledRoute(provider: ModelProvider, method: string, pathname: string): boolean {
  if (!routeDecision(provider, method, pathname).ok) return false;
  return !FREE_ROUTES[provider].some((p) => (typeof p === "string" ? p === pathname : p.test(pathname)));
}

/** The model a request asks for: in the path for Gemini, the body's `model` otherwise; undefined when not named. */
export function requestModelOf(provider: ModelProvider, pathname: string, bodyText: string): string | undefined {
  if (provider === "gemini") return /^\/v1beta\/models\/([A-Za-z0-9._-]+):/.exec(pathname)?.[1];
  try {
    const body: unknown = JSON.parse(bodyText);
    const model = isObject(body) ? body.model : undefined;
    return typeof model === "string" && model ? model : undefined;
  } catch {
    return undefined;
  }
}

/** A Chat Completions stream answers with usage only when asked (`stream_options.include_usage`). */
export function streamOmitsUsage(provider: ModelProvider, pathname: string, bodyText: string): boolean {
  if (provider !== "openai" || pathname !== "/v1/chat/completions") return false;
  try {
    const body: unknown = JSON.parse(bodyText);
    if (!isObject(body) || body.stream !== true) return false;
    const options = body.stream_options;
    return !(isObject(options) && options.include_usage === true);
  } catch {
    return false;
  }
}

/**
 * The credentials a request presents, in every form a provider SDK uses:
 * `x-api-key` (Anthropic), `Authorization: Bearer` (OpenAI, Anthropic auth
 * tokens), `x-goog-api-key` and `?key=` (Gemini), `api-key` (Azure-style).
 */
export function presentedCredentials(headers: Record<string, string | string[] | undefined>, search: URLSearchParams): string[] {
  const values: string[] = [];
  const add = (v: string | string[] | undefined) => {
    for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) values.push(one.trim());
  };
  add(headers["x-api-key"]);
  add(headers["x-goog-api-key"]);
  add(headers["api-key"]);
  const auth = headers.authorization;
  for (const a of Array.isArray(auth) ? auth : auth === undefined ? [] : [auth]) values.push(a.trim().replace(/^bearer\s+/i, ""));
  for (const k of search.getAll("key")) values.push(k.trim());
  return values;
}

/** Undefined when the request carries the placeholder and nothing else; else why not. */
export function credentialProblem(presented: readonly string[], placeholder: string): string | undefined {
  if (presented.length === 0) return "carries no API key";
  if (presented.some((v) => v !== placeholder)) return "carries an API key other than the one this run gave the agent";
  return undefined;
}

/** Request headers forwarded upstream, by provider; everything else is dropped (cookies, proxy and forwarding headers, credentials, billing targets). */
const FORWARDED_HEADERS: Record<ModelProvider | "all", { exact: string[]; prefixes: string[] }> = {
  all: { exact: ["accept", "accept-encoding", "content-type", "content-encoding", "user-agent", "idempotency-key"], prefixes: ["x-stainless-"] },
  anthropic: { exact: ["anthropic-version", "anthropic-beta", "anthropic-dangerous-direct-browser-access", "x-app", "x-claude-code-session-id"], prefixes: [] },
  // Not openai-organization / openai-project: the key's owner decides where usage is billed.
  openai: {
    exact: ["openai-beta", "originator", "session_id", "session-id", "thread-id", "conversation_id", "x-client-request-id", "x-session-affinity", "x-session-id"],
    prefixes: ["x-codex-"],
  },
  // Not x-goog-user-project (billing).
  gemini: { exact: ["x-goog-api-client"], prefixes: [] },
};

export function forwardedHeader(provider: ModelProvider, name: string): boolean {
  const n = name.toLowerCase();
  return [FORWARDED_HEADERS.all, FORWARDED_HEADERS[provider]].some((set) => set.exact.includes(n) || set.prefixes.some((p) => n.startsWith(p)));
}

// ------------------------------------------------------------------ provider-side fetching

/** Largest request body the gateway reads (Anthropic's own limit is 32 MB). */
export const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
/** Largest decompressed request body inspected. */
const MAX_DECODED_BYTES = 256 * 1024 * 1024;

/** The request body as JSON text, decoded per Content-Encoding; a string is the problem. */
export type DecodedBody = { text: string } | { problem: string };

export function decodeBody(body: Buffer, encoding: string | undefined): DecodedBody {
  const enc = (encoding ?? "identity").trim().toLowerCase();
  const opts = { maxOutputLength: MAX_DECODED_BYTES };
  try {
    switch (enc) {
      case "":
      case "identity":
        return { text: body.toString("utf8") };
      case "gzip":
      case "x-gzip":
        return { text: zlib.gunzipSync(body, opts).toString("utf8") };
      case "deflate":
        return { text: zlib.inflateSync(body, opts).toString("utf8") };
      case "br":
        return { text: zlib.brotliDecompressSync(body, opts).toString("utf8") };
      case "zstd": {
        const z = zlib as unknown as { zstdDecompressSync?: (b: Buffer, o: typeof opts) => Buffer };
        if (z.zstdDecompressSync) return { text: z.zstdDecompressSync(body, opts).toString("utf8") };
        return { problem: "is zstd-compressed, which this Node.js cannot decode" };
      }
      default:
        return { problem: `has an unsupported Content-Encoding '${enc}'` };
    }
  } catch {
    return { problem: `could not be decoded as ${enc} (or decodes to more than ${MAX_DECODED_BYTES / 1024 / 1024} MiB)` };
  }
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isObject = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);
const isRemoteUrl = (v: unknown): v is string => typeof v === "string" && /^\s*(https?|ftp|gs):/i.test(v);

/** Server-side tools by provider: a type prefix (Anthropic, OpenAI) or a tool key (Gemini) → what it does. */
const SERVER_TOOL_TYPES: Record<"anthropic" | "openai", Array<[RegExp, string]>> = {
  // Not code_execution: Anthropic's container has no network access.
  anthropic: [
    [/^web_search/, "server-side web search"],
    [/^web_fetch/, "server-side web fetch"],
    [/^mcp/, "a remote MCP connector"],
  ],
  // Not code_interpreter or image_generation: no URL fetching. file_search reads the key owner's stored vector stores.
  openai: [
    [/^web_search/, "server-side web search"],
    [/^mcp$/, "a remote MCP server"],
    [/^file_search$/, "a search of stored vector stores"],
  ],
};
const GEMINI_SERVER_TOOLS: Record<string, string> = {
  googleSearch: "Google Search grounding",
  google_search: "Google Search grounding",
  googleSearchRetrieval: "Google Search retrieval",
  google_search_retrieval: "Google Search retrieval",
  urlContext: "URL context (server-side fetch)",
  url_context: "URL context (server-side fetch)",
  googleMaps: "Google Maps grounding",
  google_maps: "Google Maps grounding",
  enterpriseWebSearch: "enterprise web search",
  enterprise_web_search: "enterprise web search",
  retrieval: "retrieval from a data store",
  fileSearch: "a search of stored file stores",
  file_search: "a search of stored file stores",
  mcpServers: "a remote MCP server",
  mcp_servers: "a remote MCP server",
};

/** Conversation fields whose content can name a URL for the provider to fetch. */
const CONTENT_FIELDS: Record<ModelProvider, string[]> = {
  anthropic: ["messages", "system"],
  openai: ["input", "messages", "instructions"],
  gemini: ["contents", "systemInstruction", "system_instruction"],
};

/** A URL the provider would fetch, named by content (image/document/file sources), or undefined. */
function fetchedUrlIn(root: Json): string | undefined {
  const stack: Json[] = [root];
  while (stack.length) {
    const v = stack.pop()!;
    if (Array.isArray(v)) {
      stack.push(...v);
      continue;
    }
    if (!isObject(v)) continue;
    // Anthropic image/document source { type: "url", url }.
    if (v.type === "url" && isRemoteUrl(v.url)) return v.url;
    for (const key of ["image_url", "file_url", "fileUri", "file_uri", "document_url", "audio_url", "video_url"]) {
      const x = v[key];
      if (isRemoteUrl(x) && !isUploadedGeminiFile(x)) return x;
      if (isObject(x) && isRemoteUrl(x.url)) return x.url;
    }
    for (const [key, x] of Object.entries(v)) {
      // A tool call's arguments and a function's JSON result are the agent's own data, not content the provider loads.
      if (OPAQUE_KEYS.has(key) || (key === "input" && typeof v.type === "string" && /tool_use$/.test(v.type))) continue;
      stack.push(x);
    }
  }
  return undefined;
}

const OPAQUE_KEYS = new Set(["functionCall", "function_call", "functionResponse", "function_response", "arguments"]);

/** A file uploaded through the Gemini Files API is referenced by its API URL; that is not a fetch of the open web. */
function isUploadedGeminiFile(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === "https:" && u.hostname === "generativelanguage.googleapis.com" && u.pathname.startsWith("/v1beta/files/");
  } catch {
    return false;
  }
}

/**
 * Why this model request would make the provider reach the network for the
 * agent (server-side web search or fetch, a remote MCP server, a content
 * block whose source is a URL), or undefined. `body` is the decoded text.
 */
export function providerFetchProblem(provider: ModelProvider, text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "has a body that is not JSON";
  }
  if (!isObject(body)) return "has a body that is not a JSON object";
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (provider === "gemini") {
    for (const t of tools) {
      if (!isObject(t)) continue;
      for (const key of Object.keys(t)) {
        const what = GEMINI_SERVER_TOOLS[key];
        if (what) return `asks for ${what} (tool '${key}')`;
      }
    }
  } else {
    for (const t of tools) {
      const type = isObject(t) && typeof t.type === "string" ? t.type : undefined;
      const hit = type && SERVER_TOOL_TYPES[provider].find(([re]) => re.test(type));
      if (hit) return `asks for ${hit[1]} (tool type '${type}')`;
    }
  }
  if (provider === "anthropic" && Array.isArray(body.mcp_servers) && body.mcp_servers.length) return "asks for a remote MCP connector (mcp_servers)";
  if (provider === "openai" && body.web_search_options !== undefined) return "asks for server-side web search (web_search_options)";
  for (const field of CONTENT_FIELDS[provider]) {
    const v = body[field];
    if (v === undefined) continue;
    const url = fetchedUrlIn(v);
    if (url) return `asks the provider to fetch ${url.length > 120 ? url.slice(0, 120) + "…" : url}`;
  }
  return undefined;
}
