/**
 * The reusable workflows (.github/workflows/agent.yml, fan-out.yml, review.yml) pass the action's inputs on, as
 * action.yml declares them: `npm run build` writes their `on.workflow_call.inputs` and each action step's
 * `with:` from INPUTS and the table below, between `# generated:` marker comments, and the `uses:` of the
 * action from COORDINATES. Everything else in those files (jobs, permissions, secrets) is written by hand.
 *
 * Every input is in the table: the jobs it goes to, or why a workflow does not take it. A new input
 * without a row fails the typecheck and the build; test/workflows/workflows.test.ts reads the generated
 * files and fails when one leaves an input out without a reason here.
 */
import { ACTION_USES, INPUTS, type InputName, type InputSpec, workflowUses } from "../../src/constants.js";

/** The jobs of the workflows, by what their action step does (its `phase`). */
export type Role = "plan" | "reserve" | "run" | "publish" | "gather";

/** Review: gather posts the one review; there is no publish job, so what only a publish job takes is left out. */
const REVIEW_HAS_NO_PUBLISH = "review.yml has no publish job: its gather job posts the one review, and nothing else (no patch, comment or other safe output) is delivered.";

export const WORKFLOWS = {
  "agent.yml": { roles: ["reserve", "run", "publish"] },
  "fan-out.yml": { roles: ["plan", "reserve", "run", "publish", "gather"] },
  "review.yml": { roles: ["plan", "run", "gather"], withoutPublish: REVIEW_HAS_NO_PUBLISH },
} as const satisfies Record<string, { roles: readonly Role[]; withoutPublish?: string }>;
export type WorkflowFile = keyof typeof WORKFLOWS;

export interface Route {
  /** Jobs whose action step gets `name: ${{ inputs.name }}`; a workflow without such a job does not take the input. */
  to?: readonly Role[];
  /** The jobs of one workflow, where they differ from `to`. */
  toIn?: Partial<Record<WorkflowFile, readonly Role[]>>;
  /** Why a workflow does not take it as an input: for every workflow, or per file. */
  not?: string | Partial<Record<WorkflowFile, string>>;
  /** workflow_call type when not a string: kept as the hand-written workflows typed them, so callers' values stay valid. */
  type?: "number" | "boolean";
}

const REVIEW_NO_DETECTION =
  "Not in review.yml yet: gather does not read a shard's detection-agent verdict. It refuses a shard's review that holds what looks like a secret (gitleaks' rules), and posts only text, through the Markdown door, redacted.";
const USE_REVIEW_YML = "A sharded pull request review runs through review.yml (plan, a shard job each, gather posts one review); fan-out.yml's items are issues, pull requests or repositories, each with its own run.";
const RUN = ["run"] as const;
const PUBLISH = ["publish"] as const;
const BOTH = ["run", "publish"] as const;
/**
 * The reserve job (budgets across runs) parses the settings as the run job will, so it reserves the cap the
 * run job would have (`max-cost-usd`, its default from the model and its prices) and skips the events the run
 * job's trigger check skips: it gets those inputs too.
 */
const RESERVE_RUN = ["reserve", "run"] as const;
const RESERVE_BOTH = ["reserve", "run", "publish"] as const;
/** The ledger's own inputs: reserved in the reserve job, the cap in the run job, settled in the publish job. */
const LEDGER = ["reserve", "run", "publish"] as const;
const FAN_OUT_ONLY = {
  "agent.yml": "fan-out.yml's plan and gather phases: agent.yml has no plan or gather job.",
  "review.yml": "fan-out.yml's items: review.yml's plan lists the shards of one pull request.",
};
/** review.yml has no reserve job: a shard job's run is capped by max-cost-usd alone. */
const REVIEW_NO_LEDGER = "review.yml has no reserve job (budgets across runs need one before the run job): each shard job is capped by max-cost-usd, and gather sums the shards' costs.";

