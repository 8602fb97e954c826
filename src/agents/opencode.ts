/**
 * `agent: opencode` — OpenCode, headless: `opencode run --format json`, prompt on stdin.
 *
 * Everything it reads lives under the isolated HOME, found through XDG_*
 * variables: ~/.config/opencode/opencode.json (one provider pointing at the
 * model endpoint through @ai-sdk/openai-compatible, the key taken from an
 * environment variable by `{env:…}`; permissions; MCP servers; instructions
 * file; turn limit), ~/.config/opencode/skills/, and the session database
 * under ~/.local/share/opencode. OpenCode's own updates, model catalogue
 * fetches, sharing, background plugin install and workspace snapshots are
 * switched off.
 */
import { SAFE_OUTPUTS_SERVER } from "../safe-outputs/config.js";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Agent } from "../config/schema.js";
import { addUsage, type AgentEvent, type Usage } from "../shared/events.js";
import {
  FINAL_TEXT_LIMIT,
  askedRules,
  clip,
  copySkills,
  describeModelFailure,
  endpointEnv,
  headlessPolicy,
  instructionsText,
  isGenericTool,
  mapValues,
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
  unenforceableRuleProblem,
  unknownToolProblem,
  unsupportedInputProblem,
  warnAskedRules,
  writePrivateFile,
  type GenericTool,
  type HeadlessAction,
  type JsonObject,
  type McpEntry,
  runMcpServers,
  safeOutputTools,
} from "./common.js";
import type { AgentBackend, AgentContext, EventParser } from "./types.js";
import { DEFAULT_MODELS, MODEL_KEY_NAMES } from "../shared/agents.js";

/** The provider id in opencode.json; the model is `agent-runner/<model>`. */
const OPENCODE_PROVIDER_ID = "agent-runner";
/** Used when the workflow names no model: a Chat Completions model with tool calling. */
const OPENCODE_DEFAULT_MODEL = DEFAULT_MODELS.opencode.model;
/** opencode.json reads the key from this variable (`{env:…}`): never written to a file. */
const KEY_ENV = "AGENT_RUNNER_MODEL_API_KEY";

/** Our tool vocabulary → OpenCode permission names (`edit` covers write, edit and patch). */
const OPENCODE_PERMISSION: Record<GenericTool, string> = {
  bash: "bash",
  write: "edit",
  edit: "edit",
  read: "read",
  webfetch: "webfetch",
  websearch: "websearch",
};

/** OpenCode 1.18 permission names, accepted in `permissions` as written. */
const NATIVE_PERMISSIONS = new Set([
  "read",
  "edit",
  "glob",
  "grep",
  "list",
  "bash",
  "task",
  "external_directory",
  "todowrite",
  "todoread",
  "webfetch",
  "websearch",
  "codesearch",
  "lsp",
  "skill",
  "doom_loop",
]);

type PermissionValue = HeadlessAction | Record<string, HeadlessAction>;

export interface OpencodePermissions {
  /** The `permission` object of opencode.json, in evaluation order (the last matching rule wins). */
  permission: Record<string, PermissionValue>;
  /** Rules written as `ask`: refused, since nobody can answer in a headless run. */
  asked: string[];
  problems: string[];
}

/**
 * PermissionPolicy → OpenCode's `permission` config. OpenCode evaluates the
 * rules in order and the last match wins, so they are written general to
 * specific: the default (`*`), whole tools, then patterns, and allow before
 * deny at each level. `ask` is written as `deny`: `opencode run` rejects
 * every question anyway (without --auto). The outputs folder is always
 * reachable, since the run context tells the agent to write reports there.
 */
