/**
 * The names of the agent backends and the model wire APIs they speak: the
 * vocabulary the settings, the sandbox's gateway and the trace share. The
 * backends themselves register under these names in agents/registry.ts.
 */

/** Every agent backend, by the name users type in `agent`. Adding one = a name here, its file and one line in agents/registry.ts. */
export const AGENT_BACKENDS = ["claude", "codex", "opencode", "gemini", "command"] as const;
export type AgentBackendName = (typeof AGENT_BACKENDS)[number];

/**
 * The variables each backend's model key is read from, first match wins: a
 * line of `secrets` in a workflow, an exported variable of the shell for the
 * CLI (config/host.ts). The backends' `keyNames` are these.
 */
export const MODEL_KEY_NAMES: Record<AgentBackendName, readonly string[]> = {
  claude: ["ANTHROPIC_API_KEY"],
  codex: ["OPENAI_API_KEY", "CODEX_API_KEY"],
  opencode: ["OPENAI_API_KEY"],
  gemini: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  command: [],
};

/** Which wire API a CLI speaks: decides the gateway's allowed paths and key header. */
export type ModelProvider = "anthropic" | "openai" | "gemini";

/**
 * The model each backend runs when `model` is not set, and the wire API it is
 * priced under. gemini and opencode get theirs from Agent Runner; claude and
 * codex choose their own: the model id the pinned CLI sent with no model set
 * (measured against a local stub: Claude Code 2.1.197, Codex 0.171.0).
 * The README's cost table (scripts/build/costs.mjs) is computed from these.
 */
export const DEFAULT_MODELS: Record<Exclude<AgentBackendName, "command">, { model: string; provider: ModelProvider }> = {
  claude: { model: "claude-opus-4-8", provider: "anthropic" },
  codex: { model: "gpt-6.2-sol", provider: "openai" },
  opencode: { model: "gpt-4.1", provider: "openai" },
  gemini: { model: "gemini-2.5-pro", provider: "gemini" },
};

/** Where model requests go (input `provider`): a model vendor's own API, or a cloud the gateway signs for. */
export const PROVIDERS = ["anthropic", "openai", "gemini", "bedrock", "vertex", "azure"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** The clouds: credentials come from the runner's environment, and the gateway signs each request. */
export type CloudName = "bedrock" | "vertex" | "azure";

export function isCloud(provider: ProviderName): provider is CloudName {
  return provider === "bedrock" || provider === "vertex" || provider === "azure";
}

/** The cloud settings of a run (inputs aws-region, vertex-project, vertex-region, with the runner's defaults). */
export interface CloudSettings {
  awsRegion?: string;
  vertexProject?: string;
  vertexRegion?: string;
}

/**
 * The Vertex AI project and region the agent's SDK is given: placeholders.
 * The gateway puts the workflow's own into each path (sandbox/cloud/vertex.ts),
 * so the agent never sees them.
 */
export const VERTEX_AGENT_PROJECT = "agent-runner";
export const VERTEX_AGENT_REGION = "global";
