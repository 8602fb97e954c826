/**
 * The budget inputs checked before anything starts: a budget needs the model
 * gateway (only model-backed agents have one), and `max-cost-usd` needs a
 * price for the model the workflow names. Whether the default cost cap holds
 * is decided here too, once, before the gateway starts (gatewayBudget).
 * Enforcement is the gateway's (usage-meter.ts).
 */
import type { BudgetSettings, Settings } from "../config/schema.js";
import { DEFAULT_MAX_COST_USD } from "../constants.js";
import { ConfigurationError } from "../errors.js";
import { DEFAULT_MODELS, isCloud, type ModelProvider, type ProviderName } from "../shared/agents.js";
import { CLOUD_PRICE_TABLES, PriceBook } from "./prices.js";

const cloudTable = (provider: ProviderName | undefined) => (provider && isCloud(provider) ? CLOUD_PRICE_TABLES[provider] : undefined);

export async function checkBudget(settings: Pick<Settings, "budget" | "agent" | "modelRetry">, backend: { provider?: ModelProvider }): Promise<void> {
  const b = settings.budget;
  if (!b) return;
  await checkFallbackPrices(settings, b, backend);
  // The default cost cap is never a reason to refuse a run: where the model has no price it is skipped at start (gatewayBudget).
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

/**
 * Under a cost cap every fallback model needs a price, like the model itself:
 * the gateway would otherwise refuse the very request the fallback is for.
 * The default cap counts too when it will hold (the primary model is priced).
 */
async function checkFallbackPrices(settings: Pick<Settings, "agent" | "modelRetry">, b: BudgetSettings, backend: { provider?: ModelProvider }): Promise<void> {
  const fallbacks = settings.modelRetry?.fallbackModels ?? [];
  if (b.maxCostUsd === undefined || !fallbacks.length || !backend.provider) return;
  const book = await PriceBook.load(backend.provider, b.modelPrices, cloudTable(settings.agent.provider));
  const backendName = settings.agent.backend;
  const primary = settings.agent.model ?? (backendName !== "command" ? DEFAULT_MODELS[backendName].model : undefined);
  // The default cap is skipped where the primary model has no price (gatewayBudget): nothing to hold the fallbacks to.
  if (b.costCapIsDefault && !(primary !== undefined && book.knows(primary))) return;
  const unknown = fallbacks.filter((m) => !book.knows(m));
  if (unknown.length)
    throw new ConfigurationError(
      `Input 'fallback-models': no price is known for ${unknown.map((m) => `'${m}'`).join(", ")} (not in the pinned @pydantic/genai-prices table), and 'max-cost-usd'${b.costCapIsDefault ? ` (its default, ${DEFAULT_MAX_COST_USD})` : ""} is set, so a request it serves could not be counted. Add ${unknown.length === 1 ? "it" : "them"} to 'model-prices', e.g. model-prices: '${unknown[0]}: {input: 3, output: 15, cached: 0.3}' (US dollars per million tokens), or remove ${unknown.length === 1 ? "it" : "them"} from 'fallback-models'.`,
    );
}

/**
 * The budget the run's gateway enforces. The default cost cap is decided here,
 * before the agent starts, from the settings alone: it applies when the model
 * the agent will use (`model`, or the backend's default) has a price, and is
 * then held exactly like a cap the workflow set. Otherwise it is skipped with
 * a notice. Nothing the agent sends can switch it off later (parse.ts already
 * dropped it for base-url, `agent: command` and the publish phase).
 */
export async function gatewayBudget(settings: Pick<Settings, "budget" | "agent">, wire: ModelProvider, notice: (message: string) => void): Promise<BudgetSettings | undefined> {
  const b = settings.budget;
  if (!b?.costCapIsDefault || b.maxCostUsd === undefined) return b;
  const backend = settings.agent.backend;
  const model = settings.agent.model ?? (backend !== "command" ? DEFAULT_MODELS[backend].model : undefined);
  const book = await PriceBook.load(wire, b.modelPrices, cloudTable(settings.agent.provider));
  if (model !== undefined && book.knows(model)) return b;
  const { maxCostUsd: _cap, costCapIsDefault: _default, ...rest } = b;
  const which = settings.agent.model || !model ? `model '${model ?? "(none named)"}'` : `model '${model}' (the default of agent '${settings.agent.name}')`;
  notice(
    `The default cost cap (max-cost-usd ${DEFAULT_MAX_COST_USD}) is off for this run: no price is known for ${which}, so its cost cannot be counted. Set max-cost-usd with model-prices, or max-tokens, to cap it; max-cost-usd: none silences this.`,
  );
  const left = rest.maxTokens !== undefined || rest.maxModelRequests !== undefined || Object.keys(rest.modelPrices).length > 0;
  return left ? rest : undefined;
}
