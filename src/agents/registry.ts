/**
 * Every agent backend, registered under its name (shared/agents.ts: the one
 * list of names, which the settings read). Adding one = its name there, its
 * file and one line here.
 */
import type { AgentBackendName } from "../shared/agents.js";
import { claudeAgent } from "./claude.js";
import { codexAgent } from "./codex.js";
import { commandAgent } from "./command.js";
import { geminiAgent } from "./gemini.js";
import { opencodeAgent } from "./opencode.js";
import type { AgentBackend } from "./types.js";

const BACKENDS: Record<AgentBackendName, AgentBackend> = {
  claude: claudeAgent,
  codex: codexAgent,
  opencode: opencodeAgent,
  gemini: geminiAgent,
  command: commandAgent,
};

export function agentBackend(name: AgentBackendName): AgentBackend {
  return BACKENDS[name];
}
