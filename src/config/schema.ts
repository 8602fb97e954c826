/**
 * The typed settings every stage receives. Zod validates at the edge (the
 * input parser); inside, the types are trusted.
 */
import * as z from "../shared/zod.js";
import { AGENT_BACKENDS, PROVIDERS, type AgentBackendName } from "../shared/agents.js";
import type { ReviewSettings } from "./review.js";

export { AGENT_BACKENDS, type AgentBackendName };

export const PermissionAction = z.enum(["allow", "ask", "deny"]);
export type PermissionAction = z.infer<typeof PermissionAction>;

/** `bash`, `write`, `mcp__server__tool`, optionally with a pattern: `bash(rm *)`. */
export const PermissionRule = z.object({
  tool: z.string().check(z.minLength(1)),
  pattern: z.optional(z.string()),
  action: PermissionAction,
});
export type PermissionRule = z.infer<typeof PermissionRule>;

export const PermissionPolicy = z.object({
  default: z._default(PermissionAction, "allow"),
  rules: z._default(z.array(PermissionRule), []),
});
export type PermissionPolicy = z.infer<typeof PermissionPolicy>;

const stringMap = z.record(z.string(), z.string());

export const McpServer = z.union([
  z.strictObject({
    command: z.string().check(z.minLength(1)),
    args: z._default(z.array(z.string()), []),
    env: z._default(stringMap, {}),
  }),
  z.strictObject({
    url: z.url(),
    headers: z._default(stringMap, {}),
  }),
]);
export type McpServer = z.infer<typeof McpServer>;

export const Skill = z.object({
  name: z.string().check(z.minLength(1)),
  /** Absolute folder holding SKILL.md. */
  path: z.string().check(z.minLength(1)),
});
export type Skill = z.infer<typeof Skill>;

export const Agent = z.object({
  name: z.string(),
  backend: z.enum(AGENT_BACKENDS),
  /** npm version, `preinstalled`, or undefined for the pinned default. */
  version: z.optional(z.string()),
  /** For the `command` backend: argv of the command. */
  command: z.optional(z.array(z.string())),
  model: z.optional(z.string()),
  baseUrl: z.optional(z.url()),
  /** Input `provider`; undefined: the agent's own. */
  provider: z.optional(z.enum(PROVIDERS)),
  /** Inputs aws-region, vertex-project, vertex-region (defaults from the runner's AWS_REGION, GOOGLE_CLOUD_PROJECT, CLOUD_ML_REGION). */
  cloud: z._default(z.object({ awsRegion: z.optional(z.string()), vertexProject: z.optional(z.string()), vertexRegion: z.optional(z.string()) }), {}),
  instructions: z.optional(z.string()),
  mcpServers: z._default(z.record(z.string(), McpServer), {}),
  skills: z._default(z.array(Skill), []),
  permission: z.optional(PermissionPolicy),
  maxTurns: z.optional(z.number().check(z.int(), z.positive())),
  env: z._default(stringMap, {}),
  metadata: z._default(z.record(z.string(), z.unknown()), {}),
  strict: z._default(z.boolean(), true),
  /** `safe-outputs`, checked and normalized (safe-outputs/config.ts): kind key → limits. Absent: none enabled. */
  safeOutputs: z.optional(z.record(z.string(), z.record(z.string(), z.unknown()))),
});
export type Agent = z.infer<typeof Agent>;

export const NetworkMode = z.enum(["none", "model-only", "allowlist", "open"]);

