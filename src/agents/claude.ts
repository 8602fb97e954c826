/**
 * `agent: claude` — Claude Code, headless: `claude -p --output-format stream-json`.
 *
 * Everything it reads lives in the isolated HOME: CLAUDE_CONFIG_DIR holds the
 * skills and the session files; instructions go in as an appended system
 * prompt (a file, so nothing long or private is on the command line); MCP
 * servers come only from our --mcp-config. The prompt arrives on stdin.
 * Permissions use `dontAsk` mode plus allow/deny lists, which needs no
 * permission bypass (and so no IS_SANDBOX=1 as root).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Agent } from "../config/schema.js";
import { SAFE_OUTPUTS_SERVER } from "../safe-outputs/config.js";
import type { AgentEvent, Usage } from "../shared/events.js";
import {
  BoundedMap,
  FINAL_TEXT_LIMIT,
  arr,
  clip,
  contentText,
  copySkills,
  describeModelFailure,
  dollarVariable,
  endpointEnv,
  headlessPolicy,
  instructionsText,
  isGenericTool,
  mapValues,
  maxTurnsReason,
  mcpEntries,
  num,
  oneLine,
  parseJsonLine,
  parseMcpToolName,
  promptUsage,
  rec,
  runnerFilesDir,
  SecretVariables,
  sessionIdProblems,
  str,
  unknownToolProblem,
  writePrivateFile,
  type GenericTool,
  type JsonObject,
  runMcpServers,
  safeOutputTools,
} from "./common.js";
import type { AgentBackend, AttachmentFile, EventParser, ModelEndpoint } from "./types.js";
import { MODEL_KEY_NAMES, VERTEX_AGENT_PROJECT, VERTEX_AGENT_REGION } from "../shared/agents.js";

/** Our tool vocabulary → Claude Code's tool names. */
const CLAUDE_TOOL: Record<GenericTool, string> = {
  bash: "Bash",
  write: "Write",
  edit: "Edit",
  read: "Read",
  webfetch: "WebFetch",
  websearch: "WebSearch",
};

/**
 * Built-in tools that ask for permission. With `default: allow` they are all
 * pre-approved; anything not listed is refused by `dontAsk` mode.
 */
const PERMISSIONED_TOOLS = ["Bash", "Edit", "Write", "NotebookEdit", "Read", "Glob", "Grep", "WebFetch", "WebSearch"];

export interface ClaudePermissions {
  allowed: string[];
  disallowed: string[];
  problems: string[];
}

/**
 * PermissionPolicy → `--allowedTools` / `--disallowedTools` under
 * `--permission-mode dontAsk`. Claude applies deny rules before allow rules,
 * so a deny always wins and the lists need no subtraction. Patterns pass
 * through in Claude's own syntax (`Bash(git push:*)`, `Edit(src/**)`).
 */
export function claudePermissions(agent: Agent): ClaudePermissions {
  const policy = headlessPolicy(agent.permission);
  const problems: string[] = [];
  const allowed = new Set<string>();
  const disallowed = new Set<string>();
  if (policy.default === "allow") {
    for (const t of PERMISSIONED_TOOLS) allowed.add(t);
    for (const name of Object.keys(agent.mcpServers)) allowed.add(`mcp__${name}`);
  }
  // The safe-output tools the workflow enabled are allowed by that choice; a deny rule still wins.
  for (const tool of safeOutputTools(agent)) allowed.add(`mcp__${SAFE_OUTPUTS_SERVER}__${tool}`);
  for (const rule of policy.rules) {
    const tool = claudeToolName(rule.tool);
    if (!tool) {
      problems.push(unknownToolProblem("claude", rule, "a Claude Code tool name such as NotebookEdit"));
      continue;
    }
    const entry = rule.pattern !== undefined ? `${tool}(${rule.pattern})` : tool;
    (rule.action === "allow" ? allowed : disallowed).add(entry);
  }
  return { allowed: [...allowed], disallowed: [...disallowed], problems };
}

function claudeToolName(tool: string): string | undefined {
  if (isGenericTool(tool)) return CLAUDE_TOOL[tool];
  if (parseMcpToolName(tool)) return tool;
  // Claude Code's own names (Bash, NotebookEdit, …) are accepted as written.
  if (/^[A-Z][A-Za-z]+$/.test(tool)) return tool;
  return undefined;
}

/** Where the run's Claude Code files live in the isolated HOME. */
function homePaths(home: string) {
  const configDir = path.join(home, ".claude");
  return {
    configDir,
    skills: path.join(configDir, "skills"),
    projects: path.join(configDir, "projects"),
    instructions: path.join(runnerFilesDir(home), "claude-instructions.md"),
    mcpConfig: path.join(runnerFilesDir(home), "claude-mcp.json"),
  };
}

