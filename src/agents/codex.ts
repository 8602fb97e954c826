/**
 * `agent: codex` — OpenAI Codex CLI, headless: `codex exec --json`.
 *
 * Everything lives in CODEX_HOME inside the isolated HOME: config.toml (model
 * endpoint as a custom provider whose key is read from an environment
 * variable, instructions, permissions, MCP servers, telemetry/update/plugin
 * switches), skills/ and rules/ (shell command rules). The
 * prompt arrives on stdin (`-`). Codex's own sandbox is off by default
 * (`danger-full-access`): Agent Runner's sandbox is the boundary.
 */
import path from "node:path";
import type { Agent } from "../config/schema.js";
import type { AgentEvent, Usage } from "../shared/events.js";
import { SAFE_OUTPUTS_SERVER } from "../safe-outputs/config.js";
import {
  BoundedMap,
  FINAL_TEXT_LIMIT,
  arr,
  clip,
  contentText,
  copySkills,
  decideTool,
  describeModelFailure,
  endpointEnv,
  headlessPolicy,
  instructionsText,
  mcpEntries,
  num,
  parseJsonLine,
  parseMcpToolName,
  plainCommandWords,
  promptUsage,
  rec,
  ruleText,
  runnerFilesDir,
  SecretVariables,
  sessionIdProblems,
  str,
  tomlArray,
  tomlString,
  unenforceableRuleProblem,
  unknownToolProblem,
  unsupportedInputProblem,
  writePrivateFile,
  type JsonObject,
  type McpEntry,
  runMcpServers,
} from "./common.js";
import type { AgentBackend, AgentContext, EventParser } from "./types.js";
import { MODEL_KEY_NAMES } from "../shared/agents.js";

/** The provider id in config.toml; tests override its retry settings with `-c model_providers.agent_runner.…`. */
export const CODEX_PROVIDER_ID = "agent_runner";
/** Codex reads the key from this variable (env_key), never from a file or argv. */
const KEY_ENV = "OPENAI_API_KEY";

type CodexToolKind = "bash" | "write" | "edit" | "read" | "web";

/** Our tool vocabulary, plus Codex's own names for the same things. */
const CODEX_ALIASES: Record<string, CodexToolKind> = {
  bash: "bash",
  shell: "bash",
  exec_command: "bash",
  write: "write",
  edit: "edit",
  apply_patch: "edit",
  read: "read",
  webfetch: "web",
  websearch: "web",
  web_search: "web",
};

function codexToolKind(tool: string): CodexToolKind | undefined {
  // Own keys only: `tool in` / indexing would also find `constructor` and the like.
  return Object.hasOwn(CODEX_ALIASES, tool) ? CODEX_ALIASES[tool] : undefined;
}

export interface CodexPermissions {
  sandboxMode: "danger-full-access" | "read-only";
  shellTool: boolean;
  webSearch: boolean;
  /** Starlark prefix rules for $CODEX_HOME/rules. */
  rules: string[];
  /** Per MCP server: whether it is on, and which of its tools. */
  mcp: Record<string, { enabled: boolean; enabledTools?: string[]; disabledTools: string[] }>;
  problems: string[];
}

/**
 * PermissionPolicy → Codex settings. Codex has no per-tool allow lists, so:
 * bash → the shell tool on/off, plus `prefix_rule(…, decision="forbidden")`
 * for denied command patterns; write/edit → sandbox `read-only` when denied
 * (enforced by Codex's own sandbox); web → `web_search`; MCP → per-server
 * `enabled` / `enabled_tools` / `disabled_tools`. Reading cannot be denied.
 */