export function opencodePermissions(agent: Agent, outputsDir: string): OpencodePermissions {
  const policy = headlessPolicy(agent.permission);
  const problems: string[] = [];
  const whole = new Map<string, HeadlessAction>();
  const wholeFrom = new Map<string, Map<string, HeadlessAction>>();
  const patterns = new Map<string, { pattern: string; action: HeadlessAction }[]>();
  const mcpServers: string[] = [];
  const mcpTools: string[] = [];

  for (const rule of policy.rules) {
    const mcp = parseMcpToolName(rule.tool);
    let key: string;
    if (mcp) {
      if (rule.pattern !== undefined) {
        problems.push(unenforceableRuleProblem("opencode", rule, "MCP tools take no patterns"));
        continue;
      }
      // OpenCode names MCP tools <server>_<tool>.
      key = mcp.tool ? `${mcp.server}_${mcp.tool}` : `${mcp.server}_*`;
      (mcp.tool ? mcpTools : mcpServers).push(key);
    } else if (isGenericTool(rule.tool)) key = OPENCODE_PERMISSION[rule.tool];
    else if (NATIVE_PERMISSIONS.has(rule.tool)) key = rule.tool;
    else {
      problems.push(unknownToolProblem("opencode", rule, "an OpenCode permission such as glob"));
      continue;
    }
    if (rule.pattern === undefined) {
      // A deny wins over an allow for the same permission.
      if (whole.get(key) !== "deny") whole.set(key, rule.action);
      const from = wholeFrom.get(key) ?? new Map<string, HeadlessAction>();
      from.set(rule.tool, rule.action);
      wholeFrom.set(key, from);
    } else {
      // Claude's `git push:*` is OpenCode's `git push *`.
      const pattern = key === "bash" ? rule.pattern.trim().replace(/:\*$/, " *") : rule.pattern.trim();
      patterns.set(key, [...(patterns.get(key) ?? []), { pattern, action: rule.action }]);
    }
  }
  const edit = wholeFrom.get("edit");
  if (edit && new Set(edit.values()).size > 1)
    problems.push(
      `Input 'permissions': agent 'opencode' cannot tell ${[...edit.keys()].join(" from ")}: one 'edit' permission covers writing, editing and patching files (it is set to deny).`,
    );

  const permission: Record<string, PermissionValue> = { "*": policy.default };
  if (policy.default === "deny") permission.external_directory = { [`${outputsDir}/*`]: "allow" };
  // The safe-output tools the workflow enabled are allowed by that choice; a rule naming them still decides.
  if (safeOutputTools(agent).length && !(`${SAFE_OUTPUTS_SERVER}_*` in permission)) permission[`${SAFE_OUTPUTS_SERVER}_*`] = "allow";
  const ordered = (keys: string[]) => [...new Set(keys)];
  const toolKeys = [...whole.keys(), ...patterns.keys()].filter((k) => !mcpServers.includes(k) && !mcpTools.includes(k));
  for (const key of ordered([...toolKeys, ...mcpServers, ...mcpTools])) {
    const list = patterns.get(key) ?? [];
    const existing = permission[key];
    const base: Record<string, HeadlessAction> = typeof existing === "object" ? { ...existing } : {};
    const action = whole.get(key);
    if (!list.length && !Object.keys(base).length) {
      permission[key] = action!;
      continue;
    }
    const entries: Record<string, HeadlessAction> = action ? { "*": action, ...base } : base;
    for (const p of list.filter((x) => x.action === "allow")) entries[p.pattern] = "allow";
    for (const p of list.filter((x) => x.action === "deny")) {
      delete entries[p.pattern];
      entries[p.pattern] = "deny";
    }
    permission[key] = entries;
  }
  return { permission, asked: askedRules(policy), problems };
}

// ------------------------------------------------------------------ opencode.json

/** Where the run's OpenCode files live in the isolated HOME (found through the XDG_* folders). */
function homePaths(home: string) {
  const config = path.join(home, ".config");
  const data = path.join(home, ".local", "share");
  return {
    config,
    data,
    cache: path.join(home, ".cache"),
    state: path.join(home, ".local", "state"),
    opencodeConfig: path.join(config, "opencode"),
    configFile: path.join(config, "opencode", "opencode.json"),
    skills: path.join(config, "opencode", "skills"),
    opencodeData: path.join(data, "opencode"),
    instructions: path.join(runnerFilesDir(home), "opencode-instructions.md"),
  };
}

/**
 * OpenCode substitutes `{env:NAME}` into the config text as is, before
 * parsing it as JSON: a value that needs JSON escaping would break the file,
 * so only values that do not can be referenced that way.
 */
function jsonSafe(value: string): boolean {
  return JSON.stringify(value) === `"${value}"`;
}

/** A secret in these places cannot be referenced through the environment. */
function secretProblem(s: McpEntry, hidden: SecretVariables): string | undefined {
  const values = s.kind === "stdio" ? [s.command, ...s.args, ...Object.values(s.env)] : [s.url, ...Object.values(s.headers)];
  return values.some((v) => hidden.holdsSecret(v) && !jsonSafe(v))
    ? `Input 'mcp-servers': server '${s.name}' has a secret with quotes, backslashes or control characters, which agent 'opencode' cannot take from the environment.`
    : undefined;
}

/**
 * With images or PDFs attached, the model is declared to take them: otherwise
 * OpenCode replaces each with "this model does not support image input".
 */
