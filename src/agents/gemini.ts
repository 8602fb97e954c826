/**
 * `agent: gemini` — Gemini CLI, headless: prompt on stdin, `--output-format stream-json`.
 *
 * Everything it reads lives in ~/.gemini inside the isolated HOME:
 * settings.json (endpoint auth type, telemetry/update switches, turn limit,
 * MCP servers), GEMINI.md (the run context and standing instructions: the
 * CLI's global context file, read next to the repository's own GEMINI.md),
 * skills/, and policies/agent-runner.toml (the PermissionPolicy as Gemini
 * policy-engine rules). The CLI runs in `yolo` approval mode and the policy
 * rules, which outrank yolo's allow-all, do the refusing.
 */
import { SAFE_OUTPUTS_SERVER } from "../safe-outputs/config.js";
import { closeSync, openSync, readSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Agent } from "../config/schema.js";
import type { AgentEvent, Usage } from "../shared/events.js";
import {
  BoundedMap,
  FINAL_TEXT_LIMIT,
  askedRules,
  clip,
  commandPrefixWords,
  copySkills,
  describeModelFailure,
  dollarVariable,
  endpointEnv,
  escapeRegExp,
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
  ruleText,
  SecretVariables,
  sessionIdProblems,
  str,
  tomlArray,
  tomlString,
  unenforceableRuleProblem,
  unknownToolProblem,
  unsupportedInputProblem,
  warnAskedRules,
  writePrivateFile,
  type GenericTool,
  type HeadlessRule,
  type JsonObject,
  runMcpServers,
} from "./common.js";
import type { AgentBackend, AgentContext, EventParser, ModelEndpoint } from "./types.js";
import { DEFAULT_MODELS, MODEL_KEY_NAMES } from "../shared/agents.js";

/** Without -m the CLI first asks a flash-lite model to route the request: one extra call per prompt. */
const GEMINI_DEFAULT_MODEL = DEFAULT_MODELS.gemini.model;

/** Our tool vocabulary → Gemini CLI's tool names. */
const GEMINI_TOOLS: Record<GenericTool, string[]> = {
  bash: ["run_shell_command"],
  write: ["write_file"],
  edit: ["replace"],
  read: ["read_file", "read_many_files"],
  webfetch: ["web_fetch"],
  websearch: ["google_web_search"],
};

/** Gemini CLI 0.61 built-in tools, accepted in `permissions` as written. */
const NATIVE_TOOLS = new Set([
  "run_shell_command",
  "write_file",
  "replace",
  "read_file",
  "read_many_files",
  "list_directory",
  "glob",
  "grep_search",
  "web_fetch",
  "google_web_search",
  "write_todos",
  "save_memory",
  "activate_skill",
  "invoke_agent",
  "update_topic",
  "enter_plan_mode",
  "exit_plan_mode",
  "ask_user",
  "list_background_processes",
  "read_background_output",
  "codebase_investigator",
  "list_mcp_resources",
  "read_mcp_resource",
]);

/** Tools whose calls carry a `file_path` a path pattern can be matched against. */
const FILE_PATH_TOOLS = new Set(["write_file", "replace", "read_file"]);

/** One `[[rule]]` of a Gemini policy file (see the CLI's docs/reference/policy-engine.md). */
export interface GeminiPolicyRule {
  toolName?: string | string[];
  mcpName?: string;
  commandPrefix?: string;
  commandRegex?: string;
  argsPattern?: string;
  decision: "allow" | "deny";
  priority: number;
  denyMessage?: string;
}

/**
 * Priorities inside the user tier (final priority 4.xxx, above yolo's
 * allow-all at 1.998): a more specific rule wins, and at the same
 * specificity a deny wins.
 */
const PRIORITY = { default: 100, toolAllow: 200, toolDeny: 300, patternAllow: 400, patternDeny: 500 } as const;

export interface GeminiPermissions {
  rules: GeminiPolicyRule[];
  /** Rules written as `ask`: refused, since nobody can answer in a headless run. */
  asked: string[];
  problems: string[];
}

