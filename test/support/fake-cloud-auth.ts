/**
 * Fake cloud identity services on 127.0.0.1, for the gateway's Vertex and Azure signers.
 *
 * - {@link startFakeGoogleSts}: Google's workload identity federation as google-auth-library's
 *   `external_account` (identity pool) flow walks it: an OIDC subject token (from a file, or from
 *   a URL with a bearer, as google-github-actions/auth writes it), the STS token exchange
 *   (`POST /v1/token`) and, optionally, service account impersonation
 *   (`POST /v1/projects/-/serviceAccounts/<email>:generateAccessToken`). It writes the
 *   credentials file and mints short-lived access tokens; {@link FakeGoogleSts.accessTokenProblem}
 *   says whether a bearer is one it minted and still valid.
 * - {@link startFakeEntra}: a Microsoft Entra authority for @azure/identity's
 *   WorkloadIdentityCredential / ClientAssertionCredential: the tenant's OpenID configuration
 *   and its token endpoint (client credentials with a client assertion, which must be the
 *   federated token). @azure/identity accepts only an https authority, so it serves https with a
 *   self-signed certificate made by openssl for 127.0.0.1: the process that talks to it needs
 *   NODE_EXTRA_CA_CERTS={@link FakeEntra.caFile} (read by Node at start, so a child's env).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

/** google-auth-library refreshes a token this long before it expires (its eagerRefreshThresholdMillis default). */
export const GOOGLE_EAGER_REFRESH_MS = 5 * 60 * 1000;

const rand = (n = 12) => randomBytes(n).toString("hex");

interface Minted {
  token: string;
  expiresAt: number;
}

export interface FakeTokenRequest {
  method: string;
  path: string;
  /** Form fields or JSON body. */
  body: Record<string, unknown>;
  authorization?: string;
}

function readRequest(req: http.IncomingMessage): Promise<{ raw: string; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (raw += c));
    req.on("end", () => {
      let body: Record<string, unknown> = {};
      if (/json/.test(req.headers["content-type"] ?? "")) {
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          body = {};
        }
      } else body = Object.fromEntries(new URLSearchParams(raw));
      resolve({ raw, body });
    });
    req.on("error", reject);
  });
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

function closer(server: http.Server | https.Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}

// ------------------------------------------------------------------ Google STS

export interface FakeGoogleStsOptions {
  /** Folder for the credentials file and the OIDC token file (default: a new temp folder). */
  dir?: string;
  /**
   * How long an access token is used before google-auth-library refreshes it: the token's
   * lifetime is this plus the library's 5-minute early-refresh margin. Default one hour.
   */
  usableForMs?: number;
  /** Impersonate a service account after the STS exchange, as google-github-actions/auth does with `service_account` (default true). */
  impersonate?: boolean;
  /**
   * Where the OIDC subject token comes from: a file (`credential_source.file`), or a URL with a
   * bearer header, the shape google-github-actions/auth writes (ACTIONS_ID_TOKEN_REQUEST_URL and
   * ACTIONS_ID_TOKEN_REQUEST_TOKEN in the file). Default `file`.
   */
  subjectSource?: "file" | "url";
}

export interface FakeGoogleSts {
  url: string;
  /** The `external_account` credentials file (for GOOGLE_APPLICATION_CREDENTIALS). */
  credentialsFile: string;
  /** The OIDC token the exchange expects (the file's content, or what the URL answers). */
  oidcToken: string;
  /** With `subjectSource: "url"`: the bearer the OIDC URL requires (ACTIONS_ID_TOKEN_REQUEST_TOKEN's role). */
  oidcRequestToken?: string;
  /** The service account impersonated (when `impersonate`). */
  serviceAccount: string;
  /** Every access token handed out for the model API (the impersonated ones, or the STS ones without impersonation), in order. */
  accessTokens(): string[];
  /** Every credential value this fake made or holds: for leak checks. */
  secrets(): string[];
  /** Why `bearer` is not a valid access token of this fake, or undefined when it is. */
  accessTokenProblem(bearer: string | undefined): string | undefined;
  requests: FakeTokenRequest[];
  close(): Promise<void>;
}

