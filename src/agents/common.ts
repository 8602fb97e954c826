/**
 * Helpers every CLI backend needs, kept generic (nothing here knows a CLI's
 * flags or event names): reading JSON lines safely, bounding event payloads,
 * one-line failure reasons, the PermissionPolicy reduced to what a headless
 * run can do, the problems unsupported() reports, and writing instructions,
 * skills, MCP servers and the endpoint into HOME and the CLI's environment.
 */
import { cp, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Agent, AgentBackendName, McpServer, PermissionPolicy, RunConfig, Skill } from "../config/schema.js";
import { enabledKinds, SAFE_OUTPUTS_FILE, SAFE_OUTPUTS_SERVER } from "../safe-outputs/config.js";
import type { Usage } from "../shared/events.js";
import type { AgentContext, ModelEndpoint } from "./types.js";
import { escapeRegExp, oneLine } from "../text.js";
import { byCodeUnits } from "../shared/plain-format.js";

// Backends take every helper from here.
export { escapeRegExp, oneLine };

// ------------------------------------------------------------------ JSON lines

export type JsonObject = Record<string, unknown>;

/**
 * A line longer than this is not parsed (it stays in raw/stdout.jsonl): one
 * runaway tool output must not make the runner hold several copies of it.
 */
const MAX_PARSED_LINE = 4 * 1024 * 1024;

/** Text kept in one event (tool output, message); the raw line keeps everything. */
const EVENT_TEXT_LIMIT = 16 * 1024;

/** The final message is an output and a comment: long, but not unbounded. */
export const FINAL_TEXT_LIMIT = 64 * 1024;

/** The object on a stdout line, or undefined for anything else (banners, blank lines, arrays, broken JSON). */
export function parseJsonLine(line: string): JsonObject | undefined {
  const t = line.trim();
  if (!t.startsWith("{") || t.length > MAX_PARSED_LINE) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

export function rec(v: unknown): JsonObject {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as JsonObject) : {};
}

export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

export function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Cut to `max` characters, saying how much was left out. */
export function clip(text: string, max = EVENT_TEXT_LIMIT): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}

/** Text of a message content that is a string or a list of `{text}` parts. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  return arr(content)
    .map((c) => (typeof c === "string" ? c : (str(rec(c).text) ?? "")))
    .filter(Boolean)
    .join("\n");
}

/**
 * A map that forgets its oldest entries past `limit`: parsers remember tool
 * call ids to name their results, and a long run must not grow it forever.
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly limit = 2000) {}
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value as K);
  }
  get(key: K): V | undefined {
    return this.map.get(key);
  }
  has(key: K): boolean {
    return this.map.has(key);
  }
}

// ------------------------------------------------------------------ usage

/**
 * Usage in the one convention every backend reports: `inputTokens` counts
 * every prompt token (uncached, cache writes and cache reads alike) and
 * `cachedTokens` is the cache-read part of it, as OpenAI-style APIs count.
 * Anthropic-style counts (cache reads and writes apart from input) are added up here.
 */
export function promptUsage(u: { uncached?: number; cacheWrite?: number; cacheRead?: number; output?: number; costUsd?: number }): Usage {
  const cached = u.cacheRead ?? 0;
  return {
    inputTokens: (u.uncached ?? 0) + (u.cacheWrite ?? 0) + cached,
    outputTokens: u.output ?? 0,
    cachedTokens: cached,
    ...(u.costUsd !== undefined ? { costUsd: u.costUsd } : {}),
  };
}

// ------------------------------------------------------------------ failure reasons

/** A model API failure as a reason a person can act on: auth failures are named as such. */
export function describeModelFailure(message: string, status?: number): string {
  const m = oneLine(message);
  if (status === 401 || /\b401\b|unauthori[sz]ed|authentication|invalid[ _-]?api[ _-]?key/i.test(m))
    return `The model API refused the credentials (authentication failed): ${m}`;
  return m;
}

