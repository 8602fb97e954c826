/**
 * Issue #23, Bedrock at the gateway: plain HTTP requests as the agent, the
 * stub Bedrock runtime (test/support/stub-bedrock.ts) as AWS, which checks
 * every SigV4 signature with the AWS SDK's own signer. The agent's
 * placeholder is checked and never forwarded, the signature is the
 * gateway's, usage is read from event-stream frames and priced as Bedrock's
 * model ids, budgets hold, and a job without AWS credentials fails before
 * anything starts.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cloudUpstream } from "../../src/sandbox/cloud/registry.js";
import { EventStreamReader } from "../../src/sandbox/cloud/bedrock.js";
import { startModelGateway, type ModelGateway } from "../../src/sandbox/gateway.js";
import { ConfigurationError } from "../../src/errors.js";
import { claudeRunSpans } from "./gateway-helpers.js";
import { recordingLogger, request } from "./helpers.js";
import { startStubBedrock, type StubBedrock } from "../support/stub-bedrock.js";

const CREDS = { accessKeyId: "AKIASTUBGATEWAY00001", secretAccessKey: "stubSecretAccessKeyForGatewayTests0123456", sessionToken: "stubSessionTokenGateway0123" };
const ENV = { AWS_ACCESS_KEY_ID: CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey, AWS_SESSION_TOKEN: CREDS.sessionToken };
const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function bedrockGateway(stub: StubBedrock, wire: "anthropic" | "openai", extra: { budget?: { maxModelRequests?: number; maxCostUsd?: number } } = {}): Promise<ModelGateway> {
  const log = recordingLogger();
  const cloud = await cloudUpstream("bedrock", { wire, cloud: { awsRegion: stub.region }, baseUrl: stub.url, env: ENV, secrets: {}, log });
  const gw = await startModelGateway({ provider: wire, upstream: "", apiKey: "", cloud, log, ...extra });
  cleanups.push(gw.close);
  return gw;
}

const invoke = (gw: ModelGateway, op: string, body: unknown, key = gw.placeholderKey) =>
  request(gw.url, `/model/${encodeURIComponent(MODEL)}/${op}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/vnd.amazon.eventstream", "x-amzn-bedrock-accept": "*/*" },
    body: JSON.stringify(body),
  });

const MESSAGES = { anthropic_version: "bedrock-2023-05-31", max_tokens: 1000, messages: [{ role: "user", content: "hi" }] };

