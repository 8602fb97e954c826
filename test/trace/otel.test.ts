/**
 * OpenTelemetry export (issue 16), through dist/main.js as the runner runs it:
 *  - a real CLI (Claude Code, pinned) against the stub model with
 *    `otel-endpoint` pointing at a local OTLP/HTTP receiver: the receiver
 *    decodes one trace (OTLP JSON) whose spans cover the run, each model
 *    request the gateway forwarded (tokens equal to the stub's usage) and
 *    each tool call; the header from OTEL_EXPORTER_OTLP_HEADERS arrives and
 *    is masked in the log;
 *  - a receiver that never answers delays the step by at most the documented
 *    timeout (5 s) and the run still succeeds;
 *  - the gateway's per-request records for every wire API (usage parsing).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { otelEnv, parseOtlpHeaders } from "../../src/config/host.js";
import type { Logger } from "../../src/logger.js";
import { startModelGateway } from "../../src/sandbox/gateway.js";
import { OTEL_EXPORT_TIMEOUT_MS, otelTarget } from "../../src/trace/otel.js";
import { AGENT_PATH } from "../agents/helpers.js";
import { makeRepo } from "../artifacts/helpers.js";
import { runStep } from "../support/harness.js";
import { DEFAULT_USAGE, startStubModel, type StubModel } from "../support/stub-model.js";

// ------------------------------------------------------------------ an OTLP/HTTP receiver (JSON encoding)

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: { key: string; value: AnyValue }[];
  status?: { code?: number; message?: string };
  events?: { name: string }[];
}
interface ReceivedSpan extends Omit<OtlpSpan, "attributes"> {
  attrs: Record<string, unknown>;
  startMs: number;
  endMs: number;
  resource: Record<string, unknown>;
}
interface Receiver {
  url: string;
  requests: { path: string; headers: http.IncomingHttpHeaders; at: number }[];
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

function valueOf(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}
const attrsOf = (list: { key: string; value: AnyValue }[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
const nanosToMs = (n: string | number) => Number(BigInt(String(n)) / 1_000_000n);

/** `answer: false`: reads the request and never responds (a dead collector that accepts connections). */
async function startReceiver(opts: { answer: boolean }): Promise<Receiver> {
  const requests: Receiver["requests"] = [];
  const spans: ReceivedSpan[] = [];
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    requests.push({ path: req.url ?? "", headers: req.headers, at: Date.now() });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const doc = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans: { resource?: { attributes?: { key: string; value: AnyValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const rs of doc.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({ ...s, attrs: attrsOf(s.attributes), startMs: nanosToMs(s.startTimeUnixNano), endMs: nanosToMs(s.endTimeUnixNano), resource: attrsOf(rs.resource?.attributes) });
      if (!opts.answer) {
        open.add(res);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans,
    close: () =>
      new Promise((r) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ------------------------------------------------------------------ the run

const KEY = "sk-ant-test-key-otel-0123456789abcdef";
const HEADER_SECRET = "otel-ingest-key-7f3a9c1e5b";
let stub: StubModel;
let receiver: Receiver;

beforeAll(async () => {
  stub = await startStubModel([]);
  receiver = await startReceiver({ answer: true });
});
afterAll(async () => {
  await stub?.close();
  await receiver?.close();
});

describe("OTLP export of a real CLI's run", () => {
  it("one trace: the run span, a span per model request with the stub's token counts, a span per tool call", async () => {
    const ws = makeRepo({ "README.md": "# otel\n" });
    stub.setScript([
      { tool: "Write", args: { file_path: path.join(ws, "notes.txt"), content: "traced\n" } },
      { tool: "Bash", args: { command: "echo ok > bash.txt" } },
      { text: "Done: **traced**." },
    ]);
    const before = stub.requests.length;
    const main = await runStep("main", {
      workspace: ws,
      inputs: {
        agent: "claude",
        model: "claude-sonnet-4-5",
        "base-url": stub.url,
        secrets: `ANTHROPIC_API_KEY=${KEY}`,
        "agent-version": "preinstalled",
        sandbox: "none",
        prompt: "write notes.txt, run the command, then answer",
        "upload-artifacts": "false",
        "otel-endpoint": receiver.url,
      },
      env: { PATH: AGENT_PATH, OTEL_EXPORTER_OTLP_HEADERS: `x-ingest-key=${HEADER_SECRET}`, GITHUB_WORKFLOW: "agent" },
      timeoutMs: 120_000,
    });
    expect(main.exitCode, main.log + main.stderr).toBe(0);
    expect(main.outputs.conclusion).toBe("success");

    // One OTLP/HTTP request, JSON, with the header from the runner's environment, masked in the log.
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.path).toBe("/v1/traces");
    expect(receiver.requests[0]!.headers["content-type"]).toBe("application/json");
    expect(receiver.requests[0]!.headers["x-ingest-key"]).toBe(HEADER_SECRET);
    expect(main.masks).toContain(HEADER_SECRET);
    expect(main.rawStdout.replace(/^::add-mask::.*$/gm, "")).not.toContain(HEADER_SECRET);
    const exported = /OpenTelemetry: exported trace [0-9a-f]{32} \((\d+) spans\) to http:\/\/127\.0\.0\.1:\d+\/v1\/traces in (\d+) ms\./.exec(main.log);
    expect(exported, main.log).not.toBeNull();
    console.info(`[otel] live collector: ${exported![1]} spans exported in ${exported![2]} ms`);

    const spans = receiver.spans;
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const roots = spans.filter((s) => !s.parentSpanId);
    expect(roots.map((s) => s.name)).toEqual(["invoke_agent claude"]);
    const root = roots[0]!;
    expect(root.resource["service.name"]).toBe("agent-runner");
    const usage = JSON.parse(main.outputs.usage!) as { inputTokens: number; outputTokens: number; cachedTokens: number };
    expect(root.attrs).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "claude",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.conversation.id": main.outputs["session-id"],
      "gen_ai.usage.input_tokens": usage.inputTokens,
      "gen_ai.usage.output_tokens": usage.outputTokens,
      "agent_runner.conclusion": "success",
      "github.repository": "octo/repo",
      "github.run_id": "1001",
      "github.workflow": "agent",
      "cicd.pipeline.run.id": "1001",
      "vcs.repository.name": "octo/repo",
      "agent_runner.tool_calls": 2,
      "agent_runner.changed_files": 2,
    });
    for (const s of spans) expect(s.attrs["x-ingest-key"]).toBeUndefined();

    // Every child lies inside the run span and hangs off it.
    for (const s of spans.filter((x) => x !== root)) {
      expect(s.parentSpanId).toBe(root.spanId);
      expect(s.startMs).toBeGreaterThanOrEqual(root.startMs);
      expect(s.endMs).toBeLessThanOrEqual(root.endMs);
      expect(s.endMs).toBeGreaterThanOrEqual(s.startMs);
    }

    // One CLIENT span per model request that reached the stub through the gateway, each with the stub's usage.
    const inference = stub.requests.slice(before).filter((r) => r.method === "POST" && /\/v1\/messages$/.test(new URL(r.path, "http://x").pathname));
    const chat = spans.filter((s) => s.attrs["gen_ai.operation.name"] === "chat");
    expect(chat).toHaveLength(inference.length);
    expect(chat.length).toBeGreaterThanOrEqual(3);
    for (const s of chat) {
      expect(s.kind).toBe(3);
      expect(s.name).toBe(`chat ${s.attrs["gen_ai.request.model"]}`);
      expect(s.attrs).toMatchObject({
        "gen_ai.provider.name": "anthropic",
        "gen_ai.usage.input_tokens": DEFAULT_USAGE.inputTokens + DEFAULT_USAGE.cachedInputTokens + DEFAULT_USAGE.cacheWriteTokens,
        "gen_ai.usage.output_tokens": DEFAULT_USAGE.outputTokens,
        "gen_ai.usage.cache_read.input_tokens": DEFAULT_USAGE.cachedInputTokens,
        "gen_ai.usage.cache_creation.input_tokens": DEFAULT_USAGE.cacheWriteTokens,
        "http.response.status_code": 200,
      });
      expect(String(s.attrs["gen_ai.response.id"])).toMatch(/^msg_stub_/);
    }
    // The main conversation's requests add up to the usage the step reported.
    const mainModel = chat.filter((s) => s.attrs["gen_ai.request.model"] === "claude-sonnet-4-5");
    expect(mainModel.reduce((n, s) => n + Number(s.attrs["gen_ai.usage.output_tokens"]), 0)).toBe(usage.outputTokens);

    // One INTERNAL span per tool call, named and identified as the model issued them.
    const tools = spans.filter((s) => s.attrs["gen_ai.operation.name"] === "execute_tool");
    expect(tools.map((s) => s.name)).toEqual(["execute_tool Write", "execute_tool Bash"]);
    const issued = stub.issuedToolCallIds();
    for (const s of tools) {
      expect(s.kind).toBe(1);
      expect(issued).toContain(s.attrs["gen_ai.tool.call.id"]);
      expect(s.status?.code ?? 0).not.toBe(2);
    }
  });
});

describe("a collector that never answers", () => {
  it("costs the step at most the documented timeout, and the run still succeeds", async () => {
    const dead = await startReceiver({ answer: false });
    try {
      const ws = makeRepo({ "README.md": "# dead collector\n" });
      const main = await runStep("main", {
        workspace: ws,
        inputs: { agent: "command", "agent-command": "bash -c 'echo hi > hi.txt'", prompt: "x", sandbox: "none", "upload-artifacts": "false", "otel-endpoint": dead.url },
        env: { PATH: AGENT_PATH },
        timeoutMs: 60_000,
      });
      const exited = Date.now();
      expect(main.exitCode, main.log + main.stderr).toBe(0);
      expect(main.outputs.conclusion).toBe("success");
      expect(dead.requests.length).toBeGreaterThanOrEqual(1);
      // From the moment the export reached the collector to the step's exit.
      const delay = exited - dead.requests[0]!.at;
      console.info(`[otel] dead collector: step exited ${delay} ms after the export request (budget ${OTEL_EXPORT_TIMEOUT_MS} ms)`);
      expect(delay).toBeLessThanOrEqual(OTEL_EXPORT_TIMEOUT_MS + 1500);
      const m = /OpenTelemetry: exporting the trace to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed after (\d+) ms/.exec(main.log);
      expect(m, main.log).not.toBeNull();
      expect(Number(m![1])).toBeLessThanOrEqual(OTEL_EXPORT_TIMEOUT_MS + 250);
      expect(main.log).toContain("the run is not affected");
    } finally {
      await dead.close();
    }
  });
});

// ------------------------------------------------------------------ configuration

describe("where the trace goes", () => {
  it("otel-endpoint wins; a bare origin gets /v1/traces; the runner's variables follow the OTLP spec", () => {
    expect(otelTarget({ otel: { endpoint: "http://c:4318" } }, undefined)).toEqual({ url: "http://c:4318/v1/traces", headers: {}, source: "otel-endpoint" });
    expect(otelTarget({ otel: { endpoint: "https://c/custom/path" } }, undefined)?.url).toBe("https://c/custom/path");
    const env = otelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://base:4318/otlp/", OTEL_EXPORTER_OTLP_HEADERS: "a=1,b=x%20y", OTEL_EXPORTER_OTLP_TRACES_HEADERS: "b=2" });
    expect(env).toEqual({ endpoint: "http://base:4318/otlp/", headers: { a: "1", b: "2" } });
    expect(otelTarget({}, env)).toEqual({ url: "http://base:4318/otlp/v1/traces", headers: { a: "1", b: "2" }, source: "OTEL_EXPORTER_OTLP_ENDPOINT" });
    expect(otelTarget({}, otelEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:1/x", OTEL_EXPORTER_OTLP_ENDPOINT: "http://b" }))?.url).toBe("http://t:1/x");
    expect(otelTarget({}, otelEnv({}))).toBeUndefined();
    const warnings: string[] = [];
    const log: Logger = { debug: () => {}, info: () => {}, warning: (m) => warnings.push(m), error: () => {}, group: (_t, f) => f() };
    expect(otelTarget({}, otelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }), log)).toBeUndefined();
    expect(warnings.join()).toContain("OTEL_EXPORTER_OTLP_ENDPOINT is not an http(s) URL");
    expect(parseOtlpHeaders("k = v , bad, =x, e=a%2Cb")).toEqual({ k: "v", e: "a,b" });
  });
});

// ------------------------------------------------------------------ per-request records, every wire API

describe("the gateway's per-request records", () => {
  const silent: Logger = { debug: () => {}, info: () => {}, warning: () => {}, error: () => {}, group: (_t, f) => f() };
  const usage = { inputTokens: 70, cachedInputTokens: 30, cacheWriteTokens: 5, outputTokens: 11 };

  async function post(url: string, pathAndQuery: string, headers: Record<string, string>, body: unknown): Promise<string> {
    const res = await fetch(url + pathAndQuery, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    return res.text();
  }

  it.each([
    { provider: "anthropic" as const, path: "/v1/messages", model: "claude-x", stream: true, input: 105, cached: 30, write: 5 },
    { provider: "anthropic" as const, path: "/v1/messages", model: "claude-x", stream: false, input: 105, cached: 30, write: 5 },
    { provider: "openai" as const, path: "/v1/responses", model: "gpt-x", stream: true, input: 100, cached: 30 },
    { provider: "openai" as const, path: "/v1/responses", model: "gpt-x", stream: false, input: 100, cached: 30 },
    { provider: "openai" as const, path: "/v1/chat/completions", model: "gpt-x", stream: true, input: 100, cached: 30 },
    { provider: "gemini" as const, path: "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", model: "gemini-x", stream: true, input: 100, cached: 30 },
    { provider: "gemini" as const, path: "/v1beta/models/gemini-x:generateContent", model: "gemini-x", stream: false, input: 100, cached: 30 },
  ])("$provider $path (stream: $stream): model, status and usage as the stub reported them", async (c) => {
    const s = await startStubModel([{ text: "hello" }], { usage });
    const gw = await startModelGateway({ provider: c.provider, upstream: c.provider === "openai" ? `${s.url}/v1` : s.url, apiKey: "k", log: silent });
    try {
      const auth: Record<string, string> = c.provider === "anthropic" ? { "x-api-key": gw.placeholderKey } : c.provider === "openai" ? { authorization: `Bearer ${gw.placeholderKey}` } : { "x-goog-api-key": gw.placeholderKey };
      const body =
        c.provider === "gemini"
          ? { contents: [{ role: "user", parts: [{ text: "hi" }] }] }
          : c.path.endsWith("responses")
            ? { model: c.model, input: "hi", stream: c.stream }
            : { model: c.model, messages: [{ role: "user", content: "hi" }], stream: c.stream, max_tokens: 10 };
      await post(gw.url, c.path, auth, body);
      await new Promise((r) => setTimeout(r, 50));
      const [rec] = gw.requestLog();
      expect(rec).toMatchObject({
        method: "POST",
        path: c.path.split("?")[0],
        operation: c.provider === "gemini" ? "generate_content" : "chat",
        status: 200,
        stream: c.stream,
        requestModel: c.model,
        usage: { inputTokens: c.input, outputTokens: 11, cachedTokens: c.cached, ...(c.write !== undefined ? { cacheWriteTokens: c.write } : {}) },
      });
      expect(rec!.durationMs).toBeGreaterThanOrEqual(0);
      expect(rec!.responseModel ?? rec!.requestModel).toBe(c.model);
    } finally {
      await gw.close();
      await s.close();
    }
  });

  it("records an upstream error with its provider error type", async () => {
    const s = await startStubModel([{ status: 429 }]);
    const gw = await startModelGateway({ provider: "anthropic", upstream: s.url, apiKey: "k", log: silent });
    try {
      await post(gw.url, "/v1/messages", { "x-api-key": gw.placeholderKey }, { model: "m", messages: [], stream: true });
      await new Promise((r) => setTimeout(r, 50));
      expect(gw.requestLog()[0]).toMatchObject({ status: 429, errorType: "rate_limit_error", requestModel: "m" });
    } finally {
      await gw.close();
      await s.close();
    }
  });
});
