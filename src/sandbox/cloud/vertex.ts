/**
 * Vertex AI for the model gateway: where requests go, which agent paths are
 * model requests, and the OAuth bearer that signs them.
 *
 * Credentials: the file GOOGLE_APPLICATION_CREDENTIALS names, read on the host
 * (google-github-actions/auth writes an `external_account` file for workload
 * identity federation, or a service account key). google-auth-library does the
 * hard part: the STS exchange, service account impersonation, and refreshing
 * the access token before it expires (getRequestHeaders, per request). The
 * library is imported only when a run uses Vertex.
 *
 * Paths: the agent's SDK builds Vertex paths from a project and a location the
 * sandbox is given as placeholders (the real ones are the workflow's, never the
 * agent's); the gateway puts the real project and location in. Gemini CLI
 * speaks Vertex's express form (`/v1beta1/publishers/google/models/…`, with an
 * API key it only has as the run's placeholder), which maps onto the same
 * project path.
 */
import { readFileSync } from "node:fs";
import { ConfigurationError, errorMessage } from "../../errors.js";
import type { ModelProvider } from "../../shared/agents.js";
import type { CloudRoute, CloudUpstream, CloudUpstreamOptions } from "./types.js";

export const VERTEX_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** The regional Vertex endpoint, as the providers' SDKs pick it (no version path). */
export function vertexEndpoint(region: string): string {
  if (region === "global") return "https://aiplatform.googleapis.com";
  if (region === "us" || region === "eu") return `https://aiplatform.${region}.rep.googleapis.com`;
  return `https://${region}-aiplatform.googleapis.com`;
}

export interface VertexAuth {
  /** Headers that sign one request: `authorization` (and `x-goog-user-project` when the credentials name one). */
  headers(): Promise<Record<string, string>>;
}

interface RequestHeadersClient {
  getRequestHeaders(): Promise<Headers | Record<string, string>>;
}

const AUTH_ACTION = "google-github-actions/auth (with workload_identity_provider, and `permissions: id-token: write`)";

