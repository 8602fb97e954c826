/**
 * The one input parser: raw inputs (action inputs, CLI flags, config file)
 * → typed Settings. Every problem is collected and reported at once, each
 * naming the input and what is allowed; nothing runs when any is found.
 */
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parse as parseShellWords } from "shell-quote";
import { parseYaml } from "../shared/yaml.js";
import * as z from "../shared/zod.js";
import { DEFAULT_MAX_COST_USD, INPUTS, type InputName, type InputSpec } from "../constants.js";
import { ConfigurationError } from "../errors.js";
import { artifactNameProblem } from "../shared/artifact-name.js";
import { didYouMean } from "../shared/did-you-mean.js";
import { CLOUD_CREDENTIAL_PREFIXES, isCloudCredentialName } from "../shared/cloud.js";
import { MODEL_KEY_NAMES, PROVIDERS, type CloudSettings } from "../shared/agents.js";
import { parseReviewInputs } from "./review.js";
import { parseSafeOutputs, SAFE_OUTPUTS_SERVER, type SafeOutputsConfig } from "../safe-outputs/config.js";
import { attachmentPatterns } from "./attachments.js";
import { inside, outputSchemaDocument, resolveInsideWorkspace } from "./input-files.js";
import { ignoredNotice, sortConfigKeys, type ConfigOrigin } from "./provenance.js";
import {
  AGENT_BACKENDS,
  Agent,
  CommentMode,
  CommitMethod,
  Deliver,
  McpServer,
  ModelPriceSpec,
  Phase,
  ProtectedFiles,
  ThreatDetection,
  PermissionPolicy,
  PrCheckout,
  RunConfig,
  SelectMode,
  MAX_ATTEMPTS,
  SandboxChoice,
  NetworkMode,
  type PermissionRule,
  type BudgetSettings,
  type ModelRetrySettings,
  type LedgerSettings,
  type InputFiles,
  type Settings,
  type ApprovalSettings,
  type VerifySettings,
} from "./schema.js";

/** Input values as strings, keyed by input name; missing = not given. */
export type RawInputs = Partial<Record<InputName, string>>;

export interface ParseContext {
  /** Directory relative paths are resolved against (the job's workspace or the CLI's cwd). */
  cwd: string;
  /** True when the triggering event can supply the prompt (comment triggers). */
  eventProvidesPrompt?: boolean;
  /**
   * The config file's content from somewhere other than the working tree: on
   * pull request events the base branch's version, because the PR's copy is
   * written by whoever opened the PR. `text` undefined: the file does not exist there.
   * File-valued inputs are never read here: see config/input-files.ts.
   */
  configFile?: ConfigFileText;
  /**
   * Whose config file it is (config/provenance.ts): one the workflow does not
   * control may set only a few harmless keys. Absent: the workflow's own (the
   * CLI on a laptop, tests); the action always decides (configOrigin).
   */
  configOrigin?: ConfigOrigin;
  /** Told which keys of a config file the workflow does not control were ignored. */
  notice?: (message: string) => void;
  /** The runner's AWS_REGION, GOOGLE_CLOUD_PROJECT and CLOUD_ML_REGION (config/host.ts): defaults of the cloud inputs. */
  cloudDefaults?: CloudSettings;
  /**
   * The CLI: model keys exported in the shell (config/host.ts modelKeysFromEnv).
   * The agent's own key names (and the detection agent's) are taken from here
   * when `secrets` does not name them; no other key reaches the run.
   */
  keyEnv?: Record<string, string>;
}

/**
 * A config file's content as read elsewhere: `text` undefined when it does not
 * exist; `error` when it exists but could not be read (said as a problem of `config-file`).
 */
export interface ConfigFileText {
  text: string | undefined;
  source: string;
  error?: string;
}

/**
 * The config file in the working tree, read once for the step: its bytes (the
 * fingerprint later steps compare) and its text (the settings) come from the
 * same read, so they cannot disagree.
 */
export function readConfigFile(raw: RawInputs, cwd: string): ConfigFileText & { full: string; bytes: Buffer | undefined } {
  const { full } = configFilePath(raw, cwd);
  const source = path.dirname(full);
  try {
    const bytes = readWorkspaceConfig(full, cwd);
    return { full, source, bytes, text: bytes?.toString("utf8") };
  } catch (e) {
    return { full, source, bytes: undefined, text: undefined, error: (e as Error).message };
  }
}

/** The config file's path relative to `cwd` (the `config-file` input or the default), and whether it was given. */
export function configFilePath(raw: RawInputs, cwd: string): { full: string; explicit: boolean } {
  const explicit = raw["config-file"]?.trim();
  const base = path.resolve(cwd, raw["working-directory"]?.trim() || ".");
  return { full: path.resolve(base, explicit || DEFAULT_CONFIG_FILE), explicit: Boolean(explicit) };
}

const DEFAULT_CONFIG_FILE = ".github/agent-runner.yml";

type ConfigValue = string | number | boolean | unknown[] | Record<string, unknown>;

class Problems {
  readonly list: string[] = [];
  add(input: string, message: string): void {
    this.list.push(`Input '${input}': ${message}`);
  }
}

