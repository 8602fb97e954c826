/**
 * The names of the agent backends and the model wire APIs they speak: the
 * vocabulary the settings, the sandbox's gateway and the trace share. The
 * backends themselves register under these names in agents/registry.ts.
 */

/** Every agent backend, by the name users type in `agent`. Adding one = a name here, its file and one line in agents/registry.ts. */
export const AGENT_BACKENDS = ["claude", "codex", "opencode", "gemini", "command"] as const;
export type AgentBackendName = (typeof AGENT_BACKENDS)[number];

/** Which wire API a CLI speaks: decides the gateway's allowed paths and key header. */
export type ModelProvider = "anthropic" | "openai" | "gemini";
