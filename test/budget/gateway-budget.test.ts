/**
 * The model gateway's usage metering and budget, without a CLI: the stub
 * model (and a hand-written upstream for Gemini's JSON-array stream) as the
 * provider, plain HTTP requests as the agent. Usage read from every wire
 * format, the running total, the refusal's shape (400, no-retry, the
 * provider's error type), exact request counting under concurrency, prices
 * from the table and from model-prices, refusals of what cannot be counted.
 */
import { describe, expect, it } from "vitest";
import { startModelGateway, type ModelGatewayOptions } from "../../src/sandbox/gateway.js";
import { PriceBook } from "../../src/sandbox/prices.js";
import { call, cleanupsAfterEach, gatewayOverStub as overStub, type Provider } from "../sandbox/gateway-helpers.js";
import { recordingLogger, recordingServer } from "../sandbox/helpers.js";
import type { StubStep } from "../support/stub-model.js";

const cleanups = cleanupsAfterEach();

const gatewayOverStub = (provider: Provider, script: StubStep[], extra: Partial<ModelGatewayOptions> = {}) => overStub(cleanups, provider, { script, gateway: extra });

/** One request per wire format; the stub's default usage: 100 uncached + 40 cache-read (+ 10 cache-write, Anthropic) in, 20 out. */
const FORMATS: Array<{ label: string; provider: Provider; path: string; body: unknown; input: number }> = [
  { label: "Anthropic Messages SSE", provider: "anthropic", path: "/v1/messages", body: { model: "claude-sonnet-4-5", stream: true, messages: [] }, input: 150 },
  { label: "Anthropic Messages JSON", provider: "anthropic", path: "/v1/messages", body: { model: "claude-sonnet-4-5", messages: [] }, input: 150 },
  { label: "OpenAI Responses SSE", provider: "openai", path: "/v1/responses", body: { model: "gpt-5", stream: true, input: "hi" }, input: 140 },
  { label: "OpenAI Responses JSON", provider: "openai", path: "/v1/responses", body: { model: "gpt-5", input: "hi" }, input: 140 },
  {
    label: "Chat Completions SSE (include_usage)",
    provider: "openai",
    path: "/v1/chat/completions",
    body: { model: "gpt-4.1", stream: true, stream_options: { include_usage: true }, messages: [] },
    input: 140,
  },
  { label: "Chat Completions JSON", provider: "openai", path: "/v1/chat/completions", body: { model: "gpt-4.1", messages: [] }, input: 140 },
  { label: "Gemini streamGenerateContent SSE", provider: "gemini", path: "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body: { contents: [] }, input: 140 },
  { label: "Gemini generateContent JSON", provider: "gemini", path: "/v1beta/models/gemini-2.5-pro:generateContent", body: { contents: [] }, input: 140 },
];

describe("usage read from every wire format", () => {
  it.each(FORMATS)("$label: two responses add up, priced by the table", async (f) => {
    const { gw } = await gatewayOverStub(f.provider, [{ text: "one" }, { text: "two" }]);
    for (let i = 0; i < 2; i++) expect((await call(gw, f.provider, f.path, f.body)).status).toBe(200);
    const usage = gw.usage();
    expect(usage).toMatchObject({ inputTokens: 2 * f.input, outputTokens: 40, cachedTokens: 80, requests: 2 });
    expect(usage.costUsd).toBeGreaterThan(0);
    expect(gw.requestLog().every((r) => typeof r.costUsd === "number")).toBe(true);
  });

  it("Gemini streamGenerateContent without alt=sse (one JSON array): the last chunk's usageMetadata counts", async () => {
    const upstream = await recordingServer((_req, res) => {
      const chunk = (usage?: unknown) => ({ candidates: [{ content: { parts: [{ text: "x" }] } }], ...(usage ? { usageMetadata: usage } : {}) });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify([chunk({ promptTokenCount: 500 }), chunk({ promptTokenCount: 500, candidatesTokenCount: 30, thoughtsTokenCount: 5, cachedContentTokenCount: 200 })]));
    });
    cleanups.push(upstream.close);
    const gw = await startModelGateway({ provider: "gemini", upstream: upstream.url, apiKey: "k", log: recordingLogger() });
    cleanups.push(gw.close);
    expect((await call(gw, "gemini", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", { contents: [] })).status).toBe(200);
    expect(gw.usage()).toMatchObject({ inputTokens: 500, outputTokens: 35, cachedTokens: 200, requests: 1 });
  });

  it("token counts and model lists are not billed requests", async () => {
    const { gw } = await gatewayOverStub("anthropic", [], { budget: { maxModelRequests: 1 } });
    for (let i = 0; i < 3; i++) expect((await call(gw, "anthropic", "/v1/messages/count_tokens", { model: "claude-sonnet-4-5", messages: [] })).status).toBe(200);
    expect(gw.usage().requests).toBe(0);
    expect((await call(gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] })).status).toBe(200);
    expect(gw.usage().requests).toBe(1);
  });
});

describe("the budget", () => {
  it.each<[Provider, string, unknown, string]>([
    ["anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] }, "invalid_request_error"],
    ["openai", "/v1/responses", { model: "gpt-5", input: "hi" }, "invalid_request_error"],
    ["gemini", "/v1beta/models/gemini-2.5-pro:generateContent", { contents: [] }, "INVALID_ARGUMENT"],
  ])("%s: once max-tokens is reached the next request gets a 400 %s with x-should-retry: false, without the words CLIs retry on", async (provider, path, body, type) => {
    const { gw, stub } = await gatewayOverStub(provider, [{ text: "big", usage: { outputTokens: 5000 } }], { budget: { maxTokens: 1000 } });
    expect((await call(gw, provider, path, body)).status).toBe(200);
    const refused = await call(gw, provider, path, body);
    expect(refused.status).toBe(400);
    expect(refused.headers["x-should-retry"]).toBe("false");
    const err = (JSON.parse(refused.body) as { error: { type?: string; status?: string; message: string } }).error;
    expect(err.type ?? err.status).toBe(type);
    expect(err.message).toMatch(/^Agent Runner model gateway: budget exceeded: 5,1[45]0 tokens used \(1[45]0 in, 5,000 out\), max-tokens is 1,000\. /);
    // opencode retries messages holding these words; claude retries overloaded_error.
    expect(err.message).not.toMatch(/rate.?limit|too many requests|exhausted|unavailable|overloaded|quota/i);
    expect(stub.modelRequests()).toHaveLength(1);
    expect(gw.budgetStop()).toMatchObject({ kind: "exceeded", limit: "max-tokens", max: 1000, refused: 1 });
    expect(gw.budgetStopReason()).toMatch(/^Budget exceeded: 5,1[45]0 tokens used .*max-tokens is 1,000 \(1 model request refused; /);
    // A budget refusal is the run's reason, not a blocked network attempt.
    expect(gw.refusals()).toEqual([]);
  });

  it("max-model-requests is exact under concurrency: of ten parallel requests, three are forwarded", async () => {
    const { gw, stub } = await gatewayOverStub("openai", [], { budget: { maxModelRequests: 3 } });
    const replies = await Promise.all(Array.from({ length: 10 }, () => call(gw, "openai", "/v1/responses", { model: "gpt-5", input: "hi" })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(3);
    expect(replies.filter((r) => r.status === 400)).toHaveLength(7);
    expect(stub.modelRequests()).toHaveLength(3);
    expect(gw.usage().requests).toBe(3);
    expect(gw.budgetStopReason()).toMatch(/^Budget exceeded: 3 model requests made, max-model-requests is 3 \(7 model requests refused; /);
  });

  it("max-cost-usd: priced by the table per request; model-prices prices an unknown model; an unpriced model is refused", async () => {
    // claude-sonnet-4-5: 100 × $3 + 40 × $0.30 + 10 × $3.75 + 20 × $15 per million = $0.0006495.
    const table = await gatewayOverStub("anthropic", [{ text: "a" }, { text: "b" }], { budget: { maxCostUsd: 0.001 } });
    expect((await call(table.gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] })).status).toBe(200);
    expect(table.gw.usage().costUsd).toBeCloseTo(0.0006495, 10);
    expect((await call(table.gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] })).status).toBe(200);
    expect((await call(table.gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] })).status).toBe(400);
    expect(table.gw.budgetStopReason()).toMatch(/^Budget exceeded: \$0\.0013 spent, max-cost-usd is \$0\.0010 /);

    const own = await gatewayOverStub("openai", [{ text: "a" }], {
      budget: { maxCostUsd: 1 },
      modelPrices: { "my-model": { input: 10, output: 100, cached: 1 } },
    });
    expect((await call(own.gw, "openai", "/v1/responses", { model: "my-model", input: "hi" })).status).toBe(200);
    // 100 uncached × $10 + 40 cached × $1 + 20 out × $100, per million.
    expect(own.gw.usage().costUsd).toBeCloseTo((1000 + 40 + 2000) / 1e6, 10);
    const refused = await call(own.gw, "openai", "/v1/responses", { model: "unknown-model", input: "hi" });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body).error.message).toMatch(/no price is known for model 'unknown-model'.*model-prices/);
    expect(own.stub.modelRequests()).toHaveLength(1);
    expect(own.gw.budgetStop()).toMatchObject({ kind: "unpriced", model: "unknown-model" });
  });

  it("without a budget nothing is refused; an unknown model's cost is left out (unknown), not guessed", async () => {
    const { gw } = await gatewayOverStub("openai", [{ text: "a" }]);
    expect((await call(gw, "openai", "/v1/responses", { model: "unknown-model", input: "hi" })).status).toBe(200);
    expect(gw.usage()).toEqual({ inputTokens: 140, outputTokens: 20, cachedTokens: 40, requests: 1 });
  });

  it("under max-tokens a Chat Completions stream without include_usage is refused: it could not be counted", async () => {
    const { gw, stub } = await gatewayOverStub("openai", [{ text: "a" }], { budget: { maxTokens: 10_000 } });
    const r = await call(gw, "openai", "/v1/chat/completions", { model: "gpt-4.1", stream: true, messages: [] });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error.message).toMatch(/stream_options\.include_usage/);
    expect(stub.modelRequests()).toHaveLength(0);
  });
});

describe("the price table", () => {
  it("prices the four CLIs' usual models per request, tiered where the provider is; model-prices wins over the table", async () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cachedTokens: 0 };
    expect((await PriceBook.load("anthropic")).costUsd("claude-sonnet-4-5", { ...usage, inputTokens: 100_000, outputTokens: 0 })).toBeCloseTo(0.3, 6);
    expect((await PriceBook.load("openai")).costUsd("gpt-5", usage)).toBeCloseTo(11.25, 6);
    expect((await PriceBook.load("gemini")).costUsd("gemini-2.5-flash", usage)).toBeCloseTo(2.8, 6);
    // Another provider's model behind an OpenAI-compatible endpoint.
    expect((await PriceBook.load("openai")).knows("claude-sonnet-4-5")).toBe(true);
    expect((await PriceBook.load("openai")).knows("stub-model")).toBe(false);
    expect((await PriceBook.load("openai", { "gpt-5": { input: 1, output: 1 } })).costUsd("gpt-5", usage)).toBeCloseTo(2, 6);
  });
});
