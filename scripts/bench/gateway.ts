/**
 * The model gateway's added latency per streamed response, usage parsing and
 * budget accounting on (`npm run bench`): the same Anthropic Messages SSE
 * stream (message_start, BENCH_GATEWAY_EVENTS text deltas, message_delta with
 * usage) fetched straight from a local upstream and through the gateway,
 * alternately, timed to the last byte. Reports the median and p95 of each and
 * of the per-pair difference.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { startModelGateway } from "../../src/sandbox/gateway.js";

const REQUESTS = Number(process.env.BENCH_GATEWAY_REQUESTS ?? 300);
const EVENTS = Number(process.env.BENCH_GATEWAY_EVENTS ?? 200);

function sseBody(): string {
  const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const usage = { input_tokens: 1200, cache_read_input_tokens: 800, cache_creation_input_tokens: 0, output_tokens: 1 };
  let out = ev("message_start", { message: { id: "msg_bench", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], usage } });
  out += ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
  for (let i = 0; i < EVENTS; i++) out += ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: `token ${i} `.repeat(8) } });
  out += ev("content_block_stop", { index: 0 });
  out += ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { ...usage, output_tokens: EVENTS * 8 } });
  return out + ev("message_stop", {});
}

const body = sseBody();
const upstream = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    // A few writes, as a provider flushes events.
    const step = Math.ceil(body.length / 8);
    for (let i = 0; i < body.length; i += step) res.write(body.slice(i, i + step));
    res.end();
  });
});
await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
const silent = { debug() {}, info() {}, warning() {}, error() {}, group: <T>(_t: string, fn: () => Promise<T>) => fn() };
const gw = await startModelGateway({
  provider: "anthropic",
  upstream: upstreamUrl,
  apiKey: "bench-key",
  log: silent,
  // Limits far away: every response is metered and priced, none refused.
  budget: { maxCostUsd: 1e9, maxTokens: 1e12, maxModelRequests: REQUESTS * 2 },
});

const agent = new http.Agent({ keepAlive: true });
function timed(base: string, key: string): Promise<number> {
  const started = process.hrtime.bigint();
  const payload = JSON.stringify({ model: "claude-sonnet-4-5", stream: true, max_tokens: 1024, messages: [{ role: "user", content: "hi" }] });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}/v1/messages`,
      { method: "POST", agent, headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01", "content-length": Buffer.byteLength(payload) } },
      (res) => {
        res.on("data", () => undefined);
        res.on("end", () => resolve(Number(process.hrtime.bigint() - started) / 1e6));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

const direct: number[] = [];
const through: number[] = [];
const added: number[] = [];
for (let i = 0; i < 20; i++) await timed(gw.url, gw.placeholderKey); // warm-up
for (let i = 0; i < REQUESTS; i++) {
  const d = await timed(upstreamUrl, "bench-key");
  const g = await timed(gw.url, gw.placeholderKey);
  direct.push(d);
  through.push(g);
  added.push(g - d);
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;
const usage = gw.usage();
console.log(`Model gateway, streamed response of ${(body.length / 1024).toFixed(1)} KiB (${EVENTS + 6} SSE events), usage metering on, ${REQUESTS} requests each way`);
console.table([
  { path: "straight to the upstream", "median ms": pct(direct, 0.5).toFixed(2), "p95 ms": pct(direct, 0.95).toFixed(2) },
  { path: "through the gateway", "median ms": pct(through, 0.5).toFixed(2), "p95 ms": pct(through, 0.95).toFixed(2) },
  { path: "added by the gateway (per pair)", "median ms": pct(added, 0.5).toFixed(2), "p95 ms": pct(added, 0.95).toFixed(2) },
]);
console.log(`metered: ${usage.requests} requests, ${usage.inputTokens} in, ${usage.outputTokens} out, $${usage.costUsd?.toFixed(4)}`);
agent.destroy();
await gw.close();
await new Promise<void>((r) => upstream.close(() => r()));
