/**
 * A scripted stub model server for end-to-end tests of the agent CLIs.
 *
 * One HTTP server on 127.0.0.1 (random port) answers the wire APIs the four CLIs speak:
 *
 * | api                | request                                                        | answer                    |
 * |--------------------|----------------------------------------------------------------|---------------------------|
 * | `anthropic`        | `POST …/v1/messages` (claude adds `?beta=true`)                | Messages SSE (or JSON)    |
 * | `openai-responses` | `POST …/responses`                                             | Responses SSE (or JSON)   |
 * | `openai-chat`      | `POST …/chat/completions`                                      | Chat Completions SSE/JSON |
 * | `gemini`           | `POST …/models/<m>:streamGenerateContent?alt=sse`, `:generateContent` | Gemini SSE / JSON  |
 * | `anthropic` (Vertex) | `POST …/publishers/anthropic/models/<m>:streamRawPredict`, `:rawPredict` | Messages SSE / JSON |
 *
 * The API is chosen from the path, and the same {@link StubStep}s are rendered in each API's
 * wire format, so one script shape works for every CLI (only the tool names differ; see
 * `stub-model-tools.ts`).
 *
 * Every request is recorded. A request either consumes a script step (`kind: "model"`) or is a
 * side request answered without touching the script (`kind: "side"`, with `sideReason`):
 *
 * - `HEAD` / `GET` / `OPTIONS` on any path (claude's `HEAD /` reachability probe; model lists
 *   `GET /v1/models`, `GET /v1beta/models`; codex's `GET /v1/models?client_version=…`) → 200
 *   with a model list that fits the Anthropic, OpenAI and Gemini list shapes at once.
 * - `POST …/v1/messages/count_tokens` (Anthropic) and `…:countTokens` (Gemini) → a token count.
 * - Gemini `:generateContent` (non-streamed) whose `generationConfig` asks for JSON
 *   (`responseMimeType: application/json` / `responseSchema` / `responseJsonSchema`): gemini-cli's
 *   utility calls (model routing classifier, next-speaker check, loop detection). Answered with
 *   an object built from the schema, first enum value for enums (routing → "flash",
 *   next speaker → "user").
 * - Title generation: an opencode / claude request whose system prompt is a title generator
 *   (see {@link isTitleRequest}) → `{ text: "Stub title" }`.
 * - Anything else (`POST` to an unknown path) → 404 JSON, recorded with `api: "other"`.
 *
 * `options.isSideRequest` can add or override side-request detection.
 *
 * When an array script runs out, requests get `{ text: "done" }` (`options.fallback`), so a CLI
 * never waits on the stub forever.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import zlib from "node:zlib";

export type StubApi = "anthropic" | "openai-responses" | "openai-chat" | "gemini" | "other";

/** Token counts the stub reports. See {@link renderUsage} for how each API gets them. */
export interface StubUsage {
  /** Uncached prompt tokens. */
  inputTokens: number;
  /** Prompt tokens read from cache (Anthropic `cache_read_input_tokens`, OpenAI `cached_tokens`, Gemini `cachedContentTokenCount`). */
  cachedInputTokens: number;
  /** Anthropic `cache_creation_input_tokens` only. */
  cacheWriteTokens: number;
  outputTokens: number;
}

export const DEFAULT_USAGE: StubUsage = { inputTokens: 100, cachedInputTokens: 40, cacheWriteTokens: 10, outputTokens: 20 };

export interface StubToolCall {
  /** Tool name exactly as the CLI declares it in its request (`Write`, `exec_command`, `write_file`, `write`…). */
  tool: string;
  args: Record<string, unknown>;
  /** Tool call id; default a random, API-styled id (`toolu_…`, `call_…`). Must be unique across runs. */
  id?: string;
}

interface StepCommon {
  /** Wait this long before answering (headers included). */
  delayMs?: number;
  /** Override (part of) the usage reported for this step. */
  usage?: Partial<StubUsage>;
}

export type StubStep = StepCommon &
  (
    | (StubToolCall & { /** Optional text the model says before calling the tool. */ text?: string })
    | { /** Parallel tool calls in one model turn. */ tools: StubToolCall[]; text?: string }
    | { /** Final answer: stop reason end_turn / stop / STOP. */ text: string }
    | { /** HTTP error. Default body is the API's error JSON. */ status: number; body?: string; headers?: Record<string, string> }
    | { /** 200 with a body that is neither valid SSE events nor JSON. */ malformed: true }
    | { /** Send nothing and keep the connection open until the stub closes (timeout tests). */ hang: true }
  );