export function parseSettings(raw: RawInputs, ctx: ParseContext): Settings {
  const problems = new Problems();
  const fileValues = loadConfigFile(raw, ctx, problems);

  /** A step input wins over the config file unless it is just the action.yml default. */
  const value = (name: InputName): ConfigValue | undefined => {
    const given = raw[name]?.trim();
    const spec = INPUTS[name] as InputSpec;
    if (given !== undefined && given !== "" && given !== spec.default) return given;
    if (fileValues[name] !== undefined && fileValues[name] !== null) return fileValues[name] as ConfigValue;
    if (given !== undefined && given !== "") return given;
    return spec.default;
  };
  /** Neither a step input other than action.yml's default nor the config file set it. */
  const isDefaulted = (name: InputName): boolean => {
    const given = raw[name]?.trim();
    return !(given && given !== (INPUTS[name] as InputSpec).default) && (fileValues[name] === undefined || fileValues[name] === null);
  };
  const str = (name: InputName): string | undefined => {
    const v = value(name);
    if (v === undefined) return undefined;
    if (typeof v === "string") return v;
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    return undefined;
  };
  const list = (name: InputName): string[] => {
    const v = value(name);
    if (Array.isArray(v)) return v.map(String).map((s) => s.trim()).filter(Boolean);
    if (typeof v === "string") return v.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
    return [];
  };
  const bool = (name: InputName): boolean => {
    const v = value(name);
    if (typeof v === "boolean") return v;
    const s = String(v ?? "").trim().toLowerCase();
    if (["true", "yes", "1", "on"].includes(s)) return true;
    if (["false", "no", "0", "off", ""].includes(s)) return false;
    problems.add(name, `'${String(v)}' is not a boolean; use true or false.`);
    return false;
  };
  const oneOf = <T extends string>(name: InputName, allowed: readonly T[]): T => {
    const v = (str(name) ?? "").trim();
    if ((allowed as readonly string[]).includes(v)) return v as T;
    problems.add(name, `'${v}' is not allowed; use one of: ${allowed.join(", ")}.`);
    return allowed[0]!;
  };
  /** A file-valued input's path; its content is read later (config/input-files.ts), once the event is known. */
  const pathInput = (name: InputName): string | undefined => str(name)?.trim() || undefined;

  // phase publish and reserve run no agent: what only an agent run needs is not required there.
  const phase = oneOf("phase", Phase.options);
  const runsAgent = phase !== "publish" && phase !== "reserve";

  // --- agent -------------------------------------------------------------
  const backendRaw = (str("agent") ?? "").trim();
  let backend: (typeof AGENT_BACKENDS)[number] = "command";
  if (!backendRaw) problems.add("agent", `is required; use one of: ${AGENT_BACKENDS.join(", ")}.`);
  else if (!(AGENT_BACKENDS as readonly string[]).includes(backendRaw))
    problems.add("agent", `unknown agent '${backendRaw}'; use one of: ${AGENT_BACKENDS.join(", ")}.`);
  else backend = backendRaw as typeof backend;

  let command: string[] | undefined;
  const commandRaw = str("agent-command");
  // An unknown agent is one problem already; do not add agent-command ones on top.
  if (backend === "command" && backendRaw === "command") {
    if (commandRaw?.trim()) command = shellWords("agent-command", commandRaw, problems);
    else if (runsAgent) problems.add("agent-command", "is required when agent is 'command': give the command line to run.");
  } else if (commandRaw?.trim() && backendRaw === backend) {
    problems.add("agent-command", `only applies to agent 'command', not '${backend}'; remove it.`);
  }

  const instructions = str("instructions");
  const instructionsFile = pathInput("instructions-file");
  if (instructions && instructionsFile) problems.add("instructions-file", "give either 'instructions' or 'instructions-file', not both.");

  const maxTurnsRaw = str("max-turns");
  let maxTurns: number | undefined;
  if (maxTurnsRaw) {
    maxTurns = Number(maxTurnsRaw);
    if (!Number.isInteger(maxTurns) || maxTurns <= 0) {
      problems.add("max-turns", `'${maxTurnsRaw}' is not a positive whole number.`);
      maxTurns = undefined;
    }
  }

  const baseUrl = str("base-url")?.trim() || undefined;
  if (baseUrl && !z.url().safeParse(baseUrl).success)
    problems.add("base-url", `'${baseUrl}' is not a URL; write it like https://api.example.com or http://127.0.0.1:8080/v1.`);

  const providerRaw = str("provider")?.trim() || undefined;
  if (providerRaw && !(PROVIDERS as readonly string[]).includes(providerRaw)) problems.add("provider", `'${providerRaw}' is not allowed; use one of: ${PROVIDERS.join(", ")}.`);
  const cloud = cloudSettings((n) => str(n)?.trim() || undefined, ctx.cloudDefaults ?? {}, problems);

  const agentCandidate = {
    name: backend,
    provider: providerRaw && (PROVIDERS as readonly string[]).includes(providerRaw) ? providerRaw : undefined,
    cloud,
    backend,
    version: str("agent-version")?.trim() || undefined,
    command,
    model: str("model")?.trim() || undefined,
    baseUrl: baseUrl && z.url().safeParse(baseUrl).success ? baseUrl : undefined,
    instructions,
    mcpServers: parseMcpServers(value("mcp-servers"), problems),
    safeOutputs: parseSafeOutputsInput(value("safe-outputs"), problems),
    skills: [],
    permission: parsePermissions(value("permissions"), problems),
    maxTurns,
    env: parseAssignments("env", value("env"), problems),
    strict: bool("strict"),
  };

  // --- run ---------------------------------------------------------------
  const prompt = str("prompt") ?? "";
  const promptFile = pathInput("prompt-file");
  if (prompt && promptFile) problems.add("prompt-file", "give either 'prompt' or 'prompt-file', not both.");
  if (!prompt.trim() && !promptFile && runsAgent && !ctx.eventProvidesPrompt)
    problems.add("prompt", "is required: give 'prompt' or 'prompt-file' (on comment triggers it comes from the comment).");

  const timeoutRaw = str("timeout-minutes") ?? "30";
  const timeoutMinutes = Number(timeoutRaw);
  if (!Number.isFinite(timeoutMinutes) || timeoutMinutes <= 0)
    problems.add("timeout-minutes", `'${timeoutRaw}' must be a positive number of minutes (fractions allowed, e.g. 0.5).`);

  const stallRaw = (str("stall-minutes") ?? "10").trim() || "10";
  const stallMinutes = Number(stallRaw);
  if (!Number.isFinite(stallMinutes) || stallMinutes < 0)
    problems.add("stall-minutes", `'${stallRaw}' must be a number of minutes (fractions allowed, e.g. 0.5), or 0 for no stall watchdog.`);
  const resumeRaw = (str("resume") ?? "none").trim() || "none";
  if (resumeRaw !== "none" && resumeRaw !== "checkpoint") problems.add("resume", `'${resumeRaw}' must be 'none' or 'checkpoint'.`);

  const session = (str("session") ?? "new").trim() || "new";
  const forkSession = bool("fork-session");
  if (forkSession && session === "new") problems.add("fork-session", "needs 'session' set to 'continue' or a session id to fork from.");

  const forwardEnv = list("forward-env");
  for (const name of forwardEnv)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) problems.add("forward-env", `'${name}' is not an environment variable name.`);
  // Named on purpose, so refused rather than dropped: the agent must never hold a cloud credential.
  for (const [input, names] of [["forward-env", forwardEnv], ["env", Object.keys(agentCandidate.env)]] as const)
    for (const name of names.filter(isCloudCredentialName))
      problems.add(
        input,
        `'${name}' is a cloud credential variable (${CLOUD_CREDENTIAL_PREFIXES}), which never reaches the agent; remove it. The model gateway reads cloud credentials on the runner and signs model requests itself (input 'provider').`,
      );

  // The detection agent's key comes from the shell too (validated with the other threat-detection inputs below).
  const detectionBackend = AGENT_BACKENDS.find((b) => b === str("detection-agent")?.trim());
  const runCandidate = {
    prompt,
    attachments: attachmentPatterns(value("attachments")),
    continueLast: session === "continue",
    resumeSessionId: session !== "new" && session !== "continue" ? session : undefined,
    forkSession,
    env: agentCandidate.env,
    forwardEnv,
    secrets: withShellKeys(parseAssignments("secrets", value("secrets"), problems), [backend, ...(detectionBackend ? [detectionBackend] : [])], ctx.keyEnv),
    ...(ctx.keyEnv ? { keysFromEnvironment: true } : {}),
    network: { mode: oneOf("network", NetworkMode.options), allowedDomains: list("allowed-domains") },
    outputSchema: inlineOutputSchema(str("output-schema"), problems),
    timeoutSeconds: Number.isFinite(timeoutMinutes) && timeoutMinutes > 0 ? timeoutMinutes * 60 : 1800,
    stallSeconds: Number.isFinite(stallMinutes) && stallMinutes >= 0 ? stallMinutes * 60 : 600,
    resumeCheckpoint: resumeRaw === "checkpoint",
    extraArgs: parseArgs(value("agent-args"), problems),
  };

  // --- threat detection's agent ------------------------------------------
  const threatDetection = oneOf("threat-detection", ThreatDetection.options);
  const detectionRaw = str("detection-agent")?.trim() || undefined;
  let detectionAgent: (typeof AGENT_BACKENDS)[number] | undefined;
  if (detectionRaw && !(AGENT_BACKENDS as readonly string[]).includes(detectionRaw))
    problems.add("detection-agent", `unknown agent '${detectionRaw}'; use one of: ${AGENT_BACKENDS.join(", ")}.`);
  else if (detectionRaw) detectionAgent = detectionRaw as typeof detectionAgent;
  if (detectionRaw && threatDetection !== "agent") problems.add("detection-agent", "only applies with 'threat-detection: agent'.");
  // A command's own script judging its own output would be no judge: a command detector is an explicit choice.
  if (threatDetection === "agent" && runsAgent && backend === "command" && !detectionAgent)
    problems.add("detection-agent", "is required with 'threat-detection: agent' and 'agent: command': name the backend that judges (e.g. claude), or 'command' to run agent-command as the judge.");
  if (detectionAgent === "command" && !command && runsAgent) problems.add("detection-agent", "'command' runs 'agent-command', which only applies to 'agent: command'.");
  const detectionModel = str("detection-model")?.trim() || undefined;

  const retentionRaw = str("retention-days");
  let retentionDays: number | undefined;
  if (retentionRaw) {
    retentionDays = Number(retentionRaw);
    if (!Number.isInteger(retentionDays) || retentionDays < 1 || retentionDays > 90) {
      problems.add("retention-days", `'${retentionRaw}' must be a whole number of days from 1 to 90.`);
      retentionDays = undefined;
    }
  }

  const workspace = path.resolve(ctx.cwd, str("working-directory") ?? ".");
  if (!existsSync(workspace) || !statSync(workspace).isDirectory())
    problems.add("working-directory", `'${workspace}' is not a directory.`);

  const settingsCandidate = {
    sandbox: { choice: oneOf("sandbox", SandboxChoice.options), dockerImage: str("docker-image")?.trim() || undefined },
    github: {
      token: str("github-token") ?? "",
      commentAttachments: bool("comment-attachments"),
      triggerPhrase: (str("trigger-phrase") ?? "@agent").trim() || "@agent",
      allowedUsers: list("allowed-users"),
      allowedBots: list("allowed-bots"),
      prCheckout: oneOf("pr-checkout", PrCheckout.options),
    },
    delivery: {
      phase,
      deliver: oneOf("deliver", Deliver.options),
      comment: oneOf("comment", CommentMode.options),
      branchPrefix: str("branch-prefix") ?? "agent/",
      baseBranch: str("base-branch")?.trim() || undefined,
      draft: bool("draft"),
      allowWorkflowChanges: bool("allow-workflow-changes"),
      commitMethod: oneOf("commit-method", CommitMethod.options),
      allowUnsignedCommits: bool("allow-unsigned-commits"),
      threatDetection,
      ...(detectionAgent ? { detectionAgent } : {}),
      ...(detectionModel ? { detectionModel } : {}),
      detectionFailOpen: bool("threat-detection-fail-open"),
      protectedFiles: oneOf("protected-files", ProtectedFiles.options),
      protectedPaths: list("protected-paths"),
    },
    artifacts: { upload: bool("upload-artifacts"), name: str("artifact-name")?.trim() || undefined, retentionDays },
    approval: parseApproval(str, list, bool, oneOf, retentionDays, problems),
  };
  const artifactName = settingsCandidate.artifacts.name;
  const nameProblem = artifactName !== undefined ? artifactNameProblem(artifactName) : undefined;
  if (nameProblem) problems.add("artifact-name", nameProblem);
  if (phase === "run" && !settingsCandidate.artifacts.upload)
    problems.add("upload-artifacts", "must stay true with 'phase: run': the publish phase reads the run's artifact.");
  // Only a phase that publishes stages: the reusable workflows' run and reserve jobs write no comment by design.
  if (settingsCandidate.approval.mode === "required" && settingsCandidate.delivery.comment === "none" && (phase === "all" || phase === "publish"))
    problems.add("comment", "'none' leaves 'approval: required' nowhere to show what it staged; use 'sticky' or 'new'.");
  if (runsAgent && settingsCandidate.sandbox.choice === "docker" && !settingsCandidate.sandbox.dockerImage)
    problems.add("docker-image", "is required when sandbox is 'docker'.");

  const otelEndpoint = str("otel-endpoint")?.trim() || undefined;
  if (otelEndpoint && !/^https?:$/.test(safeUrl(otelEndpoint)?.protocol ?? ""))
    problems.add("otel-endpoint", `'${otelEndpoint}' is not an http(s) URL; write it like https://otel-collector.example:4318 (a URL without a path gets /v1/traces).`);

  // The default cost cap holds only where prices are known: the vendor's own API or a cloud (not a base-url's server), and a model gateway (not `command`).
  const costSource = isDefaulted("max-cost-usd") ? defaultCostCap((runsAgent || phase === "reserve") && backend !== "command", agentCandidate.baseUrl, ctx.notice) : "given";
  const budget = parseBudget(str, value("model-prices"), costSource, problems);
  const verify = parseVerify(str, problems);
  const modelRetry = parseModelRetry(str, list("fallback-models"), problems);
  const ledger = parseLedger(str, phase, backend, problems);

  const attemptsRaw = (str("attempts") ?? "1").trim() || "1";
  const attemptCount = Number(attemptsRaw);
  if (!Number.isInteger(attemptCount) || attemptCount < 1 || attemptCount > MAX_ATTEMPTS)
    problems.add("attempts", `'${attemptsRaw}' must be a whole number from 1 to ${MAX_ATTEMPTS}.`);
  const select = oneOf("select", SelectMode.options);
  const attempts = Number.isInteger(attemptCount) && attemptCount > 1 && attemptCount <= MAX_ATTEMPTS ? { count: attemptCount, select } : undefined;

  const review = parseReviewInputs(str, (name, message) => problems.add(name, message));
  // A review answers through the review safe output: enabled for it when the workflow did not list it.
  if (review && !agentCandidate.safeOutputs?.["create-pull-request-review"])
    agentCandidate.safeOutputs = { ...agentCandidate.safeOutputs, "create-pull-request-review": { max: 1, "max-comments": Math.min(100, Math.max(review.maxComments, 1)) } };

  if (problems.list.length) throw new ConfigurationError(problems.list);

  // Shapes were checked field by field above; zod fills defaults and guards the types.
  const agent = Agent.parse(agentCandidate);
  const run = RunConfig.parse(runCandidate);
  const schemaRaw = str("output-schema")?.trim();
  const inputFiles: InputFiles = {
    ...(instructionsFile && !instructions ? { instructions: instructionsFile } : {}),
    ...(promptFile && !prompt ? { prompt: promptFile } : {}),
    ...(schemaRaw && !schemaRaw.startsWith("{") ? { outputSchema: schemaRaw } : {}),
    skills: list("skills"),
  };
  return {
    agent,
    run,
    session,
    workspace,
    promptGiven: Boolean(prompt.trim()) || Boolean(inputFiles.prompt),
    inputFiles,
    ...settingsCandidate,
    ...(otelEndpoint ? { otel: { endpoint: otelEndpoint } } : {}),
    ...(budget ? { budget } : {}),
    ...(ledger ? { ledger } : {}),
    ...(attempts ? { attempts } : {}),
    ...(verify ? { verify } : {}),
    ...(review ? { review } : {}),
    modelRetry,
  };
}