/**
 * PermissionPolicy → Gemini policy-engine rules. Shell patterns become
 * `commandPrefix` (`rm *`, `git push:*`) or a `commandRegex`; file-tool
 * patterns an `argsPattern` on `file_path` (relative patterns match both the
 * relative and the absolute path under the workspace); MCP rules use
 * `mcpName`. A whole-tool deny also takes the tool out of the model's list.
 */
export function geminiPermissions(agent: Agent, workspace: string): GeminiPermissions {
  const policy = headlessPolicy(agent.permission);
  const problems: string[] = [];
  const rules: GeminiPolicyRule[] = [];
  if (policy.default === "deny") rules.push({ toolName: "*", decision: "deny", priority: PRIORITY.default, denyMessage: "Refused by the workflow's permissions (default: deny)." });

  for (const rule of policy.rules) {
    const denyMessage = `Refused by the workflow's permissions (${ruleText(rule)}).`;
    const base = { decision: rule.action, ...(rule.action === "deny" ? { denyMessage } : {}) };
    const mcp = parseMcpToolName(rule.tool);
    if (mcp) {
      if (mcp.server.includes("_"))
        problems.push(`Input 'permissions': '${ruleText(rule)}': Gemini CLI cannot match rules for an MCP server whose name has '_'; rename the server (e.g. '${mcp.server.replace(/_/g, "-")}').`);
      else if (rule.pattern !== undefined) problems.push(unenforceableRuleProblem("gemini", rule, "MCP tools take no patterns"));
      else rules.push({ mcpName: mcp.server, ...(mcp.tool ? { toolName: mcp.tool } : {}), ...base, priority: wholePriority(rule) });
      continue;
    }
    const tools = geminiToolNames(rule.tool);
    if (!tools) {
      problems.push(unknownToolProblem("gemini", rule, "a Gemini CLI tool name such as run_shell_command"));
      continue;
    }
    if (rule.pattern === undefined) {
      rules.push({ toolName: tools.length === 1 ? tools[0]! : tools, ...base, priority: wholePriority(rule) });
      continue;
    }
    const priority = rule.action === "deny" ? PRIORITY.patternDeny : PRIORITY.patternAllow;
    const shell = tools.includes("run_shell_command");
    const files = tools.filter((t) => FILE_PATH_TOOLS.has(t));
    if (!shell && !files.length) {
      problems.push(unenforceableRuleProblem("gemini", rule, "only shell commands and file tools (write, edit, read) take patterns"));
      continue;
    }
    if (shell) {
      const words = commandPrefixWords(rule.pattern);
      rules.push({ toolName: "run_shell_command", ...(words ? { commandPrefix: words.join(" ") } : { commandRegex: commandRegex(rule.pattern) }), ...base, priority });
    }
    if (files.length)
      for (const pattern of filePathPatterns(rule.pattern, workspace)) rules.push({ toolName: files.length === 1 ? files[0]! : files, argsPattern: pattern, ...base, priority });
    // read_many_files takes lists of globs a path pattern cannot follow: a denied path closes it entirely.
    if (files.includes("read_file") && rule.action === "deny")
      rules.push({ toolName: "read_many_files", decision: "deny", denyMessage, priority: PRIORITY.toolDeny });
  }
  return { rules, asked: askedRules(policy), problems };
}

function wholePriority(rule: HeadlessRule): number {
  return rule.action === "deny" ? PRIORITY.toolDeny : PRIORITY.toolAllow;
}

function geminiToolNames(tool: string): string[] | undefined {
  if (isGenericTool(tool)) return GEMINI_TOOLS[tool];
  return NATIVE_TOOLS.has(tool) ? [tool] : undefined;
}

/**
 * Gemini tests a regex against the call's arguments as stable JSON, each
 * top-level `"key":value` pair wrapped in NUL characters. A literal is
 * matched in its JSON-escaped form; `[^\x00]` keeps a wildcard inside the
 * one value (no capture groups: the engine rejects quantified groups).
 */
function globToArgsRegex(glob: string, star: string, one: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      out += "[^\\x00]*";
      i++;
    } else if (c === "*") out += star;
    else if (c === "?") out += one;
    else out += escapeRegExp(JSON.stringify(c).slice(1, -1));
  }
  return out;
}

