/**
 * Rate limits absorbed at the model gateway (issue 36), with real CLIs
 * (pinned) driven by the action (dist/main.js) against the stub model:
 *  - the stub answers the first two model requests 429 with `Retry-After: 1`,
 *    then serves: the run succeeds, the CLI never saw a 429 (one model
 *    request from its side per step), the two retries are in result.json's
 *    request records, in the OpenTelemetry spans built from them, in `usage`
 *    (retries, seconds waited) and in the job summary;
 *  - the stub stays at 429 for the primary model: the fallback model serves
 *    every request, named and priced at its own price in `usage` and the summary;
 *  - a fallback model without a price under a cost cap: a configuration error
 *    naming `fallback-models` and `model-prices`, before any agent starts.
 *  - the model stays at 429 with no fallback: (1 + model-retries) upstream
 *    attempts, and the CLI stops on the gateway's final answer (all four CLIs).
 * One run per scenario and CLI (each retry costs a real second): claude and
 * codex in every scenario, gemini and opencode (slow to start) in the last.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunResult } from "../../src/result.js";
import { buildRunSpans } from "../../src/trace/otel.js";
import { Redactor } from "../../src/shared/redact.js";
import type { ModelRequestRecord } from "../../src/trace/model-requests.js";
import { PriceBook } from "../../src/sandbox/prices.js";
import type { CliName } from "../support/stub-model-clis.js";
import { writeFileStep } from "../support/stub-model-tools.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";
import { makeWorkspace, runAgentAction, type AgentRun } from "../agents/helpers.js";

const SLOW = 300_000;

interface Cli {
  cli: CliName;
  provider: "anthropic" | "openai" | "gemini";
  primary: string;
  fallback: string;
  inputs(stub: StubModel): Record<string, string>;
}

const CLIS: Cli[] = [
  {
    cli: "claude",
    provider: "anthropic",
    primary: "claude-sonnet-4-5",
    fallback: "claude-haiku-4-5",
    inputs: (s) => ({ agent: "claude", model: "claude-sonnet-4-5", "base-url": s.url, secrets: "ANTHROPIC_API_KEY=sk-ant-test-key-ratelimit-0123456789" }),
  },
  {
    cli: "codex",
    provider: "openai",
    primary: "gpt-5.5",
    fallback: "gpt-5-mini",
    inputs: (s) => ({ agent: "codex", model: "gpt-5.5", "base-url": `${s.url}/v1`, secrets: "OPENAI_API_KEY=sk-test-key-ratelimit-0123456789" }),
  },
  {
    cli: "gemini",
    provider: "gemini",
    primary: "gemini-2.5-pro",
    fallback: "gemini-2.5-flash",
    inputs: (s) => ({ agent: "gemini", model: "gemini-2.5-pro", "base-url": s.url, secrets: "GEMINI_API_KEY=AIza-test-key-ratelimit-0123456789" }),
  },
  {
    cli: "opencode",
    provider: "openai",
    primary: "stub-model",
    fallback: "stub-model-mini",
    inputs: (s) => ({ agent: "opencode", model: "stub-model", "base-url": `${s.url}/v1`, secrets: "OPENAI_API_KEY=sk-test-key-ratelimit-0123456789" }),
  },
];

let stub: StubModel;
beforeAll(async () => {
  stub = await startStubModel([]);
});
afterAll(async () => {
  await stub?.close();
});

const report: string[] = [];
afterAll(() => {
  if (report.length) console.info(`[rate-limits] ${report.join("; ")}`);
});

/** Write hello.txt, then answer: two model requests from the CLI's side. */
function twoSteps(cli: CliName, workspace: string) {
  return [writeFileStep(cli, path.join(workspace, "hello.txt"), `hello from ${cli}\n`), { text: "written" }];
}

async function runWith(c: Cli, extra: Record<string, string>): Promise<{ run: AgentRun; served: number; limited: number; models: string[] }> {
  const ws = makeWorkspace();
  stub.setScript(twoSteps(c.cli, ws));
  const before = stub.requests.length;
  const run = await runAgentAction({ workspace: ws, stub, timeoutMs: SLOW, inputs: { ...c.inputs(stub), prompt: "Create hello.txt", ...extra } });
  const mine = stub.requests.slice(before).filter((r) => r.kind === "model");
  return { run, served: mine.filter((r) => !r.rateLimited).length, limited: mine.filter((r) => r.rateLimited).length, models: mine.map((r) => r.model ?? "?") };
}

const usageOf = (r: AgentRun) =>
  JSON.parse(r.main.outputs.usage!) as { requests: number; costUsd?: number; retries?: number; retryWaitSeconds?: number; models?: Record<string, { requests: number; costUsd?: number; fallback?: boolean }> };
const recordsOf = (r: AgentRun) => r.result.metadata.modelRequests as ModelRequestRecord[];

// The served scenarios run with claude and codex (the two wire APIs with a body model: Anthropic, OpenAI); gemini
// (the model in the URL path) is covered by the gateway's unit tests. Every CLI runs the give-up scenario, the one
// each CLI's own retry rules make different (opencode retries an error whose message looks busy).
const QUICK = CLIS.filter((c) => c.cli === "claude" || c.cli === "codex");

