/**
 * One record per model request the gateway forwarded: what was asked for
 * (model, stream), what came back (status, model, response id, finish
 * reasons, token usage) and how long it took. The gateway hands each
 * upstream response to `observe`, which reads a copy of the stream as it
 * passes (the agent's copy is never held back or changed) and keeps only
 * those few fields. The records become per-request spans (otel.ts) and sit
 * in result.json (`metadata.modelRequests`).
 *
 * Usage is read the way each wire API reports it, in the runner's one
 * convention (events.ts, agents/common.ts): `inputTokens` counts every prompt
 * token, cache reads and writes included; `cachedTokens` is the cache-read part.
 */
import type { IncomingMessage } from "node:http";
import type { Transform } from "node:stream";
import zlib from "node:zlib";
import type { ModelProvider } from "../shared/agents.js";

export interface ModelRequestUsage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  /** Anthropic cache writes (part of inputTokens). */
  cacheWriteTokens?: number;
}

export interface ModelRequestRecord {
  /** Epoch ms when the gateway forwarded the request. */
  startedAt: number;
  /** Until the response's last byte (or until it was cut off). */
  durationMs: number;
  /** Until the response headers arrived. */
  firstByteMs?: number;
  method: string;
  path: string;
  /** GenAI operation (`chat`, `generate_content`), absent for model lists and token counts. */
  operation?: "chat" | "generate_content";
  status?: number;
  stream: boolean;
  requestModel?: string;
  responseModel?: string;
  responseId?: string;
  finishReasons?: string[];
  usage?: ModelRequestUsage;
  /** When a price is known for the model (the gateway's budget accounting may fill it). */
  costUsd?: number;
  /** Provider error type (`rate_limit_error`, `RESOURCE_EXHAUSTED`, …) or `aborted`. */
  errorType?: string;
  /**
   * A rate-limited or overloaded answer the gateway held back from the agent
   * (sandbox/gateway-retry.ts): what it did next (`retry` after `waitMs`, a
   * fallback model, or give up and answer the agent).
   */
  retry?: { reason: "rate_limited" | "overloaded"; next: "retry" | "fallback" | "give-up"; waitMs?: number };
  /** Sent to a fallback model (`fallback-models`) in place of this model, which the request asked for. */
  fallbackFor?: string;
}

/** Requests recorded per run; a run making more keeps the first ones and counts the rest. */
const MAX_RECORDS = 5000;
/**
 * A JSON body (or one SSE event) larger than this is not parsed; the request
 * is still recorded, and under a budget counted at its whole reservation.
 */
const MAX_PARSED_BYTES = 16 * 1024 * 1024;

/** Turns a binary streamed body (a cloud's event stream) into the JSON documents it carries (sandbox/cloud/). */
export interface ResponseFrames {
  push(chunk: Buffer): unknown[];
}

/** One forwarded request as the recorder sees it. */
export interface ObservedRequest<Tag> {
  method: string;
  /** The wire route (a cloud's own route is given as the wire route it counts as). */
  path: string;
  body: Buffer;
  startedAt: number;
  tag?: Tag;
  /** The model when the path names it (a cloud's route), not the body. */
  requestModel?: string;
  /** Set when the route streams whatever the body says (a cloud's streaming route). */
  stream?: boolean;
  /** For a binary streamed response: its decoder (AWS event stream). */
  frames?: ResponseFrames;
  /** The model the agent asked for, when the gateway sent the request to a fallback model instead. */
  fallbackFor?: string;
}

/** `Tag`: what the gateway hands along with a request to its completion (the budget reservation). */
export class ModelRequestRecorder<Tag = undefined> {
  private readonly list: ModelRequestRecord[] = [];
  private dropped = 0;

  /**
   * `onComplete` sees each record once its response has ended (or was cut
   * off), usage filled in, before anyone reads it: the gateway's usage meter
   * (sandbox/usage-meter.ts) adds it to the run's totals and sets `costUsd`.
   * It also sees requests past MAX_RECORDS, which are not kept.
   */
  constructor(
    private readonly provider: ModelProvider,
    private readonly onComplete?: (record: ModelRequestRecord, tag: Tag | undefined) => void,
  ) {}

