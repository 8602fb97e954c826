/**
 * Rate limits absorbed at the model gateway (issue 36), without a CLI: the
 * stub model rate-limits (429 with Retry-After, 529, 503 overloaded) and
 * plain HTTP requests play the agent. Retries honour Retry-After and stay
 * within the wait allowance, whatever the upstream says; each is admitted
 * under the budget again; a fallback model gets the request (body or, for
 * Gemini, path rewritten) and is priced at its own price; the final answer
 * when the gateway gives up is one no CLI retries. Plus the pure parts
 * (Retry-After forms, backoff bounds).
 */
import { describe, expect, it } from "vitest";
import type { ModelGatewayOptions } from "../../src/sandbox/gateway.js";
import { backoffMs, nextStep, retryAfterMs, retryableReason, type RetryPolicy } from "../../src/sandbox/gateway-retry.js";
import { call, cleanupsAfterEach, gatewayOverStub as overStub, type Provider } from "./gateway-helpers.js";
import type { StubModel, StubRateLimit } from "../support/stub-model.js";

const cleanups = cleanupsAfterEach();

const POLICY: RetryPolicy = { retries: 3, maxWaitMs: 120_000, fallbackModels: [] };

/** The stub rate-limiting by `limits`, behind a gateway retrying by POLICY (or `extra.retry`). */
const gatewayOverStub = (provider: Provider, limits: StubRateLimit[], extra: Partial<ModelGatewayOptions> = {}) =>
  overStub(cleanups, provider, { stub: { rateLimits: limits }, gateway: { retry: POLICY, ...extra } });

const limited = (stub: StubModel) => stub.modelRequests().filter((r) => r.rateLimited);

