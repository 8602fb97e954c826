/**
 * Builds the agent's environment from an allowlist. This and the input parser
 * are the only modules that read process.env: the agent sees only what is
 * named here, never GITHUB_TOKEN, ACTIONS_* or INPUT_* unless the user named them,
 * and never a cloud credential variable (shared/cloud.ts: AWS_*, GOOGLE_*,
 * AZURE_*, ACTIONS_ID_TOKEN_REQUEST_*, …) from the user's forward-env, env or
 * secrets, even when named: the model gateway holds and signs with them. The
 * input parser refuses such names in forward-env and env; a secret of that
 * name stays on the host for the gateway. Only the backend's own variables
 * (its provider switches, a region) may use those prefixes.
 *
 * No model key in `secrets` reaches the agent either, whichever backend it is
 * for (shared/agents.ts MODEL_KEY_NAMES): a workflow passes every vendor's key
 * (the reusable workflow's `secrets: inherit`, the CLI's shell), and each
 * gateway reads its own from the settings; the sandboxed process gets at most
 * the placeholder its backend sets.
 */
import type { RunConfig } from "../config/schema.js";
import { MODEL_KEY_NAMES } from "../shared/agents.js";
import { isCloudCredentialName } from "../shared/cloud.js";
import type { SandboxLayout } from "./types.js";

/** Harmless host variables every process expects. */
const BASE_NAMES = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "USER", "LOGNAME", "SHELL"];

/** Every backend's model key names: given to model gateways, never to a sandboxed process. */
const MODEL_KEYS: ReadonlySet<string> = new Set(Object.values(MODEL_KEY_NAMES).flat());

/** The variable that tags every process of one run, so leftovers can be found and killed. */
export const RUN_MARKER_VAR = "AGENT_RUNNER_RUN_ID";

export interface AgentEnvRequest {
  layout: SandboxLayout;
  run: RunConfig;
  /** Variables the agent backend needs (config dirs, endpoint, telemetry switches); win over all others. */
  backendEnv: Record<string, string>;
  /** Folders put first on PATH (the CLI's install). */
  pathPrepend: string[];
  runId: string;
}

export interface AgentEnv {
  env: Record<string, string>;
  /** forward-env names that were not set on the runner. */
  missingForwards: string[];
  /** Names in secrets, forward-env or env that were held back as cloud credentials. */
  withheldCloud: string[];
  /** Model key names in secrets that were held back (every backend's, not only this one's). */
  withheldModelKeys: string[];
}

export function buildAgentEnv(req: AgentEnvRequest, hostEnv: NodeJS.ProcessEnv = process.env): AgentEnv {
  const env: Record<string, string> = {};
  for (const name of BASE_NAMES) {
    const v = hostEnv[name];
    if (v !== undefined) env[name] = v;
  }
  env.PATH = [...req.pathPrepend, env.PATH ?? "/usr/local/bin:/usr/bin:/bin"].join(":");
  env.LANG ??= "C.UTF-8";

  const missingForwards: string[] = [];
  const withheldCloud = new Set<string>();
  const userVariable = (name: string, value: string) => {
    if (isCloudCredentialName(name)) withheldCloud.add(name);
    else env[name] = value;
  };
  for (const name of req.run.forwardEnv) {
    const v = hostEnv[name];
    if (v === undefined) missingForwards.push(name);
    else userVariable(name, v);
  }
  for (const [name, value] of Object.entries(req.run.env)) userVariable(name, value);
  const withheldModelKeys: string[] = [];
  for (const [name, value] of Object.entries(req.run.secrets)) {
    if (MODEL_KEYS.has(name)) withheldModelKeys.push(name);
    else userVariable(name, value);
  }

  Object.assign(env, {
    HOME: req.layout.home,
    TMPDIR: req.layout.tmp,
    AGENT_OUTPUT_DIR: req.layout.outputsDir,
    CI: "true",
    NO_COLOR: "1",
    [RUN_MARKER_VAR]: req.runId,
  });
  Object.assign(env, req.backendEnv);
  return { env, missingForwards, withheldCloud: [...withheldCloud], withheldModelKeys };
}