/** Why a run stopped at its turn limit, naming the limit when the parser knows it. */
export function maxTurnsReason(maxTurns: number | undefined): string {
  return `The agent stopped at the 'max-turns' limit${maxTurns ? ` (${maxTurns})` : ""} before finishing.`;
}

// ------------------------------------------------------------------ permissions

/** The tool names users write in `permissions`, the same for every backend. */
const GENERIC_TOOLS = ["bash", "write", "edit", "read", "webfetch", "websearch"] as const;

export type GenericTool = (typeof GENERIC_TOOLS)[number];

/**
 * Whether `tool` is one of ours. Backends map these through object literals,
 * where `tool in MAP` would also accept inherited keys such as `constructor`.
 */
export function isGenericTool(tool: string): tool is GenericTool {
  return (GENERIC_TOOLS as readonly string[]).includes(tool);
}

export type HeadlessAction = "allow" | "deny";

export interface HeadlessRule {
  tool: string;
  pattern?: string;
  action: HeadlessAction;
  /** Written as `ask`: there is nobody to ask in a headless run, so it is refused. */
  asked: boolean;
}

export interface HeadlessPolicy {
  default: HeadlessAction;
  rules: HeadlessRule[];
}

/**
 * The policy as a headless run can apply it: `ask` becomes `deny`, because
 * no one is there to answer (every CLI here refuses an unanswerable prompt).
 * No policy means allow: the sandbox is the boundary.
 */
export function headlessPolicy(policy: PermissionPolicy | undefined): HeadlessPolicy {
  const toHeadless = (a: PermissionPolicy["default"]): HeadlessAction => (a === "allow" ? "allow" : "deny");
  return {
    default: toHeadless(policy?.default ?? "allow"),
    rules: (policy?.rules ?? []).map((r) => ({
      tool: r.tool,
      ...(r.pattern !== undefined ? { pattern: r.pattern } : {}),
      action: toHeadless(r.action),
      asked: r.action === "ask",
    })),
  };
}

/**
 * Whether a whole tool (no pattern) is allowed: a rule naming it decides,
 * deny winning over allow; otherwise the default.
 */
export function decideTool(policy: HeadlessPolicy, matches: (tool: string) => boolean): HeadlessAction {
  const rules = policy.rules.filter((r) => r.pattern === undefined && matches(r.tool));
  if (rules.some((r) => r.action === "deny")) return "deny";
  if (rules.length) return "allow";
  return policy.default;
}

/** `mcp__server` or `mcp__server__tool` → its parts; anything else → undefined. */
export function parseMcpToolName(name: string): { server: string; tool?: string } | undefined {
  const m = /^mcp__(.+?)(?:__(.+))?$/.exec(name);
  if (!m) return undefined;
  return { server: m[1]!, ...(m[2] ? { tool: m[2] } : {}) };
}

/** How a permission rule reads in the input, for messages: `bash(rm *)`. */
export function ruleText(r: { tool: string; pattern?: string }): string {
  return r.pattern !== undefined ? `${r.tool}(${r.pattern})` : r.tool;
}

/** The rules written as `ask`, as written: a headless run refuses them. */
export function askedRules(policy: HeadlessPolicy): string[] {
  return policy.rules.filter((r) => r.asked).map(ruleText);
}

/** Tells the user that each `ask` rule was written into the CLI's config as a refusal. */
export function warnAskedRules(ctx: AgentContext, asked: string[]): void {
  for (const r of asked) ctx.log.warning(`permissions: '${r}' is 'ask'; nobody can answer in a headless run, so it is refused.`);
}

// ------------------------------------------------------------------ unsupported() problems
// Worded alike for every backend: a user reads the same sentence whichever agent refused the input.

/** A permission rule naming a tool the backend does not know; `nativeExample` says which of the CLI's own names it also takes. */
export function unknownToolProblem(agent: AgentBackendName, rule: { tool: string; pattern?: string }, nativeExample?: string): string {
  const names = nativeExample ? `${GENERIC_TOOLS.join(", ")}, mcp__<server>[__<tool>] or ${nativeExample}` : `${GENERIC_TOOLS.join(", ")} or mcp__<server>[__<tool>]`;
  return `Input 'permissions': '${ruleText(rule)}' names no tool agent '${agent}' knows; use ${names}.`;
}