  /**
   * Called by the gateway when the upstream answered. Never throws and never
   * consumes the stream on its own: it listens next to the pipe to the agent.
   */
  observe(request: ObservedRequest<Tag>, response: IncomingMessage): ModelRequestRecord | undefined {
    try {
      const keep = this.list.length < MAX_RECORDS;
      if (!keep) this.dropped++;
      if (!keep && !this.onComplete) return undefined;
      const record = requestRecord(this.provider, request);
      if (request.requestModel) record.requestModel = request.requestModel;
      if (request.fallbackFor) record.fallbackFor = request.fallbackFor;
      if (request.stream) record.stream = true;
      record.firstByteMs = Date.now() - request.startedAt;
      record.status = response.statusCode;
      if (keep) this.list.push(record);
      // The request body is read once the response is on its way to the agent (or at its end, whichever is first).
      let bodyRead = false;
      const readBody = () => {
        if (bodyRead) return;
        bodyRead = true;
        try {
          Object.assign(record, bodyFields(request.body, record));
        } catch {
          // A body that cannot be read names no model; it runs outside the try below.
        }
      };
      setImmediate(readBody);
      const reader = new ResponseReader(this.provider, String(response.headers["content-type"] ?? ""), request.frames);
      let done = false;
      /** `cut`: why the usage read may be incomplete (the budget then counts the whole reservation). */
      const finish = (cut?: "aborted" | "undecodable") => {
        if (done) return;
        done = true;
        readBody();
        record.durationMs = Date.now() - request.startedAt;
        Object.assign(record, reader.result());
        if (!cut && reader.oversize) record.errorType = "too_large";
        // The cut wins over an error type read from the body: it is why the usage may be short.
        if (cut) record.errorType = cut;
        try {
          this.onComplete?.(record, request.tag);
        } catch {
          // Metering must never break forwarding either.
        }
      };
      const decoder = decoderFor(response.headers["content-encoding"]);
      if (decoder === "unknown") {
        // An encoding this Node.js cannot decode: passed through, its usage unread.
        response.on("end", () => finish("undecodable"));
      } else if (decoder) {
        decoder.on("data", (c: Buffer) => reader.push(c));
        decoder.on("error", () => finish("undecodable"));
        decoder.on("end", () => finish());
        response.on("data", (c: Buffer) => decoder.write(c));
        response.on("end", () => decoder.end());
      } else {
        response.on("data", (c: Buffer) => reader.push(c));
        response.on("end", () => finish());
      }
      response.on("close", () => {
        if (!response.complete) finish("aborted");
      });
      return record;
    } catch {
      // Observing must never break forwarding.
      return undefined;
    }
  }

  records(): ModelRequestRecord[] {
    return this.list.map((r) => ({ ...r }));
  }

  /** Requests past MAX_RECORDS, not recorded. */
  droppedCount(): number {
    return this.dropped;
  }
}

/** The decoder for a response's Content-Encoding; undefined for none, `unknown` for one this Node.js cannot decode. */
function decoderFor(encoding: string | string[] | undefined): Transform | "unknown" | undefined {
  switch (String(encoding ?? "").trim().toLowerCase()) {
    case "":
    case "identity":
      return undefined;
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip();
    case "deflate":
      return zlib.createInflate();
    case "br":
      return zlib.createBrotliDecompress();
    // Node 22.15+/24 (the action's runtime); older ones lack it.
    case "zstd":
      return typeof zlib.createZstdDecompress === "function" ? zlib.createZstdDecompress() : "unknown";
    default:
      return "unknown";
  }
}

/** The model and stream flag the request body asks for (Gemini names the model in the path instead). */
function bodyFields(raw: Buffer, record: ModelRequestRecord): Pick<ModelRequestRecord, "requestModel" | "stream"> {
  const body = raw.length && raw.length <= MAX_PARSED_BYTES ? objectOf(parseJson(raw.toString("utf8"))) : {};
  return {
    stream: record.stream || body.stream === true,
    ...(record.requestModel ? { requestModel: record.requestModel } : typeof body.model === "string" && body.model ? { requestModel: body.model } : {}),
  };
}