export const RunConfig = z.object({
  prompt: z.string(),
  /** The `attachments` input: paths or globs, resolved when the run starts (config/attachments.ts). */
  attachments: z._default(z.array(z.string()), []),
  /** Files the host already downloaded from the thread (`comment-attachments`), attached after the input's. */
  fetchedAttachments: z._default(
    z.array(z.object({ hostPath: z.string(), label: z.string(), source: z.string(), untrusted: z.optional(z.boolean()) })),
    [],
  ),
  continueLast: z._default(z.boolean(), false),
  resumeSessionId: z.optional(z.string()),
  forkSession: z._default(z.boolean(), false),
  env: z._default(stringMap, {}),
  /** Names of host environment variables passed through. */
  forwardEnv: z._default(z.array(z.string()), []),
  /** Values are masked and redacted everywhere; never written to disk. */
  secrets: z._default(stringMap, {}),
  /** The CLI: a missing model key is to be exported in the shell, not added to a workflow's `secrets`. */
  keysFromEnvironment: z.optional(z.boolean()),
  network: z.object({ mode: NetworkMode, allowedDomains: z._default(z.array(z.string()), []) }),
  outputSchema: z.optional(z.record(z.string(), z.unknown())),
  timeoutSeconds: z.number().check(z.positive()),
  /** `stall-minutes`, in seconds: no model request, output or file change for this long stops the agent with a checkpoint; 0: no watchdog. */
  stallSeconds: z._default(z.number().check(z.nonnegative()), 600),
  /** `resume: checkpoint` (or `@agent continue`): the run starts from the thread's checkpoint (session/checkpoint.ts). */
  resumeCheckpoint: z._default(z.boolean(), false),
  extraArgs: z._default(z.array(z.string()), []),
  metadata: z._default(z.record(z.string(), z.unknown()), {}),
});
export type RunConfig = z.infer<typeof RunConfig>;

/** One `model-prices` entry: USD per million tokens; `cached` (cache reads) defaults to `input`. */
export const ModelPriceSpec = z.strictObject({
  input: z.number().check(z.nonnegative()),
  output: z.number().check(z.nonnegative()),
  cached: z.optional(z.number().check(z.nonnegative())),
});
export type ModelPriceSpec = z.infer<typeof ModelPriceSpec>;

/** Limits the model gateway enforces on one run (sandbox/usage-meter.ts), and prices for models the table lacks. */
export interface BudgetSettings {
  maxCostUsd?: number;
  /** `maxCostUsd` is the input's default (DEFAULT_MAX_COST_USD): skipped at start, with a notice, when the model has no price (sandbox/budget.ts gatewayBudget); else held like a given cap. */
  costCapIsDefault?: boolean;
  /** Input + output tokens, cache reads and writes counted as input. */
  maxTokens?: number;
  maxModelRequests?: number;
  modelPrices: Record<string, ModelPriceSpec>;
}

/** `model-retries`, `model-retry-max-wait-seconds`, `fallback-models`: rate limits absorbed at the model gateway (sandbox/gateway-retry.ts). */
export interface ModelRetrySettings {
  retries: number;
  maxWaitSeconds: number;
  fallbackModels: string[];
}

/** Budgets across runs, kept on the ledger ref (ledger/). */
export interface LedgerSettings {
  /** `max-daily-cost-usd`, counted per UTC day over `scope`. */
  dailyCapUsd?: number;
  scope: "workflow" | "repository";
  /** `max-total-cost-usd`: one pool for every item of one workflow run. */
  totalCapUsd?: number;
}

/** `verify-command` and its fix rounds (runner/verify.ts). */
export interface VerifySettings {
  /** argv of the check, run in the agent's sandbox. */
  command: string[];
  /** `max-fix-rounds`: how many times a failing check resumes the agent (0–10). */
  maxFixRounds: number;
  /** `verify-timeout-minutes`, in seconds: the limit of one check, within the run's `timeout-minutes`. */
  timeoutSeconds: number;
}

export const Phase = z.enum(["all", "run", "publish", "reserve"]);
export const CommitMethod = z.enum(["api", "git"]);
export const ThreatDetection = z.enum(["auto", "agent", "none"]);
export const ProtectedFiles = z.enum(["review", "block", "allow"]);
export const Deliver = z.enum(["auto", "comment", "commit", "pull-request", "none"]);
export const CommentMode = z.enum(["sticky", "new", "none"]);
export const SandboxChoice = z.enum(["auto", "bwrap", "docker", "none"]);
export const PrCheckout = z.enum(["auto", "none"]);
export const SelectMode = z.enum(["verify", "judge"]);
/** `attempts` is at most this: each attempt is a whole agent run with its own workspace copy. */
export const MAX_ATTEMPTS = 5;

/** `attempts` and `select` (src/attempts/). */
export interface AttemptSettings {
  /** 1–MAX_ATTEMPTS; 1 runs the agent in the workspace itself, as without the input. */
  count: number;
  select: z.infer<typeof SelectMode>;
}
/** `new`, `continue`, or a session id. */
export const SessionChoice = z.string().check(z.minLength(1));