export interface RecordedRequest {
  method: string;
  /** Path including the query string, as received. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the body is JSON, else the raw (decompressed) string; undefined when empty. */
  body: unknown;
  api: StubApi;
  /** `model`: consumed a script step. `side`: answered without the script. */
  kind: "model" | "side";
  /** Why it was taken as a side request. */
  sideReason?: string;
  /** Index of the step (model request number, 0-based) for `kind: "model"`. */
  index?: number;
  /** The step that was answered (model requests). */
  step?: StubStep;
  /** Whether the request asked for a stream. */
  stream: boolean;
  /** Model name from the body or (Gemini) the path. */
  model?: string;
  /** Tool call ids the stub sent in this answer. */
  toolCallIds: string[];
  receivedAt: number;
  /** Answered by a {@link StubRateLimit} (no script step consumed; `index` unset). */
  rateLimited?: boolean;
}

/**
 * Model requests answered with an error (default 429 with `Retry-After: 1`) before the script
 * sees them: the rate-limited request consumes no script step, so a script written for a
 * clean run works unchanged. Rules are checked in order; the first that matches answers.
 */
export interface StubRateLimit {
  /** Answer this many matching requests, then let them through (default: every one, forever). */
  times?: number;
  /** Only requests for this model (body `model`, or the Gemini path's); default any model. */
  model?: string;
  /** Default 429; 529 and 503 for overload. */
  status?: number;
  /** The `Retry-After` header value; default "1"; null sends none. */
  retryAfter?: string | null;
  /** Response body; default the API's error JSON for the status (503: an "overloaded" message). */
  body?: string;
  /** More response headers. */
  headers?: Record<string, string>;
}

export type StubScript = StubStep[] | ((req: RecordedRequest, index: number) => StubStep);

export interface StubModelOptions {
  /** Step used when an array script is exhausted. Default `{ text: "done" }`. */
  fallback?: StubStep;
  /** Default usage for every answer. */
  usage?: Partial<StubUsage>;
  /**
   * Decide side requests yourself: return a reason string to answer it as a side request
   * (with `{ text: "Stub title" }` for model APIs), `false` to force a model request,
   * `undefined` to use the built-in rules.
   */
  isSideRequest?: (req: RecordedRequest) => string | false | undefined;
  /** Fixed port (default: random). */
  port?: number;
  /** Rate-limit model requests before the script answers them (see {@link StubRateLimit}). */
  rateLimits?: StubRateLimit[];
}

/** A normalised conversation item, the same for every API (see {@link conversationOf}). */
export type ConversationItem =
  | { role: "system" | "user" | "assistant"; type: "text"; text: string }
  | { role: "assistant"; type: "tool_call"; id?: string; name: string; args: unknown }
  | { role: "tool"; type: "tool_result"; id?: string; name?: string; output: string };

export interface StubModel {
  /** `http://127.0.0.1:PORT`, no trailing slash. Add `/v1` for OpenAI-style base URLs. */
  url: string;
  port: number;
  /** Every request, side requests included, in arrival order. */
  requests: RecordedRequest[];
  /** Requests that consumed a script step. */
  modelRequests(): RecordedRequest[];
  /** Side requests only. */
  sideRequests(): RecordedRequest[];
  /** Every request body JSON-stringified (raw strings as is), joined with newlines. */
  allText(): string;
  /** Normalised conversation of a request (default: the last model request). */
  conversation(req?: RecordedRequest): ConversationItem[];
  /** Every tool call id this stub has sent. */
  issuedToolCallIds(): string[];
  /** Replace the script and restart step numbering at 0 (requests stay recorded). */
  setScript(script: StubScript): void;
  /** Replace the rate-limit rules (their counts start again); [] for none. */
  setRateLimits(rules: StubRateLimit[]): void;
  /** Stop listening and drop open connections (hung steps included). */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------

const rid = (prefix: string, bytes = 12) => prefix + randomBytes(bytes).toString("hex");

function detectApi(method: string, pathname: string): StubApi {
  if (method !== "POST") return "other";
  if (/\/messages(\/count_tokens)?$/.test(pathname)) return "anthropic";
  // Anthropic on Vertex AI: the model is in the path, the body is a Messages request without it.
  if (/\/publishers\/anthropic\/models\/[^/]+:(rawPredict|streamRawPredict)$/.test(pathname)) return "anthropic";
  if (/\/responses$/.test(pathname)) return "openai-responses";
  if (/\/chat\/completions$/.test(pathname)) return "openai-chat";
  if (/\/models\/[^/]+:(streamGenerateContent|generateContent|countTokens|embedContent|batchEmbedContents)$/.test(pathname))
    return "gemini";
  return "other";
}

function decodeBody(buf: Buffer, encoding: string | undefined): string {
  if (buf.length === 0) return "";
  try {
    switch ((encoding ?? "").toLowerCase()) {
      case "gzip":
        return zlib.gunzipSync(buf).toString("utf8");
      case "deflate":
        return zlib.inflateSync(buf).toString("utf8");
      case "br":
        return zlib.brotliDecompressSync(buf).toString("utf8");
      case "zstd": {
        const z = zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer };
        if (z.zstdDecompressSync) return z.zstdDecompressSync(buf).toString("utf8");
        return buf.toString("latin1");
      }
    }
  } catch {
    /* fall through: keep raw */
  }
  return buf.toString("utf8");
}