function attachmentModalities(ctx: AgentContext): JsonObject {
  if (!ctx.attachments?.files.some((f) => f.kind !== "text")) return {};
  return { attachment: true, modalities: { input: ["text", "image", "pdf"], output: ["text"] } };
}

function opencodeConfig(ctx: AgentContext, perms: OpencodePermissions, hidden: SecretVariables): JsonObject {
  const { agent } = ctx;
  const paths = homePaths(ctx.layout.home);
  const model = agent.model ?? OPENCODE_DEFAULT_MODEL;
  const ref = (v: string) => (jsonSafe(v) ? hidden.configValue(v, (variable) => `{env:${variable}}`) : v);
  const mcp: Record<string, JsonObject> = {};
  for (const s of mcpEntries(runMcpServers(ctx))) {
    if (secretProblem(s, hidden)) {
      ctx.log.warning(`opencode: MCP server '${s.name}' left out: a secret in it cannot be kept out of opencode.json.`);
      continue;
    }
    mcp[s.name] =
      s.kind === "stdio"
        ? {
            type: "local",
            command: [s.command, ...s.args].map(ref),
            environment: mapValues(s.env, ref),
            enabled: true,
            // OpenCode drops a server's tools silently when tools/list is slower than its 5 s default.
            ...(s.name === SAFE_OUTPUTS_SERVER ? { timeout: 30_000 } : {}),
          }
        : { type: "remote", url: ref(s.url), headers: mapValues(s.headers, ref), enabled: true };
  }
  return {
    model: `${OPENCODE_PROVIDER_ID}/${model}`,
    // Title and summary requests go to the same endpoint.
    small_model: `${OPENCODE_PROVIDER_ID}/${model}`,
    enabled_providers: [OPENCODE_PROVIDER_ID],
    autoupdate: false,
    share: "disabled",
    // No per-step git snapshots of the workspace (OpenCode's undo): a headless run never reverts, and each
    // step's snapshot re-adds every workspace file into a second git object store under HOME, which the
    // saved session state would then carry. The runner's own host-git snapshots make the patch.
    snapshot: false,
    instructions: [paths.instructions],
    permission: perms.permission,
    ...(Object.keys(mcp).length ? { mcp } : {}),
    // `steps` caps the agentic iterations; at the cap OpenCode asks for a final text answer.
    ...(agent.maxTurns ? { agent: { build: { steps: agent.maxTurns }, plan: { steps: agent.maxTurns } } } : {}),
    provider: {
      [OPENCODE_PROVIDER_ID]: {
        npm: "@ai-sdk/openai-compatible",
        name: "Agent Runner model endpoint",
        options: { baseURL: ctx.endpoint?.baseUrl ?? "https://api.openai.com/v1", apiKey: `{env:${KEY_ENV}}` },
        models: { [model]: { name: model, tool_call: true, limit: { context: 128_000, output: 16_384 }, ...attachmentModalities(ctx) } },
      },
    },
  };
}

/**
 * A repository's own opencode.json outranks the global one. These settings
 * must be the workflow's (the model must go to the gateway, the workflow's
 * permissions and MCP servers win on a clash), so they also go in
 * OPENCODE_CONFIG_CONTENT, which outranks every file. Instructions stay
 * file-only: OpenCode concatenates them with the repository's.
 */
const WORKFLOW_WINS = ["model", "small_model", "enabled_providers", "provider", "permission", "share", "autoupdate", "snapshot", "mcp"];