export function codexPermissions(agent: Agent): CodexPermissions {
  const policy = headlessPolicy(agent.permission);
  const problems: string[] = [];
  const rules: string[] = [];
  const cannot = (rule: { tool: string; pattern?: string }, why: string) => problems.push(unenforceableRuleProblem("codex", rule, why));

  for (const rule of policy.rules) {
    if (parseMcpToolName(rule.tool)) {
      if (rule.pattern !== undefined) cannot(rule, "MCP tools take no patterns");
      continue;
    }
    const kind = codexToolKind(rule.tool);
    if (!kind) {
      problems.push(unknownToolProblem("codex", rule));
      continue;
    }
    if (kind === "read" && rule.action === "deny") cannot(rule, "Codex always lets the agent read files");
    if (rule.pattern === undefined) continue;
    if (kind !== "bash") cannot(rule, "only shell commands can be limited by a pattern");
    else if (rule.action === "allow") {
      if (decideTool(policy, (t) => codexToolKind(t) === "bash") === "deny")
        cannot(rule, "Codex cannot allow only some shell commands while the shell is otherwise denied");
    } else {
      const prefix = commandPrefix(rule.pattern);
      if (!prefix) cannot(rule, "a shell pattern must be a command prefix such as 'git push *' or 'rm:*'");
      else
        rules.push(
          `prefix_rule(pattern = ${JSON.stringify(prefix)}, decision = "forbidden", justification = ${JSON.stringify(`Refused by the workflow's permissions (${ruleText(rule)}).`)})`,
        );
    }
  }

  const allowed = (kind: CodexToolKind) => decideTool(policy, (t) => codexToolKind(t) === kind) === "allow";
  const mcp: CodexPermissions["mcp"] = {};
  for (const name of Object.keys(agent.mcpServers)) {
    const serverRule = decideTool(policy, (t) => {
      const m = parseMcpToolName(t);
      return m?.server === name && m.tool === undefined;
    });
    const toolRules = policy.rules.filter((r) => {
      const m = parseMcpToolName(r.tool);
      return r.pattern === undefined && m?.server === name && m.tool !== undefined;
    });
    const named = (action: "allow" | "deny") => toolRules.filter((r) => r.action === action).map((r) => parseMcpToolName(r.tool)!.tool!);
    const denied = named("deny");
    if (serverRule === "allow") mcp[name] = { enabled: true, disabledTools: denied };
    else {
      const only = named("allow").filter((t) => !denied.includes(t));
      mcp[name] = only.length ? { enabled: true, enabledTools: only, disabledTools: [] } : { enabled: false, disabledTools: [] };
    }
  }

  return {
    sandboxMode: allowed("write") && allowed("edit") ? "danger-full-access" : "read-only",
    shellTool: allowed("bash"),
    webSearch: allowed("web"),
    rules,
    mcp,
    problems,
  };
}

/**
 * `rm *`, `git push:*`, `git push` → the command's leading words; anything
 * fancier → undefined. Unlike commandPrefixWords (common.ts) the wildcard is
 * optional: a Codex prefix rule matches argv by leading words anyway, so a
 * denied `npm publish` also refuses `npm publish --force`.
 */
export function commandPrefix(pattern: string): string[] | undefined {
  return plainCommandWords(pattern.trim().replace(/(?::\*|\s+\*|\*)$/, ""));
}

// ------------------------------------------------------------------ config.toml

function tomlInlineTable(map: Record<string, string>): string {
  return `{ ${Object.entries(map)
    .map(([k, v]) => `${tomlString(k)} = ${tomlString(v)}`)
    .join(", ")} }`;
}

/**
 * config.toml for the run. Secrets never go into it: MCP env values holding
 * one are forwarded from the CLI's environment (`env_vars`), headers through
 * `env_http_headers`; both collected in `hidden`, whose env the CLI gets.
 */
export function codexConfigToml(ctx: AgentContext, perms: CodexPermissions, hidden = new SecretVariables(ctx.run.secrets)): string {
  const { agent } = ctx;
  const lines = ["# Written by Agent Runner for this run; edits are lost."];
  if (agent.model) lines.push(`model = ${tomlString(agent.model)}`);
  if (ctx.endpoint) lines.push(`model_provider = ${tomlString(CODEX_PROVIDER_ID)}`);
  lines.push(
    // Headless: nobody can approve, so Codex must never ask.
    `approval_policy = "never"`,
    `sandbox_mode = ${tomlString(perms.sandboxMode)}`,
    `check_for_update_on_startup = false`,
    // The run context and standing instructions as a developer message: above the user's
    // prompt, and separate from the repository's own AGENTS.md, which Codex still reads.
    `developer_instructions = ${tomlString(instructionsText(ctx))}`,
  );
  // Web search runs at the provider; the model gateway refuses it unless the network is open.
  if (!perms.webSearch || ctx.run.network.mode !== "open") lines.push(`web_search = "disabled"`);
  if (ctx.endpoint)
    lines.push(
      "",
      `[model_providers.${CODEX_PROVIDER_ID}]`,
      `name = "Agent Runner model endpoint"`,
      `base_url = ${tomlString(ctx.endpoint.baseUrl)}`,
      `env_key = ${tomlString(KEY_ENV)}`,
      `wire_api = "responses"`,
    );
  lines.push("", "[analytics]", "enabled = false", "", "[features]", "plugins = false");
  if (!perms.shellTool) lines.push("shell_tool = false");
  for (const s of mcpEntries(runMcpServers(ctx))) {
    if (secretInPlainSight(s, hidden)) {
      ctx.log.warning(`codex: MCP server '${s.name}' left out: it has a secret in its command, args or url, which would have to be written to config.toml.`);
      continue;
    }
    lines.push("", ...mcpServerToml(s, perms.mcp[s.name], hidden));
  }
  return lines.join("\n") + "\n";
}

