/**
 * The "what a run costs" table (scripts/build/costs.mjs, run by `npm run
 * build`): computed from the gateway's price table and the default models,
 * written between the costs markers of README.md and of any docs/*.md that
 * has them, and nowhere else.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { COSTS_BEGIN, COSTS_END, RUN_SIZES, costsSection, writeCostTables } from "../../scripts/build/costs.mjs";
import { DEFAULT_MODELS } from "../../src/shared/agents.js";
import { agentBackend } from "../../src/agents/registry.js";
import { PriceBook } from "../../src/sandbox/prices.js";

const sizes = RUN_SIZES;

/** The table's cells by agent: `$0.57`, or the words for a model without a price. */
function cells(md: string): Map<string, string[]> {
  const rows = md.split("\n").filter((l) => /^\| `[a-z]+` \|/.test(l));
  return new Map(rows.map((l) => l.split("|").map((c) => c.trim()).filter(Boolean)).map(([agent, , ...costs]) => [agent!.replace(/`/g, ""), costs]));
}

describe("the cost table", () => {
  it("has one row per default model, each cell the price table's figure for that run size", async () => {
    const table = cells(await costsSection());
    expect([...table.keys()]).toEqual(Object.keys(DEFAULT_MODELS));
    for (const [agent, { model, provider }] of Object.entries(DEFAULT_MODELS)) {
      // The table prices each model under the wire API its backend speaks.
      expect(agentBackend(agent as keyof typeof DEFAULT_MODELS).provider).toBe(provider);
      const book = await PriceBook.load(provider);
      const row = table.get(agent)!;
      expect(row).toHaveLength(sizes.length);
      sizes.forEach((s, i) => {
        const cost = book.costUsd(model, { inputTokens: s.input, cachedTokens: s.cached, outputTokens: s.output, ...(provider === "anthropic" ? { cacheWriteTokens: s.input - s.cached } : {}) });
        if (cost === undefined) expect(row[i]).toBe("no price in the table");
        else expect(row[i]).toBe(cost < 0.01 ? "< $0.01" : `$${cost.toFixed(2)}`);
      });
    }
  });

  it("states its assumptions next to it: every run size's tokens and where the prices come from", async () => {
    const md = await costsSection();
    for (const s of sizes) expect(md).toContain(`**${s.name}**`);
    expect(md).toContain("300k input tokens, 270k of them cache reads, 10k output tokens");
    expect(md).toMatch(/pinned `@pydantic\/genai-prices` table/);
  });

  it("fills the markers of README.md and docs/*.md, leaves files without them alone, and a second build changes nothing", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "costs-root-"));
    mkdirSync(path.join(root, "docs"));
    const withMarkers = `# Costs\n\nBefore.\n\n${COSTS_BEGIN}\nstale\n${COSTS_END}\n\nAfter.\n`;
    writeFileSync(path.join(root, "README.md"), withMarkers);
    writeFileSync(path.join(root, "docs/budgets.md"), withMarkers);
    writeFileSync(path.join(root, "docs/cli.md"), "# CLI\n\nNo table here.\n");
    await writeCostTables(pathToFileURL(root + "/"));
    const section = await costsSection();
    for (const f of ["README.md", "docs/budgets.md"]) {
      const text = readFileSync(path.join(root, f), "utf8");
      expect(text).toBe(`# Costs\n\nBefore.\n\n${COSTS_BEGIN}\n${section}\n${COSTS_END}\n\nAfter.\n`);
    }
    expect(readFileSync(path.join(root, "docs/cli.md"), "utf8")).toBe("# CLI\n\nNo table here.\n");
    const once = readFileSync(path.join(root, "README.md"), "utf8");
    await writeCostTables(pathToFileURL(root + "/"));
    expect(readFileSync(path.join(root, "README.md"), "utf8")).toBe(once);
  });
});