/** `model-retries` (0–10), `model-retry-max-wait-seconds` (0–3600) and `fallback-models`. */
function parseModelRetry(str: (name: InputName) => string | undefined, fallbackModels: string[], problems: Problems): ModelRetrySettings {
  const whole = (name: "model-retries" | "model-retry-max-wait-seconds", max: number): number => {
    const fallback = Number(INPUTS[name].default);
    const raw = (str(name) ?? "").trim();
    if (!raw) return fallback;
    const n = Number(raw);
    if (Number.isInteger(n) && n >= 0 && n <= max) return n;
    problems.add(name, `'${raw}' must be a whole number from 0 to ${max}.`);
    return fallback;
  };
  const bad = fallbackModels.find((m) => !/^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/.test(m));
  if (bad !== undefined) problems.add("fallback-models", `'${bad}' is not a model id; list model ids separated by commas or newlines, e.g. 'claude-haiku-4-5'.`);
  return { retries: whole("model-retries", 10), maxWaitSeconds: whole("model-retry-max-wait-seconds", 3600), fallbackModels: [...new Set(fallbackModels)] };
}

/** `verify-command` (shell words, like agent-command), `max-fix-rounds` and `verify-timeout-minutes`; undefined without a command. */
/** `approval` and its companions; the expiry never outlives the artifact that holds the staged bytes. */
function parseApproval(
  str: (name: InputName) => string | undefined,
  list: (name: InputName) => string[],
  bool: (name: InputName) => boolean,
  oneOf: <T extends string>(name: InputName, allowed: readonly T[]) => T,
  retentionDays: number | undefined,
  problems: Problems,
): ApprovalSettings {
  const mode = oneOf("approval", ["none", "required"] as const);
  const hoursRaw = (str("approval-expires-hours") ?? "72").trim() || "72";
  let expiresHours = Number(hoursRaw);
  if (!Number.isFinite(expiresHours) || expiresHours <= 0) {
    problems.add("approval-expires-hours", `'${hoursRaw}' must be a positive number of hours.`);
    expiresHours = 72;
  } else if (retentionDays !== undefined && expiresHours > retentionDays * 24) {
    problems.add("approval-expires-hours", `'${hoursRaw}' outlives the artifact that holds the staged outputs ('retention-days: ${retentionDays}', ${retentionDays * 24} hours).`);
  }
  return { mode, approvers: list("approvers"), self: bool("approval-self"), expiresHours };
}

