/**
 * The budget inputs (parsed, checked before the agent starts), and how a
 * budget stop and the gateway's usage figure reach the outputs, the job
 * summary and the sticky comment.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseSettings, type RawInputs } from "../../src/config/parse.js";
import { finalBody, stickyMarker } from "../../src/publish/comment.js";
import { resultOutputs } from "../../src/publish/outputs.js";
import { summaryMarkdown } from "../../src/publish/summary.js";
import type { RunResult } from "../../src/result.js";
import { checkBudget } from "../../src/sandbox/budget.js";
import { runResult } from "../support/run-result.js";
import { configProblems } from "../support/config-problems.js";

const parse = (raw: RawInputs) => parseSettings({ agent: "claude", prompt: "p", ...raw }, { cwd: mkdtempSync(path.join(os.tmpdir(), "budget-")) });
const problemsOf = (raw: RawInputs): string[] => configProblems(() => parse(raw));

describe("budget inputs", () => {
  it("parses the three limits and model-prices", () => {
    const s = parse({ "max-cost-usd": "2.5", "max-tokens": "100000", "max-model-requests": "40", "model-prices": "my-model: {input: 3, output: 15, cached: 0.3}" });
    expect(s.budget).toEqual({ maxCostUsd: 2.5, maxTokens: 100000, maxModelRequests: 40, modelPrices: { "my-model": { input: 3, output: 15, cached: 0.3 } } });
    // Nothing given: the default cost cap (a model-backed agent on its vendor's API).
    expect(parse({}).budget).toEqual({ maxCostUsd: 5, costCapIsDefault: true, modelPrices: {} });
    expect(parse({ "max-cost-usd": "none" }).budget).toBeUndefined();
  });

  it("names each bad value and the fix", () => {
    const problems = problemsOf({ "max-cost-usd": "-1", "max-tokens": "1.5", "max-model-requests": "many", "model-prices": "my-model: {input: cheap}" });
    expect(problems).toEqual([
      "Input 'model-prices': model 'my-model' needs 'input' and 'output' (and optionally 'cached') as non-negative numbers, e.g. 'my-model: {input: 3, output: 15, cached: 0.3}' (US dollars per million tokens).",
      "Input 'max-cost-usd': '-1' is not a positive number of US dollars, e.g. 2.50.",
      "Input 'max-tokens': '1.5' is not a positive whole number.",
      "Input 'max-model-requests': 'many' is not a positive whole number.",
    ]);
  });

  it("before the agent starts: an unknown model under max-cost-usd needs model-prices; a budget needs the gateway", async () => {
    const claude = { provider: "anthropic" as const };
    await expect(checkBudget(parse({ model: "stub-model", "max-cost-usd": "1" }), claude)).rejects.toThrow(
      /^Input 'max-cost-usd': no price is known for model 'stub-model' \(it is not in the pinned @pydantic\/genai-prices table\).*Add it to 'model-prices'/,
    );
    await expect(checkBudget(parse({ model: "stub-model", "max-cost-usd": "1", "model-prices": "stub-model: {input: 1, output: 2}" }), claude)).resolves.toBeUndefined();
    await expect(checkBudget(parse({ model: "claude-sonnet-4-5", "max-cost-usd": "1" }), claude)).resolves.toBeUndefined();
    // Only the cost needs a price.
    await expect(checkBudget(parse({ model: "stub-model", "max-tokens": "1000" }), claude)).resolves.toBeUndefined();
    await expect(checkBudget(parse({ model: "stub-model", "max-model-requests": "3" }), {})).rejects.toThrow(/^Input 'max-model-requests': agent 'claude' does not send its model requests through/);
  });
});

function result(over: Partial<RunResult> = {}): RunResult {
  return runResult({
    agentName: "codex",
    agentBackend: "codex",
    sandboxBackend: "bwrap",
    eventCount: 3,
    toolCalls: 1,
    usage: { inputTokens: 1200, outputTokens: 300, cachedTokens: 100, costUsd: 0.0123, requests: 4 },
    durationMs: 65_000,
    ...over,
  });
}

describe("a budget stop and the gateway's figure in what the run reports", () => {
  const stopped = result({
    conclusion: "failure",
    reason: "Budget exceeded: 1,500 tokens used (1,200 in, 300 out), max-tokens is 1,000 (1 model request refused; a response already streaming when the limit was reached was let finish).",
    budgetExceeded: true,
  });

  it("outputs: budget-exceeded, and usage in the one JSON shape", () => {
    expect(resultOutputs(stopped)["budget-exceeded"]).toBe("true");
    expect(resultOutputs(result())["budget-exceeded"]).toBe("false");
    expect(JSON.parse(resultOutputs(stopped).usage!)).toEqual({ inputTokens: 1200, outputTokens: 300, cachedTokens: 100, costUsd: 0.0123, requests: 4 });
  });

  it("summary: the reason, the request count and the budget row", () => {
    const md = summaryMarkdown(stopped);
    // The reason is code (it is often the agent's last stderr line).
    expect(md).toContain("| Conclusion | ❌ failure — ` Budget exceeded: 1,500 tokens used");
    expect(md).toContain("| Model requests | 4 |");
    expect(md).toContain("| Budget | ⛔ exceeded");
    expect(md).toContain("| 1,200 | 300 | 100 | $0.0123 | 4 | 1 | 1 | 3 |");
  });

  it("summary: the cost cap and the spend, the default said as such (held like a given cap: no lifted state)", () => {
    expect(summaryMarkdown(result({ costCap: { maxUsd: 5, isDefault: true } }))).toContain(
      "| Cost cap | $0.0123 of $5.00 (the default `max-cost-usd`; `max-cost-usd: none` turns it off) |",
    );
    expect(summaryMarkdown(result({ costCap: { maxUsd: 2.5, isDefault: false } }))).toContain("| Cost cap | $0.0123 of $2.50 (`max-cost-usd`) |");
    const unknown = summaryMarkdown(result({ costCap: { maxUsd: 5, isDefault: true }, usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 } }));
    expect(unknown).toContain("| Cost cap | unknown of $5.00 (the default `max-cost-usd`; `max-cost-usd: none` turns it off) |");
    expect(summaryMarkdown(result())).not.toContain("Cost cap");
  });

  it("sticky comment: one line says it, the footer shows the gateway's figure", () => {
    const body = finalBody({ marker: stickyMarker("k"), result: stopped, links: {} });
    const lines = body.split("\n").filter((l) => l.includes("Budget exceeded"));
    expect(lines).toEqual([`**Reason:** ${stopped.reason}`]);
    expect(body).toContain("1,200 in · 300 out · 100 cached tokens · $0.0123 · 4 model requests");
  });
});
