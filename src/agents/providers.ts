/**
 * Input `provider` against the backend's table (AgentBackend.providers):
 * which provider the run uses, and the wire API the CLI then speaks to the
 * gateway. An agent/provider pair the pinned CLI cannot do is one
 * ConfigurationError naming both, before anything is installed or started.
 */
import type { Agent } from "../config/schema.js";
import { ConfigurationError } from "../errors.js";
import type { ModelProvider, ProviderName } from "../shared/agents.js";
import type { AgentBackend } from "./types.js";

export interface ProviderChoice {
  provider: ProviderName;
  /** The wire API the CLI speaks to the gateway for this provider. */
  wire: ModelProvider;
}

/** The backend's providers, its own first. */
export function supportedProviders(backend: AgentBackend): ProviderName[] {
  return Object.keys(backend.providers) as ProviderName[];
}

/** The run's provider, or undefined for a backend without a model (command, which refuses the input). */
export function chooseProvider(backend: AgentBackend, agent: Pick<Agent, "provider" | "name">): ProviderChoice | undefined {
  const supported = supportedProviders(backend);
  if (!supported.length) {
    if (agent.provider)
      throw new ConfigurationError(`Input 'provider': agent '${agent.name}' makes no model requests of its own, so 'provider: ${agent.provider}' has nothing to do; remove it.`);
    return undefined;
  }
  const provider = agent.provider ?? supported[0]!;
  const wire = backend.providers[provider];
  if (!wire)
    throw new ConfigurationError(
      `Input 'provider': agent '${agent.name}' cannot use provider '${provider}' (its pinned CLI supports ${supported.join(", ")}); choose one of those, or an agent that speaks '${provider}'.`,
    );
  return { provider, wire };
}
