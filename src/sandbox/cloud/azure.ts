/**
 * Azure (Azure OpenAI, and Claude on Microsoft Foundry) for the model
 * gateway: where requests go (the agent keeps its wire API's routes; see
 * createUpstream), and the credential that signs them.
 *
 * Credentials, read on the host, in this order:
 * - an `AZURE_OPENAI_API_KEY` given in `secrets` (withheld from the agent): the
 *   `api-key` header (`x-api-key` on Foundry's Anthropic API);
 * - Microsoft Entra through @azure/identity (imported only when a run uses
 *   Azure), scope https://cognitiveservices.azure.com/.default, as a bearer the
 *   library refreshes before it expires:
 *   - AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE: workload
 *     identity (WorkloadIdentityCredential);
 *   - AZURE_CLIENT_ID and AZURE_TENANT_ID in a job with `id-token: write`: a
 *     client assertion from the job's OIDC token, fetched on the host when
 *     needed (ClientAssertionCredential), so a long run never outlives it;
 *   - otherwise azure/login's session (AzureCliCredential).
 */
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConfigurationError, errorMessage } from "../../errors.js";
import type { CloudUpstream, CloudUpstreamOptions } from "./types.js";
import { fetchHonouringProxy } from "../../shared/fetch.js";

export const AZURE_SCOPE = "https://cognitiveservices.azure.com/.default";
/** The audience GitHub's OIDC token must carry for an Entra federated credential. */
export const AZURE_OIDC_AUDIENCE = "api://AzureADTokenExchange";

export type AzureWire = "openai" | "anthropic";

export interface AzureAuth {
  /** How this run authenticates, for the log (never a value). */
  readonly kind: "api-key" | "workload-identity" | "github-oidc" | "azure-cli";
  /** Headers that sign one request. */
  headers(): Promise<Record<string, string>>;
}

export interface AzureCredentialSource {
  /** AZURE_OPENAI_API_KEY from `secrets`. */
  apiKey?: string;
  tenantId?: string;
  clientId?: string;
  federatedTokenFile?: string;
  /** AZURE_AUTHORITY_HOST (sovereign clouds; tests). */
  authorityHost?: string;
  /** The runner's OIDC token request (ACTIONS_ID_TOKEN_REQUEST_URL / _TOKEN), for a client assertion. */
  oidcRequest?: { url: string; token: string };
  /** Use azure/login's session when nothing else is given. */
  allowCli: boolean;
}

/** The credential source the runner's environment and the run's secrets describe. */
export function azureCredentialSource(env: Record<string, string | undefined>, secrets: Record<string, string>): AzureCredentialSource {
  return {
    apiKey: secrets.AZURE_OPENAI_API_KEY || undefined,
    tenantId: env.AZURE_TENANT_ID || undefined,
    clientId: env.AZURE_CLIENT_ID || undefined,
    federatedTokenFile: env.AZURE_FEDERATED_TOKEN_FILE || undefined,
    authorityHost: env.AZURE_AUTHORITY_HOST || undefined,
    oidcRequest: env.ACTIONS_ID_TOKEN_REQUEST_URL && env.ACTIONS_ID_TOKEN_REQUEST_TOKEN ? { url: env.ACTIONS_ID_TOKEN_REQUEST_URL, token: env.ACTIONS_ID_TOKEN_REQUEST_TOKEN } : undefined,
    allowCli: azureCliSession(env),
  };
}

/** Whether azure/login left an Azure CLI session: its profile in ~/.azure, or where AZURE_CONFIG_DIR moves it. */
function azureCliSession(env: Record<string, string | undefined>): boolean {
  const dir = env.AZURE_CONFIG_DIR || path.join(env.HOME || os.homedir(), ".azure");
  return existsSync(path.join(dir, "azureProfile.json"));
}

const AUTH_ACTIONS = "azure/login (with client-id, tenant-id and subscription-id, and `permissions: id-token: write`), or AZURE_OPENAI_API_KEY in `secrets`";

/** The job's OIDC token for Entra, from the runner's token service (what azure/login fetches). */
async function githubOidcToken(req: { url: string; token: string }): Promise<string> {
  const url = new URL(req.url);
  url.searchParams.set("audience", AZURE_OIDC_AUDIENCE);
  const res = await fetchHonouringProxy(url, { headers: { authorization: `Bearer ${req.token}`, accept: "application/json" } });
  if (!res.ok) throw new Error(`the runner's OIDC token service answered ${res.status}`);
  const body = (await res.json()) as { value?: unknown };
  if (typeof body.value !== "string" || !body.value) throw new Error("the runner's OIDC token service returned no token");
  return body.value;
}

/**
 * The signer's credential. An api-key signs as it is; an Entra credential is
 * asked for a token through getBearerTokenProvider, which caches it and
 * refreshes it ahead of its expiry.
 */
