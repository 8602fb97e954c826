/**
 * Issue #22: every step parses its settings with zod, so the zod in the
 * action's bundle is on every step's start-up path. Classic zod cannot be
 * tree-shaken (each schema carries every method) and cost ~70 ms; host code
 * imports zod/mini through src/shared/zod.ts instead. Classic may live only in
 * the sandboxed MCP server's own bundle (the MCP SDK brings it).
 * Reads the build: `node scripts/build.mjs` first.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ACTION_ROOT } from "../support/harness.js";

const DIST = path.join(ACTION_ROOT, "dist");

function bundleFiles(): string[] {
  const top = readdirSync(DIST).filter((f) => f.endsWith(".js"));
  const chunks = readdirSync(path.join(DIST, "chunks")).filter((f) => f.endsWith(".js")).map((f) => `chunks/${f}`);
  return [...top, ...chunks];
}

// zod's classes are named at run time: classic "ZodString", mini "ZodMiniString", core "$ZodString".
const holds = (file: string, className: string) => readFileSync(path.join(DIST, file), "utf8").includes(`"${className}"`);

describe("zod in dist/", () => {
  it("is zod/mini with one locale wherever the action's steps and the CLI load it; classic only in the MCP server", () => {
    const files = bundleFiles();
    expect(files).toContain("main.js");
    expect(files.filter((f) => holds(f, "ZodString"))).toEqual(["safe-outputs-mcp.js"]);
    const mini = files.filter((f) => f !== "safe-outputs-mcp.js" && holds(f, "ZodMiniString"));
    expect(mini).toHaveLength(1);
    // The English locale only: every language would bring back ~260 KB.
    expect(readFileSync(path.join(DIST, mini[0]!), "utf8")).not.toContain("Entrada inválida");
  });
});
