/**
 * Reads the runner's environment: the action's raw inputs and the facts the
 * runner provides (temp dir, workspace, run id, what git and the sandbox
 * need). Together with the sandbox's env builder, the only code that reads
 * process.env; everything else gets these values passed in.
 */
import os from "node:os";
import { INPUTS, type InputName } from "../constants.js";
import type { SandboxHost } from "../shared/host.js";
import { CLOUD_CREDENTIAL_FILE_VARS, isCloudCredentialName } from "../shared/cloud.js";
import { MODEL_KEY_NAMES, type CloudSettings } from "../shared/agents.js";
import type { RawInputs } from "./parse.js";

export interface HostContext {
  workspace: string;
  runnerTemp: string;
  toolCache?: string;
  /** PATH used to find agent programs. */
  path: string;
  runId?: string;
  runAttempt?: string;
  repository?: string;
  serverUrl: string;
  apiUrl: string;
  eventName?: string;
  eventPath?: string;
  /** GITHUB_ACTOR: who started the run (the event's sender for most events). */
  actor?: string;
  /** GITHUB_WORKFLOW (name) and GITHUB_WORKFLOW_REF (`owner/repo/.github/workflows/x.yml@ref`): a stable branch per workflow. */
  workflow?: string;
  workflowRef?: string;
  /** GITHUB_REF: the branch a dispatch/schedule run was started on (`refs/heads/<name>`). */
  ref?: string;
  /**
   * Whether the Actions artifact service can be reached (ACTIONS_RUNTIME_TOKEN
   * and ACTIONS_RESULTS_URL set): false on a laptop, where uploads are skipped.
   * The artifact client reads the values itself; only their presence is needed here.
   */
  artifactService: boolean;
  /** The runner's AWS_REGION, GOOGLE_CLOUD_PROJECT, CLOUD_ML_REGION: defaults of aws-region, vertex-project, vertex-region. */
  cloud: CloudSettings;
  /** The runner as the sandbox backends see it (its own RUNNER_TEMP, not the CLI's results folder). */
  sandbox: SandboxHost;
  /** Environment of every host-side git call; credentials are added per call, never here. */
  gitEnv: Record<string, string>;
  /**
   * Environment for `npm install` of the agent CLI: PATH, HOME, proxy, CA and
   * npm_config_* settings of the runner, nothing else (no tokens but npm's own).
   */
  installEnv?: Record<string, string>;
  /** Whether the Actions cache service is configured (@actions/cache reads the values itself). */
  actionsCache?: boolean;
  /**
   * Test only: AGENT_RUNNER_TEST_NOW (an ISO time) is "now" for the budget
   * ledger (which UTC day a reservation counts in, when it expires) and for an
   * approval's expiry, so tests can move to the next day or past 72 hours
   * without waiting. Ignored unless AGENT_RUNNER_TEST=1 is set too.
   */
  now?: string;
  /**
   * Test only: AGENT_RUNNER_TEST_API_RETRY_MS, the base of the GitHub API's
   * back-off on 5xx answers (default 1 s, so 1 s, 4 s, 9 s), so a test of
   * the retries does not wait seconds for them. Ignored unless
   * AGENT_RUNNER_TEST=1 is set too.
   */
  apiRetryBaseMs?: number;
  /** The runner's standard OTLP exporter variables, when any is set (trace export: trace/otel.ts). */
  otel?: OtelEnv;
}

/** What trace export takes from the runner's OTEL_EXPORTER_OTLP_* variables. */
export interface OtelEnv {
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the traces URL, used as given. */
  tracesEndpoint?: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: a base URL that gets `/v1/traces`. */
  endpoint?: string;
  /** OTEL_EXPORTER_OTLP_HEADERS, overlaid by OTEL_EXPORTER_OTLP_TRACES_HEADERS: secrets (masked and redacted). */
  headers: Record<string, string>;
}

/** Runner variables `npm install` needs to reach the registry the way the runner is set up to. */
const INSTALL_ENV = /^(PATH|HOME|USER|LANG|LC_ALL|SHELL|TMPDIR|TEMP|TMP|XDG_CACHE_HOME|XDG_CONFIG_HOME|NODE_AUTH_TOKEN|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|(HTTPS?|ALL|NO)_PROXY|npm_config_\w+)$/i;

/**
 * Runner variables host-side git uses: its own GIT_* settings, HOME for the
 * global config, identity fallbacks, locale, proxy and CA settings, the ssh
 * agent. No tokens: pushes get theirs per call (github/git-auth.ts).
 */
const GIT_ENV = /^(PATH|HOME|USER|LOGNAME|EMAIL|LANG|LC_\w+|TZ|TMPDIR|XDG_CONFIG_HOME|GIT_\w+|SSH_AUTH_SOCK|SSL_CERT_FILE|SSL_CERT_DIR|CURL_CA_BUNDLE|(HTTPS?|ALL|NO)_PROXY)$/i;