function asRecord(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function textOfContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((c) => {
        if (typeof c === "string") return c;
        const r = asRecord(c);
        if (typeof r.text === "string") return r.text;
        if (r.content !== undefined) return textOfContent(r.content);
        return "";
      })
      .join("");
  if (content && typeof content === "object") return JSON.stringify(content);
  return "";
}

/** System prompt text of a request, whatever the API. */
export function systemPromptOf(req: RecordedRequest): string {
  const b = asRecord(req.body);
  switch (req.api) {
    case "anthropic":
      return textOfContent(b.system);
    case "openai-responses":
      return (
        (typeof b.instructions === "string" ? b.instructions : "") +
        (Array.isArray(b.input)
          ? b.input
              .map(asRecord)
              .filter((i) => i.role === "system" || i.role === "developer")
              .map((i) => textOfContent(i.content))
              .join("\n")
          : "")
      );
    case "openai-chat":
      return Array.isArray(b.messages)
        ? b.messages
            .map(asRecord)
            .filter((m) => m.role === "system" || m.role === "developer")
            .map((m) => textOfContent(m.content))
            .join("\n")
        : "";
    case "gemini":
      return textOfContent(asRecord(b.systemInstruction ?? b.system_instruction).parts);
    default:
      return "";
  }
}

/** True for the session-title requests claude (without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC) and opencode (without --title) make. */
export function isTitleRequest(req: RecordedRequest): boolean {
  const sys = systemPromptOf(req);
  return /title generator|generate a (concise|short|brief)[^.]{0,40}title|sentence-case title|session title/i.test(sys.slice(0, 4000));
}

function builtinSideReason(req: RecordedRequest, pathname: string): string | undefined {
  if (req.method === "HEAD") return "HEAD probe";
  if (req.method === "GET") return "GET " + pathname;
  if (req.method === "OPTIONS") return "OPTIONS";
  if (req.api === "other") return "unknown endpoint";
  if (/\/count_tokens$/.test(pathname) || /:countTokens$/.test(pathname) || /\/count-tokens:rawPredict$/.test(pathname)) return "count tokens";
  if (/:(embedContent|batchEmbedContents)$/.test(pathname)) return "embeddings";
  if (req.api === "gemini" && /:generateContent$/.test(pathname)) {
    const gc = asRecord(asRecord(req.body).generationConfig);
    if (gc.responseMimeType === "application/json" || gc.responseSchema || gc.responseJsonSchema)
      return "gemini JSON utility call (routing / next speaker / loop check)";
  }
  if (isTitleRequest(req)) return "title generation";
  return undefined;
}

// ------------------------------------------------------------------ schema → example value

function exampleFromSchema(schema: unknown, depth = 0): unknown {
  const s = asRecord(schema);
  if (depth > 8) return null;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (s.const !== undefined) return s.const;
  for (const k of ["anyOf", "oneOf", "allOf"]) if (Array.isArray(s[k]) && s[k].length) return exampleFromSchema(s[k][0], depth + 1);
  let type = s.type;
  if (Array.isArray(type)) type = type.find((t) => t !== "null") ?? type[0];
  switch (String(type ?? (s.properties ? "object" : "string")).toLowerCase()) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(asRecord(s.properties))) out[k] = exampleFromSchema(v, depth + 1);
      return out;
    }
    case "array":
      return [];
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return "stub";
  }
}

// ------------------------------------------------------------------ usage

export function renderUsage(api: StubApi, u: StubUsage): Record<string, unknown> {
  const prompt = u.inputTokens + u.cachedInputTokens;
  switch (api) {
    case "anthropic":
      return {
        input_tokens: u.inputTokens,
        cache_creation_input_tokens: u.cacheWriteTokens,
        cache_read_input_tokens: u.cachedInputTokens,
        output_tokens: u.outputTokens,
      };
    case "openai-responses":
      return {
        input_tokens: prompt,
        input_tokens_details: { cached_tokens: u.cachedInputTokens },
        output_tokens: u.outputTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: prompt + u.outputTokens,
      };
    case "openai-chat":
      return {
        prompt_tokens: prompt,
        completion_tokens: u.outputTokens,
        total_tokens: prompt + u.outputTokens,
        prompt_tokens_details: { cached_tokens: u.cachedInputTokens },
        completion_tokens_details: { reasoning_tokens: 0 },
      };
    case "gemini":
      return {
        promptTokenCount: prompt,
        candidatesTokenCount: u.outputTokens,
        totalTokenCount: prompt + u.outputTokens,
        cachedContentTokenCount: u.cachedInputTokens,
      };
    default:
      return {};
  }
}

