import http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { routeDecision } from "../../src/sandbox/gateway-policy.js";
import { PLACEHOLDER_KEYS, baseUrlFor, startModelGateway, upstreamUrl, type ModelGateway } from "../../src/sandbox/gateway.js";
import { recordingLogger, recordingServer, request } from "./helpers.js";

const REAL_KEY = "real-secret-key-0123456789";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(provider: "anthropic" | "openai" | "gemini", upstreamPath = "", maxModelRequests?: number) {
  const upstream = await recordingServer();
  cleanups.push(upstream.close);
  const gw = await startModelGateway({ provider, upstream: upstream.url + upstreamPath, apiKey: REAL_KEY, ...(maxModelRequests ? { budget: { maxModelRequests } } : {}), log: recordingLogger() });
  cleanups.push(gw.close);
  return { upstream, gw };
}

describe("model gateway: paths and keys", () => {
  it("anthropic: forwards /v1/messages with the real key and never the placeholder", async () => {
    const { upstream, gw } = await setup("anthropic");
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
    const r = await request(gw.url, "/v1/messages?beta=true", {
      method: "POST",
      headers: {
        "x-api-key": gw.placeholderKey,
        authorization: `Bearer ${gw.placeholderKey}`,
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
      },
      body,
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ ok: true, path: "/v1/messages?beta=true" });
    expect(upstream.requests).toHaveLength(1);
    const got = upstream.requests[0]!;
    expect(got.headers["x-api-key"]).toBe(REAL_KEY);
    expect(got.headers.authorization).toBeUndefined();
    expect(got.headers["anthropic-version"]).toBe("2023-06-01");
    expect(got.headers.host).toBe(new URL(upstream.url).host);
    expect(got.body).toBe(body);
    expect(JSON.stringify(upstream.requests)).not.toContain(gw.placeholderKey);
    expect(gw.stats()).toEqual({ requests: 1, bytesIn: Buffer.byteLength(body), bytesOut: Buffer.byteLength(r.body), rejected: 0 });
  });

  it("anthropic: answers HEAD / locally and refuses other paths with a 404 JSON error", async () => {
    const { upstream, gw } = await setup("anthropic");
    expect((await request(gw.url, "/", { method: "HEAD" })).status).toBe(200);
    for (const path of ["/v1/files", "/v1/messagesX", "/v1/messages/../files", "/v1/messages/%2e%2e/files", "/api/oauth/token", "//evil/v1/messages"]) {
      const r = await request(gw.url, path, { method: "POST", headers: { "x-api-key": gw.placeholderKey } });
      expect(r.status, path).toBe(404);
      expect(r.headers["content-type"]).toBe("application/json");
      const err = JSON.parse(r.body);
      expect(err.type).toBe("error");
      expect(err.error.type).toBe("not_found_error");
      expect(err.error.message).toContain("is not a model API path of the anthropic API");
    }
    expect(upstream.requests).toHaveLength(0);
    expect(gw.stats().rejected).toBe(6);
  });

  it("openai: maps a base URL with a path prefix and injects a Bearer key", async () => {
    const { upstream, gw } = await setup("openai", "/proxy/v1");
    expect(baseUrlFor("openai", gw.url)).toBe(`${gw.url}/v1`);
    for (const path of ["/v1/responses", "/v1/chat/completions", "/v1/models"]) {
      const r = await request(gw.url, path, { method: path.endsWith("models") ? "GET" : "POST", headers: { authorization: `Bearer ${gw.placeholderKey}` }, body: path.endsWith("models") ? undefined : "{}" });
      expect(r.status, path).toBe(200);
    }
    expect(upstream.requests.map((q) => q.url)).toEqual(["/proxy/v1/responses", "/proxy/v1/chat/completions", "/proxy/v1/models"]);
    for (const q of upstream.requests) expect(q.headers.authorization).toBe(`Bearer ${REAL_KEY}`);
    const refused = await request(gw.url, "/v1/embeddings", { method: "POST", headers: { authorization: `Bearer ${gw.placeholderKey}` }, body: "{}" });
    expect(refused.status).toBe(404);
    expect(JSON.parse(refused.body).error.type).toBe("not_found");
    expect(JSON.stringify(upstream.requests)).not.toContain(gw.placeholderKey);
  });

  it("gemini: forwards generateContent with x-goog-api-key and drops ?key=", async () => {
    const { upstream, gw } = await setup("gemini", "/gem");
    const path = `/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=${gw.placeholderKey}`;
    const r = await request(gw.url, path, { method: "POST", headers: { "x-goog-api-key": gw.placeholderKey }, body: "{}" });
    expect(r.status).toBe(200);
    expect(upstream.requests[0]!.url).toBe("/gem/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
    expect(upstream.requests[0]!.headers["x-goog-api-key"]).toBe(REAL_KEY);
    const key = { "x-goog-api-key": gw.placeholderKey };
    expect((await request(gw.url, "/v1beta/models/gemini-2.5-pro:countTokens", { method: "POST", headers: key, body: "{}" })).status).toBe(200);
    expect((await request(gw.url, "/v1beta/tunedModels/x:generateContent", { method: "POST", headers: key, body: "{}" })).status).toBe(404);
    expect((await request(gw.url, "/v1beta/models", { headers: key })).status).toBe(404);
    expect(JSON.stringify(upstream.requests)).not.toContain(gw.placeholderKey);
  });

  it("path rules and URL mapping", () => {
    expect(routeDecision("anthropic", "POST", "/v1/messages/count_tokens").ok).toBe(true);
    expect(routeDecision("anthropic", "POST", "/v1/complete").ok).toBe(false);
    expect(routeDecision("openai", "POST", "/v1/responses/compact").ok).toBe(true);
    // Stored responses (retrieve, cancel, delete) are not model requests.
    expect(routeDecision("openai", "POST", "/v1/responses/resp_1/cancel").ok).toBe(false);
    expect(routeDecision("openai", "POST", "/v1/files").ok).toBe(false);
    expect(routeDecision("gemini", "POST", "/v1beta/models/gemini-2.0-flash:generateContent").ok).toBe(true);
    expect(routeDecision("gemini", "POST", "/v1beta/models/x:embedContent").ok).toBe(false);
    const q = new URLSearchParams("a=1&key=secret");
    expect(upstreamUrl("openai", new URL("https://api.openai.com/v1"), "/v1/responses", q).toString()).toBe("https://api.openai.com/v1/responses?a=1");
    expect(upstreamUrl("openai", new URL("https://api.openai.com"), "/v1/responses", q).toString()).toBe("https://api.openai.com/v1/responses?a=1");
    expect(upstreamUrl("anthropic", new URL("https://api.anthropic.com"), "/v1/messages", new URLSearchParams()).toString()).toBe("https://api.anthropic.com/v1/messages");
    expect(upstreamUrl("anthropic", new URL("http://corp/llm/anthropic/"), "/v1/messages", new URLSearchParams()).toString()).toBe("http://corp/llm/anthropic/v1/messages");
    // Shaped like the provider's keys (CLIs that check the shape accept them), and never a key.
    expect(PLACEHOLDER_KEYS.anthropic).toMatch(/^sk-ant-.*placeholder-not-a-key$/);
    expect(PLACEHOLDER_KEYS.openai).toMatch(/^sk-.*placeholder-not-a-key$/);
    expect(PLACEHOLDER_KEYS.gemini).toMatch(/placeholder-not-a-key$/);
  });
});

describe("model gateway: streaming, budget, failures", () => {
  it("streams chunks to the client before the upstream finishes", async () => {
    let clientSawFirst!: () => void;
    const firstSeen = new Promise<void>((r) => (clientSawFirst = r));
    let upstreamEndedAt = 0;
    const upstream = await recordingServer(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: one\ndata: {}\n\n");
      // If the gateway buffered, the client would never see the first event
      // until the end: we would wait out the timeout.
      await Promise.race([firstSeen, new Promise((r) => setTimeout(r, 5000))]);
      res.end("event: two\ndata: {}\n\n");
      upstreamEndedAt = Date.now();
    });
    cleanups.push(upstream.close);
    const gw: ModelGateway = await startModelGateway({ provider: "anthropic", upstream: upstream.url, apiKey: REAL_KEY, log: recordingLogger() });
    cleanups.push(gw.close);
    const u = new URL(gw.url);
    const chunks: { at: number; text: string }[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: "/v1/messages", method: "POST", headers: { "x-api-key": gw.placeholderKey } }, (res) => {
        res.on("data", (c: Buffer) => {
          chunks.push({ at: Date.now(), text: c.toString() });
          if (chunks.length === 1) clientSawFirst();
        });
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end("{}");
    });
    expect(chunks[0]!.text).toContain("event: one");
    expect(chunks[0]!.text).not.toContain("event: two");
    expect(chunks[0]!.at).toBeLessThanOrEqual(upstreamEndedAt);
    expect(chunks.map((c) => c.text).join("")).toContain("event: two");
  });

  it("enforces max-model-requests with a 400 no CLI retries, and counts rejections", async () => {
    const { upstream, gw } = await setup("openai", "/v1", 2);
    const headers = { authorization: `Bearer ${gw.placeholderKey}` };
    for (let i = 0; i < 2; i++) expect((await request(gw.url, "/v1/responses", { method: "POST", headers, body: "{}" })).status).toBe(200);
    const r = await request(gw.url, "/v1/responses", { method: "POST", headers, body: "{}" });
    expect(r.status).toBe(400);
    expect(r.headers["x-should-retry"]).toBe("false");
    expect(JSON.parse(r.body).error).toMatchObject({ type: "invalid_request_error", message: expect.stringMatching(/budget exceeded: 2 model requests made, max-model-requests is 2/) });
    expect(upstream.requests).toHaveLength(2);
    expect(gw.stats()).toMatchObject({ requests: 2, rejected: 1 });
  });

  it("answers 502 in the provider's error shape when the upstream is down", async () => {
    const upstream = await recordingServer();
    await upstream.close();
    const gw = await startModelGateway({ provider: "gemini", upstream: upstream.url, apiKey: REAL_KEY, log: recordingLogger() });
    cleanups.push(gw.close);
    const r = await request(gw.url, "/v1beta/models/m:generateContent", { method: "POST", headers: { "x-goog-api-key": gw.placeholderKey }, body: "{}" });
    expect(r.status).toBe(502);
    expect(JSON.parse(r.body).error.status).toBe("UNAVAILABLE");
    expect(r.body).not.toContain(REAL_KEY);
  });

  it("refuses a base URL carrying credentials or a non-http scheme", async () => {
    await expect(startModelGateway({ provider: "openai", upstream: "http://u:p@127.0.0.1:1/v1", apiKey: "k", log: recordingLogger() })).rejects.toThrow(/credentials/);
    await expect(startModelGateway({ provider: "openai", upstream: "ftp://127.0.0.1/v1", apiKey: "k", log: recordingLogger() })).rejects.toThrow(/http/);
  });
});
