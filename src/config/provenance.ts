/**
 * Settings provenance: where each setting may come from.
 *
 * A setting reaches a run from (a) a step input, (b) the config file of the
 * repository the workflow runs from, read at a commit the workflow trusts
 * (the workspace it checked out; the base commit on pull request events), or
 * (c) a config file the workflow does not control: the checkout of another
 * repository (a fan-out item, a run with `repository`). Only (a) and (b)
 * decide where secrets go, what the sandbox and the network allow, what runs
 * on the host, and what is delivered. A file of kind (c) may set only the
 * settings marked `any-file` below; everything else it names is ignored, and
 * the run says so (one notice naming the file and each key).
 *
 * Every input is classified here: the table is typed by InputName, so a new
 * input does not compile until it is (test/unit/provenance.test.ts checks the
 * table against the inputs and the parser's idea of a config file).
 */
import type { InputName } from "../constants.js";
import { parseRepository, sameRepo } from "../shared/item-ref.js";
/** The step's inputs as given (parse.ts's RawInputs; named here so that the parser can import this table). */
type RawInputs = Partial<Record<InputName, string>>;

/**
 * - `step`: only a step input. Which thread, repository and items a step works
 *   on, its token and secrets, and which config file it reads are the
 *   workflow's choice; a config file naming one is an error (or ignored, for a
 *   file the workflow does not control).
 * - `workflow`: a step input, or the config file of the workflow's own repository.
 * - `any-file`: also a config file the workflow does not control. Only text the
 *   agent reads that the checkout's owner can already give it (an AGENTS.md in
 *   their own repository does the same); nothing about secrets, the sandbox,
 *   the network, cost, host paths or delivery.
 */
export type SettingSource = "step" | "workflow" | "any-file";

export const SETTING_SOURCES: Record<InputName, SettingSource> = {
  // What the step is about and with which credentials.
  "config-file": "step",
  "github-token": "step",
  secrets: "step",
  "issue-number": "step",
  repository: "step",
  "items-query": "step",
  items: "step",
  repositories: "step",
  "max-items": "step",
  "report-issue": "step",
  "allow-foreign-items": "step",
  // A shard job's part of the plan: from its matrix entry.
  "review-shard": "step",
  "review-range": "step",
  // Standing instructions: text for the agent, as the repository's own AGENTS.md is.
  instructions: "any-file",
  // The agent and where its model requests (with the workflow's key) go, and what they cost.
  agent: "workflow",
  "agent-version": "workflow",
  "agent-command": "workflow",
  model: "workflow",
  "base-url": "workflow",
  provider: "workflow",
  "aws-region": "workflow",
  "vertex-project": "workflow",
  "vertex-region": "workflow",
  "max-turns": "workflow",
  "timeout-minutes": "workflow",
  "stall-minutes": "workflow",
  // The project's check: a command run in the sandbox, like agent-command.
  "verify-command": "workflow",
  "max-fix-rounds": "workflow",
  "verify-timeout-minutes": "workflow",
  "max-cost-usd": "workflow",
  "max-daily-cost-usd": "workflow",
  "ledger-scope": "workflow",
  "max-total-cost-usd": "workflow",
  "max-tokens": "workflow",
  "max-model-requests": "workflow",
  "model-prices": "workflow",
  // What the run is for, and how a review is split, posted and scoped (cost and what is published).
  task: "workflow",
  "review-shard-lines": "workflow",
  "review-shard-files": "workflow",
  "review-max-lines": "workflow",
  "review-can-block": "workflow",
  "review-scope": "workflow",
  "review-max-comments": "workflow",
  // Retries and other models change what a run costs.
  "model-retries": "workflow",
  "model-retry-max-wait-seconds": "workflow",
  "fallback-models": "workflow",
  // More attempts multiply what a run costs.
  attempts: "workflow",
  select: "workflow",
  // The request and files read on the host (paths may name runner files).
  prompt: "workflow",
  "prompt-file": "workflow",
  "instructions-file": "workflow",
  attachments: "workflow",
  "comment-attachments": "workflow",
  skills: "workflow",
  "output-schema": "workflow",
  // What runs and with which environment, tools and arguments.
  "mcp-servers": "workflow",
  permissions: "workflow",
  "agent-args": "workflow",
  env: "workflow",
  "forward-env": "workflow",
  strict: "workflow",
  // The boundary.
  sandbox: "workflow",
  network: "workflow",
  "allowed-domains": "workflow",
  "docker-image": "workflow",
  "working-directory": "workflow",
  "pr-checkout": "workflow",
  // Who may trigger, which session is restored.
  session: "workflow",
  "fork-session": "workflow",
  resume: "workflow",
  "trigger-phrase": "workflow",
  "allowed-users": "workflow",
  "allowed-bots": "workflow",
  approval: "workflow",
  approvers: "workflow",
  "approval-self": "workflow",
  "approval-expires-hours": "workflow",
  // Delivery, artifacts and telemetry: what leaves the run, and where to.
  phase: "workflow",
  deliver: "workflow",
  comment: "workflow",
  "branch-prefix": "workflow",
  "base-branch": "workflow",
  draft: "workflow",
  "allow-workflow-changes": "workflow",
  "commit-method": "workflow",
  "allow-unsigned-commits": "workflow",
  "threat-detection": "workflow",
  "detection-agent": "workflow",
  "detection-model": "workflow",
  "threat-detection-fail-open": "workflow",
  "protected-files": "workflow",
  "protected-paths": "workflow",
  "safe-outputs": "workflow",
  "upload-artifacts": "workflow",
  "artifact-name": "workflow",
  "retention-days": "workflow",
  "otel-endpoint": "workflow",
};