export const opencodeAgent: AgentBackend = {
  name: "opencode",
  npmPackage: { name: "opencode-ai", bin: "opencode", defaultVersion: "1.18.33" },
  provider: "openai",
  // OpenCode's openai-compatible provider points at the gateway (Chat Completions); each cloud's
  // OpenAI-compatible endpoint is behind it (Bedrock …/openai/v1, Azure OpenAI v1, Vertex AI's openapi endpoint).
  providers: { openai: "openai", bedrock: "openai", azure: "openai", vertex: "openai" },
  keyNames: [...MODEL_KEY_NAMES.opencode],

  unsupported(agent, run) {
    // The outputs folder only shapes the rules, not which of them can be honoured.
    const problems = [...opencodePermissions(agent, "/outputs").problems, ...sessionIdProblems(run)];
    if (run.outputSchema) problems.push(unsupportedInputProblem("output-schema", "opencode", "`opencode run` has no structured-output option"));
    const hidden = new SecretVariables(run.secrets);
    for (const s of mcpEntries(agent.mcpServers)) {
      const p = secretProblem(s, hidden);
      if (p) problems.push(p);
    }
    for (const s of agent.skills)
      if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(s.name))
        problems.push(`Input 'skills': OpenCode loads a skill only from a folder named in lower case letters, digits and single hyphens, matching its SKILL.md name; '${s.name}' is not.`);
    return problems;
  },

  async materialise(ctx) {
    const { agent } = ctx;
    const paths = homePaths(ctx.layout.home);
    const hidden = new SecretVariables(ctx.run.secrets);
    const perms = opencodePermissions(agent, ctx.layout.outputsDir);
    warnAskedRules(ctx, perms.asked);
    if (agent.maxTurns)
      ctx.log.info(`opencode: max-turns ${agent.maxTurns} is OpenCode's agent 'steps': at the limit the model is told to stop calling tools and answer.`);
    await writePrivateFile(paths.instructions, instructionsText(ctx));
    const config = opencodeConfig(ctx, perms, hidden);
    await writePrivateFile(paths.configFile, JSON.stringify(config, null, 2) + "\n");
    // OpenCode starts `npm install @opencode-ai/plugin` in every config folder in the background
    // (to registry.npmjs.org), unless node_modules/ exists and the lock file already lists it.
    await mkdir(path.join(paths.opencodeConfig, "node_modules"), { recursive: true });
    await writePrivateFile(
      path.join(paths.opencodeConfig, "package-lock.json"),
      JSON.stringify({ name: "opencode-config", lockfileVersion: 3, requires: true, packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } } }, null, 2) + "\n",
    );
    if (agent.skills.length) await copySkills(agent.skills, paths.skills);
    return {
      env: {
        ...hidden.env,
        OPENCODE_CONFIG_CONTENT: JSON.stringify(Object.fromEntries(Object.entries(config).filter(([k]) => WORKFLOW_WINS.includes(k)))),
        XDG_CONFIG_HOME: paths.config,
        XDG_DATA_HOME: paths.data,
        XDG_CACHE_HOME: paths.cache,
        XDG_STATE_HOME: paths.state,
        // The base URL is in opencode.json (the provider's baseURL); only the key travels in the environment.
        ...endpointEnv(ctx.endpoint, { apiKey: KEY_ENV }),
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
        OPENCODE_DISABLE_SHARE: "1",
        // A one-shot run needs no watch on the workspace; starting it costs close to a second.
        OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER: "1",
      },
    };
  },

  command(ctx, installed) {
    const { run } = ctx;
    const resume = run.resumeSessionId ? ["--session", run.resumeSessionId] : run.continueLast ? ["--continue"] : [];
    const args = [
      "run",
      "--format",
      "json",
      // No external plugins: they would be installed from npm at start.
      "--pure",
      // A fixed title: otherwise a title-generation request goes to the model first.
      "--title",
      "Agent Runner",
      // Reasoning parts in the JSON stream, so the trace shows them as it does for the other CLIs.
      "--thinking",
      ...resume,
      ...(resume.length && run.forkSession ? ["--fork"] : []),
      // Attached images and PDFs as file parts of the message; `--file=FILE` each, so the array option swallows nothing.
      ...(ctx.attachments?.files.filter((f) => f.kind !== "text").map((f) => `--file=${f.path}`) ?? []),
      ...run.extraArgs,
    ];
    // The prompt goes on stdin: `opencode run` wraps argv words holding a space in quotes, and
    // stdin has no length limit and is not visible in `ps`.
    return { file: installed.binPath, args, stdin: run.prompt };
  },

  createParser: () => new OpencodeParser(),

  // SQLite database (with its WAL); `snapshot` holds the workspace snapshots of a session saved before they were switched off.
  sessionPaths: (ctx) => {
    const data = homePaths(ctx.layout.home).opencodeData;
    return ["opencode.db", "opencode.db-wal", "opencode.db-shm", "snapshot", "storage"].map((p) => path.join(data, p));
  },

  describeExit: describeOpencodeExit,
};

/**
 * OpenCode exits 1 for everything; what went wrong before the JSON stream
 * started (an unknown session, a broken config) is an `Error:` line on
 * stderr (ANSI colour codes stripped).
 */
export function describeOpencodeExit(exitCode: number, stderrTail: string): string | undefined {
  const lines = stderrTail.replace(/\u001b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim()).filter(Boolean);
  const error = lines.findLast((l) => l.startsWith("Error:"));
  return error ? `OpenCode failed (exit ${exitCode}): ${oneLine(error.slice("Error:".length))}` : undefined;
}

