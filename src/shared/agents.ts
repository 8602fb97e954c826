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