/** Codex can take a secret from the environment only for env values and headers. */
function secretInPlainSight(s: McpEntry, hidden: SecretVariables): boolean {
  return s.kind === "stdio" ? [s.command, ...s.args].some((v) => hidden.holdsSecret(v)) : hidden.holdsSecret(s.url);
}

function mcpServerToml(s: McpEntry, p: CodexPermissions["mcp"][string] | undefined, hidden: SecretVariables): string[] {
  const out = [`[mcp_servers.${tomlString(s.name)}]`];
  if (s.kind === "stdio") {
    out.push(`command = ${tomlString(s.command)}`, `args = ${tomlArray(s.args)}`);
    const literal: Record<string, string> = {};
    const forwarded: string[] = [];
    for (const [k, v] of Object.entries(s.env)) {
      if (hidden.hide(v, k)) forwarded.push(k);
      else literal[k] = v;
    }
    if (Object.keys(literal).length) out.push(`env = ${tomlInlineTable(literal)}`);
    if (forwarded.length) out.push(`env_vars = ${tomlArray(forwarded)}`);
  } else {
    out.push(`url = ${tomlString(s.url)}`);
    const literal: Record<string, string> = {};
    const fromEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(s.headers)) {
      const variable = hidden.hide(v);
      if (variable) fromEnv[k] = variable;
      else literal[k] = v;
    }
    if (Object.keys(literal).length) out.push(`http_headers = ${tomlInlineTable(literal)}`);
    if (Object.keys(fromEnv).length) out.push(`env_http_headers = ${tomlInlineTable(fromEnv)}`);
  }
  // Ours must start (a failed start would leave the run silently without its tools), and its tools run unasked.
  if (s.name === SAFE_OUTPUTS_SERVER) out.push("required = true", "startup_timeout_sec = 30", `default_tools_approval_mode = "approve"`);
  if (p) {
    out.push(`enabled = ${p.enabled}`);
    if (p.enabledTools) out.push(`enabled_tools = ${tomlArray(p.enabledTools)}`);
    if (p.disabledTools.length) out.push(`disabled_tools = ${tomlArray(p.disabledTools)}`);
  }
  return out;
}

/** Where the run's Codex files live in the isolated HOME. */
function homePaths(home: string) {
  const codexHome = path.join(home, ".codex");
  return {
    codexHome,
    config: path.join(codexHome, "config.toml"),
    rules: path.join(codexHome, "rules", "agent-runner.rules"),
    skills: path.join(codexHome, "skills"),
    sessions: path.join(codexHome, "sessions"),
    outputSchema: path.join(runnerFilesDir(home), "codex-output-schema.json"),
  };
}