function parseVerify(str: (name: InputName) => string | undefined, problems: Problems): VerifySettings | undefined {
  const roundsRaw = (str("max-fix-rounds") ?? "2").trim() || "2";
  const maxFixRounds = Number(roundsRaw);
  const roundsOk = Number.isInteger(maxFixRounds) && maxFixRounds >= 0 && maxFixRounds <= 10;
  if (!roundsOk) problems.add("max-fix-rounds", `'${roundsRaw}' must be a whole number from 0 to 10.`);
  const limitRaw = (str("verify-timeout-minutes") ?? "10").trim() || "10";
  const limitMinutes = Number(limitRaw);
  const limitOk = Number.isFinite(limitMinutes) && limitMinutes > 0;
  if (!limitOk) problems.add("verify-timeout-minutes", `'${limitRaw}' must be a positive number of minutes (fractions allowed, e.g. 0.5).`);
  const text = str("verify-command")?.trim();
  if (!text) return undefined;
  const command = shellWords("verify-command", text, problems);
  if (!command.length || !roundsOk || !limitOk) return undefined;
  return { command, maxFixRounds, timeoutSeconds: limitMinutes * 60 };
}

/**
 * `max-daily-cost-usd`, `ledger-scope`, `max-total-cost-usd`: admission across
 * runs. The reservation is made before the agent starts by a job that writes
 * (phase all, or a reserve job before a read-only run job) and settled to the
 * gateway's measured cost (phase all, or the publish job), so it needs a model
 * gateway (not `command`). `reserve` alone is refused without a budget.
 */