describe("retries", () => {
  it("429 with Retry-After: 1 twice, then an answer: the agent sees only the answer, after about 2 s; retries in the records and usage", async () => {
    const { gw, stub } = await gatewayOverStub("anthropic", [{ times: 2, retryAfter: "1" }]);
    const started = Date.now();
    const r = await call(gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", stream: true, messages: [] });
    const took = Date.now() - started;
    expect(r.status).toBe(200);
    expect(r.body).toContain("message_stop");
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(took).toBeLessThan(10_000);
    expect(stub.modelRequests()).toHaveLength(3);
    expect(limited(stub)).toHaveLength(2);
    const records = gw.requestLog();
    expect(records.map((x) => [x.status, x.retry?.next, x.retry?.waitMs])).toEqual([
      [429, "retry", 1000],
      [429, "retry", 1000],
      [200, undefined, undefined],
    ]);
    const usage = gw.usage();
    expect(usage).toMatchObject({ requests: 3, retries: 2, retryWaitSeconds: 2, inputTokens: 150, outputTokens: 20 });
    expect(usage.models).toEqual({ "claude-sonnet-4-5": { requests: 1, costUsd: usage.costUsd } });
  });

  it("529, and 503 saying overloaded, are retried; a 503 that does not say so passes through untouched", async () => {
    const { gw, stub } = await gatewayOverStub("anthropic", [
      { times: 1, status: 529, retryAfter: "0" },
      { times: 1, status: 503, retryAfter: "0" },
    ]);
    const ok = await call(gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] });
    expect(ok.status).toBe(200);
    expect(stub.modelRequests()).toHaveLength(3);
    stub.setRateLimits([{ times: 1, status: 503, retryAfter: "0", body: '{"error":"upstream connect error"}' }]);
    const plain = await call(gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] });
    expect(plain.status).toBe(503);
    expect(plain.body).toBe('{"error":"upstream connect error"}');
    expect(gw.usage().retries).toBe(2);
  });

  it("a Retry-After past the wait allowance is not waited for: the gateway gives up at once with a 400 no CLI retries", async () => {
    const { gw, stub, log } = await gatewayOverStub("openai", [{ retryAfter: "86400" }], { retry: { ...POLICY, maxWaitMs: 5_000 } });
    const started = Date.now();
    const r = await call(gw, "openai", "/v1/responses", { model: "gpt-5", input: "hi" });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(r.status).toBe(400);
    expect(r.headers["x-should-retry"]).toBe("false");
    // Final for every CLI: OpenCode retries an error whose message names a status or says rate limit / overloaded / unavailable.
    const message = JSON.parse(r.body).error.message as string;
    expect(message).toMatch(/kept turning this request away as busy.*Stop now/);
    expect(message).not.toMatch(/\d|rate.?limit|overloaded|unavailable|exhausted|too many/i);
    expect(stub.modelRequests()).toHaveLength(1);
    expect(gw.requestLog()[0]!.retry).toEqual({ reason: "rate_limited", next: "give-up" });
    expect(log.lines.join("\n")).toMatch(/gpt-5 is still rate-limited \(429\) after 1 attempt\(s\); Retry-After 86400 s is beyond the 5 s of waiting left/);
  });

  it("an HTTP-date Retry-After is honoured; the retries stop at model-retries, then the agent gets the final 400", async () => {
    const at = new Date(Date.now() + 1500).toUTCString();
    const { gw, stub } = await gatewayOverStub("gemini", [{ retryAfter: at }], { retry: { ...POLICY, retries: 1 } });
    const started = Date.now();
    const r = await call(gw, "gemini", "/v1beta/models/gemini-2.5-pro:generateContent", { contents: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error.status).toBe("INVALID_ARGUMENT");
    // One request, two upstream attempts: (1 + model-retries).
    expect(stub.modelRequests()).toHaveLength(2);
  });

  it("each retry is admitted again: under max-model-requests 2 the third attempt is refused as the budget, not sent", async () => {
    const { gw, stub } = await gatewayOverStub("anthropic", [{ retryAfter: "0" }], { budget: { maxModelRequests: 2 } });
    const r = await call(gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error.message).toMatch(/budget exceeded: 2 model requests made, max-model-requests is 2/);
    expect(stub.modelRequests()).toHaveLength(2);
    expect(gw.budgetStop()).toMatchObject({ kind: "exceeded", limit: "max-model-requests" });
  });

  it("a 429 whose body is past 64 KiB is not held back: it streams to the agent whole, unretried", async () => {
    const big = JSON.stringify({ error: { message: "x".repeat(200_000) } });
    const { gw, stub } = await gatewayOverStub("anthropic", [{ times: 1, retryAfter: "0", body: big }]);
    const r = await call(gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] });
    expect(r.status).toBe(429);
    expect(r.body).toBe(big);
    expect(stub.modelRequests()).toHaveLength(1);
    expect(gw.usage().retries).toBeUndefined();
  });

  it("model-retries 0 and no fallback: the provider's 429 reaches the agent as it came", async () => {
    const { gw } = await gatewayOverStub("anthropic", [{ retryAfter: "7" }], { retry: { ...POLICY, retries: 0 } });
    const r = await call(gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] });
    expect(r.status).toBe(429);
    expect(r.headers["retry-after"]).toBe("7");
    expect(gw.usage().retries).toBeUndefined();
  });
});