export const codexAgent: AgentBackend = {
  name: "codex",
  npmPackage: { name: "@openai/codex", bin: "codex", defaultVersion: "0.171.0" },
  provider: "openai",
  // Codex keeps its custom model provider pointed at the gateway (Responses API); the gateway forwards to
  // Bedrock's OpenAI-compatible API (bedrock-runtime …/openai/v1) or Azure OpenAI's v1 API and signs there.
  providers: { openai: "openai", bedrock: "openai", azure: "openai" },
  keyNames: [...MODEL_KEY_NAMES.codex],

  unsupported(agent, run) {
    const problems = [...codexPermissions(agent).problems, ...sessionIdProblems(run)];
    if (agent.maxTurns) problems.push(unsupportedInputProblem("max-turns", "codex", "codex exec has no turn limit (use timeout-minutes)"));
    const hidden = new SecretVariables(run.secrets);
    for (const s of mcpEntries(agent.mcpServers))
      if (secretInPlainSight(s, hidden))
        problems.push(`Input 'mcp-servers': server '${s.name}' has a secret in its command, args or url; agent 'codex' can take secrets only through the server's env or headers.`);
    if (run.forkSession && run.continueLast && !run.resumeSessionId)
      problems.push("Input 'fork-session' needs a session id with agent 'codex' (codex exec fork has no --last).");
    return problems;
  },

  async materialise(ctx) {
    const { agent, run } = ctx;
    const paths = homePaths(ctx.layout.home);
    const perms = codexPermissions(agent);
    const hidden = new SecretVariables(run.secrets);
    await writePrivateFile(paths.config, codexConfigToml(ctx, perms, hidden));
    if (perms.rules.length) await writePrivateFile(paths.rules, perms.rules.join("\n") + "\n");
    if (perms.sandboxMode === "read-only")
      ctx.log.info("codex: write/edit denied → Codex's own read-only sandbox; where it cannot start, shell commands fail instead of running unconfined.");
    if (agent.skills.length) await copySkills(agent.skills, paths.skills);
    if (run.outputSchema) await writePrivateFile(paths.outputSchema, JSON.stringify(run.outputSchema, null, 2) + "\n");
    return {
      env: {
        ...hidden.env,
        CODEX_HOME: paths.codexHome,
        // The base URL is in config.toml (the provider's base_url); only the key travels in the environment.
        ...endpointEnv(ctx.endpoint, { apiKey: KEY_ENV }),
      },
    };
  },

  command(ctx, installed) {
    const { run } = ctx;
    const resuming = Boolean(run.resumeSessionId || run.continueLast);
    const sub = resuming ? [run.forkSession ? "fork" : "resume"] : [];
    const args = [
      "exec",
      ...sub,
      "--json",
      "--skip-git-repo-check",
      ...(run.outputSchema ? ["--output-schema", homePaths(ctx.layout.home).outputSchema] : []),
      // Attached images as `input_image` parts; `--image=FILE` each, so no value list can swallow the next word.
      ...(ctx.attachments?.files.filter((f) => f.kind === "image").map((f) => `--image=${f.path}`) ?? []),
      ...run.extraArgs,
      ...(run.resumeSessionId ? ["--", run.resumeSessionId] : run.continueLast ? ["--last", "--"] : ["--"]),
      // `-`: the prompt is read from stdin (no argv limit, not visible in `ps`).
      "-",
    ];
    return { file: installed.binPath, args, stdin: run.prompt };
  },

  createParser: (ctx) => new CodexParser(ctx.run.outputSchema !== undefined),

  // Rollout files: sessions/YYYY/MM/DD/rollout-…-<id>.jsonl; `exec resume <id>` needs nothing else.
  sessionPaths: (ctx) => [homePaths(ctx.layout.home).sessions],
};

/**
 * `codex exec --json` → normalized events. A tool call is announced at
 * item.started and finished at item.completed; items that only complete
 * (file changes) get both events then. The run's result is known at the end:
 * the last agent message, the last (thread-cumulative) usage, and whether a
 * turn failed.
 */
export class CodexParser implements EventParser {
  private started = new BoundedMap<string, true>();
  private lastMessage: string | undefined;
  private lastAnswer: string | undefined;
  private usage: Usage | undefined;
  private turns = 0;
  private turnFailed: string | undefined;
  /** A stream error that no later completed turn recovered from. */
  private pendingError: string | undefined;
  /** The last error naming an HTTP status: Codex's final message for a 5xx does not. */
  private statusError: string | undefined;

  constructor(private readonly wantsStructuredOutput: boolean) {}

  push(line: string): AgentEvent[] {
    const e = parseJsonLine(line);
    if (!e) return [];
    switch (e.type) {
      case "thread.started": {
        const id = str(e.thread_id);
        return id ? [{ type: "session", sessionId: id }] : [];
      }
      case "item.started":
        return this.itemStarted(rec(e.item));
      case "item.completed":
        return this.itemCompleted(rec(e.item));
      case "turn.completed": {
        this.turns++;
        this.pendingError = undefined;
        const u = rec(e.usage);
        // OpenAI-style: input_tokens already includes the cached ones.
        const input = num(u.input_tokens) ?? 0;
        const cached = num(u.cached_input_tokens) ?? 0;
        this.usage = promptUsage({ uncached: input - cached, cacheRead: cached, output: num(u.output_tokens) });
        // Codex reports the thread's running total (after a resume it includes earlier runs).
        return [{ type: "usage", usage: this.usage, cumulative: true }];
      }
      case "turn.failed": {
        const message = str(rec(e.error).message) ?? "The turn failed.";
        this.turnFailed = message;
        return [{ type: "error", message: clip(message) }];
      }
      case "error": {
        const message = str(e.message) ?? "Codex reported an error.";
        this.pendingError = message;
        const status = /unexpected status \d{3}[^,]*/.exec(message);
        if (status) this.statusError = status[0];
        return [{ type: "error", message: clip(message) }];
      }
      default:
        return [];
    }
  }