/** A permission rule the backend understands but cannot enforce. */
export function unenforceableRuleProblem(agent: AgentBackendName, rule: { tool: string; pattern?: string }, why: string): string {
  return `Input 'permissions': '${ruleText(rule)}' cannot be honoured by agent '${agent}': ${why}.`;
}

/** An input the backend's CLI has no way to honour. */
export function unsupportedInputProblem(input: string, agent: AgentBackendName, why: string): string {
  return `Input '${input}' is not supported by agent '${agent}': ${why}.`;
}

/** A session id goes on a command line: it must not read as an option or carry shell-ish text. */
export function sessionIdProblems(run: RunConfig): string[] {
  const id = run.resumeSessionId;
  return id !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(id)
    ? [`Input 'session': '${oneLine(id, 80)}' is not a session id (letters, digits, '.', '_', ':' and '-', not starting with '-').`]
    : [];
}

// ------------------------------------------------------------------ materialisation

/** Our own files inside the agent's HOME (instructions, MCP config, schemas). */
export function runnerFilesDir(home: string): string {
  return path.join(home, ".agent-runner");
}

/** The runner's context, then the user's standing instructions. */
export function instructionsText(ctx: AgentContext): string {
  return [ctx.runContext, ctx.agent.instructions ?? ""].map((s) => s.trim()).filter(Boolean).join("\n\n") + "\n";
}

/** Config may name MCP server env values: readable by the agent's user only. */
export async function writePrivateFile(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content, { mode: 0o600 });
}

/**
 * Copies each skill folder to `<destDir>/<name>/`. Symlinks are followed so
 * the copy works inside a sandbox that cannot see where they pointed.
 */
export async function copySkills(skills: Skill[], destDir: string): Promise<string[]> {
  await mkdir(destDir, { recursive: true });
  for (const s of skills) await cp(s.path, path.join(destDir, s.name), { recursive: true, dereference: false, verbatimSymlinks: true, force: true });
  return skills.map((s) => s.name);
}

/**
 * Values that hold a secret (from `secrets`) stay out of config files: each
 * moves to an environment variable of the CLI process, and the config names
 * the variable instead (`${VAR}` for CLIs that expand it, an env-var setting
 * for those that have one).
 */
export class SecretVariables {
  /** Variables to add to the CLI's environment. */
  readonly env: Record<string, string> = {};
  private count = 0;
  private readonly secrets: string[];
  constructor(secrets: Record<string, string>) {
    this.secrets = Object.values(secrets).filter((v) => v.length > 0);
  }
  holdsSecret(value: string): boolean {
    return this.secrets.some((s) => value.includes(s));
  }
  /** The variable now holding `value` (named `name`, or a fresh one), or undefined when it holds no secret. */
  hide(value: string, name?: string): string | undefined {
    if (!this.holdsSecret(value)) return undefined;
    const variable = name ?? `AGENT_RUNNER_SECRET_${this.count++}`;
    this.env[variable] = value;
    return variable;
  }
  /** `value` as a config file should hold it: as written, or `reference(variable)` when it holds a secret. */
  configValue(value: string, reference: (variable: string) => string): string {
    const variable = this.hide(value);
    return variable ? reference(variable) : value;
  }
}

/** A variable reference for CLIs that expand `${VAR}` in their config (Claude Code, Gemini CLI). */
export function dollarVariable(variable: string): string {
  return `\${${variable}}`;
}

export function mapValues(map: Record<string, string>, f: (value: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, f(v)]));
}

/**
 * The model endpoint as environment variables, under the names the CLI reads.
 * Without an endpoint (no gateway) nothing is set and the CLI keeps its own;
 * `baseUrl` is left out for CLIs that take the URL from their config file.
 */