function parseLedger(str: (name: InputName) => string | undefined, phase: string, backend: string, problems: Problems): LedgerSettings | undefined {
  const cap = (name: "max-daily-cost-usd" | "max-total-cost-usd"): number | undefined => {
    const raw = str(name)?.trim();
    if (!raw) return undefined;
    const n = Number(raw);
    if (Number.isFinite(n) && n > 0) return n;
    problems.add(name, `'${raw}' is not a positive number of US dollars, e.g. 10.`);
    return undefined;
  };
  const dailyCapUsd = cap("max-daily-cost-usd");
  const totalCapUsd = cap("max-total-cost-usd");
  const scopeRaw = (str("ledger-scope") ?? "workflow").trim() || "workflow";
  if (scopeRaw !== "workflow" && scopeRaw !== "repository") problems.add("ledger-scope", `'${scopeRaw}' must be 'workflow' or 'repository'.`);
  if (dailyCapUsd === undefined && totalCapUsd === undefined) {
    if (phase === "reserve") problems.add("phase", "'reserve' reserves a run's budget on the ledger: give 'max-daily-cost-usd' or 'max-total-cost-usd' too.");
    return undefined;
  }
  const given = dailyCapUsd !== undefined ? "max-daily-cost-usd" : "max-total-cost-usd";
  if (backend === "command")
    problems.add(given, "needs a model-backed agent (claude, codex, opencode, gemini): the reservation is settled to the model gateway's measured cost, and agent 'command' sends no requests through it.");
  return { ...(dailyCapUsd !== undefined ? { dailyCapUsd } : {}), ...(totalCapUsd !== undefined ? { totalCapUsd } : {}), scope: scopeRaw === "repository" ? "repository" : "workflow" };
}