/** The runner's own variables the Docker CLI needs to find its daemon (sandbox: docker). */
const DOCKER_CLIENT_ENV = ["DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_API_VERSION"];

function pick(env: NodeJS.ProcessEnv, wanted: (name: string) => boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && wanted(k)) out[k] = v;
  return out;
}

export function installEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return pick(env, (k) => INSTALL_ENV.test(k));
}

export function gitEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return pick(env, (k) => GIT_ENV.test(k));
}

export function sandboxHost(env: NodeJS.ProcessEnv = process.env): SandboxHost {
  return {
    path: searchPath(env),
    ...(env.HOME ? { home: env.HOME } : {}),
    ...(env.RUNNER_TEMP ? { runnerTemp: env.RUNNER_TEMP } : {}),
    ...(env.RUNNER_WORKSPACE ? { runnerWorkspace: env.RUNNER_WORKSPACE } : {}),
    cloudEnv: pick(env, (k) => isCloudCredentialName(k) && Boolean(env[k])),
    credentialFiles: CLOUD_CREDENTIAL_FILE_VARS.map((n) => env[n]?.trim()).filter((f): f is string => Boolean(f)),
    // Only set ones: an empty DOCKER_HOST would point the CLI nowhere.
    dockerEnv: pick(env, (k) => DOCKER_CLIENT_ENV.includes(k) && Boolean(env[k])),
    githubHosted: env.RUNNER_ENVIRONMENT === "github-hosted",
  };
}

/** Where the official auth actions leave the region and project (and what the cloud CLIs read). */
export function cloudDefaults(env: NodeJS.ProcessEnv = process.env): CloudSettings {
  const first = (...names: string[]) => names.map((n) => env[n]?.trim()).find(Boolean);
  const awsRegion = first("AWS_REGION", "AWS_DEFAULT_REGION");
  const vertexProject = first("GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT", "GCLOUD_PROJECT");
  const vertexRegion = first("CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION");
  return { ...(awsRegion ? { awsRegion } : {}), ...(vertexProject ? { vertexProject } : {}), ...(vertexRegion ? { vertexRegion } : {}) };
}

function searchPath(env: NodeJS.ProcessEnv): string {
  return env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
}

/** `INPUT_<NAME>` as the runner sets it: upper case, spaces → `_`, hyphens kept. */
function inputEnvName(name: string): string {
  return `INPUT_${name.replace(/ /g, "_").toUpperCase()}`;
}

export function readActionInputs(env: NodeJS.ProcessEnv = process.env): RawInputs {
  const raw: RawInputs = {};
  for (const name of Object.keys(INPUTS) as InputName[]) {
    const v = env[inputEnvName(name)];
    if (v !== undefined && v !== "") raw[name] = v;
  }
  return raw;
}

export function readHostContext(env: NodeJS.ProcessEnv = process.env): HostContext {
  const otel = otelEnv(env);
  return {
    workspace: env.GITHUB_WORKSPACE || process.cwd(),
    runnerTemp: env.RUNNER_TEMP || os.tmpdir(),
    ...(env.RUNNER_TOOL_CACHE ? { toolCache: env.RUNNER_TOOL_CACHE } : {}),
    path: searchPath(env),
    ...(env.GITHUB_RUN_ID ? { runId: env.GITHUB_RUN_ID } : {}),
    ...(env.GITHUB_RUN_ATTEMPT ? { runAttempt: env.GITHUB_RUN_ATTEMPT } : {}),
    ...(env.GITHUB_REPOSITORY ? { repository: env.GITHUB_REPOSITORY } : {}),
    serverUrl: env.GITHUB_SERVER_URL || "https://github.com",
    apiUrl: env.GITHUB_API_URL || "https://api.github.com",
    ...(env.GITHUB_EVENT_NAME ? { eventName: env.GITHUB_EVENT_NAME } : {}),
    ...(env.GITHUB_EVENT_PATH ? { eventPath: env.GITHUB_EVENT_PATH } : {}),
    ...(env.GITHUB_ACTOR ? { actor: env.GITHUB_ACTOR } : {}),
    ...(env.GITHUB_WORKFLOW ? { workflow: env.GITHUB_WORKFLOW } : {}),
    ...(env.GITHUB_WORKFLOW_REF ? { workflowRef: env.GITHUB_WORKFLOW_REF } : {}),
    ...(env.GITHUB_REF ? { ref: env.GITHUB_REF } : {}),
    artifactService: Boolean(env.ACTIONS_RUNTIME_TOKEN && env.ACTIONS_RESULTS_URL),
    cloud: cloudDefaults(env),
    sandbox: sandboxHost(env),
    gitEnv: gitEnv(env),
    installEnv: installEnv(env),
    // Mirrors @actions/cache's isFeatureAvailable(): v2 talks to the results service, v1 to the cache URL.
    actionsCache: Boolean(env.ACTIONS_RUNTIME_TOKEN && (env.ACTIONS_CACHE_SERVICE_V2 ? env.ACTIONS_RESULTS_URL : env.ACTIONS_CACHE_URL)),
    ...(otel ? { otel } : {}),
    ...testOverrides(env),
  };
}