export interface GitHubSettings {
  token: string;
  /** `comment-attachments`: download files pasted into the thread and attach them. */
  commentAttachments: boolean;
  triggerPhrase: string;
  allowedUsers: string[];
  allowedBots: string[];
  /** `pr-checkout`: whether PR threads run on the PR's head (trigger/pr-checkout.ts); absent = auto. */
  prCheckout?: z.infer<typeof PrCheckout>;
}

export interface DeliverySettings {
  phase: z.infer<typeof Phase>;
  deliver: z.infer<typeof Deliver>;
  comment: z.infer<typeof CommentMode>;
  branchPrefix: string;
  baseBranch?: string;
  draft: boolean;
  allowWorkflowChanges: boolean;
  /** `commit-method`: GitHub's Git Data API (signed) or git push. */
  commitMethod: z.infer<typeof CommitMethod>;
  allowUnsignedCommits: boolean;
  /** `threat-detection` (publish/threats/). */
  threatDetection: z.infer<typeof ThreatDetection>;
  /** `detection-agent`: the detection agent's backend (absent: the run's). */
  detectionAgent?: AgentBackendName;
  /** `detection-model`. */
  detectionModel?: string;
  /** `threat-detection-fail-open`: a failed detection agent warns instead of holding back. */
  detectionFailOpen: boolean;
  protectedFiles: z.infer<typeof ProtectedFiles>;
  /** `protected-paths` lines: `glob` adds, `!glob` exempts. */
  protectedPaths: string[];
}

export interface ArtifactSettings {
  upload: boolean;
  name?: string;
  retentionDays?: number;
}

/**
 * File-valued inputs as named (paths resolved against the workspace the step
 * started in). The parser only records them: on pull request events the
 * workspace holds the PR's code, so their contents are read later, from the
 * base commit there and from the workspace (no symlink leaving it) otherwise
 * (config/input-files.ts). Cleared once read.
 */
export interface InputFiles {
  instructions?: string;
  prompt?: string;
  /** A path; inline JSON is parsed right away. */
  outputSchema?: string;
  /** Folders holding a SKILL.md. */
  skills: string[];
}

/** Everything one run needs, produced once by the input parser. */
/** `approval`, `approvers`, `approval-self`, `approval-expires-hours` (publish/approval/). */
export interface ApprovalSettings {
  mode: "none" | "required";
  /** Logins that may approve; empty: write, maintain or admin permission. */
  approvers: string[];
  /** The person who triggered the run may approve it too. */
  self: boolean;
  expiresHours: number;
}

export interface Settings {
  agent: Agent;
  run: RunConfig;
  /** The `session` input: `new`, `continue` or an id (also reflected in run.resumeSessionId). */
  session: string;
  sandbox: { choice: z.infer<typeof SandboxChoice>; dockerImage?: string };
  /** Absolute path of the repository. */
  workspace: string;
  github: GitHubSettings;
  delivery: DeliverySettings;
  artifacts: ArtifactSettings;
  approval: ApprovalSettings;
  /** Whether the prompt was given explicitly (comment triggers may supply one); a named prompt-file counts. */
  promptGiven: boolean;
  /** File-valued inputs whose contents are still to be read (see InputFiles). */
  inputFiles: InputFiles;
  /** `max-cost-usd`, `max-tokens`, `max-model-requests`, `model-prices` (absent: no limits, the table's prices). */
  budget?: BudgetSettings;
  /** `max-daily-cost-usd`, `ledger-scope`, `max-total-cost-usd` (absent: no admission across runs). */
  ledger?: LedgerSettings;
  /** `attempts`, `select` (absent: one attempt). */
  attempts?: AttemptSettings;
  /** `model-retries`, `model-retry-max-wait-seconds`, `fallback-models` (absent: the defaults, no fallback). */
  modelRetry?: ModelRetrySettings;
  /** `verify-command`, `max-fix-rounds`, `verify-timeout-minutes` (absent: no check, output `verified` is `not-run`). */
  verify?: VerifySettings;
  /** `otel-endpoint`, checked: where the run's trace is exported (absent: the runner's OTEL_* variables decide). */
  otel?: { endpoint: string };
  /** `task: review` and its inputs (config/review.ts); absent for `task: change`. */
  review?: ReviewSettings;
}