/** Where `max-cost-usd` comes from: the workflow ("given"), or its default, applied or off for this run. */
type CostCapSource = "given" | "apply" | "off";

/**
 * Whether the default `max-cost-usd` applies to this run: "apply", or "off"
 * where it could break a run that works without it. A run without a model
 * gateway has nothing to count; a `base-url` server (a local model, a private
 * gateway) has prices the table does not know and may answer in ways the
 * gateway cannot meter. Said once, as a notice: the workflow can cap it itself.
 */
function defaultCostCap(hasGateway: boolean, baseUrl: string | undefined, notice: ((m: string) => void) | undefined): CostCapSource {
  if (!hasGateway) return "off";
  if (!baseUrl) return "apply";
  notice?.(
    `The default cost cap (max-cost-usd ${DEFAULT_MAX_COST_USD}) is off for this run: base-url points at a server whose prices the price table does not know. Set max-cost-usd (with model-prices) or max-tokens to cap it; max-cost-usd: none silences this.`,
  );
  return "off";
}

/** `max-cost-usd`, `max-tokens`, `max-model-requests` and `model-prices`; undefined when none is given and no default cost cap applies. */
function parseBudget(str: (name: InputName) => string | undefined, prices: ConfigValue | undefined, costSource: CostCapSource, problems: Problems): BudgetSettings | undefined {
  const limit = (name: "max-cost-usd" | "max-tokens" | "max-model-requests", whole: boolean): number | undefined => {
    const raw = str(name)?.trim();
    if (!raw) return undefined;
    // `none` turns the cost cap off, its default included.
    if (name === "max-cost-usd" && raw.toLowerCase() === "none") return undefined;
    const n = Number(raw);
    if (Number.isFinite(n) && n > 0 && (!whole || Number.isInteger(n))) return n;
    problems.add(name, `'${raw}' is not a positive ${whole ? "whole number" : "number"}${name === "max-cost-usd" ? " of US dollars, e.g. 2.50" : ""}.`);
    return undefined;
  };
  const budget: BudgetSettings = { modelPrices: parseModelPrices(prices, problems) };
  const maxCostUsd = costSource === "off" ? undefined : limit("max-cost-usd", false);
  if (maxCostUsd !== undefined && costSource === "apply") budget.costCapIsDefault = true;
  const maxTokens = limit("max-tokens", true);
  const maxModelRequests = limit("max-model-requests", true);
  if (maxCostUsd !== undefined) budget.maxCostUsd = maxCostUsd;
  if (maxTokens !== undefined) budget.maxTokens = maxTokens;
  if (maxModelRequests !== undefined) budget.maxModelRequests = maxModelRequests;
  const given = maxCostUsd !== undefined || maxTokens !== undefined || maxModelRequests !== undefined || Object.keys(budget.modelPrices).length > 0;
  return given ? budget : undefined;
}

function parseModelPrices(v: ConfigValue | undefined, problems: Problems): Record<string, ModelPriceSpec> {
  const doc = structured("model-prices", v, problems);
  if (doc === undefined || doc === null) return {};
  const example = "e.g. 'my-model: {input: 3, output: 15, cached: 0.3}' (US dollars per million tokens)";
  if (typeof doc !== "object" || Array.isArray(doc)) {
    problems.add("model-prices", `must map model ids to prices, ${example}.`);
    return {};
  }
  const out: Record<string, ModelPriceSpec> = {};
  for (const [model, price] of Object.entries(doc)) {
    const parsed = ModelPriceSpec.safeParse(price);
    if (parsed.success) out[model] = parsed.data;
    else problems.add("model-prices", `model '${model}' needs 'input' and 'output' (and optionally 'cached') as non-negative numbers, ${example}.`);
  }
  return out;
}

