/**
 * A stub Amazon Bedrock runtime on 127.0.0.1, in front of the scripted stub
 * model (stub-model.ts), for end-to-end tests of `provider: bedrock`.
 *
 * Every request's SigV4 signature is checked with the AWS SDK's own signer:
 * the stub signs the same request again (the headers the Authorization
 * header names, the body, the date of its X-Amz-Date) with the credentials
 * it was given and compares the Authorization header. A request that fails
 * the check gets Bedrock's 403 and is recorded as such.
 *
 * Then it answers as Bedrock does:
 * - `POST /model/<id>/invoke-with-response-stream`: the stub model's Anthropic
 *   SSE answer re-encoded as AWS event-stream frames, one `chunk` event per
 *   Anthropic event (`{"bytes": base64(event JSON)}`), the last carrying
 *   `amazon-bedrock-invocationMetrics`, as the real runtime does;
 * - `POST /model/<id>/invoke`: the Anthropic message JSON;
 * - `POST /model/<id>/count-tokens`: `{ inputTokens }`;
 * - `POST /openai/v1/…` (Bedrock's OpenAI-compatible API): passed to the stub model's OpenAI routes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Sha256 } from "@aws-crypto/sha256-js";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { SignatureV4 } from "@smithy/signature-v4";
import type { AwsCredentialIdentity } from "@smithy/types";
import { startStubModel, type StubModel, type StubModelOptions, type StubScript } from "./stub-model.js";

export interface BedrockRecord {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Whether the SigV4 signature matched the one the AWS SDK's signer computes for the same request. */
  signatureValid: boolean;
  /** Why not, when it did not. */
  signatureProblem?: string;
  /** The access key id the signature names. */
  accessKeyId?: string;
  modelId?: string;
}

export interface StubBedrock {
  /** `http://127.0.0.1:PORT`: what `base-url` names. */
  url: string;
  region: string;
  model: StubModel;
  requests: BedrockRecord[];
  close(): Promise<void>;
}

const codec = new EventStreamCodec(
  (b) => Buffer.from(b).toString("utf8"),
  (s) => Buffer.from(s, "utf8"),
);

function frame(eventType: string, payload: unknown, messageType = "event"): Uint8Array {
  return codec.encode({
    headers: {
      ":event-type": { type: "string", value: eventType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: messageType },
    },
    body: Buffer.from(JSON.stringify(payload)),
  });
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Signs the request again with the SDK's signer and compares: the way AWS itself checks a signature. */
async function verify(req: http.IncomingMessage, body: Buffer, region: string, credentials: AwsCredentialIdentity): Promise<{ ok: boolean; problem?: string; accessKeyId?: string }> {
  const auth = String(req.headers.authorization ?? "");
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return { ok: false, problem: "no SigV4 Authorization header" };
  const [, accessKeyId, , signedRegion, service, signedHeaders] = m;
  if (service !== "bedrock") return { ok: false, problem: `signed for service '${service}'`, accessKeyId };
  if (signedRegion !== region) return { ok: false, problem: `signed for region '${signedRegion}'`, accessKeyId };
  const amzDate = String(req.headers["x-amz-date"] ?? "");
  const d = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!d) return { ok: false, problem: "no X-Amz-Date", accessKeyId };
  const signingDate = new Date(Date.UTC(+d[1]!, +d[2]! - 1, +d[3]!, +d[4]!, +d[5]!, +d[6]!));
  if (Math.abs(Date.now() - signingDate.getTime()) > 5 * 60_000) return { ok: false, problem: "signature expired", accessKeyId };
  const url = new URL(req.url ?? "/", "http://stub.invalid");
  const headers: Record<string, string> = {};
  for (const name of signedHeaders!.split(";")) {
    const v = req.headers[name];
    if (v === undefined) return { ok: false, problem: `signed header '${name}' missing`, accessKeyId };
    headers[name] = Array.isArray(v) ? v.join(",") : v;
  }
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signer = new SignatureV4({ service: "bedrock", region, credentials, sha256: Sha256 });
  const expected = await signer.sign(
    { method: req.method ?? "GET", protocol: "http:", hostname: String(req.headers.host ?? "").replace(/:\d+$/, ""), path: url.pathname, query, headers, body },
    { signingDate },
  );
  const ok = expected.headers.authorization === auth;
  return { ok, accessKeyId: accessKeyId!, ...(ok ? {} : { problem: "signature mismatch" }) };
}