describe("Bedrock behind the gateway", () => {
  it("signs InvokeModel streams with SigV4 the SDK verifies, and reads usage from the event-stream frames", async () => {
    const stub = await startStubBedrock([{ text: "one" }, { text: "two" }], { credentials: CREDS });
    cleanups.push(stub.close);
    const gw = await bedrockGateway(stub, "anthropic");
    const streamed = await invoke(gw, "invoke-with-response-stream", MESSAGES);
    expect(streamed.status).toBe(200);
    expect(streamed.headers["content-type"]).toBe("application/vnd.amazon.eventstream");
    expect((await invoke(gw, "invoke", MESSAGES)).status).toBe(200);
    expect(stub.requests.map((r) => [r.signatureValid, r.accessKeyId, r.modelId])).toEqual([
      [true, CREDS.accessKeyId, MODEL],
      [true, CREDS.accessKeyId, MODEL],
    ]);
    // The session token travels upstream (signed), the placeholder never does.
    expect(stub.requests[0]!.headers["x-amz-security-token"]).toBe(CREDS.sessionToken);
    expect(JSON.stringify(stub.requests.map((r) => r.headers))).not.toContain(gw.placeholderKey);
    // The stub model's default usage: 100 uncached + 40 cache reads + 10 cache writes in, 20 out, per request.
    expect(gw.usage()).toMatchObject({ requests: 2, inputTokens: 300, outputTokens: 40, cachedTokens: 80 });
    expect(gw.usage().costUsd).toBeGreaterThan(0);
    expect(gw.requestLog().map((r) => [r.requestModel, r.stream, r.operation])).toEqual([
      [MODEL, true, "chat"],
      [MODEL, false, "chat"],
    ]);
  });

  it("its model requests become chat spans named for the Bedrock model, gen_ai.provider.name aws.bedrock", async () => {
    const stub = await startStubBedrock([{ text: "one" }], { credentials: CREDS });
    cleanups.push(stub.close);
    const gw = await bedrockGateway(stub, "anthropic");
    expect((await invoke(gw, "invoke-with-response-stream", MESSAGES)).status).toBe(200);
    const spans = await claudeRunSpans(gw, MODEL, "bedrock");
    const chat = spans.find((x) => x.name === `chat ${MODEL}`);
    expect(chat?.attributes).toMatchObject({ "gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": MODEL, "gen_ai.request.stream": true, "gen_ai.usage.output_tokens": 20 });
    expect(spans.find((x) => x.name === "invoke_agent claude")?.attributes["gen_ai.provider.name"]).toBe("aws.bedrock");
  });

  it("refuses what the placeholder does not open, other routes, and enforces max-model-requests", async () => {
    const stub = await startStubBedrock([], { credentials: CREDS });
    cleanups.push(stub.close);
    const gw = await bedrockGateway(stub, "anthropic", { budget: { maxModelRequests: 1 } });
    expect((await invoke(gw, "invoke-with-response-stream", MESSAGES, "stolen")).status).toBe(401);
    expect((await request(gw.url, "/guardrails", { method: "GET", headers: { authorization: `Bearer ${gw.placeholderKey}` } })).status).toBe(404);
    // Claude Code's control-plane listing: refused, never forwarded, not a blocked attempt; the other refusals are.
    expect((await request(gw.url, "/inference-profiles?type=SYSTEM_DEFINED", { method: "GET", headers: { authorization: `Bearer ${gw.placeholderKey}` } })).status).toBe(404);
    expect(stub.requests.some((r) => r.path.startsWith("/inference-profiles"))).toBe(false);
    expect(gw.refusals().map((r) => r.detail)).toEqual(["POST /model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream: carries an API key other than the one this run gave the agent", "GET /guardrails: not a model API route"]);
    expect((await request(gw.url, `/model/${MODEL}/invoke`, { method: "GET", headers: { authorization: `Bearer ${gw.placeholderKey}` } })).status).toBe(405);
    expect((await invoke(gw, "count-tokens", { input: { invokeModel: { body: "{}" } } })).status).toBe(200);
    expect((await invoke(gw, "invoke-with-response-stream", MESSAGES)).status).toBe(200);
    const refused = await invoke(gw, "invoke-with-response-stream", MESSAGES);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(/max-model-requests/);
    // Token counts are free; one billed request went upstream.
    expect(stub.requests.filter((r) => r.path.includes("invoke"))).toHaveLength(1);
    // A server-side tool is refused as for Anthropic's own API.
    const gw2 = await bedrockGateway(stub, "anthropic");
    const search = await invoke(gw2, "invoke", { ...MESSAGES, tools: [{ type: "web_search_20250305", name: "web_search" }] });
    expect(search.status).toBe(403);
  });

  it("forwards the OpenAI wire (Codex, OpenCode) to Bedrock's /openai/v1, signed", async () => {
    const stub = await startStubBedrock([{ text: "hello" }], { credentials: CREDS });
    cleanups.push(stub.close);
    const gw = await bedrockGateway(stub, "openai");
    const r = await request(gw.url, "/v1/responses", {
      method: "POST",
      headers: { authorization: `Bearer ${gw.placeholderKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "openai.gpt-oss-120b-1:0", input: "hi" }),
    });
    expect(r.status).toBe(200);
    expect(stub.requests.map((x) => [x.path, x.signatureValid])).toEqual([["/openai/v1/responses", true]]);
    expect(gw.usage()).toMatchObject({ requests: 1, inputTokens: 140, outputTokens: 20 });
    expect(gw.usage().costUsd).toBeGreaterThan(0);
  });

  it("a signature with other credentials is refused by the stub (the check is real)", async () => {
    const stub = await startStubBedrock([{ text: "x" }], { credentials: { ...CREDS, secretAccessKey: "another-secret-key-0000000000000000000000" } });
    cleanups.push(stub.close);
    const gw = await bedrockGateway(stub, "anthropic");
    expect((await invoke(gw, "invoke", MESSAGES)).status).toBe(403);
    expect(stub.requests[0]).toMatchObject({ signatureValid: false, signatureProblem: "signature mismatch" });
  });

  it("without AWS credentials or a region, fails before anything starts, naming provider, what it looked for and the auth action", async () => {
    const log = recordingLogger();
    await expect(cloudUpstream("bedrock", { wire: "anthropic", cloud: {}, env: ENV, secrets: {}, log })).rejects.toThrow(/^Input 'provider': bedrock needs an AWS region: set 'aws-region', or AWS_REGION/);
    const saved = { ...process.env };
    // The SDK's chain reads the process environment: make sure it finds nothing (no profile, no instance role).
    process.env.AWS_EC2_METADATA_DISABLED = "true";
    process.env.AWS_CONFIG_FILE = "/nonexistent/aws-config";
    process.env.AWS_SHARED_CREDENTIALS_FILE = "/nonexistent/aws-credentials";
    for (const k of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"]) delete process.env[k];
    try {
      const err = await cloudUpstream("bedrock", { wire: "anthropic", cloud: { awsRegion: "us-east-1" }, env: {}, secrets: {}, log }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigurationError);
      expect(String((err as Error).message)).toMatch(
        /^Input 'provider': bedrock found no AWS credentials on the runner \(looked for AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE, then the AWS SDK's default chain.*Add aws-actions\/configure-aws-credentials/s,
      );
    } finally {
      // Key by key: the worker's next test file shares this process.env (vitest.config.ts: isolate false),
      // and a plain object put in its place would no longer reach native code (os.tmpdir, TZ).
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});

describe("web identity (AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE)", () => {
  it("exchanges the token file at STS, signs with the minted session, and fetches a new one before it expires", async () => {
    const minted = { accessKeyId: "ASIASTUBWEBIDENTITY01", secretAccessKey: "stubWebIdentitySecretAccessKey0123456789ab", sessionToken: "stubWebIdentitySessionToken0123" };
    const stsCalls: Record<string, string>[] = [];
    // A fake STS: AssumeRoleWithWebIdentity answers a session that expires in two minutes (inside the gateway's five-minute margin).
    const sts = await import("node:http").then(({ default: http }) =>
      http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
          stsCalls.push(form);
          const exp = new Date(Date.now() + 2 * 60_000).toISOString();
          res.writeHead(200, { "content-type": "text/xml" });
          res.end(
            `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>${minted.accessKeyId}</AccessKeyId><SecretAccessKey>${minted.secretAccessKey}</SecretAccessKey><SessionToken>${minted.sessionToken}</SessionToken><Expiration>${exp}</Expiration></Credentials><AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/agent/s</Arn><AssumedRoleId>AROASTUB:s</AssumedRoleId></AssumedRoleUser></AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>stub</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`,
          );
        });
      }),
    );
    await new Promise<void>((r) => sts.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => sts.close(() => r())));
    const stub = await startStubBedrock([{ text: "one" }, { text: "two" }], { credentials: minted });
    cleanups.push(stub.close);
    const tokenFile = path.join(mkdtempSync(path.join(os.tmpdir(), "web-identity-")), "token");
    writeFileSync(tokenFile, "stub-oidc-jwt-from-github");
    const saved = process.env.AWS_ENDPOINT_URL_STS;
    process.env.AWS_ENDPOINT_URL_STS = `http://127.0.0.1:${(sts.address() as { port: number }).port}`;
    try {
      const log = recordingLogger();
      const env = { AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/agent", AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile };
      const cloud = await cloudUpstream("bedrock", { wire: "anthropic", cloud: { awsRegion: stub.region }, baseUrl: stub.url, env, secrets: {}, log });
      expect(cloud.credentialSource).toBe("AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE");
      const gw = await startModelGateway({ provider: "anthropic", upstream: "", apiKey: "", cloud, log });
      cleanups.push(gw.close);
      expect((await invoke(gw, "invoke", MESSAGES)).status).toBe(200);
      expect((await invoke(gw, "invoke", MESSAGES)).status).toBe(200);
    } finally {
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_STS;
      else process.env.AWS_ENDPOINT_URL_STS = saved;
    }
    expect(stub.requests.map((r) => [r.signatureValid, r.accessKeyId])).toEqual([
      [true, minted.accessKeyId],
      [true, minted.accessKeyId],
    ]);
    expect(stsCalls[0]).toMatchObject({ Action: "AssumeRoleWithWebIdentity", RoleArn: "arn:aws:iam::123456789012:role/agent", WebIdentityToken: "stub-oidc-jwt-from-github" });
    // Resolved once at start, then again for each request: the session was inside its last five minutes every time.
    expect(stsCalls.length).toBe(3);
  });
});

describe("the event-stream reader", () => {
  it("reads frames split anywhere, and stops at a corrupt one", async () => {
    const { EventStreamCodec } = await import("@smithy/eventstream-codec");
    const codec = new EventStreamCodec((b) => Buffer.from(b).toString(), (s) => Buffer.from(s));
    const enc = (doc: unknown) =>
      Buffer.from(
        codec.encode({
          headers: { ":event-type": { type: "string", value: "chunk" }, ":message-type": { type: "string", value: "event" } },
          body: Buffer.from(JSON.stringify({ bytes: Buffer.from(JSON.stringify(doc)).toString("base64") })),
        }),
      );
    const all = Buffer.concat([enc({ type: "message_start" }), enc({ type: "message_stop" })]);
    const reader = new EventStreamReader();
    const docs = [...reader.push(all.subarray(0, 7)), ...reader.push(all.subarray(7, 60)), ...reader.push(all.subarray(60))];
    expect(docs).toEqual([{ type: "message_start" }, { type: "message_stop" }]);
    const corrupt = Buffer.from(all);
    corrupt[20] ^= 0xff;
    expect(new EventStreamReader().push(corrupt)).toEqual([]);
  });
});
