/**
 * What a model request cost, from a maintained price table: Pydantic's
 * genai-prices (`@pydantic/genai-prices`, pinned; its data is bundled, and
 * its live-update fetch is never called, so runs need no route to GitHub and
 * price the same way every time), with the workflow's `model-prices` taking
 * precedence for models the table does not know (a fine-tune, a local model,
 * a gateway's own names) or prices it has wrong.
 *
 * Prices are per request, as providers bill: tiered prices (long-context
 * rates) apply to the request that crossed the tier.
 */
import type { CloudName, ModelProvider } from "../shared/agents.js";
import type { ModelPriceSpec } from "../config/schema.js";
import type { ModelRequestUsage } from "../trace/model-requests.js";

/** genai-prices' provider ids for the gateway's wire APIs. */
const TABLE_PROVIDER: Record<ModelProvider, string> = { anthropic: "anthropic", openai: "openai", gemini: "google" };

/** genai-prices' provider ids of the clouds, whose model ids (`us.anthropic.…-v1:0`) and prices are their own. */
export const CLOUD_PRICE_TABLES: Partial<Record<CloudName, string>> = { bedrock: "aws" };

/** The table's price function (`calcPrice`). */
type PriceTable = (usage: Record<string, number>, model: string, options: { providerId?: string }) => { total_price: number } | null | undefined;

export class PriceBook {
  private constructor(
    /** The table's provider id tried first: the wire API's, or the cloud's (`aws` knows `us.anthropic.…-v1:0`). */
    private readonly tableProvider: string,
    /** `model-prices`: model id → USD per million tokens. */
    private readonly custom: Record<string, ModelPriceSpec>,
    private readonly table: PriceTable,
  ) {}

  /**
   * The table is half a megabyte of data: loaded only when a run talks to a model.
   * `cloudTable`: the table's provider id of the cloud in between (CloudUpstream.priceTable), whose model ids and prices are its own.
   */
  static async load(provider: ModelProvider, custom: Record<string, ModelPriceSpec> = {}, cloudTable?: string): Promise<PriceBook> {
    const { calcPrice } = await import("@pydantic/genai-prices");
    return new PriceBook(cloudTable ?? TABLE_PROVIDER[provider], custom, calcPrice as PriceTable);
  }

  /** Whether a price is known for `model` (custom first, then the table for this provider, then the whole table). */
  knows(model: string): boolean {
    return this.costUsd(model, { inputTokens: 0, outputTokens: 0, cachedTokens: 0 }) !== undefined;
  }

  /** USD for one request's usage, or undefined when no price is known for the model. */
  costUsd(model: string, usage: ModelRequestUsage): number | undefined {
    const own = this.custom[model];
    if (own) return customCost(own, usage);
    const tableUsage = {
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      cache_read_tokens: usage.cachedTokens,
      cache_write_tokens: usage.cacheWriteTokens ?? 0,
    };
    // Another provider's model behind an OpenAI-compatible endpoint (opencode through a router) is still priced.
    const priced = safeCalc(this.table, tableUsage, model, this.tableProvider) ?? safeCalc(this.table, tableUsage, model);
    if (priced) return priced.total_price;
    // A publisher-prefixed id (`google/gemini-2.5-pro` on Vertex's OpenAI-compatible endpoint) is priced as the model it names.
    const slash = model.lastIndexOf("/");
    return slash > 0 ? safeCalc(this.table, tableUsage, model.slice(slash + 1), this.tableProvider)?.total_price : undefined;
  }
}

/** Cache writes are billed as input here (Anthropic charges 1.25× for them: name the model in the table's terms to get that). */
function customCost(p: ModelPriceSpec, u: ModelRequestUsage): number {
  const cached = Math.min(u.cachedTokens, u.inputTokens);
  const uncached = u.inputTokens - cached;
  return (uncached * p.input + cached * (p.cached ?? p.input) + u.outputTokens * p.output) / 1_000_000;
}

function safeCalc(table: PriceTable, usage: Record<string, number>, model: string, providerId?: string): { total_price: number } | undefined {
  try {
    return table(usage, model, providerId ? { providerId } : {}) ?? undefined;
  } catch {
    return undefined;
  }
}
