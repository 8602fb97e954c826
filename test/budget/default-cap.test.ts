/**
 * The default cost cap (`max-cost-usd` unset): a cap a person would choose,
 * that never breaks a run that worked without it.
 *  - parsed: applied to model-backed agents on their vendor's API or a cloud;
 *    off (with a notice) for a `base-url` server; off for `agent: command`
 *    and the publish phase; `none` turns it off; a value the workflow sets
 *    (step input or config file) is its own cap;
 *  - before the agent starts: a default cap never refuses a run (an explicit
 *    one on an unknown model still needs model-prices);
 *  - at the gateway: a model without a price, or a request it cannot count,
 *    lifts the default cap with one notice and goes through, where an
 *    explicit cap refuses; on a priced model the default is a real cap.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseSettings, type RawInputs } from "../../src/config/parse.js";
import { DEFAULT_MAX_COST_USD, INPUTS } from "../../src/constants.js";
import { checkBudget } from "../../src/sandbox/budget.js";
import { startModelGateway } from "../../src/sandbox/gateway.js";
import { recordingLogger, request, type Reply } from "../sandbox/helpers.js";
import { startStubModel } from "../support/stub-model.js";

const DEFAULT = Number(DEFAULT_MAX_COST_USD);

function parse(raw: RawInputs, configFile?: string) {
  const cwd = mkdtempSync(path.join(os.tmpdir(), "default-cap-"));
  if (configFile !== undefined) {
    mkdirSync(path.join(cwd, ".github"));
    writeFileSync(path.join(cwd, ".github/agent-runner.yml"), configFile);
  }
  const notices: string[] = [];
  const settings = parseSettings({ agent: "claude", prompt: "p", ...raw }, { cwd, notice: (m) => notices.push(m) });
  return { budget: settings.budget, notices };
}

describe("the default cost cap, parsed", () => {
  it("is the input's default in the reference, a number of dollars", () => {
    expect(INPUTS["max-cost-usd"].default).toBe(DEFAULT_MAX_COST_USD);
    expect(DEFAULT).toBeGreaterThan(0);
    expect(INPUTS["max-cost-usd"].description).toMatch(/`none` for no cap/);
  });

  it.each(["claude", "codex", "opencode", "gemini"])("%s on its vendor's API gets it, marked as the default", (agent) => {
    expect(parse({ agent }).budget).toEqual({ maxCostUsd: DEFAULT, costCapIsDefault: true, modelPrices: {} });
  });

  it("action.yml passes the default as the step's value: still the default (the runner cannot tell it from unset)", () => {
    expect(parse({ "max-cost-usd": DEFAULT_MAX_COST_USD }).budget?.costCapIsDefault).toBe(true);
  });

  it("a cloud provider gets it too (prices per cloud table, lifted at the gateway when the model has none)", () => {
    expect(parse({ provider: "bedrock", "aws-region": "us-east-1" }).budget).toMatchObject({ maxCostUsd: DEFAULT, costCapIsDefault: true });
  });

  it("a base-url server: off, with a notice saying how to cap it", () => {
    const { budget, notices } = parse({ "base-url": "http://127.0.0.1:8080" });
    expect(budget).toBeUndefined();
    expect(notices).toEqual([expect.stringMatching(/^The default cost cap \(max-cost-usd 5\) is off for this run: base-url .* max-cost-usd: none silences this\.$/)]);
    // Other limits stay: only the cost default is dropped.
    expect(parse({ "base-url": "http://127.0.0.1:8080", "max-tokens": "1000" }).budget).toEqual({ maxTokens: 1000, modelPrices: {} });
  });

  it("agent: command and the publish phase: off, silently (no gateway, no agent)", () => {
    const command = parse({ agent: "command", "agent-command": "true" });
    expect(command.budget).toBeUndefined();
    expect(command.notices).toEqual([]);
    expect(parse({ phase: "publish" }).budget).toBeUndefined();
  });

  it("none turns it off; a value the workflow sets is its own cap (step input or config file)", () => {
    expect(parse({ "max-cost-usd": "none" }).budget).toBeUndefined();
    expect(parse({ "max-cost-usd": "NONE", "max-tokens": "500" }).budget).toEqual({ maxTokens: 500, modelPrices: {} });
    expect(parse({ "max-cost-usd": "2" }).budget).toEqual({ maxCostUsd: 2, modelPrices: {} });
    expect(parse({}, "max-cost-usd: 5\n").budget).toEqual({ maxCostUsd: 5, modelPrices: {} });
    expect(parse({}, "max-cost-usd: none\n").budget).toBeUndefined();
    // An explicit cap with a base-url is the workflow's choice: kept, no notice.
    const explicit = parse({ "base-url": "http://127.0.0.1:8080", "max-cost-usd": "1" });
    expect(explicit.budget).toEqual({ maxCostUsd: 1, modelPrices: {} });
    expect(explicit.notices).toEqual([]);
  });
});

describe("before the agent starts", () => {
  const claude = { provider: "anthropic" as const };
  it("a default cap never refuses a run: not on an unknown model; an explicit one still needs model-prices", async () => {
    const settings = (raw: RawInputs) => parseSettings({ agent: "claude", prompt: "p", ...raw }, { cwd: mkdtempSync(path.join(os.tmpdir(), "default-cap-")) });
    await expect(checkBudget(settings({ model: "my-local-model" }), claude)).resolves.toBeUndefined();
    await expect(checkBudget(settings({ model: "my-local-model", "max-cost-usd": "3" }), claude)).rejects.toThrow(/^Input 'max-cost-usd': no price is known for model 'my-local-model'/);
  });
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function gateway(provider: "anthropic" | "openai", budget: { maxCostUsd: number; costCapIsDefault?: boolean }) {
  const stub = await startStubModel([], { fallback: { text: "ok" } });
  cleanups.push(stub.close);
  const log = recordingLogger();
  const gw = await startModelGateway({ provider, upstream: provider === "openai" ? `${stub.url}/v1` : stub.url, apiKey: "real-key", log, budget });
  cleanups.push(gw.close);
  const call = (p: string, body: unknown): Promise<Reply> =>
    request(gw.url, p, {
      method: "POST",
      headers: { ...(provider === "anthropic" ? { "x-api-key": gw.placeholderKey } : { authorization: `Bearer ${gw.placeholderKey}` }), "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  return { gw, stub, log, call };
}

const notices = (lines: string[]) => lines.filter((l) => l.includes("the default cost cap"));

describe("at the model gateway", () => {
  it("a model without a price: the default cap is lifted once, with a notice, and every request goes through", async () => {
    const { gw, stub, log, call } = await gateway("anthropic", { maxCostUsd: DEFAULT, costCapIsDefault: true });
    for (let i = 0; i < 3; i++) expect((await call("/v1/messages", { model: "my-local-model", max_tokens: 100, messages: [] })).status).toBe(200);
    expect(stub.modelRequests()).toHaveLength(3);
    expect(notices(log.lines)).toEqual([
      expect.stringMatching(/^info: Model gateway: the default cost cap \(max-cost-usd 5\) is off for this run: no price is known for model 'my-local-model'\./),
    ]);
    expect(gw.budgetStop()).toBeUndefined();
    expect(gw.costCap()).toEqual({ maxUsd: DEFAULT, isDefault: true, lifted: "no price is known for model 'my-local-model'" });
  });

  it("the same with a cap the workflow set: refused, nothing reaches the model", async () => {
    const { gw, stub, call } = await gateway("anthropic", { maxCostUsd: DEFAULT });
    expect((await call("/v1/messages", { model: "my-local-model", max_tokens: 100, messages: [] })).status).toBe(400);
    expect(stub.modelRequests()).toHaveLength(0);
    expect(gw.budgetStop()).toMatchObject({ kind: "unpriced", model: "my-local-model" });
  });

  it("a stream the gateway cannot count (no include_usage): the default is lifted, the stream goes through", async () => {
    const { gw, stub, log, call } = await gateway("openai", { maxCostUsd: DEFAULT, costCapIsDefault: true });
    const r = await call("/v1/chat/completions", { model: "gpt-4.1", stream: true, messages: [] });
    expect(r.status).toBe(200);
    expect(stub.modelRequests()).toHaveLength(1);
    expect(notices(log.lines)).toHaveLength(1);
    expect(gw.costCap()?.lifted).toMatch(/streams without usage/);
  });

  it("on a priced model the default is a real cap: counted, and it stops the run once spent", async () => {
    // The stub reports 150 input and 20 output tokens a request: on claude-sonnet-4-5 well under a cent; a tiny cap stands in for $5.
    const { gw, stub, call } = await gateway("anthropic", { maxCostUsd: 0.0006, costCapIsDefault: true });
    const body = { model: "claude-sonnet-4-5", max_tokens: 20, messages: [] };
    expect((await call("/v1/messages", body)).status).toBe(200);
    const second = await call("/v1/messages", body);
    expect(second.status).toBe(400);
    expect(stub.modelRequests()).toHaveLength(1);
    expect(gw.budgetStop()).toMatchObject({ kind: "exceeded", limit: "max-cost-usd" });
    expect(gw.costCap()).toEqual({ maxUsd: 0.0006, isDefault: true });
    expect(gw.usage().costUsd).toBeGreaterThan(0);
  });
});
