/**
 * The clouds the model gateway can sign for, each loaded on first use: a run
 * without a cloud provider never loads an AWS, Google or Azure library.
 */
import type { CloudName } from "../../shared/agents.js";
import { ConfigurationError } from "../../errors.js";
import type { CloudModule, CloudUpstream, CloudUpstreamOptions } from "./types.js";

const MODULES: Partial<Record<CloudName, () => Promise<CloudModule>>> = {
  bedrock: () => import("./bedrock.js"),
  vertex: () => import("./vertex.js"),
  azure: () => import("./azure.js"),
};

/** The cloud's upstream with its credentials resolved: fails (ConfigurationError naming `provider`) before any agent starts. */
export async function cloudUpstream(provider: CloudName, opts: CloudUpstreamOptions): Promise<CloudUpstream> {
  const load = MODULES[provider];
  if (!load) throw new ConfigurationError(`Input 'provider': '${provider}' is not available in this version of Agent Runner.`);
  const mod = await load();
  return mod.createUpstream(opts);
}