// ------------------------------------------------------------------ parser

/** The error text OpenCode gives a tool call a permission rule refused. */
const DENIED = /prevents you from using this specific tool call|rejected permission to use this specific tool call/i;

/**
 * `opencode run --format json` → normalized events. Every line carries the
 * session id; each step is one model request and its `step_finish` carries
 * that request's tokens. The run is over at a `step_finish` whose reason is
 * not `tool-calls`; an `error` line after the last such step fails it.
 */
export class OpencodeParser implements EventParser {
  private sessionId: string | undefined;
  private steps = 0;
  private usage: Usage | undefined;
  private answer = "";
  private finished = false;
  private error: string | undefined;

  push(line: string): AgentEvent[] {
    const e = parseJsonLine(line);
    if (!e) return [];
    const out: AgentEvent[] = [];
    const id = str(e.sessionID);
    if (id && id !== this.sessionId) {
      this.sessionId = id;
      out.push({ type: "session", sessionId: id });
    }
    const part = rec(e.part);
    switch (e.type) {
      case "step_start":
        this.steps++;
        this.finished = false;
        break;
      case "text": {
        const text = str(part.text);
        if (text?.trim()) {
          this.answer = (this.answer ? `${this.answer}\n${text}` : text).slice(-FINAL_TEXT_LIMIT);
          out.push({ type: "text", text: clip(text) });
        }
        break;
      }
      case "reasoning": {
        const text = str(part.text);
        if (text?.trim()) out.push({ type: "reasoning", text: clip(text) });
        break;
      }
      case "tool_use":
        this.answer = "";
        out.push(...this.toolUse(part));
        break;
      case "step_finish": {
        const usage = opencodeUsage(part);
        if (usage) {
          this.usage = this.usage ? addUsage(this.usage, usage) : usage;
          out.push({ type: "usage", usage });
        }
        if (str(part.reason) !== "tool-calls") {
          this.finished = true;
          this.error = undefined;
        }
        break;
      }
      case "error": {
        const message = opencodeError(rec(e.error));
        this.error = message;
        out.push({ type: "error", message: clip(message) });
        break;
      }
    }
    return out;
  }

  end(): AgentEvent[] {
    if (!this.finished && this.error === undefined) return [];
    const isError = this.error !== undefined;
    const text = this.answer.trim();
    return [
      {
        type: "result",
        ...(!isError && text ? { text } : {}),
        isError,
        ...(isError ? { reason: oneLine(this.error!) } : {}),
        ...(this.usage ? { usage: this.usage } : {}),
        numTurns: this.steps,
      },
    ];
  }

  private toolUse(part: JsonObject): AgentEvent[] {
    const state = rec(part.state);
    const id = str(part.callID);
    const name = str(part.tool) ?? "unknown";
    const input = rec(state.input);
    const isError = state.status === "error";
    const output = isError ? (str(state.error) ?? "") : (str(state.output) ?? "");
    const out: AgentEvent[] = [
      { type: "tool_call", ...(id ? { id } : {}), name, input },
      { type: "tool_result", ...(id ? { id } : {}), name, output: clip(output), isError },
    ];
    if (isError && DENIED.test(output)) {
      const detail = str(input.command) ?? str(input.filePath) ?? str(input.url);
      out.push({ type: "permission_denied", tool: name, ...(detail ? { detail: oneLine(detail, 200) } : {}) });
    }
    return out;
  }
}

/** Per-request tokens: `input` excludes cache reads and writes; reasoning is output the model produced. */
function opencodeUsage(part: JsonObject): Usage | undefined {
  const t = rec(part.tokens);
  if (!Object.keys(t).length) return undefined;
  const cache = rec(t.cache);
  const cost = num(part.cost);
  return promptUsage({
    uncached: num(t.input),
    cacheRead: num(cache.read),
    cacheWrite: num(cache.write),
    output: (num(t.output) ?? 0) + (num(t.reasoning) ?? 0),
    ...(cost ? { costUsd: cost } : {}),
  });
}

/** `{name, data: {message, statusCode, …}}` → one line, naming an authentication failure. */
function opencodeError(error: JsonObject): string {
  const data = rec(error.data);
  const status = num(data.statusCode);
  const message = str(data.message) ?? str(error.message) ?? str(error.name) ?? "OpenCode reported an error.";
  return describeModelFailure(status !== undefined ? `Model API error ${status}: ${message}` : message, status);
}
