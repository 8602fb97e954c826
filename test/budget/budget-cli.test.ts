/**
 * Budgets enforced at the model gateway, with each real CLI (pinned) driven
 * by the action (dist/main.js) against the stub model:
 *  - `max-model-requests: 1` on a task the script needs three model requests
 *    for: exactly one reaches the stub, the CLI stops on the gateway's refusal
 *    (the attempts it made against the gateway are counted), the run ends
 *    `failure` with `Budget exceeded:` and `budget-exceeded=true`, the partial
 *    patch, trace and session id kept; `usage` is what the stub served;
 *  - `max-tokens` (codex) and `max-cost-usd` (claude, priced by the table;
 *    opencode's `stub-model` priced by `model-prices`): the first request is
 *    admitted (its input estimate and output limit fit the budget), the stub
 *    reports more usage than that limit allows (a real provider would not),
 *    so the settled usage passes the limit and the second request never
 *    reaches the stub;
 *  - an unknown model with `max-cost-usd` and no `model-prices`: a
 *    configuration error before anything starts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliName } from "../support/stub-model-clis.js";
import { shellStep, writeFileStep } from "../support/stub-model-tools.js";
import { startStubModel, type StubModel, type StubStep } from "../support/stub-model.js";
import { makeWorkspace, runAgentAction, type AgentRun } from "../agents/helpers.js";

const SLOW = 300_000;

interface Cli {
  cli: CliName;
  inputs(stub: StubModel): Record<string, string>;
  /** Input side of one stub response as the gateway counts it (Anthropic adds cache writes). */
  promptTokens: number;
}

const CLIS: Record<CliName, Cli> = {
  claude: {
    cli: "claude",
    inputs: (s) => ({ agent: "claude", model: "claude-sonnet-4-5", "base-url": s.url, secrets: "ANTHROPIC_API_KEY=sk-ant-test-key-budget-0123456789" }),
    promptTokens: 150,
  },
  codex: {
    cli: "codex",
    inputs: (s) => ({ agent: "codex", model: "gpt-5.5", "base-url": `${s.url}/v1`, secrets: "OPENAI_API_KEY=sk-test-key-budget-0123456789" }),
    promptTokens: 140,
  },
  gemini: {
    cli: "gemini",
    inputs: (s) => ({ agent: "gemini", model: "gemini-2.5-pro", "base-url": s.url, secrets: "GEMINI_API_KEY=AIza-test-key-budget-0123456789" }),
    promptTokens: 140,
  },
  opencode: {
    cli: "opencode",
    inputs: (s) => ({
      agent: "opencode",
      model: "stub-model",
      "base-url": `${s.url}/v1`,
      secrets: "OPENAI_API_KEY=sk-test-key-budget-0123456789",
      "model-prices": "stub-model: {input: 1, output: 1, cached: 0.1}",
    }),
    promptTokens: 140,
  },
};

/** Three model requests: write hello.txt, run a shell command, answer. */
function threeSteps(cli: CliName, workspace: string, usage?: StubStep["usage"]): StubStep[] {
  return [
    { ...writeFileStep(cli, path.join(workspace, "hello.txt"), `hello from ${cli}\n`), ...(usage ? { usage } : {}) },
    shellStep(cli, "echo made-by-shell > shell.txt"),
    { text: "all three done" },
  ];
}

let stub: StubModel;
beforeAll(async () => {
  stub = await startStubModel([]);
});
afterAll(async () => {
  await stub?.close();
});

/** Billed requests that reached the stub during `fn` (token counts, model lists and HEAD probes not included). */
async function counted(fn: () => Promise<AgentRun>): Promise<{ run: AgentRun; billed: number }> {
  const before = stub.requests.length;
  const run = await fn();
  const billed = stub.requests.slice(before).filter((r) => r.method === "POST" && !/count_tokens|:countTokens/.test(r.path)).length;
  return { run, billed };
}

function gatewayStats(r: AgentRun): { requests: number; rejected: number } {
  return r.result.metadata.gateway as { requests: number; rejected: number };
}

const report: string[] = [];
afterAll(() => {
  if (report.length) console.info(`[budget] ${report.join("; ")}`);
});

/** The run was stopped by the budget, and kept everything a timeout keeps. */
function expectStoppedByBudget(r: AgentRun, cli: CliName, reason: RegExp): void {
  expect(r.main.outputs.conclusion, r.main.log).toBe("failure");
  expect(r.main.outputs["budget-exceeded"]).toBe("true");
  expect(r.result.reason).toMatch(/^Budget exceeded: /);
  expect(r.result.reason).toMatch(reason);
  expect(r.main.exitCode).toBe(1);
  // The first response's tool call ran: its file is in the partial patch.
  expect(readFileSync(r.main.outputs["patch-path"]!, "utf8")).toContain(`hello from ${cli}`);
  expect(r.trace.length).toBeGreaterThan(0);
  expect(r.main.outputs["session-id"]).toBeTruthy();
}