export async function startFakeGoogleSts(options: FakeGoogleStsOptions = {}): Promise<FakeGoogleSts> {
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), "fake-gcp-"));
  const impersonate = options.impersonate ?? true;
  const lifetimeMs = GOOGLE_EAGER_REFRESH_MS + (options.usableForMs ?? 60 * 60 * 1000);
  const audience = "//iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/github/providers/agent-runner";
  const serviceAccount = "agent-runner@fake-project.iam.gserviceaccount.com";
  const oidcToken = `eyJhbGciOiJSUzI1NiJ9.${rand(24)}.${rand(24)}`;
  const oidcRequestToken = options.subjectSource === "url" ? `oidc-request-${rand()}` : undefined;
  const stsTokens: Minted[] = [];
  const accessTokens: Minted[] = [];
  const requests: FakeTokenRequest[] = [];

  const server = http.createServer((req, res) => {
    readRequest(req).then(({ body }) => {
      const url = new URL(req.url ?? "/", "http://fake");
      requests.push({ method: req.method ?? "GET", path: req.url ?? "/", body, authorization: req.headers.authorization });
      if (req.method === "GET" && url.pathname === "/oidc") {
        if (req.headers.authorization !== `Bearer ${oidcRequestToken}`) return json(res, 401, { message: "bad OIDC request token" });
        if (!url.searchParams.get("audience")) return json(res, 400, { message: "audience missing" });
        return json(res, 200, { value: oidcToken });
      }
      if (req.method === "POST" && url.pathname === "/v1/token") {
        if (body.grant_type !== "urn:ietf:params:oauth:grant-type:token-exchange") return json(res, 400, { error: "unsupported_grant_type" });
        if (body.subject_token !== oidcToken) return json(res, 400, { error: "invalid_grant", error_description: "subject token not recognised" });
        if (body.audience !== audience) return json(res, 400, { error: "invalid_target", error_description: "audience" });
        if (body.subject_token_type !== "urn:ietf:params:oauth:token-type:jwt") return json(res, 400, { error: "invalid_request" });
        const minted = { token: `ya29.sts-${rand()}`, expiresAt: Date.now() + lifetimeMs };
        stsTokens.push(minted);
        if (!impersonate) accessTokens.push(minted);
        return json(res, 200, {
          access_token: minted.token,
          issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
          token_type: "Bearer",
          expires_in: Math.floor(lifetimeMs / 1000),
        });
      }
      const impersonation = /^\/v1\/projects\/-\/serviceAccounts\/([^/:]+):generateAccessToken$/.exec(url.pathname);
      if (req.method === "POST" && impersonation && impersonate) {
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
        const sts = stsTokens.find((t) => t.token === bearer);
        if (!sts || sts.expiresAt < Date.now()) return json(res, 401, { error: { code: 401, message: "STS token missing or expired", status: "UNAUTHENTICATED" } });
        if (decodeURIComponent(impersonation[1]!) !== serviceAccount) return json(res, 403, { error: { code: 403, message: "no such service account", status: "PERMISSION_DENIED" } });
        const minted = { token: `ya29.sa-${rand()}`, expiresAt: Date.now() + lifetimeMs };
        accessTokens.push(minted);
        return json(res, 200, { accessToken: minted.token, expireTime: new Date(minted.expiresAt).toISOString() });
      }
      return json(res, 404, { error: { code: 404, message: `fake STS: no ${req.method} ${url.pathname}`, status: "NOT_FOUND" } });
    }, () => res.destroy());
  });
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}`;

  // Only the file source has a token file (the URL source is what the Actions runner offers instead).
  const oidcFile = path.join(dir, "oidc-token.jwt");
  if (options.subjectSource !== "url") writeFileSync(oidcFile, oidcToken);
  const credentialSource =
    options.subjectSource === "url"
      ? {
          url: `${url}/oidc?api-version=2.0&audience=${encodeURIComponent(`https:${audience}`)}`,
          headers: { Authorization: `Bearer ${oidcRequestToken}` },
          format: { type: "json", subject_token_field_name: "value" },
        }
      : { file: oidcFile };
  const credentialsFile = path.join(dir, `gha-creds-${rand(8)}.json`);
  writeFileSync(
    credentialsFile,
    JSON.stringify({
      type: "external_account",
      audience,
      subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
      token_url: `${url}/v1/token`,
      ...(impersonate ? { service_account_impersonation_url: `${url}/v1/projects/-/serviceAccounts/${serviceAccount}:generateAccessToken` } : {}),
      credential_source: credentialSource,
    }),
  );

  return {
    url,
    credentialsFile,
    oidcToken,
    oidcRequestToken,
    serviceAccount,
    requests,
    accessTokens: () => accessTokens.map((t) => t.token),
    secrets: () => [oidcToken, ...(oidcRequestToken ? [oidcRequestToken] : []), ...stsTokens.map((t) => t.token), ...accessTokens.map((t) => t.token)],
    accessTokenProblem: (bearer) => {
      if (!bearer) return "no bearer";
      const t = accessTokens.find((m) => m.token === bearer);
      if (!t) return "a bearer this STS never minted";
      if (t.expiresAt < Date.now()) return "an expired bearer";
      return undefined;
    },
    close: closer(server),
  };
}

// ------------------------------------------------------------------ Microsoft Entra

export interface FakeEntraOptions {
  /** Folder for the certificate and the federated token file (default: a new temp folder). */
  dir?: string;
  /** Access token lifetime in seconds (default one hour). */
  lifetimeSeconds?: number;
}

export interface FakeEntra {
  /** `https://127.0.0.1:PORT`: AZURE_AUTHORITY_HOST. */
  authorityHost: string;
  tenantId: string;
  clientId: string;
  /** The federated token file (AZURE_FEDERATED_TOKEN_FILE): the client assertion the token endpoint expects. */
  federatedTokenFile: string;
  federatedToken: string;
  /**
   * The runner's OIDC token request, as a job with `id-token: write` has it
   * (ACTIONS_ID_TOKEN_REQUEST_URL / _TOKEN): `GET <url>&audience=api://AzureADTokenExchange` with
   * the bearer answers `{ value: federatedToken }`.
   */
  oidcRequest: { url: string; token: string };
  /** The self-signed certificate to trust: NODE_EXTRA_CA_CERTS of the process that talks to the authority. */
  caFile: string;
  accessTokens(): string[];
  secrets(): string[];
  /** Why `bearer` is not a valid token of this authority for Azure OpenAI, or undefined. */
  accessTokenProblem(bearer: string | undefined): string | undefined;
  requests: FakeTokenRequest[];
  close(): Promise<void>;
}

