import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { INPUTS, OUTPUTS } from "../../src/constants.js";
import { loadActionYml, REPO_ROOT } from "../support/harness.js";

describe("action.yml and docs/reference.md", () => {
  const action = loadActionYml() as unknown as { inputs: Record<string, { default?: string; description: string }>; outputs: Record<string, unknown>; runs: Record<string, string> };

  it("declares every input and output of the contract with its default, on node24", () => {
    expect(Object.keys(action.inputs).sort()).toEqual(Object.keys(INPUTS).sort());
    expect(Object.keys(action.outputs).sort()).toEqual(Object.keys(OUTPUTS).sort());
    for (const [name, spec] of Object.entries(INPUTS)) {
      expect(action.inputs[name]!.description.length).toBeGreaterThan(10);
      expect(action.inputs[name]!.default).toBe("default" in spec ? spec.default : undefined);
    }
    expect(action.runs).toEqual({ using: "node24", main: "dist/main.js", post: "dist/post.js" });
  });

  it("lists every input and output in the generated reference, docs/reference.md", () => {
    const reference = readFileSync(path.join(REPO_ROOT, "docs/reference.md"), "utf8");
    for (const name of [...Object.keys(INPUTS), ...Object.keys(OUTPUTS)]) expect(reference).toContain(`| \`${name}\` |`);
  });
});
