/**
 * The `agent-runner` MCP server (stdio), started inside the sandbox by the
 * agent's CLI: one tool per enabled safe-output kind. It holds no token and
 * makes no network call: a call whose arguments pass the kind's check (the
 * same code the publish step runs again) is appended as one JSON line to the
 * requests file in the agent's outputs folder, and the model is told it is
 * recorded. Stdout is the protocol; anything else goes to stderr.
 *
 *   node safe-outputs-mcp.js --file <outputs>/safe-outputs.jsonl --config '<normalized safe-outputs JSON>'
 */
import { appendFileSync, readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as z from "./shared/zod.js";
import { enabledKinds, SAFE_OUTPUTS_SERVER, type SafeOutputsConfig } from "./safe-outputs/config.js";
import type { EnabledKind } from "./safe-outputs/kind.js";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function fail(message: string): never {
  process.stderr.write(`agent-runner safe outputs: ${message}\n`);
  process.exit(1);
}

const file = arg("--file") ?? process.env.AGENT_SAFE_OUTPUTS ?? fail("--file is required");
let config: SafeOutputsConfig;
try {
  config = z.record(z.string(), z.record(z.string(), z.unknown())).parse(JSON.parse(arg("--config") ?? "{}"));
} catch {
  fail("--config must be the normalized safe-outputs JSON");
}
const kinds = enabledKinds(config);
// A server with no tools would look healthy and do nothing: refuse to start instead.
if (!kinds.length) fail("no safe-output kind is enabled");

/** Counts per kind, as the publish step will count them; seeded from what this run already recorded. */
const used = new Map<string, number>();
function seedCounts(): void {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return;
  }
  for (const line of text.split("\n")) {
    try {
      const { type, ...args } = JSON.parse(line) as Record<string, unknown>;
      const kind = kinds.find((k) => k.tool === type);
      const checked = kind?.check(args);
      if (kind && checked?.ok) used.set(kind.key, (used.get(kind.key) ?? 0) + checked.request.cost);
    } catch {
      /* not ours to judge here: the publish step refuses it */
    }
  }
}
seedCounts();

function inputSchema(kind: EnabledKind): { type: "object"; [k: string]: unknown } {
  const { $schema: _drop, ...schema } = z.toJSONSchema(kind.args, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return { ...schema, type: "object" };
}

function answer(text: string, isError = false): CallToolResult {
  return { content: [{ type: "text", text }], ...(isError ? { isError: true } : {}) };
}

function call(kind: EnabledKind, args: Record<string, unknown>): CallToolResult {
  const checked = kind.check(args);
  if (!checked.ok) return answer(`Refused: ${checked.reason}. Nothing was recorded; fix the arguments and call ${kind.tool} again.`, true);
  const target = kind.limits.target;
  const named = checked.request.requestedNumber;
  if (typeof target === "number" && named !== undefined && named !== target)
    return answer(`Refused: this workflow allows ${kind.tool} only on #${target}, not #${named}. Nothing was recorded.`, true);
  const count = used.get(kind.key) ?? 0;
  if (count + checked.request.cost > kind.limits.max)
    return answer(`Refused: over the limit of ${kind.limits.max}${kind.key.endsWith("labels") ? " label(s)" : ""} for ${kind.tool} in this run (${count} already recorded). Nothing was recorded.`, true);
  appendFileSync(file, JSON.stringify({ type: kind.tool, ...args }) + "\n", { mode: 0o600 });
  used.set(kind.key, count + checked.request.cost);
  return answer(`Recorded; applied after the run: Agent Runner checks the request again and makes the GitHub write (the run's summary lists the result). Do not repeat this call.`);
}

const server = new Server({ name: SAFE_OUTPUTS_SERVER, version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: kinds.map((k) => ({ name: k.tool, description: k.description, inputSchema: inputSchema(k) })),
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const kind = kinds.find((k) => k.tool === req.params.name);
  if (!kind) return answer(`Unknown tool '${req.params.name}'; this server has: ${kinds.map((k) => k.tool).join(", ")}.`, true);
  return call(kind, req.params.arguments ?? {});
});
await server.connect(new StdioServerTransport());