describe("fallback models", () => {
  const CASES: Array<{ label: string; provider: Provider; path: string; body: Record<string, unknown>; primary: string; fallback: string }> = [
    { label: "Anthropic Messages", provider: "anthropic", path: "/v1/messages", body: { model: "claude-sonnet-4-5", stream: true, messages: [] }, primary: "claude-sonnet-4-5", fallback: "claude-haiku-4-5" },
    { label: "OpenAI Responses", provider: "openai", path: "/v1/responses", body: { model: "gpt-5", stream: true, input: "hi" }, primary: "gpt-5", fallback: "gpt-5-mini" },
    {
      label: "Chat Completions",
      provider: "openai",
      path: "/v1/chat/completions",
      body: { model: "gpt-5", stream: true, stream_options: { include_usage: true }, messages: [] },
      primary: "gpt-5",
      fallback: "gpt-5-mini",
    },
    { label: "Gemini (model in the path)", provider: "gemini", path: "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body: { contents: [] }, primary: "gemini-2.5-pro", fallback: "gemini-2.5-flash" },
  ];
  it.each(CASES)("$label: the primary stays at 429, the fallback serves, priced at its own price under the cost cap", async (c) => {
    const { gw, stub } = await gatewayOverStub(c.provider, [{ model: c.primary, retryAfter: "0" }], {
      retry: { retries: 1, maxWaitMs: 10_000, fallbackModels: [c.fallback] },
      budget: { maxCostUsd: 5 },
    });
    const r = await call(gw, c.provider, c.path, c.body);
    expect(r.status).toBe(200);
    expect(stub.modelRequests().map((x) => [x.model, Boolean(x.rateLimited)])).toEqual([
      [c.primary, true],
      [c.primary, true],
      [c.fallback, false],
    ]);
    if (c.provider === "gemini") expect(stub.modelRequests()[2]!.path).toContain(`/models/${c.fallback}:streamGenerateContent?alt=sse`);
    const served = gw.requestLog().at(-1)!;
    expect(served).toMatchObject({ requestModel: c.fallback, fallbackFor: c.primary, status: 200 });
    const usage = gw.usage();
    expect(Object.keys(usage.models!)).toEqual([c.fallback]);
    expect(usage.models![c.fallback]).toMatchObject({ requests: 1, fallback: true });
    // The fallback's price, not the primary's: the record's cost is what the table says for the fallback model.
    expect(served.costUsd).toBeGreaterThan(0);
    expect(usage.models![c.fallback]!.costUsd).toBe(served.costUsd);
    expect(usage.costUsd).toBe(served.costUsd);
    expect(usage.retries).toBe(2);
  });

  it("every fallback also rate-limited: (1 + retries) attempts per model, then one final 400", async () => {
    const { gw, stub } = await gatewayOverStub("anthropic", [{ retryAfter: "0" }], { retry: { retries: 1, maxWaitMs: 10_000, fallbackModels: ["claude-haiku-4-5", "claude-opus-4-1"] } });
    const r = await call(gw, "anthropic", "/v1/messages", { model: "claude-sonnet-4-5", messages: [] });
    expect(r.status).toBe(400);
    expect(r.headers["x-should-retry"]).toBe("false");
    expect(stub.modelRequests().map((x) => x.model)).toEqual(["claude-sonnet-4-5", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-haiku-4-5", "claude-opus-4-1", "claude-opus-4-1"]);
  });
});

describe("the pure parts", () => {
  it("Retry-After: seconds, fractions, an HTTP date (past: 0), junk ignored", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs("3", now)).toBe(3000);
    expect(retryAfterMs("0.5", now)).toBe(500);
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:10 GMT", now)).toBe(10_000);
    expect(retryAfterMs("Wed, 31 Dec 2025 23:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs("-5", now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  it("backoff doubles from 1 s, jittered between half and all of it, capped at 30 s", () => {
    expect([0, 1, 2, 3].map((n) => backoffMs(n, () => 1))).toEqual([1000, 2000, 4000, 8000]);
    expect([0, 1, 2, 3].map((n) => backoffMs(n, () => 0))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs(40, () => 1)).toBe(30_000);
  });

  it("which answers are retried", () => {
    expect(retryableReason(429, "")).toBe("rate_limited");
    expect(retryableReason(529, "")).toBe("overloaded");
    expect(retryableReason(503, '{"error":{"message":"The model is overloaded"}}')).toBe("overloaded");
    expect(retryableReason(503, "Service Unavailable")).toBeUndefined();
    expect(retryableReason(500, "overloaded")).toBeUndefined();
  });

  it("the wait allowance bounds the total, whatever Retry-After says", () => {
    expect(nextStep(POLICY, { retriesOnModel: 0, waitedMs: 119_000, retryAfter: 2000, hasFallback: false })).toMatchObject({ kind: "give-up" });
    expect(nextStep(POLICY, { retriesOnModel: 0, waitedMs: 119_000, retryAfter: 2000, hasFallback: true })).toEqual({ kind: "fallback" });
    expect(nextStep(POLICY, { retriesOnModel: 3, waitedMs: 0, retryAfter: 0, hasFallback: false })).toMatchObject({ kind: "give-up" });
    expect(nextStep(POLICY, { retriesOnModel: 1, waitedMs: 0, retryAfter: undefined, hasFallback: false, random: () => 1 })).toEqual({ kind: "retry", waitMs: 2000 });
  });
});