/** A whole-command glob: the CLI prefixes `"command":"`; the closing quote and NUL anchor the end. */
function commandRegex(pattern: string): string {
  return `${globToArgsRegex(pattern.trim(), "[^\\x00]*", "[^\\x00]")}"\\x00`;
}

/** `file_path` patterns: a relative glob matches the path as given and under the workspace. */
function filePathPatterns(pattern: string, workspace: string): string[] {
  const re = (glob: string) => `\\x00"file_path":"${globToArgsRegex(glob, "[^/\\x00]*", "[^/\\x00]")}"\\x00`;
  if (path.isAbsolute(pattern)) return [re(pattern)];
  const rel = pattern.replace(/^\.\//, "");
  return [re(rel), re(`${workspace.replace(/\/+$/, "")}/${rel}`)];
}

export function policyToml(rules: GeminiPolicyRule[]): string {
  const value = (v: string | string[] | number) => (typeof v === "number" ? String(v) : Array.isArray(v) ? tomlArray(v) : tomlString(v));
  const blocks = rules.map((r) => ["[[rule]]", ...Object.entries(r).map(([k, v]) => `${k} = ${value(v as string | string[] | number)}`)].join("\n"));
  return ["# Written by Agent Runner for this run from the 'permissions' input; edits are lost.", ...blocks].join("\n\n") + "\n";
}

// ------------------------------------------------------------------ settings

/** Where the run's Gemini CLI files live in the isolated HOME. */
function homePaths(home: string) {
  const dir = path.join(home, ".gemini");
  return {
    settings: path.join(dir, "settings.json"),
    // The CLI's global context file: loaded with the repository's own GEMINI.md, not instead of it.
    context: path.join(dir, "GEMINI.md"),
    policy: path.join(dir, "policies", "agent-runner.toml"),
    skills: path.join(dir, "skills"),
    tmp: path.join(dir, "tmp"),
    projects: path.join(dir, "projects.json"),
  };
}

/**
 * ~/.gemini/settings.json. The CLI expands `$VAR` / `${VAR}` in every string
 * of it, so a secret in an MCP server's settings is written as a reference to
 * an environment variable of the CLI process (collected in `hidden`).
 */
function geminiSettings(ctx: AgentContext, hidden: SecretVariables): JsonObject {
  const { agent } = ctx;
  const ref = (v: string) => hidden.configValue(v, dollarVariable);
  const mcpServers: Record<string, JsonObject> = {};
  for (const s of mcpEntries(runMcpServers(ctx)))
    mcpServers[s.name] =
      s.kind === "stdio"
        ? // Ours is trusted: a headless run cannot confirm each call (its tools write nothing but the requests file).
          { command: ref(s.command), args: s.args.map(ref), env: mapValues(s.env, ref), ...(s.name === SAFE_OUTPUTS_SERVER ? { trust: true, timeout: 30_000 } : {}) }
        : // Streamable HTTP (`url` would mean the older SSE transport).
          { httpUrl: ref(s.url), headers: mapValues(s.headers, ref) };
  return {
    // A custom base URL works only with API-key auth selected (Vertex: its express form, with the
    // placeholder as the key); anything else exits 41.
    security: { auth: { selectedType: ctx.endpoint?.provider === "vertex" ? "vertex-ai" : "gemini-api-key" }, folderTrust: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false, logPrompts: false },
    general: {
      enableAutoUpdate: false,
      enableAutoUpdateNotification: false,
      // A carried-over session older than the retention age would be deleted at start.
      sessionRetention: { enabled: false },
    },
    ...(agent.maxTurns ? { model: { maxSessionTurns: agent.maxTurns } } : {}),
    // The file tools refuse paths outside the workspace; reports go to the outputs folder.
    context: { includeDirectories: [ctx.layout.outputsDir, ...(ctx.attachments ? [ctx.attachments.dir] : [])] },
    // The CLI's own container sandbox: Agent Runner's sandbox is the boundary.
    tools: { sandbox: false },
    ide: { enabled: false },
    mcpServers,
  };
}

/**
 * The chat file of session `id` (or the newest one) under ~/.gemini/tmp/<project>/chats,
 * for a fork: `--session-file` imports it as a new session. The id is in the
 * file's first line (its metadata); the file name carries only its first 8 characters.
 */
export function findSessionFile(home: string, id: string | undefined): string | undefined {
  const { tmp } = homePaths(home);
  let best: { file: string; size: number; mtime: number } | undefined;
  for (const project of safeReaddir(tmp)) {
    const chats = path.join(tmp, project, "chats");
    for (const name of safeReaddir(chats)) {
      if (!/^session-.*\.jsonl?$/.test(name) || (id && !name.includes(id.slice(0, 8)))) continue;
      const file = path.join(chats, name);
      if (id && parseJsonLine(firstLine(file))?.sessionId !== id) continue;
      // A resume that crosses a minute opens a second, near-empty file for the same id while the
      // conversation goes on in the first: for one id the fullest file is the session; else the newest.
      const size = id ? safeSize(file) : 0;
      const mtime = safeMtime(file);
      if (!best || size > best.size || (size === best.size && mtime > best.mtime)) best = { file, size, mtime };
    }
  }
  return best?.file;
}

/** The first line of a file without reading all of it (chat files grow with the session). */
function firstLine(file: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString("utf8").split("\n", 1)[0] ?? "";
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function safeSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function safeMtime(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Where Gemini CLI sends model requests. On Vertex: GOOGLE_GENAI_USE_VERTEXAI
 * with an API key makes it call Vertex's express paths
 * (`/v1beta1/publishers/google/models/<m>:streamGenerateContent`) at
 * GOOGLE_VERTEX_BASE_URL, with no Google credentials of its own; the key is
 * the placeholder, the project and region are put in by the gateway.
 */
export function geminiEndpointEnv(endpoint: ModelEndpoint | undefined): Record<string, string> {
  if (endpoint?.provider === "vertex") return { GOOGLE_GENAI_USE_VERTEXAI: "true", GOOGLE_VERTEX_BASE_URL: endpoint.baseUrl, GOOGLE_API_KEY: endpoint.apiKey };
  return endpointEnv(endpoint, { baseUrl: "GOOGLE_GEMINI_BASE_URL", apiKey: "GEMINI_API_KEY" });
}

export const geminiAgent: AgentBackend = {
  name: "gemini",
  npmPackage: { name: "@google/gemini-cli", bin: "gemini", defaultVersion: "0.61.0" },
  provider: "gemini",
  // Gemini CLI 0.61: GOOGLE_GENAI_USE_VERTEXAI switches it to Vertex AI's paths.
  providers: { gemini: "gemini", vertex: "gemini" },
  keyNames: [...MODEL_KEY_NAMES.gemini],

  unsupported(agent, run) {
    // The workspace path only shapes the rules, not which of them can be honoured.
    const problems = [...geminiPermissions(agent, "/workspace").problems, ...sessionIdProblems(run)];
    if (run.outputSchema) problems.push(unsupportedInputProblem("output-schema", "gemini", "Gemini CLI has no structured-output option"));
    return problems;
  },

  async materialise(ctx) {
    const { agent } = ctx;
    const paths = homePaths(ctx.layout.home);
    const hidden = new SecretVariables(ctx.run.secrets);
    await writePrivateFile(paths.settings, JSON.stringify(geminiSettings(ctx, hidden), null, 2) + "\n");
    await writePrivateFile(paths.context, instructionsText(ctx));
    const perms = geminiPermissions(agent, ctx.layout.workspace);
    if (perms.rules.length) await writePrivateFile(paths.policy, policyToml(perms.rules));
    warnAskedRules(ctx, perms.asked);
    if (agent.skills.length) await copySkills(agent.skills, paths.skills);
    return {
      env: {
        ...hidden.env,
        ...geminiEndpointEnv(ctx.endpoint),
        // Else yolo is forced back to "default" in an untrusted folder.
        GEMINI_CLI_TRUST_WORKSPACE: "true",
        // No second node process (the CLI relaunches itself to raise its heap limit).
        GEMINI_CLI_NO_RELAUNCH: "true",
        GEMINI_SANDBOX: "false",
        GEMINI_TELEMETRY_ENABLED: "false",
      },
    };
  },

  command(ctx, installed) {
    const { agent, run } = ctx;
    const resume: string[] = [];
    if (run.forkSession && (run.resumeSessionId || run.continueLast)) {
      // No fork flag: importing the session's chat file starts a new session with its history.
      const file = findSessionFile(ctx.layout.home, run.resumeSessionId);
      if (!file) ctx.log.warning(`gemini: no saved chat for ${run.resumeSessionId ? `session ${run.resumeSessionId}` : "the last session"} to fork from.`);
      resume.push("--session-file", file ?? path.join(homePaths(ctx.layout.home).tmp, `missing-session-${run.resumeSessionId ?? "latest"}.jsonl`));
    } else if (run.resumeSessionId) resume.push("--resume", run.resumeSessionId);
    else if (run.continueLast) resume.push("--resume", "latest");
    const args = [
      "--output-format",
      "stream-json",
      "--approval-mode",
      "yolo",
      "--model",
      agent.model ?? GEMINI_DEFAULT_MODEL,
      ...resume,
      ...run.extraArgs,
    ];
    // Attached images and PDFs as `@path` references, which the CLI expands into inline data (the folder is an include directory).
    const native = ctx.attachments?.files.filter((f) => f.kind !== "text") ?? [];
    const refs = native.length ? `\n\nAttached: ${native.map((f) => `@${f.path.replace(/ /g, "\\ ")}`).join(" ")}\n` : "";
    // The prompt goes on stdin (the CLI is headless when stdin is not a TTY): no argv limit, not in `ps`.
    return { file: installed.binPath, args, stdin: run.prompt + refs };
  },

  createParser: (ctx) => new GeminiParser(ctx.agent.maxTurns),

  // Chats: tmp/<project>/chats/session-<date>-<id8>.jsonl; projects.json maps the cwd to <project>.
  sessionPaths: (ctx) => {
    const { tmp, projects } = homePaths(ctx.layout.home);
    return [tmp, projects];
  },

  describeExit: describeGeminiExit,
};

/** Gemini CLI's fatal exit codes (packages/core/src/utils/errors.ts), for exits the JSON stream does not explain. */
const EXIT_CODES: Record<number, string> = {
  41: "Gemini CLI could not authenticate (exit 41)",
  42: "Gemini CLI refused its input (exit 42)",
  44: "Gemini CLI could not start its sandbox (exit 44)",
  52: "Gemini CLI found its configuration invalid (exit 52)",
  53: "The agent stopped at the 'max-turns' limit before finishing (exit 53)",
  54: "A tool failed fatally (exit 54)",
  55: "Gemini CLI does not trust the workspace (exit 55)",
};

/** The code's meaning plus the CLI's own message: the first error-looking stderr line, else the last line. */
export function describeGeminiExit(exitCode: number, stderrTail: string): string | undefined {
  const what = EXIT_CODES[exitCode];
  if (!what) return undefined;
  const lines = stderrTail
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^(Warning: 256-color|YOLO mode is enabled|\[STARTUP\])/.test(l));
  const detail = lines.find((l) => /error|invalid|not found|denied|refused|unauthori[sz]ed/i.test(l)) ?? lines.at(-1);
  return detail ? `${what}: ${oneLine(detail)}` : `${what}.`;
}

// ------------------------------------------------------------------ parser

/**
 * stream-json → normalized events. Assistant text arrives as deltas: they are
 * joined into one text event per message (flushed at the next tool call or
 * at the end). The `result` line carries the run's token totals.
 */
export class GeminiParser implements EventParser {
  private pending = "";
  /** Assistant text since the last tool call: the final message. */
  private answer = "";
  private tools = new BoundedMap<string, { name: string; detail?: string }>();
  private turns = 0;
  private inTurn = false;
  private sawResult = false;

  constructor(private readonly maxTurns?: number) {}

  push(line: string): AgentEvent[] {
    const e = parseJsonLine(line);
    if (!e) return [];
    switch (e.type) {
      case "init": {
        const id = str(e.session_id);
        const model = str(e.model);
        return id ? [{ type: "session", sessionId: id, ...(model ? { model } : {}) }] : [];
      }
      case "message":
        if (e.role === "assistant" && typeof e.content === "string") {
          this.turn();
          if (this.pending.length < FINAL_TEXT_LIMIT) this.pending += e.content;
        }
        return [];
      case "tool_use":
        return [...this.flush(), this.toolUse(e)];
      case "tool_result":
        return [...this.flush(), ...this.toolResult(e)];
      case "error": {
        const message = str(e.message) ?? "Gemini CLI reported an error.";
        return [...this.flush(), { type: "error", message: clip(e.severity === "warning" ? `Warning: ${message}` : message) }];
      }
      case "result":
        return [...this.flush(), ...this.result(e)];
      default:
        return [];
    }
  }

  end(): AgentEvent[] {
    // Without a result line the exit code and stderr tell the story (exit 41 auth, 42 input, 53 turns).
    return this.flush();
  }

  /** A model turn starts at its first output after the previous turn's tool results. */
  private turn(): void {
    if (this.inTurn) return;
    this.inTurn = true;
    this.turns++;
  }

  private flush(): AgentEvent[] {
    if (!this.pending) return [];
    const text = this.pending;
    this.pending = "";
    this.answer = (this.answer + text).slice(0, FINAL_TEXT_LIMIT);
    return [{ type: "text", text: clip(text) }];
  }

  private toolUse(e: JsonObject): AgentEvent {
    this.turn();
    this.answer = "";
    const id = str(e.tool_id);
    const name = str(e.tool_name) ?? "unknown";
    const input = rec(e.parameters);
    const detail = str(input.command) ?? str(input.file_path) ?? str(input.url);
    if (id) this.tools.set(id, { name, ...(detail ? { detail: oneLine(detail, 200) } : {}) });
    return { type: "tool_call", ...(id ? { id } : {}), name, input };
  }

  private toolResult(e: JsonObject): AgentEvent[] {
    this.inTurn = false;
    const id = str(e.tool_id);
    const tool = id ? this.tools.get(id) : undefined;
    const error = rec(e.error);
    const isError = e.status === "error";
    const out: AgentEvent[] = [
      {
        type: "tool_result",
        ...(id ? { id } : {}),
        ...(tool ? { name: tool.name } : {}),
        output: clip(str(e.output) ?? str(error.message) ?? ""),
        isError,
      },
    ];
    if (isError && error.type === "policy_violation")
      out.push({ type: "permission_denied", tool: tool?.name ?? "unknown", ...(tool?.detail ? { detail: tool.detail } : {}) });
    return out;
  }

  private result(e: JsonObject): AgentEvent[] {
    if (this.sawResult) return [];
    this.sawResult = true;
    const usage = geminiUsage(rec(e.stats));
    const isError = e.status !== "success";
    const text = this.answer.trim();
    return [
      ...(usage ? [{ type: "usage" as const, usage, cumulative: true }] : []),
      {
        type: "result",
        ...(!isError && text ? { text } : {}),
        isError,
        ...(isError ? { reason: this.reason(rec(e.error)) } : {}),
        ...(usage ? { usage } : {}),
        numTurns: this.turns,
      },
    ];
  }

  private reason(error: JsonObject): string {
    const message = str(error.message) ?? "Gemini CLI reported an error.";
    if (/max session turns/i.test(message) || /TurnLimit/i.test(str(error.type) ?? "")) return maxTurnsReason(this.maxTurns);
    const api = /^\[API Error: ([\s\S]*)\]/.exec(message);
    if (api) {
      const inner = parseJsonLine(api[1]!);
      const err = rec(inner?.error);
      const code = num(err.code);
      if (inner && code !== undefined)
        return describeModelFailure(`Model API error ${code}${str(err.status) ? ` ${str(err.status)}` : ""}: ${str(err.message) ?? ""}`, code);
      return describeModelFailure(`Model API error: ${api[1]!}`);
    }
    return describeModelFailure(message);
  }
}

/** `result.stats`: input_tokens includes the cached ones; `input` is the uncached part. */
function geminiUsage(stats: JsonObject): Usage | undefined {
  const total = num(stats.input_tokens);
  const output = num(stats.output_tokens);
  if (total === undefined && output === undefined) return undefined;
  const cached = num(stats.cached) ?? 0;
  return promptUsage({ uncached: num(stats.input) ?? Math.max(0, (total ?? 0) - cached), cacheRead: cached, output });
}