export const WORKFLOW_INPUTS = {
  agent: { to: ["plan", "reserve", "run", "publish", "gather"] },
  "agent-version": { to: RUN },
  // The publish job never runs it; the parser checks it with `agent: command`.
  "agent-command": { to: BOTH },
  model: { to: RESERVE_RUN },
  "base-url": { to: RESERVE_RUN },
  provider: { to: RESERVE_RUN },
  "aws-region": { to: RUN },
  "vertex-project": { to: RUN },
  "vertex-region": { to: RUN },
  // The trigger check skips an event that brings no prompt: the reserve job decides it as the run job does.
  prompt: { to: RESERVE_RUN },
  "prompt-file": { to: RESERVE_RUN },
  attachments: { to: RUN },
  "comment-attachments": { to: RUN },
  instructions: { to: RUN },
  "instructions-file": { to: RUN },
  "mcp-servers": { to: RUN },
  skills: { to: RUN },
  permissions: { to: RUN },
  "agent-args": { to: RUN },
  "output-schema": { to: RUN },
  "max-turns": { to: RUN },
  "max-cost-usd": { to: RESERVE_RUN },
  "max-tokens": { to: RUN },
  "max-model-requests": { to: RUN },
  // Admission across runs: the run jobs hold no write token, so a reserve job (contents: write) reserves before
  // them; the run job reads its reservation from the ledger as its cap; the publish job settles it.
  "max-daily-cost-usd": { to: LEDGER, not: { "review.yml": REVIEW_NO_LEDGER } },
  "ledger-scope": { to: LEDGER, not: { "review.yml": REVIEW_NO_LEDGER } },
  // Gather reports the pool: spent, reserved, left, and the items skipped for lack of budget.
  "max-total-cost-usd": { to: [...LEDGER, "gather"], not: { "agent.yml": "A pool is shared by the items of one fan-out (fan-out.yml); one run of agent.yml has max-cost-usd and max-daily-cost-usd.", "review.yml": REVIEW_NO_LEDGER } },
  "model-prices": { to: RESERVE_RUN },
  "model-retries": { to: RUN },
  "model-retry-max-wait-seconds": { to: RUN },
  "fallback-models": { to: RUN },
  // The reservation expires after the run's time limit (plus slack): the reserve job sets it.
  "timeout-minutes": { to: RESERVE_RUN, type: "number" },
  "stall-minutes": { to: RUN, type: "number" },
  attempts: { to: RUN, type: "number" },
  select: { to: RUN },
  "verify-command": { to: RUN },
  "max-fix-rounds": { to: RUN, type: "number" },
  "verify-timeout-minutes": { to: RUN },
  // Both jobs read the same file, so delivery settings in it apply in the publish job too.
  "config-file": { to: RESERVE_BOTH },
  env: { to: RUN },
  "forward-env": { to: RUN },
  secrets: {
    not: "Workflow inputs are not masked: secrets arrive as workflow secrets (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, AGENT_SECRETS), which the run job alone passes to the action's `secrets`.",
  },
  strict: { to: RUN },
  sandbox: { to: RUN },
  network: { to: RUN },
  "allowed-domains": { to: RUN },
  "docker-image": { to: RUN },
  // review.yml's plan and gather read the commits in it too.
  "working-directory": { to: RESERVE_BOTH, toIn: { "review.yml": ["plan", "run", "gather"] } },
  // Both jobs work on the same checkout of the thread's pull request.
  "pr-checkout": { to: BOTH },
  session: { to: RUN },
  "fork-session": { to: RUN },
  resume: { to: RUN },
  // Who may trigger is checked in every job (the reserve job reserves nothing for an event the run job skips).
  "trigger-phrase": { to: RESERVE_BOTH },
  "allowed-users": { to: RESERVE_BOTH },
  "allowed-bots": { to: RESERVE_BOTH },
  // The run and reserve jobs skip an `/approve` event; the publish job stages and enacts.
  approval: { to: RESERVE_BOTH, not: { "review.yml": "Gather posts the review without staging it: a review changes no code. Use agent.yml or fan-out.yml for runs that need approval." } },
  approvers: { to: PUBLISH },
  "approval-self": { to: PUBLISH, type: "boolean" },
  "approval-expires-hours": { to: PUBLISH, type: "number" },
  "github-token": {
    not: {
      "agent.yml": "A token is a secret, not an input: each job uses its own github.token, read-only in the run job and with write permissions in the publish job.",
      "fan-out.yml": "A token is a secret, not an input: each job uses its own github.token, or a GitHub App token for the item's repository when app-id is set.",
      "review.yml": "A token is a secret, not an input: each job uses its own github.token, read-only in the plan and shard jobs, with pull-requests: write in gather.",
    },
  },
  phase: { not: "Each job sets its own phase (reserve, run, publish; fan-out.yml also plan and gather)." },
  // The run job sets `deliver: none` and `comment: none` itself: it has no write token.
  deliver: { to: PUBLISH },
  comment: { to: PUBLISH },
  "branch-prefix": { to: PUBLISH },
  "base-branch": { to: PUBLISH },
  draft: { to: PUBLISH, type: "boolean" },
  "allow-workflow-changes": { to: PUBLISH, type: "boolean" },
  "commit-method": { to: PUBLISH },
  "allow-unsigned-commits": { to: PUBLISH },
  // Detection runs in the run job, where the model key is; the publish job checks its verdict against what it publishes.
  "threat-detection": { to: BOTH, not: { "review.yml": REVIEW_NO_DETECTION } },
  "detection-agent": { to: RUN, not: { "review.yml": REVIEW_NO_DETECTION } },
  "detection-model": { to: RUN, not: { "review.yml": REVIEW_NO_DETECTION } },
  "threat-detection-fail-open": { to: BOTH, type: "boolean", not: { "review.yml": REVIEW_NO_DETECTION } },
  "protected-files": { to: PUBLISH },
  "protected-paths": { to: PUBLISH },
  "safe-outputs": { to: BOTH, not: { "review.yml": "task: review enables the review's own safe output (create-pull-request-review); gather applies nothing else." } },
  "upload-artifacts": { not: "The run job's artifact is how the publish job gets the result: `phase: run` requires it." },
  // The publish job finds the run's artifact by this name.
  "artifact-name": { to: BOTH, not: { "review.yml": "Gather finds each shard's run artifact by its default name, which carries the shard." } },
  "retention-days": { to: BOTH },
  "otel-endpoint": { to: RUN },
  // review.yml: plan and gather name the pull request (empty: the event's); each shard job sets it from its matrix entry.
  "issue-number": { to: RESERVE_BOTH, toIn: { "review.yml": ["plan", "gather"] }, not: { "fan-out.yml": "Each item job sets it from its matrix entry." } },
  repository: {
    not: {
      "agent.yml": "Both jobs check out and work on the calling repository; items of other repositories go through fan-out.yml.",
      "fan-out.yml": "Each item job sets it from its matrix entry; the plan's scope is the calling repository (items-query can name repo:, org: or user:).",
      "review.yml": "Reviews a pull request of the calling repository.",
    },
  },
  "items-query": { to: ["plan"], not: FAN_OUT_ONLY },
  // The gather job sets it itself, to the plan's matrix.
  items: { to: ["plan"], not: FAN_OUT_ONLY },
  repositories: { to: ["plan"], not: FAN_OUT_ONLY },
  "max-items": { to: ["plan"], not: FAN_OUT_ONLY, type: "number" },
  "allow-foreign-items": {
    to: ["plan", "reserve", "run", "publish"],
    not: { "agent.yml": "Fan-out items only: agent.yml runs on the calling repository.", "review.yml": "Fan-out items only: review.yml reviews a pull request of the calling repository." },
    type: "boolean",
  },
  "report-issue": { to: ["gather"], not: FAN_OUT_ONLY },
  // task: review. review.yml: plan splits, each shard job reviews its shard, gather posts the one review.
  // agent.yml: the run job reviews the whole pull request, the publish job posts it with gather's checks.
  task: { to: ["run", "publish"], not: { "fan-out.yml": USE_REVIEW_YML, "review.yml": "Every job of review.yml sets task: review itself." } },
  "review-shard-lines": { to: ["plan", "run", "publish", "gather"], not: { "fan-out.yml": USE_REVIEW_YML } },
  "review-shard-files": { to: ["plan", "run", "publish", "gather"], not: { "fan-out.yml": USE_REVIEW_YML } },
  "review-max-lines": { to: ["plan", "run", "publish", "gather"], not: { "fan-out.yml": USE_REVIEW_YML } },
  "review-can-block": { to: ["run", "publish", "gather"], not: { "fan-out.yml": USE_REVIEW_YML } },
  "review-scope": { to: ["plan", "run", "publish", "gather"], not: { "fan-out.yml": USE_REVIEW_YML } },
  "review-max-comments": { to: ["run", "publish", "gather"], not: { "fan-out.yml": USE_REVIEW_YML } },
  "review-shard": { not: "A shard job sets it from its matrix entry (review.yml); agent.yml reviews in one run job." },
  "review-range": { not: "A shard job sets it from its matrix entry (review.yml); agent.yml reviews in one run job." },
} as const satisfies Record<InputName, Route>;