export async function createAzureAuth(source: AzureCredentialSource, wire: AzureWire): Promise<AzureAuth> {
  if (source.apiKey) {
    const key = source.apiKey;
    return { kind: "api-key", headers: async (): Promise<Record<string, string>> => ({ [wire === "anthropic" ? "x-api-key" : "api-key"]: key }) };
  }
  const identity = await import("@azure/identity");
  // The authority comes from the workflow, not the agent: instance discovery (a request to
  // login.microsoftonline.com to validate it) adds nothing and fails on private clouds.
  const common = { authorityHost: source.authorityHost, disableInstanceDiscovery: true };
  let kind: AzureAuth["kind"];
  let credential: import("@azure/identity").TokenCredential;
  if (source.tenantId && source.clientId && source.federatedTokenFile) {
    kind = "workload-identity";
    credential = new identity.WorkloadIdentityCredential({ tenantId: source.tenantId, clientId: source.clientId, tokenFilePath: source.federatedTokenFile, ...common });
  } else if (source.tenantId && source.clientId && source.oidcRequest) {
    kind = "github-oidc";
    const oidc = source.oidcRequest;
    credential = new identity.ClientAssertionCredential(source.tenantId, source.clientId, () => githubOidcToken(oidc), common);
  } else if (source.allowCli) {
    kind = "azure-cli";
    credential = new identity.AzureCliCredential({ tenantId: source.tenantId });
  } else {
    throw new ConfigurationError(
      `Input 'provider': azure needs credentials on the runner; looked for AZURE_OPENAI_API_KEY in secrets, AZURE_CLIENT_ID with AZURE_TENANT_ID (and AZURE_FEDERATED_TOKEN_FILE or an OIDC token), and azure/login's session. Add ${AUTH_ACTIONS}.`,
    );
  }
  const token = identity.getBearerTokenProvider(credential, AZURE_SCOPE);
  return { kind, headers: async () => ({ authorization: `Bearer ${await token()}` }) };
}

/**
 * Whether any Azure credential is present, checked before the agent starts so
 * a run without one fails at once (the CLI session is only probed for its
 * folder; a logged-out session fails at the first request).
 */
export function azureCredentialProblem(source: AzureCredentialSource): string | undefined {
  if (source.apiKey) return undefined;
  if (source.tenantId && source.clientId && (source.federatedTokenFile || source.oidcRequest)) {
    if (source.federatedTokenFile) {
      try {
        readFileSync(source.federatedTokenFile);
      } catch {
        return `Input 'provider': azure: AZURE_FEDERATED_TOKEN_FILE names a file that cannot be read. Add ${AUTH_ACTIONS}.`;
      }
    }
    return undefined;
  }
  if (source.allowCli) return undefined;
  return `Input 'provider': azure needs credentials on the runner; looked for AZURE_OPENAI_API_KEY in secrets, AZURE_CLIENT_ID with AZURE_TENANT_ID, and azure/login's session, and found none. Add ${AUTH_ACTIONS}.`;
}

// ------------------------------------------------------------------ the gateway's upstream

/**
 * Azure behind the gateway. The agent keeps speaking its wire API at the
 * gateway as usual; the upstream is the resource's API for that wire:
 * `<base-url>/openai/v1` (Azure OpenAI's v1 API: Responses and Chat
 * Completions, the deployment name as the model) or `<base-url>/anthropic`
 * (Claude on Microsoft Foundry).
 */
export async function createUpstream(opts: CloudUpstreamOptions): Promise<CloudUpstream> {
  if (opts.wire === "gemini") throw new ConfigurationError("Input 'provider': azure serves the OpenAI and Anthropic APIs; this agent speaks the Gemini API.");
  if (!opts.baseUrl)
    throw new ConfigurationError(
      "Input 'base-url': provider azure needs the resource's endpoint: https://<resource>.openai.azure.com (Azure OpenAI) or https://<resource>.services.ai.azure.com (Claude on Microsoft Foundry).",
    );
  const source = azureCredentialSource(opts.env, opts.secrets);
  const problem = azureCredentialProblem(source);
  if (problem) throw new ConfigurationError(problem);
  const wire: AzureWire = opts.wire;
  const auth = await createAzureAuth(source, wire);
  if (auth.kind !== "api-key") {
    // A token now, so a federation that does not work fails before the agent starts.
    try {
      await auth.headers();
    } catch (e) {
      throw new ConfigurationError(`Input 'provider': azure could not get a Microsoft Entra token (${auth.kind}: ${errorMessage(e).slice(0, 300)}). Check ${AUTH_ACTIONS}.`);
    }
  }
  const upstream = new URL(opts.baseUrl);
  const suffix = wire === "openai" ? "/openai/v1" : "/anthropic";
  if (!upstream.pathname.replace(/\/+$/, "").endsWith(suffix)) upstream.pathname = `${upstream.pathname.replace(/\/+$/, "")}${suffix}`;
  return {
    provider: "azure",
    upstream,
    // Azure OpenAI's classic routes name their API version in the query; Claude Code marks beta requests (`beta=true`).
    queryParams: ["api-version", "beta"],
    // genai-prices' Azure table prices models by their ids (`gpt-4o`); a deployment of another name needs `model-prices`.
    priceTable: "azure",
    credentialSource: { "api-key": "AZURE_OPENAI_API_KEY in secrets", "workload-identity": "AZURE_FEDERATED_TOKEN_FILE (workload identity)", "github-oidc": "the job's OIDC token (AZURE_CLIENT_ID, AZURE_TENANT_ID)", "azure-cli": "azure/login's Azure CLI session" }[auth.kind],
    sign: () => auth.headers(),
  };
}
