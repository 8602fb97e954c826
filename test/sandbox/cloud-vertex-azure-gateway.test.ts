/**
 * Vertex AI and Azure at the gateway: plain HTTP requests as the agent, cloud stubs as the
 * cloud (test/support/fake-cloud-model.ts) with fake identity services behind them. The
 * placeholder is checked and never forwarded, the workflow's project and region replace the
 * agent's placeholders, only the model routes pass, usage is read and priced by the cloud's
 * model ids, budgets hold, and no credential appears in the gateway's log.
 */
import tls from "node:tls";
import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cloudUpstream } from "../../src/sandbox/cloud/registry.js";
import { startModelGateway, type ModelGateway } from "../../src/sandbox/gateway.js";
import { ConfigurationError } from "../../src/errors.js";
import { claudeRunSpans } from "./gateway-helpers.js";
import { recordingLogger, request } from "./helpers.js";
import { startFakeEntra, startFakeGoogleSts, type FakeEntra, type FakeGoogleSts } from "../support/fake-cloud-auth.js";
import { startAzureOpenAiStub, startVertexStub, type CloudStub } from "../support/fake-cloud-model.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const PROJECT = "gw-project-41";
const REGION = "europe-west4";
const MESSAGES = { anthropic_version: "vertex-2023-10-16", max_tokens: 1000, stream: true, messages: [{ role: "user", content: "hi" }] };

async function vertexSetup(wire: "anthropic" | "gemini" | "openai", budget?: { maxModelRequests?: number }) {
  const sts = await startFakeGoogleSts();
  cleanups.push(sts.close);
  const stub = await startVertexStub([{ text: "one" }, { text: "two" }], { project: PROJECT, region: REGION, accessTokenProblem: sts.accessTokenProblem });
  cleanups.push(stub.close);
  const log = recordingLogger();
  const cloud = await cloudUpstream("vertex", {
    wire,
    cloud: { vertexProject: PROJECT, vertexRegion: REGION },
    baseUrl: stub.url,
    env: { GOOGLE_APPLICATION_CREDENTIALS: sts.credentialsFile },
    secrets: {},
    log,
  });
  const gw = await startModelGateway({ provider: wire, upstream: "", apiKey: "", cloud, log, ...(budget ? { budget } : {}) });
  cleanups.push(gw.close);
  return { sts, stub, gw, log };
}