function loadConfigFile(raw: RawInputs, ctx: ParseContext, problems: Problems): Record<string, unknown> {
  const explicit = raw["config-file"]?.trim();
  const rel = explicit || DEFAULT_CONFIG_FILE;
  const { full } = configFilePath(raw, ctx.cwd);
  const override = ctx.configFile;
  let text: string | undefined;
  try {
    if (override?.error !== undefined) throw new Error(override.error);
    text = override ? override.text : readWorkspaceConfig(full, ctx.cwd)?.toString("utf8");
  } catch (e) {
    problems.add("config-file", `'${rel}' ${(e as Error).message}.`);
    return {};
  }
  if (text === undefined) {
    if (explicit) problems.add("config-file", `file '${rel}' not found (looked in ${override?.source ?? path.dirname(full)}).`);
    return {};
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    problems.add("config-file", `'${rel}' is not valid YAML: ${(e as Error).message.split("\n")[0]}`);
    return {};
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) {
    problems.add("config-file", `'${rel}' must be a mapping of input names to values.`);
    return {};
  }
  const origin = ctx.configOrigin ?? { kind: "workflow" };
  const sorted = sortConfigKeys(doc as Record<string, unknown>, origin);
  for (const k of sorted.refused) {
    const why = k === "github-token" || k === "secrets" ? " (secrets belong in the workflow, not the repository)" : k in INPUTS ? " (give it as a step input)" : "";
    // Key names only (never values), and a typo gets the input it is closest to.
    const hint = k in INPUTS ? "" : didYouMean(k, Object.keys(INPUTS));
    problems.add("config-file", `'${rel}' has key '${k}', which is not an input the file may set${why}.${hint}`);
  }
  if (origin.kind === "outside" && sorted.ignored.length) ctx.notice?.(ignoredNotice(rel, origin, sorted.ignored));
  return sorted.kept;
}

/**
 * The config file's text from disk, undefined when there is none. Inside the
 * workspace it is never read through a symlink leading out of it (it would
 * show a host file's keys in the error messages).
 */
function readWorkspaceConfig(full: string, cwd: string): Buffer | undefined {
  if (!lstatOrUndefined(full)) return undefined;
  return readFileSync(inside(cwd, full) ? resolveInsideWorkspace(cwd, full) : full);
}

