/**
 * The budget inputs checked before anything starts: a budget needs the model
 * gateway (only model-backed agents have one), and `max-cost-usd` needs a
 * price for the model the workflow names. Enforcement is the gateway's
 * (usage-meter.ts).
 */
import type { Settings } from "../config/schema.js";
import { ConfigurationError } from "../errors.js";
import { isCloud, type ModelProvider, type ProviderName } from "../shared/agents.js";
import { CLOUD_PRICE_TABLES, PriceBook } from "./prices.js";

const cloudTable = (provider: ProviderName | undefined) => (provider && isCloud(provider) ? CLOUD_PRICE_TABLES[provider] : undefined);

export async function checkBudget(settings: Pick<Settings, "budget" | "agent">, backend: { provider?: ModelProvider }): Promise<void> {
  const b = settings.budget;
  if (!b) return;
  // The default cost cap is never a reason to refuse a run: where it cannot be held, the gateway lifts it with a notice (usage-meter.ts).
  const given: [string, number | undefined][] = [
    ["max-cost-usd", b.costCapIsDefault ? undefined : b.maxCostUsd],
    ["max-tokens", b.maxTokens],
    ["max-model-requests", b.maxModelRequests],
  ];
  const limits = given.filter(([, v]) => v !== undefined).map(([name]) => name);
  if (!limits.length) return;
  if (!backend.provider)
    throw new ConfigurationError(
      limits.map(
        (name) =>
          `Input '${name}': agent '${settings.agent.name}' does not send its model requests through Agent Runner's model gateway, so the budget cannot be counted or enforced. Remove it, or use a model-backed agent (claude, codex, opencode, gemini).`,
      ),
    );
  const model = settings.agent.model;
  if (b.maxCostUsd !== undefined && !b.costCapIsDefault && model && !(await PriceBook.load(backend.provider, b.modelPrices, cloudTable(settings.agent.provider))).knows(model))
    throw new ConfigurationError(
      `Input 'max-cost-usd': no price is known for model '${model}' (it is not in the pinned @pydantic/genai-prices table), so its cost cannot be counted. Add it to 'model-prices', e.g. model-prices: '${model}: {input: 3, output: 15, cached: 0.3}' (US dollars per million tokens), or use max-tokens instead.`,
    );
}