export function endpointEnv(endpoint: ModelEndpoint | undefined, names: { baseUrl?: string; apiKey: string }): Record<string, string> {
  return {
    ...(endpoint && names.baseUrl ? { [names.baseUrl]: endpoint.baseUrl } : {}),
    ...(endpoint?.apiKey ? { [names.apiKey]: endpoint.apiKey } : {}),
  };
}

export type McpEntry =
  | { name: string; kind: "stdio"; command: string; args: string[]; env: Record<string, string> }
  | { name: string; kind: "http"; url: string; headers: Record<string, string> };

// ------------------------------------------------------------------ safe outputs (the agent-runner MCP server)

/** dist/, where the bundled MCP server sits (this module is in dist/chunks/ when bundled, src/agents/ under test). */
function distDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  if (path.basename(here) === "chunks") return path.dirname(here);
  if (path.basename(here) === "agents" && path.basename(path.dirname(here)) === "src") return path.resolve(here, "../../dist");
  return here;
}

/** The server's one file, and the node that runs the action: both must be readable inside the sandbox. */
export function safeOutputsServerFiles(): { node: string; script: string } {
  return { node: process.execPath, script: path.join(distDir(), "safe-outputs-mcp.js") };
}

/** Tool names of the enabled safe-output kinds (empty: no server). */
export function safeOutputTools(agent: Agent): string[] {
  return enabledKinds(agent.safeOutputs).map((k) => k.tool);
}

/**
 * The MCP servers the CLI gets: the user's, plus `agent-runner` when safe
 * outputs are enabled. Ours holds no token: it only appends checked requests
 * to the JSONL file in the outputs folder, which the host checks again.
 */
export function runMcpServers(ctx: Pick<AgentContext, "agent" | "layout">): Record<string, McpServer> {
  const { agent } = ctx;
  if (!safeOutputTools(agent).length) return agent.mcpServers;
  const { node, script } = safeOutputsServerFiles();
  const file = path.join(ctx.layout.outputsDir, SAFE_OUTPUTS_FILE);
  const server: McpServer = { command: node, args: [script, "--file", file, "--config", JSON.stringify(agent.safeOutputs)], env: {} };
  return { ...agent.mcpServers, [SAFE_OUTPUTS_SERVER]: server };
}

/** The `mcp-servers` input as a tagged list, in a stable order. */
export function mcpEntries(servers: Record<string, McpServer>): McpEntry[] {
  return Object.entries(servers)
    .sort(([a], [b]) => byCodeUnits(a, b))
    .map(([name, s]) =>
      "command" in s
        ? { name, kind: "stdio" as const, command: s.command, args: s.args, env: s.env }
        : { name, kind: "http" as const, url: s.url, headers: s.headers },
    );
}

// ------------------------------------------------------------------ config formats

/**
 * A TOML basic string. JSON's escapes are a subset of TOML's; TOML also
 * forbids a raw DEL and escaped lone surrogates, so those are fixed first.
 */
export function tomlString(s: string): string {
  const wellFormed = s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
  return JSON.stringify(wellFormed).replace(/\u007f/g, "\\u007F");
}

export function tomlArray(items: string[]): string {
  return `[${items.map(tomlString).join(", ")}]`;
}


/**
 * A shell-command permission pattern as leading words, when it is one:
 * `rm *`, `git push:*` (Claude's form), `git push *` → the words before the
 * wildcard. Anything with another wildcard or quoting → undefined.
 */
export function commandPrefixWords(pattern: string): string[] | undefined {
  const m = /^(.*?)(?::\*|\s+\*)$/.exec(pattern.trim());
  return m ? plainCommandWords(m[1]!) : undefined;
}

/** The words of a command with no wildcard, quoting or expansion in it; undefined for anything else. */
export function plainCommandWords(command: string): string[] | undefined {
  const words = command.trim().split(/\s+/).filter(Boolean);
  if (!words.length || words.some((w) => /[*?[\]{}'"`$\\]/.test(w))) return undefined;
  return words;
}