/** Why `file` does not take `name`, or undefined when it does. */
export function reasonLeftOut(file: WorkflowFile, name: InputName): string | undefined {
  const route: Route = WORKFLOW_INPUTS[name];
  if (typeof route.not === "string") return route.not;
  const given = route.not?.[file];
  if (given !== undefined) return given;
  // An input only a publish job takes, in a workflow without one.
  const spec: { roles: readonly Role[]; withoutPublish?: string } = WORKFLOWS[file];
  const to = route.toIn?.[file] ?? route.to ?? [];
  return spec.withoutPublish !== undefined && to.length > 0 && to.every((r) => r === "publish") ? spec.withoutPublish : undefined;
}

/** The jobs of `file` whose action step gets `name`. */
export function rolesOf(file: WorkflowFile, name: InputName): Role[] {
  if (reasonLeftOut(file, name) !== undefined) return [];
  const route: Route = WORKFLOW_INPUTS[name];
  return (route.toIn?.[file] ?? route.to ?? []).filter((r) => (WORKFLOWS[file].roles as readonly Role[]).includes(r));
}

function forwarded(file: WorkflowFile): InputName[] {
  const names = Object.keys(INPUTS) as InputName[];
  for (const name of names) {
    if (!(name in WORKFLOW_INPUTS)) throw new Error(`Input '${name}' has no row in scripts/build/workflows.ts: name the jobs it goes to, or why it is left out.`);
    if (reasonLeftOut(file, name) === undefined && rolesOf(file, name).length === 0)
      throw new Error(`Input '${name}' reaches no job of ${file}: add the job, or the reason it is left out, in scripts/build/workflows.ts.`);
  }
  return names.filter((n) => rolesOf(file, n).length > 0);
}

