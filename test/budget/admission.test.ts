/**
 * Budget admission at the model gateway (issue #21 finding 3): reserve before
 * forwarding, settle on the real usage. Plain HTTP requests play the agent;
 * the provider is a model API that bills as providers do (it honours the
 * output limit the request names: billing-upstream.ts) or a hand-written one.
 *  - 30 parallel requests: what the provider billed stays within max-tokens
 *    (and max-cost-usd), the ones that do not fit are refused, the run's
 *    budget stop is set;
 *  - the output limit is clamped (or set) in every provider's field;
 *  - what cannot be read counts as the whole reservation: a stream the agent
 *    hangs up on after its first event, a 20 MiB reply;
 *  - compaction is counted, a zstd reply is read, a background response is
 *    refused naming the route.
 */
import http from "node:http";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { DEFAULT_OUTPUT_CAP, INPUT_BYTES_PER_TOKEN, budgetedRequest } from "../../src/sandbox/budget-admission.js";
import { isBilledRoute } from "../../src/sandbox/gateway-policy.js";
import { startModelGateway, type ModelGateway, type ModelGatewayOptions } from "../../src/sandbox/gateway.js";
import { PriceBook } from "../../src/sandbox/prices.js";
import { auth, call, cleanupsAfterEach } from "../sandbox/gateway-helpers.js";
import { recordingLogger, recordingServer } from "../sandbox/helpers.js";
import { startStubModel } from "../support/stub-model.js";
import { startBillingUpstream, type Provider } from "./billing-upstream.js";

const cleanups = cleanupsAfterEach();

async function gateway(provider: Provider, upstream: string, budget: ModelGatewayOptions["budget"]): Promise<ModelGateway> {
  const gw = await startModelGateway({ provider, upstream: provider === "openai" ? `${upstream}/v1` : upstream, apiKey: "real-key", log: recordingLogger(), ...(budget ? { budget } : {}) });
  cleanups.push(gw.close);
  return gw;
}

/** The input the gateway reserves for a JSON body. */
const estimate = (body: unknown) => Math.ceil(Buffer.byteLength(JSON.stringify(body)) / INPUT_BYTES_PER_TOKEN);

