/**
 * Every agent backend, by the name users type in `agent`: the one list of
 * agents. Adding one = its file plus one line here.
 */
import { claudeAgent } from "./claude.js";
import { codexAgent } from "./codex.js";
import { commandAgent } from "./command.js";
import { geminiAgent } from "./gemini.js";
import { opencodeAgent } from "./opencode.js";
import type { AgentBackend } from "./types.js";

const BACKENDS = {
  claude: claudeAgent,
  codex: codexAgent,
  opencode: opencodeAgent,
  gemini: geminiAgent,
  command: commandAgent,
} satisfies Record<string, AgentBackend>;

export type AgentBackendName = keyof typeof BACKENDS;
export const AGENT_BACKENDS = Object.keys(BACKENDS) as [AgentBackendName, ...AgentBackendName[]];

export function agentBackend(name: AgentBackendName): AgentBackend {
  return BACKENDS[name];
}