/**
 * The endpoint as Claude Code 2.1 takes it for each provider. On a cloud it
 * uses the cloud's SDK against ANTHROPIC_<CLOUD>_BASE_URL (the gateway) with
 * its own authentication switched off (CLAUDE_CODE_SKIP_<CLOUD>_AUTH, meant
 * for gateways that sign); the placeholder then travels as the Authorization
 * header of ANTHROPIC_CUSTOM_HEADERS, which that mode sends as is. The
 * region (never a credential) is what the SDK builds model ids and paths from.
 */
export function claudeProviderEnv(endpoint: ModelEndpoint | undefined): Record<string, string> {
  if (!endpoint) return {};
  const bearer = { ANTHROPIC_CUSTOM_HEADERS: `Authorization: Bearer ${endpoint.apiKey}` };
  switch (endpoint.provider ?? "anthropic") {
    case "bedrock":
      return {
        CLAUDE_CODE_USE_BEDROCK: "1",
        ANTHROPIC_BEDROCK_BASE_URL: endpoint.baseUrl,
        CLAUDE_CODE_SKIP_BEDROCK_AUTH: "1",
        ...(endpoint.cloud?.awsRegion ? { AWS_REGION: endpoint.cloud.awsRegion } : {}),
        ...bearer,
      };
    case "vertex":
      // The Vertex SDK appends /projects/<project>/locations/<region>/… to the base URL; both are
      // placeholders the gateway replaces. With the skip switch it sends no Google auth, and the
      // placeholder key travels as x-api-key.
      return {
        CLAUDE_CODE_USE_VERTEX: "1",
        CLAUDE_CODE_SKIP_VERTEX_AUTH: "1",
        ANTHROPIC_VERTEX_BASE_URL: `${endpoint.baseUrl}/v1`,
        ANTHROPIC_VERTEX_PROJECT_ID: VERTEX_AGENT_PROJECT,
        CLOUD_ML_REGION: VERTEX_AGENT_REGION,
        ANTHROPIC_API_KEY: endpoint.apiKey,
      };
    case "azure":
      // Microsoft Foundry: Messages at <base>/v1/messages; the placeholder as its API key (x-api-key).
      return { CLAUDE_CODE_USE_FOUNDRY: "1", ANTHROPIC_FOUNDRY_BASE_URL: endpoint.baseUrl, ANTHROPIC_FOUNDRY_API_KEY: endpoint.apiKey };
    default:
      return endpointEnv(endpoint, { baseUrl: "ANTHROPIC_BASE_URL", apiKey: "ANTHROPIC_API_KEY" });
  }
}