describe.each(Object.values(CLIS))("$cli: max-model-requests 1 on a three-request task", (c) => {
  it("one request reaches the stub, the CLI stops on the refusal, Budget exceeded, usage is the stub's", { timeout: SLOW }, async () => {
    const ws = makeWorkspace();
    stub.setScript(threeSteps(c.cli, ws));
    const { run: r, billed } = await counted(() =>
      runAgentAction({ workspace: ws, stub, timeoutMs: SLOW, inputs: { ...c.inputs(stub), prompt: "Create hello.txt and shell.txt", "max-model-requests": "1" } }),
    );
    const attempts = gatewayStats(r).rejected;
    report.push(`${c.cli} max-model-requests=1: ${billed} request at the stub, ${attempts} refused attempt(s), ${r.totalMs} ms`);
    expectStoppedByBudget(r, c.cli, /^Budget exceeded: 1 model request made, max-model-requests is 1 /);
    expect(billed).toBe(1);
    // No retry storm: the CLI gave up after the refusal instead of hammering the gateway.
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBeLessThanOrEqual(3);
    // The gateway's figure is exactly what the stub served for one response.
    const usage = JSON.parse(r.main.outputs.usage!) as Record<string, unknown>;
    expect(usage).toMatchObject({ inputTokens: c.promptTokens, outputTokens: 20, cachedTokens: 40, requests: 1 });
    expect(r.result.metadata.cliUsage).toBeDefined();
  });
});

describe("max-tokens and max-cost-usd", () => {
  it("codex, max-tokens 200,000: the first response (200,140 tokens) passes it, the second request never reaches the stub", { timeout: SLOW }, async () => {
    const ws = makeWorkspace();
    stub.setScript(threeSteps("codex", ws, { outputTokens: 200_000 }));
    const { run: r, billed } = await counted(() =>
      runAgentAction({ workspace: ws, stub, timeoutMs: SLOW, inputs: { ...CLIS.codex.inputs(stub), prompt: "Create hello.txt and shell.txt", "max-tokens": "200000" } }),
    );
    report.push(`codex max-tokens: ${billed} at the stub, ${gatewayStats(r).rejected} refused, ${r.totalMs} ms`);
    expectStoppedByBudget(r, "codex", /^Budget exceeded: 200,140 tokens used \(140 in, 200,000 out\), max-tokens is 200,000 /);
    expect(billed).toBe(1);
    // The gateway wrote an output limit into codex's request (it names none): within what the budget allowed.
    const sent = stub.modelRequests().at(-1)!.body as { max_output_tokens?: number };
    expect(sent.max_output_tokens).toBeGreaterThan(0);
    expect(sent.max_output_tokens).toBeLessThanOrEqual(32_000);
  });

  it("claude, max-cost-usd 1 priced by the table: a $1.05 first response passes it, the second request never reaches the stub", { timeout: SLOW }, async () => {
    const ws = makeWorkspace();
    // claude-sonnet-4-5: $3 in, $0.30 cache read, $3.75 cache write, $15 out per million.
    stub.setScript(threeSteps("claude", ws, { outputTokens: 70_000 }));
    const { run: r, billed } = await counted(() =>
      runAgentAction({ workspace: ws, stub, timeoutMs: SLOW, inputs: { ...CLIS.claude.inputs(stub), prompt: "Create hello.txt and shell.txt", "max-cost-usd": "1" } }),
    );
    report.push(`claude max-cost-usd: ${billed} at the stub, ${gatewayStats(r).rejected} refused, ${r.totalMs} ms`);
    const cost = (100 * 3 + 40 * 0.3 + 10 * 3.75 + 70_000 * 15) / 1e6;
    expectStoppedByBudget(r, "claude", /^Budget exceeded: \$1\.05 spent, max-cost-usd is \$1\.00 /);
    expect(billed).toBe(1);
    expect(JSON.parse(r.main.outputs.usage!).costUsd).toBeCloseTo(cost, 10);
  });

  it("an unknown model with max-cost-usd is a configuration error before anything starts", async () => {
    const before = stub.requests.length;
    const inputs: Record<string, string> = { ...CLIS.opencode.inputs(stub), prompt: "p", "max-cost-usd": "1" };
    delete inputs["model-prices"];
    const r = await runAgentAction({ workspace: makeWorkspace(), stub, inputs }).catch((e: Error) => e);
    expect(r).toBeInstanceOf(Error);
    expect(String(r)).toMatch(/Input 'max-cost-usd': no price is known for model 'stub-model'.*Add it to 'model-prices'/);
    expect(stub.requests.length).toBe(before);
  });

  it("opencode, stub-model priced by model-prices: works, and max-cost-usd stops it after the first response", { timeout: SLOW }, async () => {
    const ws = makeWorkspace();
    stub.setScript(threeSteps("opencode", ws, { outputTokens: 200_000 }));
    const { run: r, billed } = await counted(() =>
      runAgentAction({ workspace: ws, stub, timeoutMs: SLOW, inputs: { ...CLIS.opencode.inputs(stub), prompt: "Create hello.txt and shell.txt", "max-cost-usd": "0.2" } }),
    );
    report.push(`opencode max-cost-usd (model-prices): ${billed} at the stub, ${gatewayStats(r).rejected} refused, ${r.totalMs} ms`);
    // 100 uncached × $1 + 40 cached × $0.10 + 200,000 out × $1, per million: $0.200104.
    expectStoppedByBudget(r, "opencode", /^Budget exceeded: \$0\.2001 spent, max-cost-usd is \$0\.2000 /);
    expect(billed).toBe(1);
    expect(JSON.parse(r.main.outputs.usage!)).toMatchObject({ inputTokens: 140, outputTokens: 200_000, cachedTokens: 40, costUsd: 0.200104, requests: 1 });
  });
});