/** A self-signed certificate for 127.0.0.1, made by openssl (key and certificate in `dir`). */
export function selfSignedCertificate(dir: string): { key: string; cert: string; certFile: string } {
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
    { stdio: "ignore" },
  );
  return { key: readFileSync(keyFile, "utf8"), cert: readFileSync(certFile, "utf8"), certFile };
}

export const AZURE_COGNITIVE_SCOPE = "https://cognitiveservices.azure.com/.default";

export async function startFakeEntra(options: FakeEntraOptions = {}): Promise<FakeEntra> {
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), "fake-entra-"));
  const { key, cert, certFile } = selfSignedCertificate(dir);
  const tenantId = "11111111-2222-3333-4444-555555555555";
  const clientId = "66666666-7777-8888-9999-000000000000";
  const federatedToken = `eyJhbGciOiJSUzI1NiJ9.${rand(24)}.${rand(24)}`;
  const federatedTokenFile = path.join(dir, "azure-identity-token");
  writeFileSync(federatedTokenFile, federatedToken);
  const lifetime = options.lifetimeSeconds ?? 3600;
  const oidcRequestToken = `oidc-request-${rand()}`;
  const minted: Minted[] = [];
  const requests: FakeTokenRequest[] = [];
  let base = "";

  const server = https.createServer({ key, cert }, (req, res) => {
    readRequest(req).then(({ body }) => {
      const url = new URL(req.url ?? "/", "https://fake");
      requests.push({ method: req.method ?? "GET", path: req.url ?? "/", body, authorization: req.headers.authorization });
      if (req.method === "GET" && url.pathname === "/oidc") {
        if (req.headers.authorization !== `Bearer ${oidcRequestToken}`) return json(res, 401, { message: "bad OIDC request token" });
        if (url.searchParams.get("audience") !== "api://AzureADTokenExchange") return json(res, 400, { message: "wrong audience" });
        return json(res, 200, { value: federatedToken });
      }
      if (req.method === "GET" && url.pathname === `/${tenantId}/v2.0/.well-known/openid-configuration`) {
        return json(res, 200, {
          token_endpoint: `${base}/${tenantId}/oauth2/v2.0/token`,
          authorization_endpoint: `${base}/${tenantId}/oauth2/v2.0/authorize`,
          end_session_endpoint: `${base}/${tenantId}/oauth2/v2.0/logout`,
          jwks_uri: `${base}/${tenantId}/discovery/v2.0/keys`,
          issuer: `${base}/${tenantId}/v2.0`,
        });
      }
      if (req.method === "POST" && url.pathname === `/${tenantId}/oauth2/v2.0/token`) {
        if (body.grant_type !== "client_credentials") return json(res, 400, { error: "unsupported_grant_type" });
        if (body.client_id !== clientId) return json(res, 400, { error: "unauthorized_client", error_description: "AADSTS700016: unknown client" });
        if (body.client_assertion_type !== "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || body.client_assertion !== federatedToken)
          return json(res, 401, { error: "invalid_client", error_description: "AADSTS700024: client assertion not recognised" });
        if (body.scope !== AZURE_COGNITIVE_SCOPE) return json(res, 400, { error: "invalid_scope", error_description: String(body.scope) });
        const token = { token: `eyJ0eXAiOiJKV1QifQ.entra-${rand()}.sig`, expiresAt: Date.now() + lifetime * 1000 };
        minted.push(token);
        return json(res, 200, { token_type: "Bearer", access_token: token.token, expires_in: lifetime, ext_expires_in: lifetime });
      }
      return json(res, 404, { error: "not_found", error_description: `fake Entra: no ${req.method} ${url.pathname}` });
    }, () => res.destroy());
  });
  const port = await listen(server);
  base = `https://127.0.0.1:${port}`;
  return {
    authorityHost: base,
    tenantId,
    clientId,
    federatedToken,
    federatedTokenFile,
    oidcRequest: { url: `${base}/oidc?api-version=2.0`, token: oidcRequestToken },
    caFile: certFile,
    requests,
    accessTokens: () => minted.map((t) => t.token),
    secrets: () => [federatedToken, oidcRequestToken, ...minted.map((t) => t.token)],
    accessTokenProblem: (bearer) => {
      if (!bearer) return "no bearer";
      const t = minted.find((m) => m.token === bearer);
      if (!t) return "a bearer this authority never issued";
      if (t.expiresAt < Date.now()) return "an expired bearer";
      return undefined;
    },
    close: closer(server),
  };
}