  end(): AgentEvent[] {
    const failure = this.turnFailed ?? this.pendingError;
    let structuredOutput: unknown;
    if (this.lastAnswer !== undefined && !failure) {
      try {
        structuredOutput = JSON.parse(this.lastAnswer);
      } catch {
        /* not JSON: the final message is still reported as text */
      }
    }
    return [
      {
        type: "result",
        ...(this.lastMessage !== undefined && !failure ? { text: this.lastMessage } : {}),
        isError: failure !== undefined,
        ...(failure !== undefined ? { reason: describeModelFailure(this.withStatus(failure)) } : {}),
        ...(this.usage ? { usage: this.usage } : {}),
        numTurns: this.turns,
        ...(structuredOutput !== undefined ? { structuredOutput } : {}),
      },
    ];
  }

  private withStatus(failure: string): string {
    return this.statusError && !/\b\d{3}\b/.test(failure) ? `${failure} (${this.statusError})` : failure;
  }

  private itemStarted(item: JsonObject): AgentEvent[] {
    const call = toolCall(item);
    const id = str(item.id);
    if (!call || !id) return [];
    this.started.set(id, true);
    return [call];
  }

  private itemCompleted(item: JsonObject): AgentEvent[] {
    const id = str(item.id);
    switch (item.type) {
      case "agent_message": {
        const text = str(item.text) ?? "";
        this.lastMessage = clip(text, FINAL_TEXT_LIMIT);
        // The answer to an output schema is parsed whole (the line itself is bounded).
        this.lastAnswer = this.wantsStructuredOutput ? text : undefined;
        return text ? [{ type: "text", text: clip(text) }] : [];
      }
      case "reasoning": {
        const text = str(item.text);
        return text ? [{ type: "reasoning", text: clip(text) }] : [];
      }
      case "error": {
        const message = str(item.message) ?? "";
        // A non-fatal notice, not a failure: an unknown model name falls back to default metadata.
        if (!message || /^Model metadata for .* not found/.test(message)) return [];
        return [{ type: "error", message: clip(message) }];
      }
    }
    const call = toolCall(item);
    if (!call) return [];
    const out: AgentEvent[] = id && this.started.has(id) ? [] : [call];
    const status = str(item.status);
    if (status === "declined")
      out.push({ type: "permission_denied", tool: call.name, ...(typeof item.command === "string" ? { detail: item.command } : {}) });
    out.push({ type: "tool_result", ...(id ? { id } : {}), name: call.name, output: clip(toolOutput(item)), isError: isFailed(item) });
    return out;
  }
}

function toolCall(item: JsonObject): Extract<AgentEvent, { type: "tool_call" }> | undefined {
  const id = str(item.id);
  const base = id ? { id } : {};
  switch (item.type) {
    case "command_execution":
      return { type: "tool_call", ...base, name: "bash", input: { command: str(item.command) ?? "" } };
    case "file_change": {
      const changes = arr(item.changes).map(rec);
      return { type: "tool_call", ...base, name: "apply_patch", input: { path: changes.map((c) => `${str(c.kind) ?? "update"} ${str(c.path) ?? "?"}`).join(", "), changes } };
    }
    case "mcp_tool_call":
      return { type: "tool_call", ...base, name: `mcp__${str(item.server) ?? "?"}__${str(item.tool) ?? "?"}`, input: item.arguments ?? {} };
    case "web_search":
      return { type: "tool_call", ...base, name: "web_search", input: { query: str(item.query) ?? "" } };
    default:
      return undefined;
  }
}

function toolOutput(item: JsonObject): string {
  switch (item.type) {
    case "command_execution":
      return str(item.aggregated_output) ?? "";
    case "file_change":
      return arr(item.changes)
        .map(rec)
        .map((c) => `${str(c.kind) ?? "update"} ${str(c.path) ?? "?"}`)
        .join("\n");
    case "mcp_tool_call": {
      const err = str(rec(item.error).message);
      return err ?? contentText(rec(item.result).content);
    }
    default:
      return "";
  }
}

function isFailed(item: JsonObject): boolean {
  const status = str(item.status);
  if (status === "failed" || status === "declined") return true;
  if (item.type === "command_execution") {
    const code = num(item.exit_code);
    return code !== undefined && code !== 0;
  }
  return item.type === "mcp_tool_call" && item.error !== undefined && item.error !== null;
}