/** The settings a config file the workflow does not control may set. */
export const ANY_FILE_SETTINGS = (Object.keys(SETTING_SOURCES) as InputName[]).filter((n) => SETTING_SOURCES[n] === "any-file");

/** Whose config file this is: the workflow's own, or one it does not control (and why not). */
export type ConfigOrigin = { kind: "workflow" } | { kind: "outside"; why: string };

/**
 * The origin of the step's config file. From the step's own inputs: a step
 * whose `repository` names another repository than the workflow's works on
 * that repository's checkout, so its config file is that repository's,
 * whatever commit it is read at (also a pull request's base there). And,
 * for the file as checked out, `checkout`: the repository the folder holding
 * it is a checkout of (its origin on the GitHub host), when known.
 */
export function configOrigin(raw: RawInputs, workflowRepository: string | undefined, checkout?: string): ConfigOrigin {
  const named = raw.repository?.trim();
  if (!named) return fromCheckout(workflowRepository, checkout);
  const repo = parseRepository(named);
  // Not a repository name: the step fails on it later (trigger/item.ts); until then nothing of the file counts.
  if (!repo) return { kind: "outside", why: "the step's 'repository' is not owner/repo" };
  if (workflowRepository && !sameRepo(workflowRepository, repo.fullName))
    return { kind: "outside", why: `the checkout of ${repo.fullName}, not of this workflow's repository ${workflowRepository}` };
  return fromCheckout(workflowRepository, checkout);
}

/**
 * The CLI's config file: its working directory is whatever checkout the user
 * cd'd into, often a stranger's clone, so the file there is that repository's,
 * not the user's (GITHUB_REPOSITORY, which the action compares, is unset on a
 * laptop). It counts as the user's own only when `--config-file` names it.
 */
export function localConfigOrigin(raw: RawInputs): ConfigOrigin | undefined {
  if (raw["config-file"]?.trim()) return undefined;
  return { kind: "outside", why: "the working directory's own config file, which the CLI takes in full only when named with --config-file" };
}

function fromCheckout(workflowRepository: string | undefined, checkout: string | undefined): ConfigOrigin {
  if (!checkout || !workflowRepository || sameRepo(workflowRepository, checkout)) return { kind: "workflow" };
  return { kind: "outside", why: `a checkout of ${checkout.slice(0, 140)}, not of this workflow's repository ${workflowRepository}` };
}

/** What a config file's keys come to, by provenance. */
export interface SortedConfig {
  /** Keys (input names) and values the run takes. */
  kept: Record<string, unknown>;
  /** Keys a file of the workflow's own may not set: errors. */
  refused: string[];
  /** Keys of a file the workflow does not control that are not `any-file`: ignored, with a notice. */
  ignored: string[];
}

export function sortConfigKeys(doc: Record<string, unknown>, origin: ConfigOrigin): SortedConfig {
  const out: SortedConfig = { kept: {}, refused: [], ignored: [] };
  for (const [key, value] of Object.entries(doc)) {
    const source = key in SETTING_SOURCES ? SETTING_SOURCES[key as InputName] : undefined;
    if (origin.kind === "outside") {
      if (source === "any-file") out.kept[key] = value;
      else out.ignored.push(key);
    } else if (source === "workflow" || source === "any-file") out.kept[key] = value;
    else out.refused.push(key);
  }
  return out;
}

/** The notice for keys ignored in a config file the workflow does not control. */
export function ignoredNotice(file: string, origin: Extract<ConfigOrigin, { kind: "outside" }>, ignored: string[]): string {
  // Keys only, never values; the file's own strings, so bounded.
  const shown = ignored.slice(0, 100).map((k) => `'${k.slice(0, 60)}'`);
  const more = ignored.length > shown.length ? ` and ${ignored.length - shown.length} more` : "";
  return (
    `Ignored ${ignored.length === 1 ? "setting" : "settings"} in '${file}' (${origin.why}): ${shown.join(", ")}${more}. ` +
    `A config file the workflow does not control may set only ${ANY_FILE_SETTINGS.map((k) => `'${k}'`).join(", ")}; ` +
    "secrets, the sandbox, the network, the model endpoint, what runs on the host and what is delivered come from the step's inputs or this workflow's own repository."
  );
}
