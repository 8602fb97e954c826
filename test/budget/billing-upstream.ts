/**
 * A model API that bills the way a provider does, for the budget admission
 * tests: it honours the output limit the request names (Anthropic
 * `max_tokens`, OpenAI `max_output_tokens` / `max_completion_tokens` /
 * `max_tokens`, Gemini `generationConfig.maxOutputTokens`), generates
 * `wantOutput` tokens per answer or fewer, counts input at 4 bytes per token
 * (an ordinary tokenizer on English and JSON), and adds up what it billed.
 * Replies are one JSON document in each provider's shape, with its usage.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Provider = "anthropic" | "openai" | "gemini";

export interface BilledRequest {
  path: string;
  body: Record<string, unknown>;
  input: number;
  output: number;
}

export interface BillingUpstream {
  url: string;
  billed: BilledRequest[];
  total(): number;
  close(): Promise<void>;
}

const obj = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);

/** The output limit the provider would hold the request to, and how many answers it asked for. */
function limits(provider: Provider, body: Record<string, unknown>): { cap: number | undefined; answers: number } {
  if (provider === "anthropic") return { cap: num(body.max_tokens), answers: 1 };
  if (provider === "gemini") {
    const g = obj(body.generationConfig);
    return { cap: num(g.maxOutputTokens), answers: num(g.candidateCount) ?? 1 };
  }
  const caps = [body.max_output_tokens, body.max_completion_tokens, body.max_tokens].map(num).filter((n): n is number => n !== undefined);
  return { cap: caps.length ? Math.min(...caps) : undefined, answers: num(body.n) ?? 1 };
}

function reply(provider: Provider, input: number, output: number): unknown {
  if (provider === "anthropic")
    return { type: "message", id: "msg_1", model: "claude-sonnet-4-5", role: "assistant", content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", usage: { input_tokens: input, output_tokens: output } };
  if (provider === "gemini")
    return { candidates: [{ content: { parts: [{ text: "ok" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: input, candidatesTokenCount: output } };
  return { id: "resp_1", object: "response", model: "gpt-5", status: "completed", output: [], usage: { input_tokens: input, output_tokens: output } };
}

export async function startBillingUpstream(provider: Provider, wantOutput: number, delayMs = 50): Promise<BillingUpstream> {
  const billed: BilledRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString("utf8"));
      } catch {
        res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"not JSON","type":"invalid_request_error"}}');
        return;
      }
      const body = obj(parsed);
      const { cap, answers } = limits(provider, body);
      const input = Math.ceil(raw.length / 4);
      const output = Math.min(cap ?? wantOutput, wantOutput) * answers;
      billed.push({ path: req.url ?? "", body, input, output });
      // Answer after a while, so parallel requests are all in flight at once.
      setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply(provider, input, output))), delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    billed,
    total: () => billed.reduce((n, b) => n + b.input + b.output, 0),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