/** Waits for an event the test caused; the limit only catches a hang, so it allows for a loaded machine. */
async function until(check: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const FILLER = "Refactor the parser so that every token carries its source span. ".repeat(40);
const PARALLEL: Array<{ provider: Provider; path: string; body: unknown }> = [
  { provider: "anthropic", path: "/v1/messages", body: { model: "claude-sonnet-4-5", max_tokens: 8000, messages: [{ role: "user", content: FILLER }] } },
  { provider: "openai", path: "/v1/responses", body: { model: "gpt-5", input: FILLER } },
  { provider: "gemini", path: "/v1beta/models/gemini-2.5-pro:generateContent", body: { contents: [{ role: "user", parts: [{ text: FILLER }] }] } },
];

describe("30 parallel requests under max-tokens", () => {
  it.each(PARALLEL)("$provider: the provider bills no more than max-tokens, the requests that do not fit are refused, the budget stop is set", async ({ provider, path, body }) => {
    const up = await startBillingUpstream(provider, 6000);
    cleanups.push(up.close);
    const gw = await gateway(provider, up.url, { maxTokens: 40_000 });
    const replies = await Promise.all(Array.from({ length: 30 }, () => call(gw, provider, path, body)));
    const admitted = replies.filter((r) => r.status === 200).length;
    const refused = replies.filter((r) => r.status === 400);
    // Input tokenised at 4 bytes per token is within the 3-byte estimate: the stated bound is 0 here.
    expect(up.total()).toBeLessThanOrEqual(40_000);
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBe(30 - admitted);
    expect(refused.length).toBeGreaterThanOrEqual(20);
    expect(up.billed).toHaveLength(admitted);
    expect(refused[0]!.headers["x-should-retry"]).toBe("false");
    expect(JSON.parse(refused[0]!.body).error.message).toMatch(/^Agent Runner model gateway: budget exceeded: .* reserved by \d+ requests? in flight, max-tokens is 40,000; this request needs room/);
    // The gateway settled on exactly what the provider billed.
    expect(gw.usage().inputTokens + gw.usage().outputTokens).toBe(up.total());
    expect(gw.budgetStop()).toMatchObject({ kind: "exceeded", limit: "max-tokens", max: 40_000, refused: 30 - admitted });
    expect(gw.budgetStopReason()).toMatch(/^Budget exceeded: [\d,]+ tokens used .*max-tokens is 40,000 \(\d+ model requests refused; the budget left no room for the next request's estimated input and output limit; /);
  });

  it("max-cost-usd: 30 parallel gpt-5 requests cost the provider no more than the limit", async () => {
    const up = await startBillingUpstream("openai", 20_000);
    cleanups.push(up.close);
    const gw = await gateway("openai", up.url, { maxCostUsd: 0.5 });
    const replies = await Promise.all(Array.from({ length: 30 }, () => call(gw, "openai", "/v1/responses", PARALLEL[1]!.body)));
    const prices = await PriceBook.load("openai");
    const billedUsd = up.billed.reduce((n, b) => n + prices.costUsd("gpt-5", { inputTokens: b.input, outputTokens: b.output, cachedTokens: 0 })!, 0);
    expect(billedUsd).toBeLessThanOrEqual(0.5);
    expect(replies.filter((r) => r.status === 400).length).toBeGreaterThanOrEqual(20);
    expect(gw.usage().costUsd).toBeCloseTo(billedUsd, 10);
    expect(gw.budgetStop()).toMatchObject({ kind: "exceeded", limit: "max-cost-usd" });
  });

  it("a request in flight when the budget runs out finishes within its reservation; one that does not fit is refused", async () => {
    const stub = await startStubModel([{ text: "slow first", delayMs: 300 }]);
    cleanups.push(stub.close);
    const gw = await gateway("anthropic", stub.url, { maxTokens: 1000 });
    const body = { model: "claude-sonnet-4-5", stream: true, max_tokens: 4096, messages: [] };
    const first = call(gw, "anthropic", "/v1/messages", body);
    await until(() => stub.requests.length === 1);
    const second = await call(gw, "anthropic", "/v1/messages", body);
    expect(second.status).toBe(400);
    const a = await first;
    expect(a.status).toBe(200);
    expect(a.body).toContain("message_stop");
    // The first was held to what the budget allowed: its input estimate plus max_tokens is 1,000.
    expect((stub.modelRequests()[0]!.body as { max_tokens: number }).max_tokens).toBe(1000 - estimate(body));
    expect(stub.modelRequests()).toHaveLength(1);
  });
});

describe("the output limit written into the request", () => {
  const cases: Array<{ label: string; provider: Provider; path: string; body: Record<string, unknown>; max: number; check: (sent: Record<string, unknown>, room: number) => void }> = [
    {
      label: "Anthropic max_tokens clamped, the thinking budget kept below it",
      provider: "anthropic",
      path: "/v1/messages",
      body: { model: "claude-sonnet-4-5", max_tokens: 32_000, thinking: { type: "enabled", budget_tokens: 16_000 }, messages: [] },
      max: 5000,
      check: (s, room) => expect([s.max_tokens, (s.thinking as { budget_tokens: number }).budget_tokens]).toEqual([room, room - 1]),
    },
    { label: "OpenAI Responses max_output_tokens set where none was", provider: "openai", path: "/v1/responses", body: { model: "gpt-5", input: "hi" }, max: 1_000_000, check: (s) => expect(s.max_output_tokens).toBe(DEFAULT_OUTPUT_CAP) },
    {
      label: "Chat Completions max_tokens clamped per answer (n: 2)",
      provider: "openai",
      path: "/v1/chat/completions",
      body: { model: "gpt-4.1", max_tokens: 50_000, n: 2, messages: [] },
      max: 10_000,
      check: (s, room) => expect([s.max_tokens, s.max_completion_tokens]).toEqual([Math.floor(room / 2), undefined]),
    },
    {
      label: "Gemini generationConfig.maxOutputTokens set, the rest of the config kept",
      provider: "gemini",
      path: "/v1beta/models/gemini-2.5-pro:generateContent",
      body: { contents: [], generationConfig: { temperature: 0.2 } },
      max: 3000,
      check: (s, room) => expect(s.generationConfig).toEqual({ temperature: 0.2, maxOutputTokens: room }),
    },
  ];
  it.each(cases)("$label", async ({ provider, path, body, max, check }) => {
    const up = await startBillingUpstream(provider, 10);
    cleanups.push(up.close);
    const gw = await gateway(provider, up.url, { maxTokens: max });
    expect((await call(gw, provider, path, body)).status).toBe(200);
    check(up.billed[0]!.body, max - estimate(body));
  });

  it("a compressed request that is clamped goes on as plain JSON", async () => {
    const up = await startBillingUpstream("openai", 10);
    cleanups.push(up.close);
    const gw = await gateway("openai", up.url, { maxTokens: 5000 });
    const body = { model: "gpt-5", input: "hi", max_output_tokens: 100_000 };
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(gw.url);
      const headers = { ...auth("openai", gw.placeholderKey), "content-type": "application/json", "content-encoding": "gzip" };
      const req = http.request({ host: u.hostname, port: u.port, path: "/v1/responses", method: "POST", headers }, (res) => resolve(res.resume().statusCode ?? 0));
      req.on("error", reject);
      req.end(zlib.gzipSync(JSON.stringify(body)));
    });
    expect(status).toBe(200);
    expect(up.billed[0]!.path).toBe("/v1/responses");
    expect(up.billed[0]!.body.max_output_tokens).toBe(5000 - estimate(body));
  });

  it("a Gemini request spelling the limit in snake_case is refused under a budget (which field wins would be ambiguous)", async () => {
    const up = await startBillingUpstream("gemini", 10);
    cleanups.push(up.close);
    const gw = await gateway("gemini", up.url, { maxTokens: 5000 });
    const r = await call(gw, "gemini", "/v1beta/models/gemini-2.5-pro:generateContent", { contents: [], generation_config: { max_output_tokens: 10 } });
    expect(r.status).toBe(400);
    expect(up.billed).toHaveLength(0);
  });
});

/** An OpenAI upstream answering every request with `answer`. */
async function openaiUpstream(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const up = await recordingServer((req, res) => answer(req, res));
  cleanups.push(up.close);
  return up;
}

describe("what cannot be read counts as the whole reservation; every billed route is metered or refused", () => {
  it("an agent that hangs up after the first stream event: counted as its reservation", async () => {
    const up = await openaiUpstream((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      // The first event carries no usage yet; the rest never comes.
      res.write(`event: response.created\ndata: ${JSON.stringify({ type: "response.created", response: { id: "resp_1", object: "response", status: "in_progress", usage: null } })}\n\n`);
    });
    const gw = await gateway("openai", up.url, { maxTokens: 100_000 });
    const body = { model: "gpt-5", input: "hi", stream: true, max_output_tokens: 500 };
    await new Promise<void>((resolve, reject) => {
      const u = new URL(gw.url);
      const req = http.request({ host: u.hostname, port: u.port, path: "/v1/responses", method: "POST", headers: { ...auth("openai", gw.placeholderKey), "content-type": "application/json" } }, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", () => undefined);
      req.on("close", () => resolve());
      setTimeout(() => reject(new Error("no first event")), 5000);
      req.end(JSON.stringify(body));
    });
    await until(() => gw.usage().outputTokens > 0);
    expect(gw.usage()).toMatchObject({ inputTokens: estimate(body), outputTokens: 500, requests: 1 });
  });

  it("an agent that hangs up before the response starts: counted as its reservation (the provider may bill it)", async () => {
    const up = await openaiUpstream(() => undefined);
    const gw = await gateway("openai", up.url, { maxTokens: 100_000 });
    const body = { model: "gpt-5", input: "hi", max_output_tokens: 700 };
    const u = new URL(gw.url);
    const req = http.request({ host: u.hostname, port: u.port, path: "/v1/responses", method: "POST", headers: { ...auth("openai", gw.placeholderKey), "content-type": "application/json" } });
    req.on("error", () => undefined);
    req.end(JSON.stringify(body));
    await until(() => up.requests.length === 1);
    req.destroy();
    await until(() => gw.usage().outputTokens > 0);
    expect(gw.usage()).toMatchObject({ inputTokens: estimate(body), outputTokens: 700 });
  });

  it("an unreachable provider bills nothing: the reservation is released, not charged", async () => {
    const up = await openaiUpstream(() => undefined);
    await up.close();
    const gw = await gateway("openai", up.url, { maxTokens: 1000 });
    const body = { model: "gpt-5", input: "hi" };
    for (let i = 0; i < 3; i++) expect((await call(gw, "openai", "/v1/responses", body)).status).toBe(502);
    expect(gw.usage()).toMatchObject({ inputTokens: 0, outputTokens: 0 });
    expect(gw.budgetStop()).toBeUndefined();
  });

  it("settled usage past max-tokens without any refusal still stops the run as Budget exceeded", async () => {
    // A provider reporting more than the output limit it was given (the stub ignores max_tokens).
    const stub = await startStubModel([{ text: "big", usage: { outputTokens: 5000 } }]);
    cleanups.push(stub.close);
    const gw = await gateway("anthropic", stub.url, { maxTokens: 1000 });
    expect((await call(gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", max_tokens: 100, messages: [] })).status).toBe(200);
    expect(gw.budgetStop()).toMatchObject({ kind: "exceeded", limit: "max-tokens", refused: 0 });
    expect(gw.budgetStopReason()).toMatch(/^Budget exceeded: 5,150 tokens used \(150 in, 5,000 out\), max-tokens is 1,000 \(0 model requests refused; /);
  });

  it("a 20 MiB reply: counted as its reservation", async () => {
    const up = await openaiUpstream((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "r", object: "response", status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "x".repeat(20 * 1024 * 1024) }] }], usage: { input_tokens: 10, output_tokens: 20 } }));
    });
    const gw = await gateway("openai", up.url, { maxTokens: 1_000_000 });
    const body = { model: "gpt-5", input: "hi", max_output_tokens: 1000 };
    const r = await call(gw, "openai", "/v1/responses", body);
    expect(r.status).toBe(200);
    expect(r.body.length).toBeGreaterThan(20 * 1024 * 1024);
    await until(() => gw.usage().outputTokens > 0);
    expect(gw.usage()).toMatchObject({ inputTokens: estimate(body), outputTokens: 1000, requests: 1 });
  });

  it("a zstd-encoded reply is decoded and its usage read", async () => {
    const up = await openaiUpstream((_req, res) => {
      const json = JSON.stringify({ id: "r", object: "response", model: "gpt-5", status: "completed", output: [], usage: { input_tokens: 1234, output_tokens: 56, input_tokens_details: { cached_tokens: 7 } } });
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "zstd" });
      res.end(zlib.zstdCompressSync(Buffer.from(json)));
    });
    const gw = await gateway("openai", up.url, { maxTokens: 1_000_000 });
    expect((await call(gw, "openai", "/v1/responses", { model: "gpt-5", input: "hi" })).status).toBe(200);
    await until(() => gw.usage().inputTokens > 0);
    expect(gw.usage()).toMatchObject({ inputTokens: 1234, outputTokens: 56, cachedTokens: 7, requests: 1 });
  });

  it.each([{ budget: { maxTokens: 100_000 } }, { budget: undefined }])("codex's compaction (/v1/responses/compact) is counted (budget: $budget)", async ({ budget }) => {
    const up = await openaiUpstream((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "cmp_1", object: "response.compaction", output: [{ type: "compaction", encrypted_content: "e" }], usage: { input_tokens: 700, output_tokens: 300, total_tokens: 1000 } }));
    });
    const gw = await gateway("openai", up.url, budget);
    const body = { model: "gpt-5", input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "history" }] }], instructions: "compact" };
    expect((await call(gw, "openai", "/v1/responses/compact", body)).status).toBe(200);
    await until(() => gw.usage().inputTokens > 0);
    expect(gw.usage()).toMatchObject({ inputTokens: 700, outputTokens: 300, requests: 1 });
    // Compaction takes no output limit: the body goes on as sent.
    expect(JSON.parse(up.requests[0]!.body)).toEqual(body);
  });

  it("a background response (billed after it returns) is refused under a budget, naming the route", async () => {
    const up = await openaiUpstream((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    const gw = await gateway("openai", up.url, { maxTokens: 100_000 });
    const r = await call(gw, "openai", "/v1/responses", { model: "gpt-5", input: "hi", background: true });
    expect(r.status).toBe(400);
    expect(r.headers["x-should-retry"]).toBe("false");
    expect(JSON.parse(r.body).error.message).toMatch(/\/v1\/responses with background: true .*cannot meter/);
    expect(up.requests).toHaveLength(0);
  });
});

describe("every billed route has a meter", () => {
  it.each<[Provider, string]>([
    ["anthropic", "/v1/messages"],
    ["openai", "/v1/responses"],
    ["openai", "/v1/responses/compact"],
    ["openai", "/v1/chat/completions"],
    ["gemini", "/v1beta/models/gemini-2.5-pro:generateContent"],
    ["gemini", "/v1beta/models/gemini-2.5-pro:streamGenerateContent"],
  ])("%s %s: billed, and metered", (provider, path) => {
    expect(isBilledRoute(provider, "POST", path)).toBe(true);
    expect(budgetedRequest(provider, path, "{}").ok).toBe(true);
  });

  it("a billed route without a meter, or an output limit that is not a whole number, is refused naming the route", () => {
    expect(budgetedRequest("anthropic", "/v1/messages/batches", "{}")).toEqual({ ok: false, problem: "/v1/messages/batches is a billed route the gateway cannot meter" });
    expect(budgetedRequest("openai", "/v1/responses", '{"max_output_tokens": "lots"}')).toEqual({ ok: false, problem: "/v1/responses: max_output_tokens is not a whole number" });
  });
});
