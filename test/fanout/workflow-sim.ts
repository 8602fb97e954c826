/**
 * Runs the shipped reusable workflow's jobs the way GitHub would schedule
 * them, on the runner harness: the `with:` of each job's agent-runner step
 * is taken from .github/workflows/fan-out.yml itself and its `${{ }}`
 * expressions evaluated (inputs with their workflow_call defaults, matrix,
 * needs, steps, github, secrets), so the test exercises the file, not a copy.
 *
 * The expression subset is what the file uses: dotted paths (hyphens allowed),
 * `a || b`, `fromJSON(x)` and quoted strings.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { REPO_ROOT } from "../support/harness.js";

export interface WorkflowInput {
  type: "string" | "number" | "boolean";
  default?: string | number | boolean;
  required?: boolean;
}

export interface Step {
  id?: string;
  uses?: string;
  if?: string;
  with?: Record<string, string | number | boolean>;
}

export interface Job {
  needs?: string | string[];
  if?: string;
  name?: string;
  strategy?: { matrix: string; "max-parallel"?: string | number; "fail-fast"?: boolean };
  concurrency?: { group: string; "cancel-in-progress"?: boolean };
  permissions?: Record<string, string>;
  outputs?: Record<string, string>;
  steps: Step[];
}

export interface Workflow {
  on: { workflow_call: { inputs: Record<string, WorkflowInput>; secrets: Record<string, unknown>; outputs: Record<string, { value: string }> } };
  jobs: Record<string, Job>;
}

export function loadWorkflow(file = ".github/workflows/fan-out.yml"): Workflow {
  return YAML.parse(readFileSync(path.join(REPO_ROOT, file), "utf8")) as Workflow;
}

export type Context = Record<string, unknown>;

function lookup(ctx: Context, dotted: string): unknown {
  let v: unknown = ctx;
  for (const part of dotted.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function evalAtom(expr: string, ctx: Context): unknown {
  const e = expr.trim();
  const str = /^'(.*)'$/.exec(e);
  if (str) return str[1];
  const fn = /^fromJSON\((.+)\)$/.exec(e);
  if (fn) return JSON.parse(String(evalExpr(fn[1]!, ctx)));
  if (/^[A-Za-z_][\w-]*(\.[\w-]+)*$/.test(e)) return lookup(ctx, e);
  throw new Error(`workflow-sim: unsupported expression '${e}'`);
}

/** `a || b || c`: the first truthy value, as GitHub's `||` does. */
export function evalExpr(expr: string, ctx: Context): unknown {
  const parts = expr.split("||");
  let v: unknown;
  for (const p of parts) {
    v = evalAtom(p, ctx);
    if (v !== undefined && v !== null && v !== "" && v !== false && v !== 0) return v;
  }
  return v;
}

function asString(v: unknown): string {
  if (v === undefined || v === null) return "";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/** A `with:` value with its `${{ }}` parts evaluated, as the runner hands it to the action. */
export function interpolate(value: string | number | boolean, ctx: Context): string {
  return String(value).replace(/\$\{\{(.+?)\}\}/g, (_, e: string) => asString(evalExpr(e, ctx)));
}

/** workflow_call inputs: the caller's values, else each input's default, typed as GitHub types them. */
export function callInputs(wf: Workflow, given: Record<string, string | number | boolean>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [name, spec] of Object.entries(wf.on.workflow_call.inputs)) {
    if (name in given) out[name] = given[name]!;
    else if (spec.default !== undefined) out[name] = spec.default;
    else if (spec.required) throw new Error(`workflow-sim: required input '${name}' not given`);
    else out[name] = spec.type === "number" ? 0 : spec.type === "boolean" ? false : "";
  }
  for (const name of Object.keys(given)) if (!(name in out)) throw new Error(`workflow-sim: '${name}' is not an input of the workflow`);
  return out;
}

/** The job's agent-runner step and its evaluated inputs. */
export function actionInputs(job: Job, ctx: Context): Record<string, string> {
  const step = job.steps.find((s) => s.uses?.startsWith("agent-runner/agent-runner@"));
  if (!step) throw new Error("workflow-sim: the job has no agent-runner step");
  return Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, interpolate(v, ctx)]));
}

/**
 * A job's `if:` as GitHub evaluates the forms the shipped workflows use: `always()`, `!cancelled()`
 * (the simulated run is never cancelled), `a == 'x'`, `a != 'x'`, joined by `&&`. A job without a
 * status function in its `if:` runs only when every job it needs succeeded.
 */
export function jobRuns(job: Job, ctx: Context): boolean {
  const needs = typeof job.needs === "string" ? [job.needs] : (job.needs ?? []);
  const needed = (ctx["needs"] ?? {}) as Record<string, { result?: string }>;
  const allSucceeded = needs.every((n) => needed[n]?.result === "success");
  if (!job.if) return allSucceeded;
  const terms = job.if.replace(/^\$\{\{|\}\}$/g, "").split("&&").map((t) => t.trim());
  const always = terms.includes("always()") || terms.includes("!cancelled()");
  const holds = terms
    .filter((t) => t !== "always()" && t !== "!cancelled()")
    .every((t) => {
      const m = /^(.+?)\s*(==|!=)\s*(.+)$/.exec(t);
      if (!m) throw new Error(`workflow-sim: unsupported condition '${t}'`);
      const [a, b] = [asString(evalExpr(m[1]!, ctx)), asString(evalExpr(m[3]!, ctx))];
      return m[2] === "==" ? a === b : a !== b;
    });
  return holds && (always || allSucceeded);
}
