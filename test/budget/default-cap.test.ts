/**
 * The default cost cap (`max-cost-usd` unset): decided once, before the agent
 * starts, from the settings alone; nothing the agent sends can switch it off.
 *  - parsed: applied to model-backed agents on their vendor's API or a cloud;
 *    off (with a notice) for a `base-url` server; off for `agent: command`
 *    and the publish phase; `none` turns it off; a value the workflow sets
 *    (step input or config file) is its own cap;
 *  - before the agent starts: a default cap never refuses a run; it applies
 *    when the model the agent will use (`model`, or the backend's default)
 *    has a price, and is skipped with a notice when it has none (codex's
 *    default model, a model the table lacks);
 *  - at the gateway: once applied, it is held exactly like a cap the
 *    workflow set: a request for a model without a price, a stream without
 *    usage, a body it cannot meter are refused, never a reason to lift it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseSettings, type RawInputs } from "../../src/config/parse.js";
import { DEFAULT_MAX_COST_USD, INPUTS } from "../../src/constants.js";
import { agentBackend } from "../../src/agents/registry.js";
import { startRunGateway } from "../../src/runner.js";
import { checkBudget, gatewayBudget } from "../../src/sandbox/budget.js";
import { startModelGateway, type ModelGateway } from "../../src/sandbox/gateway.js";
import { DEFAULT_MODELS } from "../../src/shared/agents.js";
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

  it("a cloud provider gets it too (prices per cloud table; skipped at start when the model has none)", () => {
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

const settingsOf = (raw: RawInputs) => parseSettings({ agent: "claude", prompt: "p", ...raw }, { cwd: mkdtempSync(path.join(os.tmpdir(), "default-cap-")) });

describe("before the agent starts", () => {
  const claude = { provider: "anthropic" as const };
  it("a default cap never refuses a run: not on an unknown model; an explicit one still needs model-prices", async () => {
    await expect(checkBudget(settingsOf({ model: "my-local-model" }), claude)).resolves.toBeUndefined();
    await expect(checkBudget(settingsOf({ model: "my-local-model", "max-cost-usd": "3" }), claude)).rejects.toThrow(/^Input 'max-cost-usd': no price is known for model 'my-local-model'/);
  });

  it("on a priced model (given, or the backend's default) the default applies, unchanged", async () => {
    const said: string[] = [];
    const claudeDefault = settingsOf({});
    expect(await gatewayBudget(claudeDefault, "anthropic", (m) => said.push(m))).toEqual({ maxCostUsd: DEFAULT, costCapIsDefault: true, modelPrices: {} });
    expect(await gatewayBudget(settingsOf({ agent: "opencode" }), "openai", (m) => said.push(m))).toMatchObject({ maxCostUsd: DEFAULT, costCapIsDefault: true });
    expect(await gatewayBudget(settingsOf({ model: "claude-sonnet-4-5" }), "anthropic", (m) => said.push(m))).toMatchObject({ maxCostUsd: DEFAULT });
    // A price from model-prices counts as a price.
    expect(await gatewayBudget(settingsOf({ model: "my-local-model", "model-prices": "my-local-model: {input: 1, output: 2}" }), "anthropic", (m) => said.push(m))).toMatchObject({ maxCostUsd: DEFAULT, costCapIsDefault: true });
    expect(said).toEqual([]);
  });

  it("codex with no model set: its default model has no price, so the default is skipped at start with a notice", async () => {
    const said: string[] = [];
    const codex = await gatewayBudget(settingsOf({ agent: "codex" }), "openai", (m) => said.push(m));
    expect(codex).toBeUndefined();
    expect(said).toEqual([
      `The default cost cap (max-cost-usd 5) is off for this run: no price is known for model '${DEFAULT_MODELS.codex.model}' (the default of agent 'codex'), so its cost cannot be counted. Set max-cost-usd with model-prices, or max-tokens, to cap it; max-cost-usd: none silences this.`,
    ]);
  });

  it("a named model without a price: skipped with a notice; the workflow's other limits stay; an explicit cap is untouched", async () => {
    const said: string[] = [];
    expect(await gatewayBudget(settingsOf({ model: "my-local-model", "max-tokens": "1000" }), "anthropic", (m) => said.push(m))).toEqual({ maxTokens: 1000, modelPrices: {} });
    expect(said).toEqual([expect.stringMatching(/^The default cost cap \(max-cost-usd 5\) is off for this run: no price is known for model 'my-local-model', so/)]);
    const explicit = settingsOf({ model: "my-local-model", "max-cost-usd": "3" });
    expect(await gatewayBudget(explicit, "anthropic", (m) => said.push(m))).toBe(explicit.budget);
    expect(said).toHaveLength(1);
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
  it("a request for a model without a price under the default cap: refused like under a given cap, and the cap stays", async () => {
    const { gw, stub, log, call } = await gateway("anthropic", { maxCostUsd: DEFAULT, costCapIsDefault: true });
    for (let i = 0; i < 2; i++) expect((await call("/v1/messages", { model: "my-local-model", max_tokens: 100, messages: [] })).status).toBe(400);
    expect(stub.modelRequests()).toHaveLength(0);
    expect(notices(log.lines)).toEqual([]);
    expect(gw.budgetStop()).toMatchObject({ kind: "unpriced", model: "my-local-model" });
    expect(gw.costCap()).toEqual({ maxUsd: DEFAULT, isDefault: true });
  });

  it("the same with a cap the workflow set: refused, nothing reaches the model", async () => {
    const { gw, stub, call } = await gateway("anthropic", { maxCostUsd: DEFAULT });
    expect((await call("/v1/messages", { model: "my-local-model", max_tokens: 100, messages: [] })).status).toBe(400);
    expect(stub.modelRequests()).toHaveLength(0);
    expect(gw.budgetStop()).toMatchObject({ kind: "unpriced", model: "my-local-model" });
  });

  it.each([
    ["a stream the gateway cannot count (no include_usage)", { model: "gpt-4.1", stream: true, messages: [] }, /streams without usage/],
    ["a body the gateway cannot meter (background: true)", { model: "gpt-4.1", background: true, messages: [] }, /background: true/],
  ])("%s: refused under the default cap exactly as under a given cap", async (_what, body, reason) => {
    const refusals: Array<{ status: number; body: string }> = [];
    for (const budget of [{ maxCostUsd: DEFAULT, costCapIsDefault: true }, { maxCostUsd: DEFAULT }]) {
      const { gw, stub, log, call } = await gateway("openai", budget);
      const r = await call("/v1/chat/completions", body);
      refusals.push({ status: r.status, body: r.body });
      expect(r.status).toBe(400);
      expect(r.body).toMatch(reason);
      expect(stub.modelRequests()).toHaveLength(0);
      expect(notices(log.lines)).toEqual([]);
      expect(gw.costCap()).toEqual({ maxUsd: DEFAULT, isDefault: budget.costCapIsDefault === true });
    }
    expect(refusals[0]).toEqual(refusals[1]);
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

  it("wired by the runner: claude's default cap holds against an unpriced model; codex with no model starts without it, saying so", async () => {
    const started = async (raw: RawInputs, key: string): Promise<{ gw: ModelGateway; lines: string[] }> => {
      const settings = settingsOf({ ...raw, secrets: `${key}=sk-test-key-0123456789` });
      const log = recordingLogger();
      const gw = (await startRunGateway(agentBackend(settings.agent.backend), settings, { log, sandboxHost: {} as never }))!;
      cleanups.push(gw.close);
      return { gw, lines: log.lines };
    };
    const claude = await started({}, "ANTHROPIC_API_KEY");
    expect(claude.gw.costCap()).toEqual({ maxUsd: DEFAULT, isDefault: true });
    // Refused at the gateway before anything is forwarded: no upstream needed.
    const r = await request(claude.gw.url, "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": claude.gw.placeholderKey, "content-type": "application/json" },
      body: JSON.stringify({ model: "my-local-model", max_tokens: 100, messages: [] }),
    });
    expect(r.status).toBe(400);
    expect(claude.gw.budgetStop()).toMatchObject({ kind: "unpriced", model: "my-local-model" });
    expect(claude.gw.costCap()).toEqual({ maxUsd: DEFAULT, isDefault: true });
    expect(notices(claude.lines)).toEqual([]);
    const codex = await started({ agent: "codex" }, "OPENAI_API_KEY");
    expect(codex.gw.costCap()).toBeUndefined();
    expect(codex.lines.filter((l) => l.includes("The default cost cap"))).toEqual([expect.stringMatching(/^info: The default cost cap \(max-cost-usd 5\) is off for this run: no price is known for model '/)]);
  });
});