// ------------------------------------------------------------------ rendering

interface Turn {
  text?: string;
  calls: Array<Required<Pick<StubToolCall, "tool" | "args">> & { id: string }>;
  usage: StubUsage;
}

type Rendered =
  | { kind: "sse"; events: Array<{ event?: string; data: unknown }>; done?: boolean }
  | { kind: "json"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "raw"; status: number; body: string; contentType: string; headers?: Record<string, string> };

function sse(events: Array<{ event?: string; data: unknown }>): string {
  return events.map((e) => (e.event ? `event: ${e.event}\n` : "") + `data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`).join("");
}

function renderAnthropic(turn: Turn, model: string, stream: boolean): Rendered {
  const id = rid("msg_stub_");
  const usage = renderUsage("anthropic", turn.usage);
  const blocks: Array<Record<string, unknown>> = [];
  if (turn.text !== undefined) blocks.push({ type: "text", text: turn.text });
  for (const c of turn.calls) blocks.push({ type: "tool_use", id: c.id, name: c.tool, input: c.args });
  const stopReason = turn.calls.length ? "tool_use" : "end_turn";
  if (!stream)
    return {
      kind: "json",
      status: 200,
      body: { id, type: "message", role: "assistant", model, content: blocks, stop_reason: stopReason, stop_sequence: null, usage },
    };
  const ev: Array<{ event?: string; data: unknown }> = [];
  ev.push({
    event: "message_start",
    data: {
      type: "message_start",
      message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
    },
  });
  blocks.forEach((b, index) => {
    if (b.type === "text") {
      ev.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "text", text: "" } } });
      ev.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text: b.text } } });
    } else {
      ev.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } } });
      ev.push({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } },
      });
    }
    ev.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  ev.push({ event: "message_delta", data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage } });
  ev.push({ event: "message_stop", data: { type: "message_stop" } });
  return { kind: "sse", events: ev };
}

function responsesToolType(body: Record<string, unknown>, name: string): string {
  const tools = Array.isArray(body.tools) ? body.tools.map(asRecord) : [];
  const t = tools.find((x) => x.name === name || asRecord(x.function).name === name);
  return typeof t?.type === "string" ? t.type : "function";
}

/** `ns/name` when the request declares a `namespace` tool `ns` holding `name`; else undefined. */
function namespacedCall(body: Record<string, unknown>, tool: string): { namespace: string; name: string } | undefined {
  const slash = tool.indexOf("/");
  if (slash < 0) return undefined;
  const namespace = tool.slice(0, slash);
  const name = tool.slice(slash + 1);
  const tools = Array.isArray(body.tools) ? body.tools.map(asRecord) : [];
  const declared = tools.find((t) => t.type === "namespace" && t.name === namespace);
  return declared ? { namespace, name } : undefined;
}