/**
 * The test clock and the GitHub API back-off base, honoured only together
 * with AGENT_RUNNER_TEST=1 (the test harnesses set it): a stray
 * AGENT_RUNNER_TEST_NOW in a workflow's env must not move the budget ledger's
 * day or an approval's expiry.
 */
function testOverrides(env: NodeJS.ProcessEnv): Pick<HostContext, "now" | "apiRetryBaseMs"> {
  if (env.AGENT_RUNNER_TEST !== "1") return {};
  const now = env.AGENT_RUNNER_TEST_NOW;
  const raw = env.AGENT_RUNNER_TEST_API_RETRY_MS?.trim();
  const ms = raw ? Number(raw) : NaN;
  return {
    ...(now && Number.isFinite(Date.parse(now)) ? { now } : {}),
    ...(Number.isInteger(ms) && ms >= 0 ? { apiRetryBaseMs: ms } : {}),
  };
}

/**
 * `key=value,key2=value2` as the OTLP exporter spec writes headers (values
 * URL-encoded); a pair without `=` or with an empty key is left out.
 */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const eq = pair.indexOf("=");
    const key = eq > 0 ? pair.slice(0, eq).trim() : "";
    if (!key) continue;
    const raw = pair.slice(eq + 1).trim();
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {
      // Not URL-encoded after all: keep it as written.
    }
    out[key] = value;
  }
  return out;
}

export function otelEnv(env: NodeJS.ProcessEnv = process.env): OtelEnv | undefined {
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const headers = { ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) };
  if (!tracesEndpoint && !endpoint && !Object.keys(headers).length) return undefined;
  return { ...(tracesEndpoint ? { tracesEndpoint } : {}), ...(endpoint ? { endpoint } : {}), headers };
}

/** OTLP header values (and their raw, still URL-encoded forms): masked before anything can print them. */
export function otelSecretValues(host: Pick<HostContext, "otel">): string[] {
  return Object.values(host.otel?.headers ?? {}).flatMap((v) => [v, encodeURIComponent(v)]).filter((v, i, all) => v && all.indexOf(v) === i);
}

/**
 * The runner's cloud credential values (access keys, session tokens, client
 * secrets, the OIDC request token): masked and redacted like `secrets`, so a
 * cloud SDK's error message cannot print one. Files, paths, URLs and regions
 * are not secrets and stay readable.
 */
export function cloudSecretValues(host: Pick<HostContext, "sandbox">): string[] {
  return Object.entries(host.sandbox?.cloudEnv ?? {})
    // Paths (GOOGLE_APPLICATION_CREDENTIALS names a file) are not secrets: the files are hidden instead.
    .filter(([name, v]) => /SECRET|TOKEN|KEY|PASSWORD/i.test(name) && !/(_FILE|_PATH|_URL|_REGION)$/i.test(name) && v.length >= 8 && !v.startsWith("/"))
    .map(([, v]) => v);
}

/**
 * The model keys exported in the CLI's shell (ANTHROPIC_API_KEY, OPENAI_API_KEY …):
 * a shell user's keys live there, not in a `secrets` input. Every backend's
 * names are read; the parser takes only the chosen agent's (config/parse.ts),
 * so no other key reaches the agent.
 */
export function modelKeysFromEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const names = new Set(Object.values(MODEL_KEY_NAMES).flat());
  return pick(env, (k) => names.has(k) && Boolean(env[k]?.trim()));
}

/** The token `agent-runner logs` reads past runs with: GH_TOKEN (as gh uses it), else GITHUB_TOKEN. */
export function cliGitHubToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.GH_TOKEN?.trim() || env.GITHUB_TOKEN?.trim() || undefined;
}

/** Secret values straight from the raw input, so they are masked before anything can fail. */
export function rawSecretValues(raw: RawInputs): string[] {
  const values: string[] = [];
  for (const line of (raw.secrets ?? "").split(/\r?\n/)) {
    const eq = line.indexOf("=");
    if (eq > 0 && line.slice(eq + 1)) values.push(line.slice(eq + 1));
  }
  if (raw["github-token"]) values.push(raw["github-token"]);
  return values;
}