const q = (s: string): string => JSON.stringify(s);

/**
 * One `workflow_call` input: the action's description and default ("" when it has none). The action
 * takes a value equal to its own default as not given, so the config file still applies; the run job's
 * `if:` reads `inputs.trigger-phrase`, which therefore must hold the real default.
 */
function callInput(name: InputName): string {
  const spec: InputSpec = INPUTS[name];
  const route: Route = WORKFLOW_INPUTS[name];
  const type = route.type ?? "string";
  const fields = [`description: ${q(spec.description)}`, `type: ${type}`];
  if (spec.required) fields.push("required: true");
  else if (type === "string") fields.push(`default: ${q(spec.default ?? "")}`);
  else if (spec.default === undefined) throw new Error(`Input '${name}' is a ${type} in the workflows but has no default in src/constants.ts.`);
  else fields.push(`default: ${type === "number" ? Number(spec.default) : spec.default === "true"}`);
  return `${name}: { ${fields.join(", ")} }`;
}

const BEGIN = /^(\s*)# generated:(inputs|with (plan|reserve|run|publish|gather))\b.*$/;
const END = /^\s*# end generated\s*$/;

/**
 * `text` with its generated parts written anew: between `# generated:inputs` and `# end generated`, the
 * workflow_call inputs; between `# generated:with <role>` and `# end generated`, that job's forwarded
 * inputs; and the `uses:` of the action and of the reusable workflows from COORDINATES.
 */
export function generateWorkflow(file: WorkflowFile, text: string): string {
  const names = forwarded(file);
  const lines = text.split("\n");
  const out: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const begin = BEGIN.exec(line);
    if (!begin) {
      out.push(rewriteUses(line, lines[i - 1]));
      continue;
    }
    const indent = begin[1]!;
    const role = begin[3] as Role | undefined;
    seen.add(begin[2]!);
    out.push(line);
    const body = role
      ? names.filter((n) => rolesOf(file, n).includes(role)).map((n) => `${n}: \${{ inputs.${n} }}`)
      : names.map(callInput);
    out.push(...body.map((l) => indent + l));
    let j = i + 1;
    while (j < lines.length && !END.test(lines[j]!)) j++;
    if (j === lines.length) throw new Error(`${file}: '${line.trim()}' has no '# end generated' line after it.`);
    out.push(lines[j]!);
    i = j;
  }
  const wanted = ["inputs", ...WORKFLOWS[file].roles.map((r) => `with ${r}`)];
  const missing = wanted.filter((w) => !seen.has(w));
  if (missing.length) throw new Error(`${file}: no '# generated:${missing.join("', '# generated:")}' marker.`);
  return out.join("\n");
}

/** The action's own steps (ids agent, reserve, publish, plan, gather) and the usage examples in the header comment. */
function rewriteUses(line: string, previous: string | undefined): string {
  const example = line.replace(/(uses: )\S+\/\.github\/workflows\/([\w.-]+\.yml)@\S+/, (_m, uses: string, f: string) => uses + workflowUses(f));
  if (example !== line) return example;
  if (previous && /^\s*- id: (agent|reserve|publish|plan|gather)\s*$/.test(previous))
    return line.replace(/^(\s*uses: )\S+/, `$1${ACTION_USES}`);
  return line;
}