function requestRecord(provider: ModelProvider, request: { method: string; path: string; startedAt: number }): ModelRequestRecord {
  const geminiCall = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(request.path);
  const operation =
    provider === "gemini"
      ? geminiCall
        ? ("generate_content" as const)
        : undefined
      : /^\/v1\/(messages|responses|responses\/compact|chat\/completions)$/.test(request.path)
        ? ("chat" as const)
        : undefined;
  const model = geminiCall?.[1];
  return {
    startedAt: request.startedAt,
    durationMs: 0,
    method: request.method,
    path: request.path,
    ...(operation ? { operation } : {}),
    stream: geminiCall?.[2] === "streamGenerateContent",
    ...(model ? { requestModel: model } : {}),
  };
}

type Fields = Pick<ModelRequestRecord, "responseModel" | "responseId" | "finishReasons" | "usage" | "errorType">;

/** Reads a response body (SSE events or one JSON document) for the fields a record keeps, in bounded memory. */
class ResponseReader {
  private readonly sse: boolean;
  private pending = "";
  private eventData: string[] = [];
  private eventBytes = 0;
  private json: Buffer[] = [];
  private jsonBytes = 0;
  private readonly fields: Fields = {};
  private readonly finish = new Set<string>();
  private readonly decoder = new TextDecoder();
  /** A body or event was too large to parse: the usage read may be missing or an earlier, smaller count. */
  oversize = false;

  constructor(
    private readonly provider: ModelProvider,
    contentType: string,
    private readonly frames?: ResponseFrames,
  ) {
    this.sse = /text\/event-stream/i.test(contentType);
  }

  push(chunk: Buffer): void {
    if (this.frames) {
      for (const doc of this.frames.push(chunk)) this.read(objectOf(doc));
      return;
    }
    if (!this.sse) {
      this.jsonBytes += chunk.length;
      if (this.jsonBytes <= MAX_PARSED_BYTES) this.json.push(chunk);
      return;
    }
    const text = this.pending + this.decoder.decode(chunk, { stream: true });
    const lines = text.split(/\r?\n/);
    this.pending = lines.pop() ?? "";
    for (const line of lines) this.line(line);
  }

  result(): Fields {
    if (this.frames) {
      // Every document was read as its frame arrived.
    } else if (this.sse) {
      if (this.pending) this.line(this.pending);
      this.line("");
    } else if (this.jsonBytes > MAX_PARSED_BYTES) this.oversize = true;
    else {
      const doc = parseJson(Buffer.concat(this.json).toString("utf8"));
      // Gemini's streamGenerateContent without alt=sse answers one JSON array of chunks.
      for (const item of Array.isArray(doc) ? doc : [doc]) this.read(objectOf(item));
    }
    if (this.finish.size) this.fields.finishReasons = [...this.finish];
    return this.fields;
  }

  private line(line: string): void {
    if (line === "") {
      if (this.eventBytes > MAX_PARSED_BYTES) this.oversize = true;
      else if (this.eventData.length) {
        const data = this.eventData.join("\n");
        if (data !== "[DONE]") this.read(objectOf(parseJson(data)));
      }
      this.eventData = [];
      this.eventBytes = 0;
      return;
    }
    if (!line.startsWith("data:")) return;
    this.eventBytes += line.length;
    if (this.eventBytes <= MAX_PARSED_BYTES) this.eventData.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  }

  private read(o: Record<string, unknown>): void {
    if (o.error !== undefined) this.fields.errorType = errorTypeOf(o.error);
    if (this.provider === "anthropic") this.anthropic(o);
    else if (this.provider === "openai") this.openai(o);
    else this.gemini(o);
  }

  private anthropic(o: Record<string, unknown>): void {
    const message = o.type === "message_start" ? objectOf(o.message) : o.type === "message" ? o : undefined;
    if (message) {
      this.identity(message.model, message.id);
      this.anthropicUsage(objectOf(message.usage));
      this.reason(message.stop_reason);
    }
    if (o.type === "message_delta") {
      this.anthropicUsage(objectOf(o.usage));
      this.reason(objectOf(o.delta).stop_reason);
    }
  }

