#!/usr/bin/env node
/**
 * A tiny MCP server over stdio for tests: newline-delimited JSON-RPC 2.0, one tool.
 * Plain JS with no dependencies, so every agent CLI can start it with `node <this file>`.
 *
 *   node mcp-test-server.mjs [--tool NAME] [--log FILE]
 *
 * - The tool (default name `echo_marker`) takes `{ text: string }` and answers
 *   `"<marker>: <text>"`, where the marker is `$MCP_TEST_MARKER` (default `mcp-test`):
 *   a test can check that the server's `env` from the config reached it.
 * - With `--log FILE` (or `$MCP_TEST_LOG`) every received message is appended to FILE as one
 *   JSON line, so a test can see that the CLI started the server, listed tools, called the tool.
 *   The first line, `{"event":"start","marker":…}`, shows the env the server was started with.
 */
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const toolName = opt("--tool") ?? "echo_marker";
const logFile = opt("--log") ?? process.env.MCP_TEST_LOG;
const marker = process.env.MCP_TEST_MARKER ?? "mcp-test";

const TOOL = {
  name: toolName,
  description: `Echoes the given text back, prefixed with a marker (test tool ${toolName}).`,
  inputSchema: {
    type: "object",
    properties: { text: { type: "string", description: "Text to echo" } },
    required: ["text"],
    additionalProperties: false,
  },
};

const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
const log = (msg) => {
  if (!logFile) return;
  try {
    appendFileSync(logFile, JSON.stringify(msg) + "\n");
  } catch {
    /* a test log must never break the protocol */
  }
};

function handle(msg) {
  const { id, method, params } = msg;
  const isRequest = id !== undefined && id !== null;
  switch (method) {
    case "initialize":
      return send({
        id,
        result: {
          // Answer with the client's version: every CLI here speaks a slightly different one.
          protocolVersion: params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "mcp-test-server", version: "1.0.0" },
        },
      });
    case "ping":
      return isRequest ? send({ id, result: {} }) : undefined;
    case "tools/list":
      return send({ id, result: { tools: [TOOL] } });
    case "tools/call": {
      if (params?.name !== toolName)
        return send({ id, result: { isError: true, content: [{ type: "text", text: `unknown tool ${params?.name}` }] } });
      const text = typeof params?.arguments?.text === "string" ? params.arguments.text : JSON.stringify(params?.arguments ?? {});
      return send({ id, result: { content: [{ type: "text", text: `${marker}: ${text}` }], isError: false } });
    }
    case "resources/list":
      return send({ id, result: { resources: [] } });
    case "resources/templates/list":
      return send({ id, result: { resourceTemplates: [] } });
    case "prompts/list":
      return send({ id, result: { prompts: [] } });
    default:
      // Notifications (no id) need no answer; unknown requests get "method not found".
      if (isRequest) send({ id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
}

log({ event: "start", marker });
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return send({ id: null, error: { code: -32700, message: "Parse error" } });
  }
  log(msg);
  if (Array.isArray(msg)) msg.forEach(handle);
  else handle(msg);
});
rl.on("close", () => process.exit(0));
