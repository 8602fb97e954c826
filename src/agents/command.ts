/**
 * `agent: command`: any program. The prompt arrives on stdin; each stdout
 * line is an assistant text event; standing instructions and the run context
 * are in the file named by AGENT_INSTRUCTIONS_FILE.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { SAFE_OUTPUTS_ENV, SAFE_OUTPUTS_FILE } from "../safe-outputs/config.js";
import { safeOutputTools } from "./common.js";
import type { AgentBackend, EventParser } from "./types.js";
import { MODEL_KEY_NAMES } from "../shared/agents.js";

export const commandAgent: AgentBackend = {
  name: "command",
  providers: {},
  keyNames: [...MODEL_KEY_NAMES.command],

  unsupported(agent, run) {
    const problems: string[] = [];
    if (Object.keys(agent.mcpServers).length) problems.push("Input 'mcp-servers' has no effect with agent 'command'.");
    if (agent.skills.length) problems.push("Input 'skills' has no effect with agent 'command'.");
    if (agent.permission) problems.push("Input 'permissions' has no effect with agent 'command'.");
    if (agent.maxTurns) problems.push("Input 'max-turns' has no effect with agent 'command'.");
    if (run.resumeSessionId || run.continueLast) problems.push("Input 'session' (resume) is not possible with agent 'command'.");
    if (run.forkSession) problems.push("Input 'fork-session' is not possible with agent 'command'.");
    return problems;
  },

  async materialise(ctx) {
    const file = path.join(ctx.layout.home, "AGENT_INSTRUCTIONS.md");
    await writeFile(file, [ctx.runContext, ctx.agent.instructions ?? ""].filter(Boolean).join("\n\n"));
    return {
      env: {
        AGENT_INSTRUCTIONS_FILE: file,
        // Safe outputs: the program appends one JSON request per line ({"type": "<tool>", ...}); the host checks and applies them.
        ...(safeOutputTools(ctx.agent).length ? { [SAFE_OUTPUTS_ENV]: path.join(ctx.layout.outputsDir, SAFE_OUTPUTS_FILE) } : {}),
        ...(ctx.agent.model ? { AGENT_MODEL: ctx.agent.model } : {}),
        ...(ctx.endpoint ? { AGENT_MODEL_BASE_URL: ctx.endpoint.baseUrl, AGENT_MODEL_API_KEY: ctx.endpoint.apiKey } : {}),
      },
    };
  },

  command(ctx, installed) {
    const [, ...rest] = ctx.agent.command ?? [];
    return { file: installed.binPath, args: [...rest, ...ctx.run.extraArgs], stdin: ctx.run.prompt };
  },

  createParser(): EventParser {
    return {
      push: (line) => (line.trim() ? [{ type: "text", text: line }] : []),
      end: () => [],
    };
  },

  sessionPaths: () => [],
};
