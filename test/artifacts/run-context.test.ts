/**
 * Item 6: every registered backend hands the agent the run context (where it
 * is, where outputs go, how changes are delivered) and the user's
 * instructions, through its own instruction mechanism.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runContextText } from "../../src/agents/run-context.js";
import type { AgentContext } from "../../src/agents/types.js";
import { parseSettings } from "../../src/config/parse.js";
import { AGENT_BACKENDS } from "../../src/config/schema.js";
import { consoleLogger } from "../../src/logger.js";
import { makeRepo } from "./helpers.js";
import { agentBackend } from "../../src/agents/registry.js";

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name));
}

describe("run context", () => {
  it("names the workspace, the outputs folder and the delivery rules", () => {
    const text = runContextText({ workspace: "/w/repo", home: "/h", tmp: "/t", outputsDir: "/r/outputs", readOnlyPaths: [] });
    expect(text).toContain("/w/repo");
    expect(text).toContain("/r/outputs");
    expect(text).toContain("$AGENT_OUTPUT_DIR");
    expect(text).toMatch(/Do not push, do not open pull requests/);
  });

  for (const name of AGENT_BACKENDS) {
    const backend = agentBackend(name);
    it(`${name}: the run context and the instructions reach the agent`, async () => {
      const ws = makeRepo({ "a.txt": "a\n" });
      const root = mkdtempSync(path.join(os.tmpdir(), "run-context-"));
      const layout = { workspace: ws, home: path.join(root, "home"), tmp: path.join(root, "tmp"), outputsDir: path.join(root, "results/outputs"), readOnlyPaths: [] };
      for (const d of [layout.home, layout.tmp, layout.outputsDir]) mkdirSync(d, { recursive: true });
      const settings = parseSettings(
        { agent: name, ...(name === "command" ? { "agent-command": "true" } : {}), prompt: "p", instructions: "USER-INSTRUCTION-MARKER: be brief." },
        { cwd: ws },
      );
      const ctx: AgentContext = {
        agent: settings.agent,
        run: settings.run,
        layout,
        ...(backend.provider ? { endpoint: { baseUrl: "http://127.0.0.1:9/v1", apiKey: "placeholder" } } : {}),
        runContext: runContextText(layout),
        log: consoleLogger({ stream: { write: () => true } as unknown as NodeJS.WritableStream }),
      };
      const materialised = await backend.materialise(ctx);
      const invocation = backend.command(ctx, { binPath: "/bin/true", version: "test", readOnlyPaths: [] });
      // Wherever the backend put it: a file under HOME, the environment, or the command line.
      const places = [
        ...filesUnder(layout.home).map((f) => readFileSync(f, "utf8")),
        ...Object.values(materialised.env),
        ...invocation.args,
        invocation.stdin ?? "",
      ].join("\n");
      expect(places).toContain(layout.outputsDir);
      expect(places).toContain("Do not push");
      expect(places).toContain("USER-INSTRUCTION-MARKER");
      // The run context comes first, the user's instructions after it.
      const home = filesUnder(layout.home).map((f) => readFileSync(f, "utf8")).find((t) => t.includes("USER-INSTRUCTION-MARKER"));
      if (home?.includes("Run context")) expect(home.indexOf("Run context")).toBeLessThan(home.indexOf("USER-INSTRUCTION-MARKER"));
      // Nothing was written into the user's repository.
      expect(readdirSync(ws).filter((f) => f !== ".git")).toEqual(["a.txt"]);
    });
  }
});