export const claudeAgent: AgentBackend = {
  name: "claude",
  npmPackage: { name: "@anthropic-ai/claude-code", bin: "claude", defaultVersion: "2.1.197" },
  provider: "anthropic",
  // Claude Code 2.1: CLAUDE_CODE_USE_BEDROCK / _VERTEX / _FOUNDRY with ANTHROPIC_<CLOUD>_BASE_URL and the
  // CLAUDE_CODE_SKIP_<CLOUD>_AUTH switches meant for gateways (claudeProviderEnv); Anthropic Messages bodies on each.
  providers: { anthropic: "anthropic", bedrock: "anthropic", vertex: "anthropic", azure: "anthropic" },
  keyNames: [...MODEL_KEY_NAMES.claude],

  unsupported(agent, run) {
    return [...claudePermissions(agent).problems, ...sessionIdProblems(run)];
  },

  async materialise(ctx) {
    const { agent } = ctx;
    const paths = homePaths(ctx.layout.home);
    await writePrivateFile(paths.instructions, instructionsText(ctx));
    // Claude expands ${VAR} in MCP settings: a secret stays in the environment, not in the file.
    const hidden = new SecretVariables(ctx.run.secrets);
    const ref = (v: string) => hidden.configValue(v, dollarVariable);
    const servers: Record<string, JsonObject> = {};
    for (const s of mcpEntries(runMcpServers(ctx)))
      servers[s.name] =
        s.kind === "stdio"
          ? { type: "stdio", command: s.command, args: s.args.map(ref), env: mapValues(s.env, ref) }
          : { type: "http", url: ref(s.url), headers: mapValues(s.headers, ref) };
    await writePrivateFile(paths.mcpConfig, JSON.stringify({ mcpServers: servers }, null, 2) + "\n");
    if (agent.skills.length) await copySkills(agent.skills, paths.skills);
    return {
      env: {
        ...hidden.env,
        CLAUDE_CONFIG_DIR: paths.configDir,
        ...claudeProviderEnv(ctx.endpoint),
        // No telemetry, error reports, feature-flag fetches, title requests or self-updates:
        // the model endpoint is the only host a run talks to.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_BUG_COMMAND: "1",
        // Claude Code waits 5 s for MCP servers before its first request, then goes on without the tools of
        // those still starting (a busy runner starting an npx server, or our own safe-outputs server): the
        // servers the workflow configured are part of the run, so wait for them as long as a start can take.
        MCP_CONNECT_TIMEOUT_MS: "120000",
      },
    };
  },

  command(ctx, installed) {
    const { agent, run } = ctx;
    const paths = homePaths(ctx.layout.home);
    const perms = claudePermissions(agent);
    // --allowedTools, --disallowedTools and --mcp-config take several values: each gets
    // exactly one (comma-joined) and is followed by another flag, so nothing else is swallowed.
    const args = [
      "-p",
      ...(perms.allowed.length ? ["--allowedTools", perms.allowed.join(",")] : []),
      ...(perms.disallowed.length ? ["--disallowedTools", perms.disallowed.join(",")] : []),
      "--mcp-config",
      paths.mcpConfig,
      "--strict-mcp-config",
      "--permission-mode",
      "dontAsk",
      "--append-system-prompt-file",
      paths.instructions,
      ...(agent.model ? ["--model", agent.model] : []),
      ...(agent.maxTurns ? ["--max-turns", String(agent.maxTurns)] : []),
      ...(run.outputSchema ? ["--json-schema", JSON.stringify(run.outputSchema)] : []),
      ...(run.resumeSessionId ? ["--resume", run.resumeSessionId] : run.continueLast ? ["--continue"] : []),
      ...(run.forkSession && (run.resumeSessionId || run.continueLast) ? ["--fork-session"] : []),
      "--output-format",
      "stream-json",
      "--verbose",
      ...run.extraArgs,
    ];
    // Attached images and PDFs: content blocks of a stream-json user message, so their bytes are in the model request.
    const native = ctx.attachments?.files.filter((f) => f.kind !== "text") ?? [];
    if (native.length) return { file: installed.binPath, args: [...args, "--input-format", "stream-json"], stdin: claudeUserMessage(run.prompt, native) };
    // The prompt goes on stdin: no argv length limit, and not visible in `ps`.
    return { file: installed.binPath, args, stdin: run.prompt };
  },

  createParser: (ctx) => new ClaudeParser(ctx.agent.maxTurns),

  // Session files live under projects/<cwd with / → ->/<id>.jsonl (subagents in <id>/).
  sessionPaths: (ctx) => [homePaths(ctx.layout.home).projects],
};

/** One stream-json input line: the prompt, then each image (`image` block) or PDF (`document` block), base64. */
export function claudeUserMessage(prompt: string, files: AttachmentFile[]): string {
  const blocks = files.map((f) => ({
    type: f.kind === "pdf" ? "document" : "image",
    source: { type: "base64", media_type: f.mediaType, data: readFileSync(f.path).toString("base64") },
  }));
  return JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "text", text: prompt }, ...blocks] }, parent_tool_use_id: null }) + "\n";
}

/**
 * stream-json → normalized events. One `result` line ends a run and carries
 * the totals (usage, cost, turns, denials), so per-message usage is not summed.
 */
export class ClaudeParser implements EventParser {
  private sessionId: string | undefined;
  private toolNames = new BoundedMap<string, string>();
  private sawResult = false;

  constructor(private readonly maxTurns?: number) {}

  push(line: string): AgentEvent[] {
    const e = parseJsonLine(line);
    if (!e) return [];
    switch (e.type) {
      case "system":
        return this.system(e);
      case "assistant":
        return this.assistant(e);
      case "user":
        return this.user(e);
      case "result":
        return this.result(e);
      default:
        return this.session(e);
    }
  }

  end(): AgentEvent[] {
    // Without a result line the exit code and stderr tell the story (see conclude() in runner.ts).
    return [];
  }

  /** Every line carries session_id; the first one seen starts the session. */
  private session(e: JsonObject, model?: string): AgentEvent[] {
    const id = str(e.session_id);
    if (!id || id === this.sessionId) return [];
    this.sessionId = id;
    return [{ type: "session", sessionId: id, ...(model ? { model } : {}) }];
  }