describe.each(QUICK)("$cli", (c) => {
  it("429 with Retry-After: 1 twice, then served: the run succeeds; the retries are in the trace, usage and summary", { timeout: SLOW }, async () => {
    stub.setRateLimits([{ times: 2, retryAfter: "1" }]);
    const { run: r, served, limited } = await runWith(c, {});
    report.push(`${c.cli} 2×429: ${limited} rate-limited + ${served} served at the stub, ${r.totalMs} ms`);
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    expect(readFileSync(path.join(r.result.diff.patchPath), "utf8")).toContain(`hello from ${c.cli}`);
    expect(limited).toBe(2);
    // The gateway's records: two held-back 429s, each retried after the 1 s the stub asked for.
    const retried = recordsOf(r).filter((x) => x.retry);
    expect(retried.map((x) => [x.status, x.retry!.next, x.retry!.waitMs])).toEqual([
      [429, "retry", 1000],
      [429, "retry", 1000],
    ]);
    // Every request the CLI made got an answer it did not have to retry: as many served as the CLI asked for.
    expect(recordsOf(r).filter((x) => x.operation && x.status === 200)).toHaveLength(served);
    const usage = usageOf(r);
    expect(usage).toMatchObject({ retries: 2, retryWaitSeconds: 2, requests: served + 2 });
    expect(usage.models).toEqual({ [c.primary]: { requests: served, costUsd: usage.costUsd } });
    // One span per upstream attempt; the two held back carry the retry.
    const spans = await buildRunSpans(r.result as RunResult, path.join(path.dirname(r.result.diff.patchPath), "trace.jsonl"), { host: { repository: "octo/repo", workflow: "agent", runId: "1", runAttempt: "1", serverUrl: "https://github.com", eventName: "push" } }, new Redactor([]));
    const retrySpans = spans.filter((s) => s.attributes["agent_runner.retry.next"] === "retry");
    expect(retrySpans).toHaveLength(2);
    expect(retrySpans.every((s) => s.attributes["http.response.status_code"] === 429 && s.attributes["agent_runner.retry.wait_ms"] === 1000)).toBe(true);
    expect(r.main.summary).toMatch(/\| Rate limits \| 2 answers retried by the model gateway, 2 s waited/);
    expect(r.main.summary.match(/answered 429 \(rate-limited\): retried after 1\.0 s/g)).toHaveLength(2);
  });

});

describe.each(QUICK)("$cli", (c) => {
  it("the primary stays at 429: the fallback model serves every request, named and priced at its own price", { timeout: SLOW }, async () => {
    stub.setRateLimits([{ model: c.primary, retryAfter: "1" }]);
    const { run: r, served, limited, models } = await runWith(c, { "fallback-models": `${c.fallback}`, "model-retries": "1" });
    report.push(`${c.cli} fallback: ${limited} rate-limited + ${served} served at the stub, ${r.totalMs} ms`);
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    expect(readFileSync(r.result.diff.patchPath, "utf8")).toContain(`hello from ${c.cli}`);
    // Per agent request: the primary, one retry of it, then the fallback.
    expect(limited).toBe(2 * served);
    expect(new Set(models.filter((m) => m !== c.primary))).toEqual(new Set([c.fallback]));
    const usage = usageOf(r);
    expect(Object.keys(usage.models!)).toEqual([c.fallback]);
    expect(usage.models![c.fallback]).toMatchObject({ requests: served, fallback: true });
    // Priced from the table at the fallback's own price: the sum of what each served response used.
    const book = await PriceBook.load(c.provider);
    const expected = recordsOf(r)
      .filter((x) => x.status === 200 && x.usage)
      .reduce((n, x) => n + book.costUsd(c.fallback, x.usage!)!, 0);
    expect(usage.models![c.fallback]!.costUsd).toBeCloseTo(expected, 8);
    expect(usage.costUsd).toBeCloseTo(expected, 8);
    expect(recordsOf(r).filter((x) => x.fallbackFor === c.primary && x.status === 200)).toHaveLength(served);
    expect(r.main.summary).toContain(`| \` ${c.fallback} \` (fallback) | ${served} |`);
    expect(r.main.summary).toMatch(/answered 429 \(rate-limited\): sent to the next fallback model/);
  });
});

// The CLIs' own retries must not multiply the gateway's: its final answer is one each CLI stops on.
describe.each(CLIS)("$cli, the model stays at 429 and no fallback is left", (c) => {
  it("one agent request costs (1 + model-retries) upstream attempts; the CLI does not retry the gateway's final answer", { timeout: SLOW }, async () => {
    stub.setRateLimits([{ retryAfter: "0" }]);
    const { run: r, served, limited } = await runWith(c, { "model-retries": "1" });
    report.push(`${c.cli} gave up: ${limited} upstream attempts, ${r.totalMs} ms`);
    expect(r.main.outputs.conclusion).toBe("failure");
    expect(served).toBe(0);
    expect(limited).toBe(2);
    expect(recordsOf(r).filter((x) => x.retry).map((x) => x.retry!.next)).toEqual(["retry", "give-up"]);
    expect(r.main.summary).toMatch(/the gateway gave up; the agent's request failed/);
  });
});

describe("a fallback model without a price", () => {
  it("under max-cost-usd: a configuration error naming fallback-models and model-prices, before any agent starts", { timeout: SLOW }, async () => {
    const ws = makeWorkspace();
    const before = stub.requests.length;
    const r = await runAgentAction({
      workspace: ws,
      stub,
      timeoutMs: SLOW,
      inputs: { ...CLIS[0]!.inputs(stub), prompt: "x", "max-cost-usd": "2", "fallback-models": "claude-haiku-4-5, my-private-model" },
    }).catch((e: unknown) => e as Error);
    const log = r instanceof Error ? r.message : `${r.main.log}\n${r.result.reason ?? ""}`;
    expect(log).toMatch(/Input 'fallback-models': no price is known for 'my-private-model'.*'max-cost-usd' is set.*Add it to 'model-prices'/s);
    expect(stub.requests.length).toBe(before);
  });
});