const post = (gw: ModelGateway, p: string, body: unknown, headers: Record<string, string> = { "x-api-key": gw.placeholderKey }) =>
  request(gw.url, p, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

function expectNothingSecretIn(lines: string[], sts: FakeGoogleSts | FakeEntra, extra: string[] = []): void {
  const text = lines.join("\n");
  for (const s of [...sts.secrets(), ...extra]) expect(text).not.toContain(s);
}

describe("Vertex AI behind the gateway", () => {
  it("forwards Claude's streamRawPredict to the workflow's project and region with a minted bearer, never the placeholder; usage read and priced", async () => {
    const { sts, stub, gw, log } = await vertexSetup("anthropic");
    const model = "claude-sonnet-4-5@20250929";
    const r = await post(gw, `/v1/projects/agent-runner/locations/global/publishers/anthropic/models/${model}:streamRawPredict`, MESSAGES);
    expect(r.status, r.body).toBe(200);
    expect(r.body).toContain("message_stop");
    expect(stub.seen).toEqual([
      expect.objectContaining({ path: `/v1/projects/${PROJECT}/locations/${REGION}/publishers/anthropic/models/${model}:streamRawPredict`, apiKey: undefined, refused: undefined }),
    ]);
    expect(sts.accessTokens()).toContain(stub.seen[0]!.bearer);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const usage = gw.usage();
    expect(usage.requests).toBe(1);
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.costUsd).toBeGreaterThan(0);
    expect(gw.requestLog()[0]).toMatchObject({ requestModel: model, stream: true, status: 200 });
    expectNothingSecretIn(log.lines, sts);
  });

  it("its model requests become chat spans named for Vertex's model id, gen_ai.provider.name gcp.vertex_ai", async () => {
    const { gw } = await vertexSetup("anthropic");
    const model = "claude-sonnet-4-5@20250929";
    expect((await post(gw, `/v1/projects/agent-runner/locations/global/publishers/anthropic/models/${model}:streamRawPredict`, MESSAGES)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const spans = await claudeRunSpans(gw, model, "vertex");
    expect(spans.find((x) => x.name === `chat ${model}`)?.attributes).toMatchObject({ "gen_ai.provider.name": "gcp.vertex_ai", "gen_ai.request.model": model, "gen_ai.request.stream": true, "gen_ai.usage.output_tokens": 20 });
  });

  it("refuses what is not a Vertex model request, and requests without the placeholder, before anything reaches Vertex", async () => {
    const { stub, gw } = await vertexSetup("anthropic");
    const base = `/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-5@20250929`;
    expect((await post(gw, `${base}:streamRawPredict`, MESSAGES, { "x-api-key": "sk-ant-wrong" })).status).toBe(401);
    expect((await post(gw, `${base}:streamRawPredict`, MESSAGES, {})).status).toBe(401);
    expect((await post(gw, `/v1/projects/p/locations/l/endpoints/123:predict`, {})).status).toBe(404);
    expect((await post(gw, `/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:streamGenerateContent`, {})).status).toBe(404);
    expect((await post(gw, `/v1/messages`, MESSAGES)).status).toBe(404);
    expect((await request(gw.url, `${base}:rawPredict`, { headers: { "x-api-key": gw.placeholderKey } })).status).toBe(405);
    expect(stub.seen).toEqual([]);
  });

  it("maps Gemini CLI's express path onto the project path, and holds a model-request budget", async () => {
    const { sts, stub, gw } = await vertexSetup("gemini", { maxModelRequests: 1 });
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
    const first = await post(gw, "/v1beta1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body, { "x-goog-api-key": gw.placeholderKey });
    expect(first.status, first.body).toBe(200);
    expect(stub.seen[0]).toMatchObject({ path: `/v1beta1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, apiKey: undefined });
    expect(sts.accessTokenProblem(stub.seen[0]!.bearer)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(gw.usage()).toMatchObject({ requests: 1 });
    expect(gw.usage().costUsd).toBeGreaterThan(0);
    const second = await post(gw, "/v1beta1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body, { "x-goog-api-key": gw.placeholderKey });
    expect(second.status).toBe(400);
    expect(stub.seen).toHaveLength(1);
  });

  it("drops query parameters Vertex does not need: `$userProject` and `quotaUser` never reach the signed request", async () => {
    const { stub, gw } = await vertexSetup("gemini");
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
    const p = "/v1beta1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse&%24userProject=victim-project&quotaUser=someone-else&fields=x";
    const r = await post(gw, p, body, { "x-goog-api-key": gw.placeholderKey });
    expect(r.status, r.body).toBe(200);
    expect(stub.seen[0]!.path).toBe(`/v1beta1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse`);
  });

  it("sends OpenCode's Chat Completions to Vertex's OpenAI-compatible endpoint", async () => {
    const { stub, gw } = await vertexSetup("openai");
    const r = await post(gw, "/v1/chat/completions", { model: "google/gemini-2.5-pro", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${gw.placeholderKey}` });
    expect(r.status, r.body).toBe(200);
    expect(stub.seen[0]).toMatchObject({ path: `/v1/projects/${PROJECT}/locations/${REGION}/endpoints/openapi/chat/completions`, refused: undefined });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(gw.usage().costUsd).toBeGreaterThan(0);
  });

  it("fails before anything starts without a project or without credentials, naming provider", async () => {
    const log = recordingLogger();
    await expect(cloudUpstream("vertex", { wire: "anthropic", cloud: {}, env: { GOOGLE_APPLICATION_CREDENTIALS: "/x.json" }, secrets: {}, log })).rejects.toThrow(
      /Input 'provider': vertex needs a Google Cloud project: set 'vertex-project', or GOOGLE_CLOUD_PROJECT/,
    );
    await expect(cloudUpstream("vertex", { wire: "anthropic", cloud: { vertexProject: "p" }, env: {}, secrets: {}, log })).rejects.toThrow(ConfigurationError);
  });
});

describe("Azure behind the gateway", () => {
  let entra: FakeEntra;
  beforeAll(async () => {
    entra = await startFakeEntra();
    tls.setDefaultCACertificates([...tls.getCACertificates("default"), readFileSync(entra.caFile, "utf8")]);
  });
  afterAll(async () => {
    await entra?.close();
  });

  async function azureSetup(wire: "openai" | "anthropic", env: Record<string, string>, secrets: Record<string, string> = {}): Promise<{ stub: CloudStub; gw: ModelGateway; log: ReturnType<typeof recordingLogger> }> {
    const stub = await startAzureOpenAiStub([{ text: "one" }], { apiKey: secrets.AZURE_OPENAI_API_KEY, accessTokenProblem: entra.accessTokenProblem });
    cleanups.push(stub.close);
    const log = recordingLogger();
    const cloud = await cloudUpstream("azure", { wire, cloud: {}, baseUrl: stub.url, env, secrets, log });
    const gw = await startModelGateway({ provider: wire, upstream: "", apiKey: "", cloud, log });
    cleanups.push(gw.close);
    return { stub, gw, log };
  }

  it("sends Responses to Azure OpenAI's v1 API with the api-key from secrets in place of the placeholder", async () => {
    const key = "azure-gw-key-0f1e2d3c4b5a";
    const { stub, gw, log } = await azureSetup("openai", {}, { AZURE_OPENAI_API_KEY: key });
    const r = await post(gw, "/v1/responses", { model: "gpt-4o", input: "hi", stream: true }, { authorization: `Bearer ${gw.placeholderKey}` });
    expect(r.status, r.body).toBe(200);
    expect(stub.seen).toEqual([expect.objectContaining({ path: "/openai/v1/responses", apiKey: key, bearer: undefined, refused: undefined })]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(gw.usage().costUsd).toBeGreaterThan(0);
    expect(log.lines.join("\n")).not.toContain(key);
  });

  it("sends Claude's Messages to Foundry's Anthropic API with an Entra bearer from workload identity", async () => {
    const { stub, gw, log } = await azureSetup("anthropic", {
      AZURE_CLIENT_ID: entra.clientId,
      AZURE_TENANT_ID: entra.tenantId,
      AZURE_FEDERATED_TOKEN_FILE: entra.federatedTokenFile,
      AZURE_AUTHORITY_HOST: entra.authorityHost,
    });
    const r = await post(gw, "/v1/messages?beta=true", { model: "claude-sonnet-4-5", max_tokens: 100, stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(r.status, r.body).toBe(200);
    expect(stub.seen).toEqual([expect.objectContaining({ path: "/anthropic/v1/messages?beta=true", apiKey: undefined, refused: undefined })]);
    expect(entra.accessTokens()).toContain(stub.seen[0]!.bearer);
    expectNothingSecretIn(log.lines, entra);
  });

  it("needs base-url, and fails before anything starts when the Entra flow does not work", async () => {
    const log = recordingLogger();
    await expect(cloudUpstream("azure", { wire: "openai", cloud: {}, env: {}, secrets: { AZURE_OPENAI_API_KEY: "k" }, log })).rejects.toThrow(/Input 'base-url': provider azure needs the resource's endpoint/);
    await expect(
      cloudUpstream("azure", {
        wire: "openai",
        cloud: {},
        baseUrl: "https://example.invalid",
        env: { AZURE_CLIENT_ID: "not-the-client", AZURE_TENANT_ID: entra.tenantId, AZURE_FEDERATED_TOKEN_FILE: entra.federatedTokenFile, AZURE_AUTHORITY_HOST: entra.authorityHost },
        secrets: {},
        log,
      }),
    ).rejects.toThrow(/Input 'provider': azure could not get a Microsoft Entra token \(workload-identity/);
  });
});