/** The SSE text → the JSON of each `data:` line. */
function sseEvents(text: string): unknown[] {
  return text
    .split(/\r?\n/)
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trim())
    .filter((d) => d && d !== "[DONE]")
    .map((d) => JSON.parse(d) as unknown);
}

function forward(modelUrl: string, path: string, body: Buffer, headers: Record<string, string>, method = "POST"): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const up = http.request(new URL(path, modelUrl), { method, headers: { ...headers, "content-length": String(body.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    up.on("error", reject);
    up.end(body);
  });
}

export async function startStubBedrock(
  script: StubScript,
  opts: { credentials: AwsCredentialIdentity; region?: string; model?: StubModelOptions },
): Promise<StubBedrock> {
  const region = opts.region ?? "us-east-1";
  const model = await startStubModel(script, opts.model);
  const requests: BedrockRecord[] = [];

  const server = http.createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const check = await verify(req, body, region, opts.credentials);
      const url = new URL(req.url ?? "/", "http://stub.invalid");
      const invoke = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|count-tokens)$/.exec(url.pathname);
      const record: BedrockRecord = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        headers: req.headers,
        signatureValid: check.ok,
        ...(check.problem ? { signatureProblem: check.problem } : {}),
        ...(check.accessKeyId ? { accessKeyId: check.accessKeyId } : {}),
        ...(invoke ? { modelId: decodeURIComponent(invoke[1]!) } : {}),
      };
      requests.push(record);
      if (!check.ok) {
        res.writeHead(403, { "content-type": "application/json", "x-amzn-errortype": "InvalidSignatureException" });
        res.end(JSON.stringify({ message: `The request signature we calculated does not match the signature you provided (${check.problem}).` }));
        return;
      }
      if (url.pathname.startsWith("/openai/v1/")) {
        const up = await forward(model.url, url.pathname.replace(/^\/openai/, "") + url.search, body, { "content-type": "application/json" }, req.method);
        res.writeHead(up.status, { "content-type": String(up.headers["content-type"] ?? "application/json") });
        res.end(up.body);
        return;
      }
      if (!invoke) {
        res.writeHead(404, { "content-type": "application/json", "x-amzn-errortype": "UnknownOperationException" }).end(JSON.stringify({ message: "Unknown operation" }));
        return;
      }
      const [, rawId, op] = invoke;
      const modelId = decodeURIComponent(rawId!);
      const parsed = JSON.parse(body.toString("utf8") || "{}") as Record<string, unknown>;
      if (op === "count-tokens") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ inputTokens: 42 }));
        return;
      }
      const stream = op === "invoke-with-response-stream";
      // Bedrock's Anthropic body: anthropic_version in it, the model in the path, no stream flag.
      const { anthropic_version: _v, anthropic_beta: _b, ...rest } = parsed;
      const up = await forward(model.url, "/v1/messages", Buffer.from(JSON.stringify({ ...rest, model: modelId, stream })), { "content-type": "application/json" });
      if (up.status !== 200 || !stream) {
        res.writeHead(up.status, { "content-type": "application/json" }).end(up.body);
        return;
      }
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "stub-request" });
      const events = sseEvents(up.body.toString("utf8"));
      let inputTokens = 0;
      let outputTokens = 0;
      for (const e of events) {
        const ev = e as { type?: string; message?: { usage?: { input_tokens?: number } }; usage?: { output_tokens?: number } };
        if (ev.type === "message_start") inputTokens = ev.message?.usage?.input_tokens ?? 0;
        if (ev.type === "message_delta") outputTokens = ev.usage?.output_tokens ?? 0;
        const payload = ev.type === "message_stop" ? { ...ev, "amazon-bedrock-invocationMetrics": { inputTokenCount: inputTokens, outputTokenCount: outputTokens, invocationLatency: 5, firstByteLatency: 1 } } : ev;
        res.write(frame("chunk", { bytes: Buffer.from(JSON.stringify(payload)).toString("base64"), p: "abcd" }));
      }
      res.end();
    })().catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: String(e) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    region,
    model,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await model.close();
    },
  };
}
