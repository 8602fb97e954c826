/**
 * The Vertex and Azure credentials of the gateway, against fake identity services on 127.0.0.1:
 * google-auth-library's workload identity federation flow (external_account file, STS exchange,
 * service account impersonation) with tokens that expire mid-test, and @azure/identity's
 * workload identity and client assertion flows against a fake Entra authority.
 */
import tls from "node:tls";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVertexAuth, vertexCredentialsFile, vertexEndpoint, vertexRoutes } from "../../src/sandbox/cloud/vertex.js";
import { azureCredentialProblem, azureCredentialSource, createAzureAuth } from "../../src/sandbox/cloud/azure.js";
import { ConfigurationError } from "../../src/errors.js";
import { startFakeEntra, startFakeGoogleSts, type FakeEntra } from "../support/fake-cloud-auth.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bearerOf = (h: Record<string, string>) => /^Bearer (.+)$/.exec(h.authorization ?? "")?.[1];

describe("Vertex paths", () => {
  /** The upstream path the gateway sends an agent path to (cloudRouteDecision's rule: the first route of the method whose path matches), or undefined. */
  const target = (wire: "anthropic" | "gemini", method: string, p: string, project = "my-proj", region = "us-east5") => {
    const route = vertexRoutes(wire, project, region).find((r) => r.method === method && r.path.test(p));
    const m = route?.path.exec(p);
    return route && m ? { path: route.upstreamPath!(m), model: m[1], canonical: route.canonical, stream: route.stream } : undefined;
  };

  it("maps the CLIs' Vertex paths onto the workflow's project and location, and nothing else", () => {
    expect(target("anthropic", "POST", "/v1/projects/agent-runner/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict")).toEqual({
      path: "/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
      model: "claude-sonnet-4-5@20250929",
      canonical: "/v1/messages",
      stream: true,
    });
    expect(target("anthropic", "POST", "/v1/projects/x/locations/y/publishers/anthropic/models/count-tokens:rawPredict")).toMatchObject({
      path: "/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict",
      canonical: "/v1/messages/count_tokens",
    });
    // Gemini CLI's express form, and the project form.
    expect(target("gemini", "POST", "/v1beta1/publishers/google/models/gemini-2.5-pro:streamGenerateContent", "p", "europe-west4")).toEqual({
      path: "/v1beta1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent",
      model: "gemini-2.5-pro",
      canonical: "/v1beta/models/vertex:streamGenerateContent",
      stream: true,
    });
    expect(target("gemini", "POST", "/v1/projects/a/locations/b/publishers/google/models/gemini-2.5-flash:generateContent")?.path).toBe(
      "/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent",
    );
    const refused: Array<["anthropic" | "gemini", string, string]> = [
      ["gemini", "GET", "/v1/projects/p/locations/r/publishers/google/models/gemini-2.5-pro:generateContent"],
      ["gemini", "POST", "/v1/projects/p/locations/r/publishers/google/models/gemini-2.5-pro:predict"],
      ["anthropic", "POST", "/v1/projects/p/locations/r/publishers/anthropic/models/claude:streamGenerateContent"],
      ["gemini", "POST", "/v1/projects/p/locations/r/publishers/anthropic/models/claude:streamRawPredict"],
      ["anthropic", "POST", "/v1/projects/p/locations/r/endpoints/123:predict"],
      ["anthropic", "POST", "/v1/projects/p/locations/r/publishers/meta/models/llama:rawPredict"],
      ["gemini", "POST", "/v1/projects/p/locations/r/datasets"],
      ["gemini", "POST", "/v1/projects/p/locations/r/publishers/google/models/a/b:generateContent"],
      ["gemini", "POST", "/v1/projects/p/locations/r/publishers/google/models/../models/x:generateContent"],
    ];
    for (const [wire, method, p] of refused) expect(target(wire, method, p), `${method} ${p}`).toBeUndefined();
    expect(vertexEndpoint("global")).toBe("https://aiplatform.googleapis.com");
    expect(vertexEndpoint("us-east5")).toBe("https://us-east5-aiplatform.googleapis.com");
    expect(vertexEndpoint("eu")).toBe("https://aiplatform.eu.rep.googleapis.com");
  });

  it("fails before anything starts when no credentials file is named, naming provider and the auth action", () => {
    expect(() => vertexCredentialsFile({})).toThrow(ConfigurationError);
    expect(() => vertexCredentialsFile({})).toThrow(/'provider': vertex.*GOOGLE_APPLICATION_CREDENTIALS.*google-github-actions\/auth/);
    expect(vertexCredentialsFile({ GOOGLE_APPLICATION_CREDENTIALS: "/x/gha-creds-1.json" })).toBe("/x/gha-creds-1.json");
  });
});