/** The credentials file's JSON, checked for a type this gateway signs with. */
function readCredentials(file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new ConfigurationError(`Input 'provider': vertex: the credentials file GOOGLE_APPLICATION_CREDENTIALS names could not be read (${errorMessage(e)}). Add ${AUTH_ACTION} before this step.`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ConfigurationError("Input 'provider': vertex: the file GOOGLE_APPLICATION_CREDENTIALS names is not a JSON object.");
  return parsed as Record<string, unknown>;
}

/**
 * The auth client for a credentials file, built with the constructor of its
 * type (the library's generic loaders print warnings meant for untrusted
 * files; this one is the workflow's own).
 */
async function authClient(json: Record<string, unknown>): Promise<RequestHeadersClient> {
  const imported = await import("google-auth-library");
  // A CommonJS package: bundled, its exports come as the module's default.
  const lib = "IdentityPoolClient" in imported ? imported : (imported as { default: typeof imported }).default;
  switch (json.type) {
    case "external_account": {
      const source = (json.credential_source ?? {}) as Record<string, unknown>;
      if (typeof source.file !== "string" && typeof source.url !== "string")
        throw new ConfigurationError(
          "Input 'provider': vertex: the external_account credentials take their subject token from neither a file nor a URL; only those (what google-github-actions/auth writes) are supported.",
        );
      return new lib.IdentityPoolClient({ ...(json as object), scopes: [VERTEX_SCOPE] } as ConstructorParameters<typeof lib.IdentityPoolClient>[0]);
    }
    case "service_account":
      if (typeof json.client_email !== "string" || typeof json.private_key !== "string")
        throw new ConfigurationError("Input 'provider': vertex: the service_account credentials file lacks client_email or private_key.");
      return new lib.JWT({ email: json.client_email, key: json.private_key, keyId: typeof json.private_key_id === "string" ? json.private_key_id : undefined, scopes: [VERTEX_SCOPE] });
    case "authorized_user":
      return new lib.UserRefreshClient({
        clientId: String(json.client_id ?? ""),
        clientSecret: String(json.client_secret ?? ""),
        refreshToken: String(json.refresh_token ?? ""),
      });
    default:
      throw new ConfigurationError(
        `Input 'provider': vertex: credentials of type '${String(json.type)}' are not supported; use workload identity federation (external_account) or a service account key. Add ${AUTH_ACTION} before this step.`,
      );
  }
}

/**
 * The signer's bearer source for the credentials file. Tokens are fetched on
 * first use and refreshed by the library before they expire; a failure is
 * the request's failure (the gateway answers 502), not the run's.
 */
export async function createVertexAuth(credentialsFile: string): Promise<VertexAuth> {
  const client = await authClient(readCredentials(credentialsFile));
  return {
    headers: async () => {
      const h = await client.getRequestHeaders();
      const get = (name: string) => (h instanceof Headers ? h.get(name) : (h[name] ?? h[name.toLowerCase()])) ?? undefined;
      const authorization = get("authorization") ?? get("Authorization");
      if (!authorization) throw new Error("google-auth-library returned no authorization header");
      const quota = get("x-goog-user-project");
      return { authorization, ...(quota ? { "x-goog-user-project": quota } : {}) };
    },
  };
}

/** Where the run's Vertex credentials are, or the error naming what was looked for. */
export function vertexCredentialsFile(env: Record<string, string | undefined>): string {
  const file = env.GOOGLE_APPLICATION_CREDENTIALS || env.GOOGLE_GHA_CREDS_PATH;
  if (!file)
    throw new ConfigurationError(
      `Input 'provider': vertex needs Google Cloud credentials on the runner; looked for GOOGLE_APPLICATION_CREDENTIALS (or GOOGLE_GHA_CREDS_PATH) and found neither. Add ${AUTH_ACTION} before this step.`,
    );
  return file;
}

// ------------------------------------------------------------------ the gateway's upstream

const MODEL_ID = "([A-Za-z0-9][A-Za-z0-9._@-]*)";
const ANY = "[^/]+";

/**
 * The Vertex routes each wire API's CLIs call, the wire route whose rules
 * apply to them, and the upstream path with the workflow's project and
 * region in place of the agent's placeholders.
 */
export function vertexRoutes(wire: ModelProvider, project: string, region: string): CloudRoute[] {
  const at = (version: string, publisher: string, model: string, verb: string) =>
    `/${version}/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}/publishers/${publisher}/models/${model}:${verb}`;
  if (wire === "openai")
    // Vertex's OpenAI-compatible Chat Completions (Gemini models as `google/<model>`), for OpenCode.
    return [
      {
        method: "POST",
        path: /^\/v1\/chat\/completions$/,
        canonical: "/v1/chat/completions",
        stream: false,
        upstreamPath: () => `/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}/endpoints/openapi/chat/completions`,
      },
    ];
  if (wire === "anthropic") {
    const claude = (verb: string) => new RegExp(`^/v1/projects/${ANY}/locations/${ANY}/publishers/anthropic/models/${MODEL_ID}:${verb}$`);
    return [
      { method: "POST", path: new RegExp(`^/v1/projects/${ANY}/locations/${ANY}/publishers/anthropic/models/(count-tokens):rawPredict$`), canonical: "/v1/messages/count_tokens", stream: false, upstreamPath: () => at("v1", "anthropic", "count-tokens", "rawPredict") },
      { method: "POST", path: claude("streamRawPredict"), canonical: "/v1/messages", stream: true, upstreamPath: (m) => at("v1", "anthropic", m[1]!, "streamRawPredict") },
      { method: "POST", path: claude("rawPredict"), canonical: "/v1/messages", stream: false, upstreamPath: (m) => at("v1", "anthropic", m[1]!, "rawPredict") },
    ];
  }
  // Gemini: Vertex's express form (what Gemini CLI and OpenCode's Google provider call with an API key), and the project form.
  const gemini = (verb: string, stream: boolean): CloudRoute[] =>
    [`^/(?:v1|v1beta1)/publishers/google/models/${MODEL_ID}:${verb}$`, `^/(?:v1|v1beta1)/projects/${ANY}/locations/${ANY}/publishers/google/models/${MODEL_ID}:${verb}$`].map((re) => ({
      method: "POST" as const,
      path: new RegExp(re),
      // The Gemini API route whose rules apply (the model comes from the path).
      canonical: `/v1beta/models/vertex:${verb}`,
      stream,
      upstreamPath: (m: RegExpExecArray) => at(m.input.split("/")[1]!, "google", m[1]!, verb),
    }));
  return [...gemini("streamGenerateContent", true), ...gemini("generateContent", false), ...gemini("countTokens", false)];
}

export async function createUpstream(opts: CloudUpstreamOptions): Promise<CloudUpstream> {
  const project = opts.cloud.vertexProject;
  if (!project)
    throw new ConfigurationError(`Input 'provider': vertex needs a Google Cloud project: set 'vertex-project', or GOOGLE_CLOUD_PROJECT on the runner (${AUTH_ACTION} sets it).`);
  const region = opts.cloud.vertexRegion || "global";
  const file = vertexCredentialsFile(opts.env);
  const auth = await createVertexAuth(file);
  // A token now, so a federation that does not work fails before the agent starts.
  try {
    await auth.headers();
  } catch (e) {
    throw new ConfigurationError(`Input 'provider': vertex could not get an access token with the credentials GOOGLE_APPLICATION_CREDENTIALS names (${errorMessage(e).slice(0, 300)}). Check ${AUTH_ACTION}.`);
  }
  return {
    provider: "vertex",
    upstream: new URL(opts.baseUrl ?? vertexEndpoint(region)),
    // Only `alt=sse` (Gemini's streams) and the Anthropic SDK's `beta=true`: Google's system parameters ($userProject, quotaUser) would move billing.
    queryParams: ["alt", "beta"],
    routes: vertexRoutes(opts.wire, project, region),
    // genai-prices' Google table knows Vertex's ids (`claude-sonnet-4-5@20250929`, `gemini-2.5-pro`).
    priceTable: "google",
    credentialSource: "GOOGLE_APPLICATION_CREDENTIALS",
    sign: () => auth.headers(),
  };
}