function renderResponses(turn: Turn, model: string, stream: boolean, body: Record<string, unknown>): Rendered {
  const respId = rid("resp_stub_");
  const output: Array<Record<string, unknown>> = [];
  if (turn.text !== undefined)
    output.push({
      type: "message",
      id: rid("msg_stub_"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    });
  for (const c of turn.calls) {
    if (responsesToolType(body, c.tool) === "custom") {
      const input = typeof c.args.input === "string" ? c.args.input : JSON.stringify(c.args);
      output.push({ type: "custom_tool_call", id: rid("ctc_stub_"), call_id: c.id, name: c.tool, input, status: "completed" });
    } else {
      // `namespace/name` calls a tool of a declared `namespace` tool (Codex's MCP tools): the call names both.
      const ns = namespacedCall(body, c.tool);
      output.push({ type: "function_call", id: rid("fc_stub_"), call_id: c.id, ...(ns ?? { name: c.tool }), arguments: JSON.stringify(c.args), status: "completed" });
    }
  }
  const created_at = Math.floor(Date.now() / 1000);
  const base = { id: respId, object: "response", created_at, model, parallel_tool_calls: true, tool_choice: "auto", tools: [] };
  const completed = { ...base, status: "completed", output, usage: renderUsage("openai-responses", turn.usage) };
  if (!stream) return { kind: "json", status: 200, body: completed };
  const ev: Array<{ event?: string; data: unknown }> = [];
  let seq = 0;
  const push = (type: string, data: Record<string, unknown>) => ev.push({ event: type, data: { type, sequence_number: seq++, ...data } });
  push("response.created", { response: { ...base, status: "in_progress", output: [] } });
  push("response.in_progress", { response: { ...base, status: "in_progress", output: [] } });
  output.forEach((item, output_index) => {
    if (item.type === "message") {
      const text = turn.text ?? "";
      push("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      push("response.content_part.added", { item_id: item.id, output_index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
      push("response.output_text.delta", { item_id: item.id, output_index, content_index: 0, delta: text });
      push("response.output_text.done", { item_id: item.id, output_index, content_index: 0, text });
      push("response.content_part.done", { item_id: item.id, output_index, content_index: 0, part: { type: "output_text", text, annotations: [] } });
    } else if (item.type === "function_call") {
      push("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
      push("response.function_call_arguments.delta", { item_id: item.id, output_index, delta: item.arguments });
      push("response.function_call_arguments.done", { item_id: item.id, output_index, arguments: item.arguments });
    } else {
      push("response.output_item.added", { output_index, item: { ...item, status: "in_progress", input: "" } });
      push("response.custom_tool_call_input.delta", { item_id: item.id, output_index, delta: item.input });
      push("response.custom_tool_call_input.done", { item_id: item.id, output_index, input: item.input });
    }
    push("response.output_item.done", { output_index, item });
  });
  push("response.completed", { response: completed });
  return { kind: "sse", events: ev };
}

function renderChat(turn: Turn, model: string, stream: boolean): Rendered {
  const id = rid("chatcmpl-stub");
  const created = Math.floor(Date.now() / 1000);
  const finish = turn.calls.length ? "tool_calls" : "stop";
  const usage = renderUsage("openai-chat", turn.usage);
  const toolCalls = turn.calls.map((c, index) => ({ index, id: c.id, type: "function", function: { name: c.tool, arguments: JSON.stringify(c.args) } }));
  if (!stream)
    return {
      kind: "json",
      status: 200,
      body: {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: turn.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls.map(({ index: _i, ...t }) => t) } : {}) },
            finish_reason: finish,
          },
        ],
        usage,
      },
    };
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null, extra: Record<string, unknown> = {}) => ({
    data: { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason }], ...extra },
  });
  const ev: Array<{ event?: string; data: unknown }> = [chunk({ role: "assistant", content: "" })];
  if (turn.text !== undefined) ev.push(chunk({ content: turn.text }));
  for (const tc of toolCalls) {
    ev.push(chunk({ tool_calls: [{ index: tc.index, id: tc.id, type: "function", function: { name: tc.function.name, arguments: "" } }] }));
    ev.push(chunk({ tool_calls: [{ index: tc.index, function: { arguments: tc.function.arguments } }] }));
  }
  ev.push(chunk({}, finish, { usage }));
  ev.push({ data: "[DONE]" });
  return { kind: "sse", events: ev };
}

function renderGemini(turn: Turn, model: string, stream: boolean): Rendered {
  const parts: Array<Record<string, unknown>> = [];
  if (turn.text !== undefined) parts.push({ text: turn.text });
  for (const c of turn.calls) parts.push({ functionCall: { id: c.id, name: c.tool, args: c.args } });
  const responseId = rid("stub", 8);
  const final = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: renderUsage("gemini", turn.usage),
    modelVersion: model,
    responseId,
  };
  if (!stream) return { kind: "json", status: 200, body: final };
  return { kind: "sse", events: [{ data: final }] };
}

function errorBody(api: StubApi, status: number): unknown {
  const message = `stub error ${status}`;
  switch (api) {
    case "anthropic": {
      const type =
        status === 401 ? "authentication_error" : status === 403 ? "permission_error" : status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : status >= 500 ? "api_error" : "invalid_request_error";
      return { type: "error", error: { type, message } };
    }
    case "gemini": {
      const st = status === 401 ? "UNAUTHENTICATED" : status === 403 ? "PERMISSION_DENIED" : status === 429 ? "RESOURCE_EXHAUSTED" : status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT";
      return { error: { code: status, message, status: st } };
    }
    default: {
      const type = status === 401 ? "invalid_request_error" : status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error";
      return { error: { message, type, param: null, code: status === 401 ? "invalid_api_key" : type } };
    }
  }
}

function toolIdPrefix(api: StubApi): string {
  return api === "anthropic" ? "toolu_stub_" : api === "gemini" ? "stubcall-" : "call_stub_";
}