function lstatOrUndefined(p: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** Structured inputs arrive as YAML/JSON text from the step, or as objects from the config file. */
function structured(input: string, v: ConfigValue | undefined, problems: Problems): unknown {
  if (v === undefined || v === "") return undefined;
  if (typeof v !== "string") return v;
  try {
    return parseYaml(v);
  } catch (e) {
    problems.add(input, `is not valid JSON or YAML: ${(e as Error).message.split("\n")[0]}`);
    return undefined;
  }
}

function parseMcpServers(v: ConfigValue | undefined, problems: Problems): Record<string, McpServer> {
  const doc = structured("mcp-servers", v, problems);
  if (doc === undefined || doc === null) return {};
  // Accept the common `{ mcpServers: {...} }` wrapper used by .mcp.json files.
  const map = typeof doc === "object" && doc !== null && "mcpServers" in doc ? (doc as { mcpServers: unknown }).mcpServers : doc;
  if (typeof map !== "object" || map === null || Array.isArray(map)) {
    problems.add("mcp-servers", "must map server names to {command, args, env} or {url, headers}.");
    return {};
  }
  const out: Record<string, McpServer> = {};
  for (const [name, server] of Object.entries(map)) {
    if (!/^[A-Za-z0-9_-]+$/.test(name)) problems.add("mcp-servers", `server name '${name}' may only use letters, digits, '_' and '-'.`);
    if (name === SAFE_OUTPUTS_SERVER) problems.add("mcp-servers", `server name '${name}' is Agent Runner's own (the safe-outputs server); rename yours.`);
    const parsed = McpServer.safeParse(server);
    if (parsed.success) out[name] = parsed.data;
    else problems.add("mcp-servers", `server '${name}' needs either {command, args?, env?} or {url, headers?}.`);
  }
  return out;
}

/** `safe-outputs`: kind → limits (safe-outputs/config.ts); undefined when no kind is enabled. */
function parseSafeOutputsInput(v: ConfigValue | undefined, problems: Problems): SafeOutputsConfig | undefined {
  const doc = structured("safe-outputs", v, problems);
  const parsed = parseSafeOutputs(doc);
  for (const p of parsed.problems) problems.add("safe-outputs", p);
  return Object.keys(parsed.config).length ? parsed.config : undefined;
}

function parsePermissions(v: ConfigValue | undefined, problems: Problems): PermissionPolicy | undefined {
  const doc = structured("permissions", v, problems);
  if (doc === undefined || doc === null) return undefined;
  const shape = z.strictObject({
    default: z.optional(z.enum(["allow", "ask", "deny"])),
    allow: z.optional(z.array(z.string())),
    ask: z.optional(z.array(z.string())),
    deny: z.optional(z.array(z.string())),
  });
  const parsed = shape.safeParse(doc);
  if (!parsed.success) {
    problems.add("permissions", "must be a mapping with 'default' (allow | ask | deny) and optional 'allow', 'ask', 'deny' lists of tools, e.g. {default: allow, deny: [bash]}.");
    return undefined;
  }
  const rules: PermissionRule[] = [];
  for (const action of ["allow", "ask", "deny"] as const) {
    for (const entry of parsed.data[action] ?? []) {
      const m = /^([^()\s]+)(?:\((.*)\))?$/.exec(entry.trim());
      if (!m) problems.add("permissions", `'${entry}' is not a tool name or tool(pattern).`);
      else rules.push({ tool: m[1]!, action, ...(m[2] !== undefined ? { pattern: m[2] } : {}) });
    }
  }
  return PermissionPolicy.parse({ default: parsed.data.default ?? "allow", rules });
}

/** The cloud inputs, each defaulting to the runner's variable; region and project names are checked for shape (they become URL parts). */
function cloudSettings(str: (name: InputName) => string | undefined, defaults: CloudSettings, problems: Problems): CloudSettings {
  const out: CloudSettings = {};
  const take = (input: InputName, key: keyof CloudSettings, shape: RegExp, example: string) => {
    const given = str(input);
    // A runner default of another shape is not this run's business (the run may not use that cloud): left out, not an error.
    const v = given ?? (defaults[key] !== undefined && shape.test(defaults[key]) ? defaults[key] : undefined);
    if (v === undefined) return;
    if (!shape.test(v)) problems.add(input, `'${v.slice(0, 60)}' is not a valid ${example}.`);
    else out[key] = v;
  };
  take("aws-region", "awsRegion", /^[a-z]{2}(-[a-z]+)+-\d+$/, "AWS region (like us-east-1)");
  take("vertex-project", "vertexProject", /^[a-z][a-z0-9-]{4,61}[a-z0-9]$|^[a-z0-9.:-]{6,100}$/, "Google Cloud project id (like my-project-123)");
  take("vertex-region", "vertexRegion", /^(global|[a-z]+-[a-z]+\d+)$/, "Vertex AI region (global, us-east5, europe-west1 …)");
  return out;
}

/** `secrets` plus the backends' key variables exported in the CLI's shell that it does not already name. */
function withShellKeys(secrets: Record<string, string>, backends: (typeof AGENT_BACKENDS)[number][], keyEnv: Record<string, string> | undefined): Record<string, string> {
  if (!keyEnv) return secrets;
  const out = { ...secrets };
  for (const name of backends.flatMap((b) => MODEL_KEY_NAMES[b])) if (out[name] === undefined && keyEnv[name]) out[name] = keyEnv[name];
  return out;
}

function parseAssignments(input: string, v: ConfigValue | undefined, problems: Problems): Record<string, string> {
  if (v === undefined || v === "") return {};
  if (typeof v === "object" && !Array.isArray(v)) {
    return Object.fromEntries(Object.entries(v).map(([k, val]) => [k, String(val)]));
  }
  const out: Record<string, string> = {};
  const lines = Array.isArray(v) ? v.map(String) : String(v).split(/\r?\n/);
  for (const line of lines) {
    if (!line.trim() || line.trim().startsWith("#")) continue;
    const eq = line.indexOf("=");
    const name = eq > 0 ? line.slice(0, eq).trim() : "";
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      // Never echo the line: it may hold a secret value.
      problems.add(input, `each line must be NAME=value with NAME a valid variable name (a line starting '${name.slice(0, 20) || line.trim().slice(0, 1)}…' is not).`);
      continue;
    }
    out[name] = line.slice(eq + 1);
  }
  return out;
}

/** `output-schema` given inline (JSON starting with `{`); a path is read with the other file inputs. */
function inlineOutputSchema(v: string | undefined, problems: Problems): Record<string, unknown> | undefined {
  const text = v?.trim();
  if (!text?.startsWith("{")) return undefined;
  const doc = outputSchemaDocument(text);
  if (!doc) problems.add("output-schema", "must be a JSON Schema object.");
  return doc;
}

function parseArgs(v: ConfigValue | undefined, problems: Problems): string[] {
  if (v === undefined || v === "") return [];
  if (Array.isArray(v)) return v.map(String);
  const text = String(v).trim();
  if (text.startsWith("[")) {
    const parsed = z.array(z.string()).safeParse(safeJson(text));
    if (parsed.success) return parsed.data;
    problems.add("agent-args", "looks like JSON but is not an array of strings.");
    return [];
  }
  return shellWords("agent-args", text, problems);
}

function safeUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Shell words without a shell: operators, globs and substitutions are refused. */
function shellWords(input: string, text: string, problems: Problems): string[] {
  const words = parseShellWords(text, (name) => `$${name}`);
  const out: string[] = [];
  for (const w of words) {
    if (typeof w === "string") out.push(w);
    else {
      problems.add(input, "use plain words; pipes, redirections and globs are not interpreted (wrap a pipeline as: bash -c '…').");
      return [];
    }
  }
  return out;
}