describe("Vertex bearer (google-auth-library, workload identity federation)", () => {
  it("mints the bearer through the OIDC URL, the STS exchange and impersonation, and refreshes it once it nears expiry", async () => {
    // Usable for 1.5 s: the library refreshes 5 minutes before the stated expiry.
    const sts = await startFakeGoogleSts({ subjectSource: "url", usableForMs: 1500 });
    try {
      const auth = await createVertexAuth(sts.credentialsFile);
      const first = bearerOf(await auth.headers());
      expect(bearerOf(await auth.headers())).toBe(first);
      await sleep(1700);
      const second = bearerOf(await auth.headers());
      expect(second).not.toBe(first);
      expect(sts.accessTokens()).toEqual([first, second]);
      expect(sts.accessTokenProblem(first)).toBeUndefined();
      expect(sts.accessTokenProblem(second)).toBeUndefined();
      // Each token came from the whole flow: OIDC request, STS exchange, impersonation.
      expect(sts.requests.map((r) => `${r.method} ${r.path.split("?")[0]}`)).toEqual([
        "GET /oidc",
        "POST /v1/token",
        `POST /v1/projects/-/serviceAccounts/${sts.serviceAccount}:generateAccessToken`,
        "GET /oidc",
        "POST /v1/token",
        `POST /v1/projects/-/serviceAccounts/${sts.serviceAccount}:generateAccessToken`,
      ]);
    } finally {
      await sts.close();
    }
  });

  it("takes the STS token itself without impersonation, from a token file", async () => {
    const sts = await startFakeGoogleSts({ impersonate: false });
    try {
      const auth = await createVertexAuth(sts.credentialsFile);
      const bearer = bearerOf(await auth.headers());
      expect(sts.accessTokenProblem(bearer)).toBeUndefined();
      expect(bearer).toMatch(/^ya29\.sts-/);
    } finally {
      await sts.close();
    }
  });

  it("refuses unreadable and unsupported credentials files with a ConfigurationError naming provider", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "vertex-creds-"));
    await expect(createVertexAuth(path.join(dir, "missing.json"))).rejects.toThrow(/'provider': vertex.*google-github-actions\/auth/);
    const odd = path.join(dir, "odd.json");
    writeFileSync(odd, JSON.stringify({ type: "impersonated_service_account" }));
    await expect(createVertexAuth(odd)).rejects.toThrow(/'provider': vertex: credentials of type 'impersonated_service_account'/);
  });
});

describe("Azure credential (api-key, @azure/identity)", () => {
  let entra: FakeEntra;
  beforeAll(async () => {
    entra = await startFakeEntra();
    // @azure/identity takes only an https authority: trust the fake's self-signed certificate in this process.
    tls.setDefaultCACertificates([...tls.getCACertificates("default"), readCa(entra.caFile)]);
  });
  afterAll(async () => {
    await entra?.close();
  });

  it("signs with the api-key from secrets (api-key for Azure OpenAI, x-api-key for Foundry's Anthropic API)", async () => {
    const source = azureCredentialSource({}, { AZURE_OPENAI_API_KEY: "azure-key-123" });
    expect(azureCredentialProblem(source)).toBeUndefined();
    expect(await (await createAzureAuth(source, "openai")).headers()).toEqual({ "api-key": "azure-key-123" });
    expect(await (await createAzureAuth(source, "anthropic")).headers()).toEqual({ "x-api-key": "azure-key-123" });
  });

  it("gets an Entra bearer with workload identity (AZURE_FEDERATED_TOKEN_FILE) and caches it", async () => {
    const source = azureCredentialSource(
      { AZURE_CLIENT_ID: entra.clientId, AZURE_TENANT_ID: entra.tenantId, AZURE_FEDERATED_TOKEN_FILE: entra.federatedTokenFile, AZURE_AUTHORITY_HOST: entra.authorityHost },
      {},
    );
    const auth = await createAzureAuth(source, "openai");
    expect(auth.kind).toBe("workload-identity");
    const bearer = bearerOf(await auth.headers());
    expect(entra.accessTokenProblem(bearer)).toBeUndefined();
    expect(bearerOf(await auth.headers())).toBe(bearer);
  });

  it("gets a new Entra bearer once the one it holds nears expiry", async () => {
    const shortLived = await startFakeEntra({ lifetimeSeconds: 2 });
    tls.setDefaultCACertificates([...tls.getCACertificates("default"), readCa(shortLived.caFile)]);
    try {
      const auth = await createAzureAuth(
        azureCredentialSource(
          { AZURE_CLIENT_ID: shortLived.clientId, AZURE_TENANT_ID: shortLived.tenantId, AZURE_FEDERATED_TOKEN_FILE: shortLived.federatedTokenFile, AZURE_AUTHORITY_HOST: shortLived.authorityHost },
          {},
        ),
        "openai",
      );
      const first = bearerOf(await auth.headers());
      await sleep(2200);
      const second = bearerOf(await auth.headers());
      expect(second).not.toBe(first);
      expect(shortLived.accessTokens()).toEqual([first, second]);
      expect(shortLived.accessTokenProblem(second)).toBeUndefined();
    } finally {
      await shortLived.close();
    }
  });

  it("gets an Entra bearer from the job's OIDC token (client assertion) when there is no token file", async () => {
    const source = azureCredentialSource(
      {
        AZURE_CLIENT_ID: entra.clientId,
        AZURE_TENANT_ID: entra.tenantId,
        AZURE_AUTHORITY_HOST: entra.authorityHost,
        ACTIONS_ID_TOKEN_REQUEST_URL: entra.oidcRequest.url,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: entra.oidcRequest.token,
      },
      {},
    );
    const auth = await createAzureAuth(source, "openai");
    expect(auth.kind).toBe("github-oidc");
    expect(entra.accessTokenProblem(bearerOf(await auth.headers()))).toBeUndefined();
    expect(entra.requests.some((r) => r.path.startsWith("/oidc?") && r.path.includes("audience=api%3A%2F%2FAzureADTokenExchange"))).toBe(true);
  });

  it("names provider, what it looked for and the auth action when nothing is there", async () => {
    const source = azureCredentialSource({ HOME: mkdtempSync(path.join(os.tmpdir(), "no-azure-")) }, {});
    expect(azureCredentialProblem(source)).toMatch(/'provider': azure.*AZURE_OPENAI_API_KEY.*AZURE_CLIENT_ID.*azure\/login/);
    await expect(createAzureAuth(source, "openai")).rejects.toThrow(ConfigurationError);
  });
});

function readCa(file: string): string {
  return readFileSync(file, "utf8");
}
