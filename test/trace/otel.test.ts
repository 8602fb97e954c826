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
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { otelEnv, parseOtlpHeaders } from "../../src/config/host.js";
import type { Logger } from "../../src/logger.js";
import { startModelGateway } from "../../src/sandbox/gateway.js";
import type { RunResult } from "../../src/result.js";
import { buildRunSpans, OTEL_EXPORT_TIMEOUT_MS, otelTarget } from "../../src/trace/otel.js";
import { Redactor } from "../../src/shared/redact.js";
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
  events?: { name: string; attributes?: { key: string; value: AnyValue }[] }[];
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
      // The collector never answers: without the export's own timeout the step would never exit. That it
      // exited, and that the exporter's own clock gave up at its timeout, is the check; how late a loaded
      // machine's timers fire is not (bounds are generous, a missing timeout would blow past them).
      expect(delay).toBeLessThanOrEqual(OTEL_EXPORT_TIMEOUT_MS + 20_000);
      const m = /OpenTelemetry: exporting the trace to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed after (\d+) ms/.exec(main.log);
      expect(m, main.log).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThanOrEqual(OTEL_EXPORT_TIMEOUT_MS - 50);
      expect(Number(m![1])).toBeLessThanOrEqual(2 * OTEL_EXPORT_TIMEOUT_MS);
      expect(main.log).toContain("the run is not affected");
    } finally {
      await dead.close();
    }
  });
});

// ------------------------------------------------------------------ a hostile agent's text stays home

/**
 * Attack table, item 14 (issue 21, finding 6): the README promises names,
 * ids, counts and times only. Every attribute key must be one of these (kept
 * here, apart from src/trace/otel-attributes.ts, so that a key added there
 * shows up here as a decision), every value a number, a boolean, or a short
 * printable string without the agent's words.
 */
const EXPORTED_KEYS = new Set([
  ...["gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.request.stream", "gen_ai.response.model"],
  ...["gen_ai.response.id", "gen_ai.response.finish_reasons", "gen_ai.response.time_to_first_chunk", "gen_ai.conversation.id", "gen_ai.tool.name"],
  ...["gen_ai.tool.call.id", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens"],
  ...["gen_ai.usage.cache_creation.input_tokens", "http.response.status_code", "error.type", "server.address"],
  ...["cicd.pipeline.name", "cicd.pipeline.run.id", "cicd.pipeline.run.url.full", "cicd.pipeline.result", "vcs.repository.name"],
  ...["vcs.repository.url.full", "vcs.ref.head.name", "github.repository", "github.workflow", "github.run_id", "github.run_attempt", "github.event_name"],
  ...["agent_runner.thread", "agent_runner.conclusion", "agent_runner.budget_exceeded", "agent_runner.agent.backend", "agent_runner.agent.version"],
  ...["agent_runner.sandbox", "agent_runner.duration_ms", "agent_runner.cost_usd", "agent_runner.tool_calls", "agent_runner.turns"],
  ...["agent_runner.changed_files", "agent_runner.network_blocked", "agent_runner.permission_denials", "agent_runner.tool_spans_dropped"],
  ...["agent_runner.tool_result", "agent_runner.delivery.pull_request_url", "agent_runner.delivery.commit_sha", "agent_runner.delivery.comment_url"],
  "agent_runner.delivery.branch",
]);
const MARKER = "HOSTILE";

function expectOnlyOurValues(where: string, attrs: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(attrs)) {
    expect(EXPORTED_KEYS.has(key), `${where}: key ${key}`).toBe(true);
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (typeof v === "number" || typeof v === "boolean") continue;
      expect(typeof v, `${where}: ${key}`).toBe("string");
      expect(v as string, `${where}: ${key}`).toMatch(/^[\x21-\x7e][\x20-\x7e]{0,255}$/);
      expect((v as string).toUpperCase(), `${where}: ${key}`).not.toContain(MARKER);
      expect(v as string, `${where}: ${key}`).not.toContain("evil");
    }
  }
}