  private system(e: JsonObject): AgentEvent[] {
    if (e.subtype === "init") {
      if (str(e.session_id) === this.sessionId) return [];
      return this.session(e, str(e.model));
    }
    const out = this.session(e);
    if (e.subtype === "api_retry") {
      const status = num(e.error_status);
      const detail = [status ? `HTTP ${status}` : "", str(e.error) ?? ""].filter(Boolean).join(" ");
      out.push({ type: "error", message: `Model request failed (${detail || "unknown error"}); retry ${num(e.attempt) ?? "?"} of ${num(e.max_retries) ?? "?"}.` });
    }
    return out;
  }

  private assistant(e: JsonObject): AgentEvent[] {
    const out = this.session(e);
    const message = rec(e.message);
    // A synthetic message with `error` is Claude Code reporting a failed API call, not the model speaking.
    if (str(e.error) && message.model === "<synthetic>") {
      const text = contentText(message.content);
      out.push({ type: "error", message: clip(text || String(e.error)) });
      return out;
    }
    for (const block of arr(message.content).map(rec)) {
      if (block.type === "text" && str(block.text)) out.push({ type: "text", text: clip(block.text as string) });
      else if (block.type === "thinking" && str(block.thinking)) out.push({ type: "reasoning", text: clip(block.thinking as string) });
      else if (block.type === "tool_use") {
        const id = str(block.id);
        const name = str(block.name) ?? "unknown";
        if (id) this.toolNames.set(id, name);
        out.push({ type: "tool_call", ...(id ? { id } : {}), name, input: block.input ?? {} });
      }
    }
    return out;
  }

  private user(e: JsonObject): AgentEvent[] {
    const out = this.session(e);
    for (const block of arr(rec(e.message).content).map(rec)) {
      if (block.type !== "tool_result") continue;
      const id = str(block.tool_use_id);
      const name = id ? this.toolNames.get(id) : undefined;
      out.push({
        type: "tool_result",
        ...(id ? { id } : {}),
        ...(name ? { name } : {}),
        output: clip(contentText(block.content)),
        isError: block.is_error === true,
      });
    }
    return out;
  }

  private result(e: JsonObject): AgentEvent[] {
    if (this.sawResult) return [];
    this.sawResult = true;
    const out = this.session(e);
    for (const d of arr(e.permission_denials).map(rec)) {
      const input = rec(d.tool_input);
      const detail = str(input.command) ?? str(input.file_path) ?? str(input.url) ?? (Object.keys(input).length ? JSON.stringify(input) : undefined);
      out.push({ type: "permission_denied", tool: str(d.tool_name) ?? "unknown", ...(detail ? { detail: oneLine(detail, 200) } : {}) });
    }
    const usage = claudeUsage(e);
    if (usage) out.push({ type: "usage", usage, cumulative: true });
    const isError = e.is_error === true || (str(e.subtype) ?? "success") !== "success";
    const result = str(e.result);
    const text = result !== undefined ? clip(result, FINAL_TEXT_LIMIT) : undefined;
    const numTurns = num(e.num_turns);
    out.push({
      type: "result",
      ...(text !== undefined && !isError ? { text } : {}),
      isError,
      ...(isError ? { reason: this.reason(e) } : {}),
      ...(usage ? { usage } : {}),
      ...(numTurns !== undefined ? { numTurns } : {}),
      ...(e.structured_output !== undefined ? { structuredOutput: e.structured_output } : {}),
    });
    return out;
  }

  private reason(e: JsonObject): string {
    const subtype = str(e.subtype) ?? "";
    const errors = arr(e.errors).map((x) => (typeof x === "string" ? x : JSON.stringify(x)));
    if (subtype === "error_max_turns") return maxTurnsReason(this.maxTurns);
    if (subtype === "error_max_budget_usd") return "The agent stopped at its spending limit before finishing.";
    if (subtype === "error_max_structured_output_retries") return "The agent could not produce output matching 'output-schema'.";
    const message = str(e.result) ?? errors.at(-1) ?? subtype;
    return describeModelFailure(message || "Claude Code reported an error.", num(e.api_error_status));
  }
}

/** Claude's result usage (cache reads and writes counted apart from input) → ours. */
function claudeUsage(e: JsonObject): Usage | undefined {
  const u = rec(e.usage);
  if (!Object.keys(u).length) return undefined;
  const cost = num(e.total_cost_usd);
  return promptUsage({
    uncached: num(u.input_tokens),
    cacheWrite: num(u.cache_creation_input_tokens),
    cacheRead: num(u.cache_read_input_tokens),
    output: num(u.output_tokens),
    ...(cost !== undefined ? { costUsd: cost } : {}),
  });
}
