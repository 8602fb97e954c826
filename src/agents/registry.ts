/** Every agent backend, by the name users type in `agent`. One line per backend. */
import type { AgentBackendName } from "../config/schema.js";
import { claudeAgent } from "./claude.js";
import { codexAgent } from "./codex.js";
import { commandAgent } from "./command.js";
import { geminiAgent } from "./gemini.js";
import { opencodeAgent } from "./opencode.js";
import type { AgentBackend } from "./types.js";

/** A full record: a name added to AGENT_BACKENDS without a backend here fails to compile. */
const BACKENDS: Record<AgentBackendName, AgentBackend> = {
  command: commandAgent,
  claude: claudeAgent,
  codex: codexAgent,
  gemini: geminiAgent,
  opencode: opencodeAgent,
};

export function agentBackend(name: AgentBackendName): AgentBackend {
  return BACKENDS[name];
}