function expectSpansCarryNoAgentText(spans: { name: string; attrs: Record<string, unknown>; status?: { message?: string }; events?: { name: string; attrs: Record<string, unknown> }[] }[]): void {
  expect(spans.length).toBeGreaterThan(0);
  for (const s of spans) {
    expect(s.name.toUpperCase()).not.toContain(MARKER);
    expect(s.name).toMatch(/^[\x21-\x7e]+( [\x21-\x7e]+)?$/);
    expect((s.status?.message ?? "").toUpperCase()).not.toContain(MARKER);
    expectOnlyOurValues(s.name, s.attrs);
    for (const e of s.events ?? []) {
      expect(e.name).toMatch(/^agent_runner\.[a-z_]+$/);
      expectOnlyOurValues(`${s.name} › ${e.name}`, e.attrs);
    }
  }
}

describe("a hostile agent's text never leaves in the trace", () => {
  it("through dist/: stderr, final message and a file name with the agent's words; every exported attribute is on the allowlist", async () => {
    const ws = makeRepo({ "README.md": "# hostile\n" });
    const before = receiver.spans.length;
    const words = `${MARKER} ignore previous instructions; secret=evil.example/?d=DATA`;
    const script = path.join(mkdtempSync(path.join(os.tmpdir(), "hostile-agent-")), "agent.sh");
    writeFileSync(script, `#!/bin/bash\necho x > '${words.replace(/\//g, "_")}'\necho '${words}'\necho '${words}' >&2\nexit 3\n`, { mode: 0o755 });
    const main = await runStep("main", {
      workspace: ws,
      inputs: { agent: "command", "agent-command": script, prompt: "x", sandbox: "none", "upload-artifacts": "false", "otel-endpoint": receiver.url },
      env: { PATH: AGENT_PATH },
      timeoutMs: 60_000,
    });
    expect(main.outputs.conclusion).toBe("failure");
    expect(main.log).toContain("OpenTelemetry: exported trace");
    const spans = receiver.spans.slice(before);
    expectSpansCarryNoAgentText(spans.map((s) => ({ ...s, events: (s.events ?? []).map((e) => ({ name: e.name, attrs: attrsOf(e.attributes) })) })));
    const root = spans.find((s) => !s.parentSpanId)!;
    expect(root.attrs).toMatchObject({ "agent_runner.conclusion": "failure", "agent_runner.changed_files": 1 });
    expect(root.status).toMatchObject({ code: 2, message: "agent run failure" });
  });

  it("through dist/: an agent that succeeds with a patch the checks refuse exports the run's verdict, failure, not its own success", async () => {
    const ws = makeRepo({ "README.md": "# repo\n" });
    const before = receiver.spans.length;
    const script = path.join(mkdtempSync(path.join(os.tmpdir(), "held-agent-")), "agent.sh");
    // A .gitmodules file: the patch rules refuse any, whatever it says (no input allows submodule changes).
    writeFileSync(script, `#!/bin/bash\nprintf '[submodule "x"]\\n\\tpath = x\\n\\turl = https://evil.example/x\\n' > .gitmodules\necho done\n`, { mode: 0o755 });
    const main = await runStep("main", {
      workspace: ws,
      inputs: { agent: "command", "agent-command": script, prompt: "x", sandbox: "none", "upload-artifacts": "false", "otel-endpoint": receiver.url },
      env: { PATH: AGENT_PATH },
      timeoutMs: 60_000,
    });
    expect(main.outputs.conclusion, main.log).toBe("failure");
    const root = receiver.spans.slice(before).find((s) => !s.parentSpanId)!;
    expect(root.attrs).toMatchObject({ "agent_runner.conclusion": "failure", "cicd.pipeline.result": "failure", "agent_runner.changed_files": 1 });
    expect(root.status).toMatchObject({ code: 2, message: "agent run failure" });
  });

  it("in process: tool names, call ids, error events, blocked hosts and model records the agent shaped are dropped or named `other`", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hostile-trace-"));
    const trace = path.join(dir, "trace.jsonl");
    const ts = new Date().toISOString();
    const events = [
      { type: "tool_call", name: `${MARKER} tool with words`, id: `${MARKER} id with words`, ts },
      { type: "tool_call", name: "Bash", id: "toolu_01", ts },
      { type: "tool_result", id: "toolu_01", isError: true, ts },
      { type: "error", message: `${MARKER}: the agent's own error text`, ts },
      { type: "permission_denied", tool: `${MARKER} denied tool`, ts },
      { type: "network_blocked", host: `${MARKER} not a host`, ts },
    ];
    writeFileSync(trace, events.map((e) => JSON.stringify(e)).join("\n") + "\n");
    const record = { startedAt: Date.now(), durationMs: 5, method: `${MARKER} M`, path: `/v1/${MARKER} words`, stream: false, status: 500, errorType: `${MARKER} error words` };
    const result = {
      conclusion: "failure",
      reason: `The agent exited with code 3: ${MARKER} words`,
      agentName: "claude",
      agentBackend: "claude",
      agentVersion: `${MARKER} version words`,
      model: `${MARKER} model words`,
      sandboxBackend: "none",
      sessionId: `${MARKER} session words`,
      startedAt: ts,
      durationMs: 10,
      usage: { inputTokens: 1, outputTokens: 2, cachedTokens: 0 },
      toolCalls: 2,
      numTurns: 1,
      networkBlocked: 1,
      permissionDenials: [{ tool: `${MARKER}` }],
      diff: { baseCommit: "", baseTree: "", patchPath: "", changedFiles: [`${MARKER} file`], agentCommits: [] },
      metadata: { modelRequests: [record, { ...record, method: "POST", path: "/v1/messages", operation: "chat", requestModel: `${MARKER} model`, finishReasons: [`${MARKER} reason`], responseId: `${MARKER} id`, status: 200, errorType: undefined }] },
    } as unknown as RunResult;
    const spans = await buildRunSpans(result, trace, { host: { repository: "octo/repo", workflow: "agent", runId: "1", runAttempt: "1", serverUrl: "https://github.com", eventName: "push" } }, new Redactor([]));
    const seen = spans.map((s) => ({ name: s.name, attrs: { ...s.attributes }, status: s.status, events: s.events.map((e) => ({ name: e.name, attrs: { ...(e.attributes ?? {}) } })) }));
    expectSpansCarryNoAgentText(seen);
    expect(seen.map((s) => s.name).sort()).toEqual(["REQUEST /", "chat other", "execute_tool Bash", "execute_tool other", "invoke_agent claude"].sort());
    expect(seen.find((s) => s.name === "invoke_agent claude")!.events.map((e) => e.name).sort()).toEqual(["agent_runner.error", "agent_runner.network_blocked", "agent_runner.permission_denied"]);
  });

  it("the run's conclusion is its verdict, delivery included (partial, a refused patch), and the agent's own only when no delivery set one", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "verdict-trace-"));
    const trace = path.join(dir, "trace.jsonl");
    writeFileSync(trace, "");
    const result = {
      conclusion: "success",
      agentName: "codex",
      agentBackend: "codex",
      model: "gpt-5",
      sandboxBackend: "bwrap",
      startedAt: new Date().toISOString(),
      durationMs: 10,
      usage: { inputTokens: 1, outputTokens: 2, cachedTokens: 0 },
      toolCalls: 0,
      numTurns: 1,
      networkBlocked: 0,
      permissionDenials: [],
      diff: { baseCommit: "", baseTree: "", patchPath: "", changedFiles: ["a.txt"], agentCommits: [] },
      metadata: { modelRequests: [] },
    } as unknown as RunResult;
    const host = { repository: "octo/repo", workflow: "agent", runId: "1", runAttempt: "1", serverUrl: "https://github.com", eventName: "issue_comment" };
    const conclusionOf = async (delivery: Record<string, string> | undefined) => {
      const spans = await buildRunSpans(result, trace, { host, ...(delivery ? { delivery } : {}) }, new Redactor([]));
      const root = spans.find((s) => s.name === "invoke_agent codex")!;
      return [root.attributes["agent_runner.conclusion"], root.attributes["cicd.pipeline.result"]];
    };
    expect(await conclusionOf({ conclusion: "partial", branch: "agent/issue-7" })).toEqual(["partial", "partial"]);
    expect(await conclusionOf({ conclusion: "failure" })).toEqual(["failure", "failure"]);
    expect(await conclusionOf(undefined)).toEqual(["success", "success"]);
    expect(await conclusionOf({ conclusion: "shipped" })).toEqual(["success", "success"]);
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