function render(api: StubApi, req: RecordedRequest, step: StubStep, defaultUsage: StubUsage, pathname: string): Rendered {
  if ("status" in step) {
    return {
      kind: "raw",
      status: step.status,
      body: step.body ?? JSON.stringify(errorBody(api, step.status)),
      contentType: step.body !== undefined && !/^\s*[[{]/.test(step.body) ? "text/plain" : "application/json",
      headers: step.headers,
    };
  }
  if ("malformed" in step) {
    return {
      kind: "raw",
      status: 200,
      body: 'data: {"type": "message_start", "this is not json\n\nevent: \u0000garbage\ndata: <<<not sse>>>\n}}}\n\n',
      contentType: req.stream ? "text/event-stream" : "application/json",
    };
  }
  const usage = { ...defaultUsage, ...(step.usage ?? {}) };
  const calls: StubToolCall[] = "tools" in step ? step.tools : "tool" in step ? [step] : [];
  const turn: Turn = {
    text: "text" in step ? step.text : undefined,
    calls: calls.map((c) => ({ tool: c.tool, args: c.args ?? {}, id: c.id ?? rid(toolIdPrefix(api)) })),
    usage,
  };
  req.toolCallIds = turn.calls.map((c) => c.id);
  const model = req.model ?? "stub-model";
  switch (api) {
    case "anthropic":
      return renderAnthropic(turn, model, req.stream);
    case "openai-responses":
      return renderResponses(turn, model, req.stream, asRecord(req.body));
    case "openai-chat":
      return renderChat(turn, model, req.stream);
    case "gemini":
      return renderGemini(turn, model, req.stream || /:streamGenerateContent$/.test(pathname));
    default:
      return { kind: "json", status: 404, body: { error: { message: "stub: unknown endpoint", code: 404 } } };
  }
}

function modelList(): unknown {
  const created = Math.floor(Date.now() / 1000);
  const ids = ["stub-model", "claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro", "gemini-2.5-flash"];
  return {
    object: "list",
    has_more: false,
    first_id: ids[0],
    last_id: ids[ids.length - 1],
    data: ids.map((id) => ({ id, object: "model", type: "model", display_name: id, created, created_at: new Date().toISOString(), owned_by: "stub" })),
    models: ids.map((id) => ({
      name: `models/${id}`,
      displayName: id,
      supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
      inputTokenLimit: 1_000_000,
      outputTokenLimit: 64_000,
    })),
  };
}

function sideAnswer(req: RecordedRequest, pathname: string, defaultUsage: StubUsage): Rendered {
  if (req.method === "HEAD" || req.method === "OPTIONS") return { kind: "raw", status: 200, body: "", contentType: "text/plain" };
  if (req.method === "GET") return { kind: "json", status: 200, body: modelList() };
  if (req.api === "other") return { kind: "json", status: 404, body: { error: { message: `stub: no handler for ${req.method} ${pathname}` } } };
  if (/\/count_tokens$|\/count-tokens:rawPredict$/.test(pathname)) return { kind: "json", status: 200, body: { input_tokens: defaultUsage.inputTokens } };
  if (/:countTokens$/.test(pathname)) return { kind: "json", status: 200, body: { totalTokens: defaultUsage.inputTokens } };
  if (/:(embedContent|batchEmbedContents)$/.test(pathname)) return { kind: "json", status: 200, body: { embedding: { values: [0, 0, 0] }, embeddings: [] } };
  if (req.api === "gemini" && /:generateContent$/.test(pathname)) {
    const gc = asRecord(asRecord(req.body).generationConfig);
    const schema = gc.responseJsonSchema ?? gc.responseSchema;
    const value = schema ? exampleFromSchema(schema) : {};
    return render("gemini", req, { text: JSON.stringify(value) }, defaultUsage, pathname);
  }
  return render(req.api, req, { text: "Stub title" }, defaultUsage, pathname);
}

// ------------------------------------------------------------------ conversation normaliser

/** The conversation a request carries, normalised across APIs (system prompt first when present). */
export function conversationOf(req: RecordedRequest): ConversationItem[] {
  const b = asRecord(req.body);
  const out: ConversationItem[] = [];
  const sys = systemPromptOf(req);
  if (sys) out.push({ role: "system", type: "text", text: sys });
  const role = (r: unknown): "user" | "assistant" => (r === "assistant" || r === "model" ? "assistant" : "user");
  switch (req.api) {
    case "anthropic":
      for (const m of (Array.isArray(b.messages) ? b.messages : []).map(asRecord)) {
        if (typeof m.content === "string") {
          out.push({ role: role(m.role), type: "text", text: m.content });
          continue;
        }
        for (const c of (Array.isArray(m.content) ? m.content : []).map(asRecord)) {
          if (c.type === "text") out.push({ role: role(m.role), type: "text", text: String(c.text ?? "") });
          else if (c.type === "tool_use") out.push({ role: "assistant", type: "tool_call", id: String(c.id), name: String(c.name), args: c.input });
          else if (c.type === "tool_result") out.push({ role: "tool", type: "tool_result", id: String(c.tool_use_id), output: textOfContent(c.content) });
        }
      }
      break;
    case "openai-responses": {
      const input = typeof b.input === "string" ? [{ role: "user", content: b.input }] : Array.isArray(b.input) ? b.input : [];
      for (const i of input.map(asRecord)) {
        const t = i.type ?? "message";
        if (t === "message") {
          if (i.role === "system" || i.role === "developer") continue;
          out.push({ role: role(i.role), type: "text", text: textOfContent(i.content) });
        } else if (t === "function_call") {
          let args: unknown = i.arguments;
          try {
            args = JSON.parse(String(i.arguments));
          } catch {
            /* keep string */
          }
          out.push({ role: "assistant", type: "tool_call", id: String(i.call_id), name: String(i.name), args });
        } else if (t === "custom_tool_call") {
          out.push({ role: "assistant", type: "tool_call", id: String(i.call_id), name: String(i.name), args: { input: i.input } });
        } else if (t === "function_call_output" || t === "custom_tool_call_output") {
          out.push({ role: "tool", type: "tool_result", id: String(i.call_id), output: textOfContent(i.output) });
        }
      }
      break;
    }
    case "openai-chat":
      for (const m of (Array.isArray(b.messages) ? b.messages : []).map(asRecord)) {
        if (m.role === "system" || m.role === "developer") continue;
        if (m.role === "tool") {
          out.push({ role: "tool", type: "tool_result", id: String(m.tool_call_id), output: textOfContent(m.content) });
          continue;
        }
        const text = textOfContent(m.content);
        if (text) out.push({ role: role(m.role), type: "text", text });
        for (const tc of (Array.isArray(m.tool_calls) ? m.tool_calls : []).map(asRecord)) {
          const f = asRecord(tc.function);
          let args: unknown = f.arguments;
          try {
            args = JSON.parse(String(f.arguments));
          } catch {
            /* keep string */
          }
          out.push({ role: "assistant", type: "tool_call", id: String(tc.id), name: String(f.name), args });
        }
      }
      break;
    case "gemini":
      for (const c of (Array.isArray(b.contents) ? b.contents : []).map(asRecord)) {
        for (const p of (Array.isArray(c.parts) ? c.parts : []).map(asRecord)) {
          if (typeof p.text === "string") out.push({ role: role(c.role), type: "text", text: p.text });
          else if (p.functionCall) {
            const f = asRecord(p.functionCall);
            out.push({ role: "assistant", type: "tool_call", id: f.id === undefined ? undefined : String(f.id), name: String(f.name), args: f.args });
          } else if (p.functionResponse) {
            const f = asRecord(p.functionResponse);
            out.push({ role: "tool", type: "tool_result", id: f.id === undefined ? undefined : String(f.id), name: String(f.name), output: JSON.stringify(f.response) });
          }
        }
      }
      break;
  }
  return out;
}

// ------------------------------------------------------------------ server

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startStubModel(script: StubScript, options: StubModelOptions = {}): Promise<StubModel> {
  const requests: RecordedRequest[] = [];
  let current: StubScript = script;
  let nextIndex = 0;
  let closed = false;
  const fallback: StubStep = options.fallback ?? { text: "done" };
  const defaultUsage: StubUsage = { ...DEFAULT_USAGE, ...(options.usage ?? {}) };
  const hung = new Set<http.ServerResponse>();
  let limits: Array<StubRateLimit & { answered: number }> = (options.rateLimits ?? []).map((r) => ({ ...r, answered: 0 }));
  /** The rate-limit answer for a model request, when a rule catches it. */
  const rateLimited = (rec: RecordedRequest): Rendered | undefined => {
    const rule = limits.find((r) => (r.times === undefined || r.answered < r.times) && (r.model === undefined || r.model === rec.model));
    if (!rule) return undefined;
    rule.answered++;
    const status = rule.status ?? 429;
    const retryAfter = rule.retryAfter === undefined ? "1" : rule.retryAfter;
    const body = rule.body ?? (status === 503 ? JSON.stringify({ error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } }) : JSON.stringify(errorBody(rec.api, status)));
    return { kind: "raw", status, body, contentType: "application/json", headers: { ...(retryAfter !== null ? { "retry-after": retryAfter } : {}), ...(rule.headers ?? {}) } };
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = decodeBody(Buffer.concat(chunks), req.headers["content-encoding"] as string | undefined);
    let body: unknown = raw === "" ? undefined : raw;
    if (raw !== "") {
      try {
        body = JSON.parse(raw);
      } catch {
        /* raw string */
      }
    }
    const url = new URL(req.url ?? "/", "http://stub");
    const pathname = url.pathname;
    const method = req.method ?? "GET";
    const api = detectApi(method, pathname);
    const b = asRecord(body);
    const geminiModel = /\/models\/([^/:]+):/.exec(pathname)?.[1];
    const rec: RecordedRequest = {
      method,
      path: req.url ?? "/",
      headers: { ...req.headers },
      body,
      api,
      kind: "side",
      stream: b.stream === true || /:(streamGenerateContent|streamRawPredict)$/.test(pathname) || url.searchParams.get("alt") === "sse",
      model: typeof b.model === "string" ? b.model : geminiModel,
      toolCallIds: [],
      receivedAt: Date.now(),
    };
    requests.push(rec);

    let sideReason: string | undefined;
    const custom = options.isSideRequest?.(rec);
    if (typeof custom === "string") sideReason = custom;
    else if (custom === undefined) sideReason = builtinSideReason(rec, pathname);

    let rendered: Rendered;
    let delayMs = 0;
    const limited = sideReason === undefined ? rateLimited(rec) : undefined;
    if (sideReason !== undefined) {
      rec.sideReason = sideReason;
      rendered = sideAnswer(rec, pathname, defaultUsage);
    } else if (limited) {
      rec.kind = "model";
      rec.rateLimited = true;
      rendered = limited;
    } else {
      rec.kind = "model";
      const index = nextIndex++;
      rec.index = index;
      let step: StubStep;
      try {
        step = typeof current === "function" ? current(rec, index) : (current[index] ?? fallback);
      } catch (err) {
        step = { status: 500, body: JSON.stringify({ error: { message: `stub script threw: ${String(err)}` } }) };
      }
      rec.step = step;
      delayMs = step.delayMs ?? 0;
      if ("hang" in step) {
        hung.add(res);
        res.on("close", () => hung.delete(res));
        return;
      }
      rendered = render(api, rec, step, defaultUsage, pathname);
    }
    if (delayMs > 0) await sleep(delayMs);
    if (closed || res.destroyed) return;
    const reqId = rid("req_stub_", 8);
    const common = { "request-id": reqId, "x-request-id": reqId };
    switch (rendered.kind) {
      case "sse":
        res.writeHead(200, { ...common, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
        res.end(sse(rendered.events));
        break;
      case "json":
        res.writeHead(rendered.status, { ...common, "content-type": "application/json", ...(rendered.headers ?? {}) });
        res.end(JSON.stringify(rendered.body));
        break;
      case "raw":
        res.writeHead(rendered.status, { ...common, "content-type": rendered.contentType, ...(rendered.headers ?? {}) });
        res.end(method === "HEAD" ? undefined : rendered.body);
        break;
    }
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `stub crashed: ${String(err)}` } }));
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    modelRequests: () => requests.filter((r) => r.kind === "model"),
    sideRequests: () => requests.filter((r) => r.kind === "side"),
    allText: () => requests.map((r) => (r.body === undefined ? "" : typeof r.body === "string" ? r.body : JSON.stringify(r.body))).join("\n"),
    conversation: (req) => {
      const r = req ?? requests.filter((x) => x.kind === "model").at(-1);
      return r ? conversationOf(r) : [];
    },
    issuedToolCallIds: () => requests.flatMap((r) => r.toolCallIds),
    setScript: (s) => {
      current = s;
      nextIndex = 0;
    },
    setRateLimits: (rules) => {
      limits = rules.map((r) => ({ ...r, answered: 0 }));
    },
    close: async () => {
      closed = true;
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Images and documents a request carries, whatever the wire format: Anthropic
 * `image`/`document` blocks with a base64 source, Gemini `inlineData` /
 * `inline_data`, and any `data:` URI (Responses `input_image`, Chat
 * `image_url`, file parts). `api` says which shape it came in.
 */
export function attachedMediaOf(req: RecordedRequest): { shape: "anthropic-block" | "gemini-inline-data" | "data-uri"; mediaType: string; data: string }[] {
  const out: { shape: "anthropic-block" | "gemini-inline-data" | "data-uri"; mediaType: string; data: string }[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      const m = /^data:([\w/+.-]+);base64,([A-Za-z0-9+/=]+)$/.exec(v);
      if (m) out.push({ shape: "data-uri", mediaType: m[1]!, data: m[2]! });
      return;
    }
    if (Array.isArray(v)) return v.forEach(walk);
    if (typeof v !== "object" || v === null) return;
    const o = v as Record<string, unknown>;
    const src = asRecord(o.source);
    if ((o.type === "image" || o.type === "document") && src.type === "base64" && typeof src.data === "string")
      out.push({ shape: "anthropic-block", mediaType: String(src.media_type), data: src.data });
    const inline = asRecord(o.inlineData ?? o.inline_data);
    if (typeof inline.data === "string") out.push({ shape: "gemini-inline-data", mediaType: String(inline.mimeType ?? inline.mime_type), data: inline.data });
    for (const [k, child] of Object.entries(o)) if (k !== "inlineData" && k !== "inline_data" && !(k === "source" && src.type === "base64")) walk(child);
  };
  walk(req.body);
  return out;
}
