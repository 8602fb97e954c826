/** Every agent backend, by the name users type in `agent`. One line per backend. */
import type { AgentBackendName } from "../config/schema.js";
import { NotSupportedError } from "../errors.js";
import { claudeAgent } from "./claude.js";
import { codexAgent } from "./codex.js";
import { commandAgent } from "./command.js";
import { geminiAgent } from "./gemini.js";
import { opencodeAgent } from "./opencode.js";
import type { AgentBackend } from "./types.js";

const BACKENDS: Partial<Record<AgentBackendName, AgentBackend>> = {
  command: commandAgent,
  claude: claudeAgent,
  codex: codexAgent,
  gemini: geminiAgent,
  opencode: opencodeAgent,
};

export function agentBackend(name: AgentBackendName): AgentBackend {
  const backend = BACKENDS[name];
  if (!backend) throw new NotSupportedError("agent", `backend '${name}' is not available in this build; use agent: command`);
  return backend;
}