  /** message_delta's counts are cumulative and may repeat the input side: the latest value of each wins. */
  private anthropicUsage(u: Record<string, unknown>): void {
    if (!Object.keys(u).length) return;
    const prev = this.fields.usage;
    const uncached = num(u.input_tokens) ?? (prev ? prev.inputTokens - prev.cachedTokens - (prev.cacheWriteTokens ?? 0) : 0);
    const cacheRead = num(u.cache_read_input_tokens) ?? prev?.cachedTokens ?? 0;
    const cacheWrite = num(u.cache_creation_input_tokens) ?? prev?.cacheWriteTokens ?? 0;
    this.fields.usage = {
      inputTokens: uncached + cacheRead + cacheWrite,
      outputTokens: num(u.output_tokens) ?? prev?.outputTokens ?? 0,
      cachedTokens: cacheRead,
      cacheWriteTokens: cacheWrite,
    };
  }

  private openai(o: Record<string, unknown>): void {
    // Responses API: the final event carries the whole response; non-streamed, the body is the response.
    // Compaction (`/v1/responses/compact`) answers one `response.compaction` object with its usage.
    const response =
      typeof o.type === "string" && o.type.startsWith("response.") ? objectOf(o.response) : o.object === "response" || o.object === "response.compaction" ? o : undefined;
    if (response && Object.keys(response).length) {
      this.identity(response.model, response.id);
      const u = objectOf(response.usage);
      if (Object.keys(u).length)
        this.fields.usage = {
          inputTokens: num(u.input_tokens) ?? 0,
          outputTokens: num(u.output_tokens) ?? 0,
          cachedTokens: num(objectOf(u.input_tokens_details).cached_tokens) ?? 0,
        };
      if (response.status === "incomplete") this.reason(objectOf(response.incomplete_details).reason ?? "incomplete");
      else if (response.status === "completed" || response.status === "failed") this.reason(response.status);
      if (response.error) this.fields.errorType = errorTypeOf(response.error);
      return;
    }
    // Chat Completions, streamed chunks or one completion.
    if (typeof o.object === "string" && o.object.startsWith("chat.completion")) {
      this.identity(o.model, o.id);
      for (const c of Array.isArray(o.choices) ? o.choices : []) this.reason(objectOf(c).finish_reason);
      const u = objectOf(o.usage);
      if (Object.keys(u).length)
        this.fields.usage = {
          inputTokens: num(u.prompt_tokens) ?? 0,
          outputTokens: num(u.completion_tokens) ?? 0,
          cachedTokens: num(objectOf(u.prompt_tokens_details).cached_tokens) ?? 0,
        };
    }
  }

  private gemini(o: Record<string, unknown>): void {
    this.identity(o.modelVersion, o.responseId);
    for (const c of Array.isArray(o.candidates) ? o.candidates : []) this.reason(objectOf(c).finishReason);
    const u = objectOf(o.usageMetadata);
    // Each chunk may carry usage; the last one holds the totals.
    if (Object.keys(u).length)
      this.fields.usage = {
        inputTokens: num(u.promptTokenCount) ?? 0,
        outputTokens: (num(u.candidatesTokenCount) ?? 0) + (num(u.thoughtsTokenCount) ?? 0),
        cachedTokens: num(u.cachedContentTokenCount) ?? 0,
      };
  }

  private identity(model: unknown, id: unknown): void {
    if (typeof model === "string" && model) this.fields.responseModel = model;
    if (typeof id === "string" && id) this.fields.responseId = id;
  }

  private reason(r: unknown): void {
    if (typeof r === "string" && r && this.finish.size < 10) this.finish.add(r);
  }
}

function errorTypeOf(error: unknown): string {
  const e = objectOf(error);
  for (const v of [e.type, e.status, e.code]) if (typeof v === "string" && v) return v.slice(0, 100);
  return "error";
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function objectOf(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}
