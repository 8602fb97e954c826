/**
 * Amazon Bedrock behind the model gateway. Credentials come from what
 * aws-actions/configure-aws-credentials leaves on the runner: access keys
 * (with a session token), or AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE,
 * or else the AWS SDK's own provider chain (profiles, SSO, container and
 * instance roles). Every request is signed with SigV4 (service `bedrock`)
 * by the AWS SDK's signer; nothing here is hand-written crypto.
 *
 * What the agent calls:
 * - Claude Code (Anthropic wire) calls Bedrock's InvokeModel routes with
 *   Anthropic Messages bodies (`/model/<id>/invoke`, `…/invoke-with-response-stream`,
 *   `…/count-tokens`); the stream answers in AWS event-stream frames whose
 *   `chunk` events carry the Anthropic events, base64 in `bytes`.
 * - Codex and OpenCode (OpenAI wire) call Bedrock's OpenAI-compatible API
 *   under `/openai/v1` (Responses, Chat Completions) as they would OpenAI.
 */
import { Sha256 } from "@aws-crypto/sha256-js";
import { fromNodeProviderChain, fromTokenFile } from "@aws-sdk/credential-providers";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { SignatureV4 } from "@smithy/signature-v4";
import type { AwsCredentialIdentity } from "@smithy/types";
import { ConfigurationError, errorMessage } from "../../errors.js";
import { CLOUD_PRICE_TABLES } from "../prices.js";
import type { CloudRoute, CloudUpstream, CloudUpstreamOptions, FrameReader, SignableRequest } from "./types.js";

/** Bedrock model ids: `anthropic.claude-…-v1:0`, `us.anthropic.…`, percent-encoded by the SDKs (`%3A`). */
const MODEL = "([A-Za-z0-9._:%-]+)";

/** Claude on Bedrock: InvokeModel with Anthropic Messages bodies (`anthropic_version` in the body, the model in the path). */
const INVOKE_ROUTES: CloudRoute[] = [
  { method: "POST", path: new RegExp(`^/model/${MODEL}/invoke$`), canonical: "/v1/messages", stream: false },
  { method: "POST", path: new RegExp(`^/model/${MODEL}/invoke-with-response-stream$`), canonical: "/v1/messages", stream: true },
  { method: "POST", path: new RegExp(`^/model/${MODEL}/count-tokens$`), canonical: "/v1/messages/count_tokens", stream: false },
];

const AUTH_ACTION = "aws-actions/configure-aws-credentials (with `permissions: id-token: write` and `role-to-assume`)";

type CredentialProvider = () => Promise<AwsCredentialIdentity>;

/** The AWS credentials the runner holds, as a provider; `source` names where they come from (never a value). */
function credentialsFrom(env: Record<string, string>, region: string): { provider: CredentialProvider; source: string } {
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    const creds: AwsCredentialIdentity = {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    };
    return { provider: async () => creds, source: `AWS_ACCESS_KEY_ID${env.AWS_SESSION_TOKEN ? " with AWS_SESSION_TOKEN" : ""}` };
  }
  if (env.AWS_ROLE_ARN && env.AWS_WEB_IDENTITY_TOKEN_FILE) {
    const provider = fromTokenFile({
      roleArn: env.AWS_ROLE_ARN,
      webIdentityTokenFile: env.AWS_WEB_IDENTITY_TOKEN_FILE,
      ...(env.AWS_ROLE_SESSION_NAME ? { roleSessionName: env.AWS_ROLE_SESSION_NAME } : {}),
      clientConfig: { region },
    });
    return { provider: () => provider(), source: "AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE" };
  }
  // Profiles, SSO, ECS task roles, EC2 instance roles (self-hosted runners): the SDK's own chain.
  const chain = fromNodeProviderChain({ clientConfig: { region } });
  return { provider: () => chain(), source: "the AWS SDK's default provider chain" };
}

/**
 * Credentials kept until five minutes before they expire, then fetched again
 * (web identity sessions last an hour); while a refresh fails, the held ones
 * serve until they really expire.
 */
function refreshing(provider: CredentialProvider): CredentialProvider {
  let current: Promise<AwsCredentialIdentity> | undefined;
  return async () => {
    const held = current && (await current.catch(() => undefined));
    const left = held?.expiration ? held.expiration.getTime() - Date.now() : Infinity;
    if (held && left > 5 * 60_000) return held;
    const next = provider();
    current = next;
    try {
      return await next;
    } catch (e) {
      if (held && left > 0) {
        current = Promise.resolve(held);
        return held;
      }
      throw e;
    }
  };
}

/** The region's runtime endpoint, or `base-url`; the OpenAI-compatible API lives under `/openai/v1`. */
function upstreamFor(opts: CloudUpstreamOptions, region: string): URL {
  const base = new URL(opts.baseUrl ?? `https://bedrock-runtime.${region}.amazonaws.com`);
  if (opts.wire === "openai" && !/\/openai\/v1\/?$/.test(base.pathname)) base.pathname = `${base.pathname.replace(/\/+$/, "")}/openai/v1`;
  return base;
}

export async function createUpstream(opts: CloudUpstreamOptions): Promise<CloudUpstream> {
  const region = opts.cloud.awsRegion;
  if (!region)
    throw new ConfigurationError(
      `Input 'provider': bedrock needs an AWS region: set 'aws-region', or AWS_REGION on the runner (${AUTH_ACTION} sets it with its 'aws-region' input).`,
    );
  if (opts.wire === "gemini") throw new ConfigurationError("Input 'provider': bedrock does not serve the Gemini API.");
  const { provider, source } = credentialsFrom(opts.env, region);
  const credentials = refreshing(provider);
  // Resolved now, so a job without credentials fails before the agent starts.
  try {
    await credentials();
  } catch (e) {
    throw new ConfigurationError(
      `Input 'provider': bedrock found no AWS credentials on the runner (looked for AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE, then the AWS SDK's default chain: ${errorMessage(e).slice(0, 200)}). Add ${AUTH_ACTION} before this step.`,
    );
  }
  const signer = new SignatureV4({ service: "bedrock", region, credentials, sha256: Sha256 });
  const upstream = upstreamFor(opts, region);
  return {
    provider: "bedrock",
    upstream,
    // Nothing but the Anthropic SDK's `beta=true`, which it has always been sent.
    queryParams: ["beta"],
    ...(opts.wire === "anthropic"
      ? {
          routes: INVOKE_ROUTES,
          forwardedHeaderPrefixes: ["x-amzn-bedrock-"],
          // Claude Code lists the system inference profiles (control plane) to pick model ids; it keeps its built-in ones when refused.
          quietlyRefused: [{ method: "GET", path: /^\/inference-profiles$/ }],
        }
      : {}),
    priceTable: CLOUD_PRICE_TABLES.bedrock!,
    credentialSource: source,
    sign: (request) => sign(signer, request),
    frameReader: (contentType) => (/application\/vnd\.amazon\.eventstream/i.test(contentType) ? new EventStreamReader() : undefined),
  };
}

/** The SigV4 headers for exactly this request: the signature covers every header given and the body's hash. */
async function sign(signer: SignatureV4, request: SignableRequest): Promise<Record<string, string>> {
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of request.url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
  }
  const signed = await signer.sign({
    method: request.method,
    protocol: request.url.protocol,
    hostname: request.url.hostname,
    ...(request.url.port ? { port: Number(request.url.port) } : {}),
    path: request.url.pathname,
    query,
    headers: { ...request.headers },
    body: request.body,
  });
  const added: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers)) if (request.headers[k] !== v) added[k] = v;
  return added;
}

/** Largest event-stream frame read for usage (Bedrock's chunks are a few KiB). */
const MAX_FRAME = 16 * 1024 * 1024;

/**
 * AWS event-stream frames → the JSON documents they carry: a `chunk` event's
 * `bytes` (base64 of one Anthropic stream event, the last with Bedrock's
 * `amazon-bedrock-invocationMetrics`), an exception as `{ error: { type } }`.
 * Frames are cut by their length prelude; the codec checks and decodes each.
 */
export class EventStreamReader implements FrameReader {
  private readonly codec = new EventStreamCodec(
    (b) => Buffer.from(b).toString("utf8"),
    (s) => Buffer.from(s, "utf8"),
  );
  private pending: Buffer = Buffer.alloc(0);
  private broken = false;

  push(chunk: Buffer): unknown[] {
    if (this.broken) return [];
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: unknown[] = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32BE(0);
      if (length < 16 || length > MAX_FRAME) {
        this.broken = true;
        return out;
      }
      if (this.pending.length < length) break;
      const frame = this.pending.subarray(0, length);
      this.pending = this.pending.subarray(length);
      try {
        const doc = this.document(frame);
        if (doc !== undefined) out.push(doc);
      } catch {
        // A frame that fails its checksum: the stream is read no further for usage.
        this.broken = true;
        return out;
      }
    }
    return out;
  }

  private document(frame: Buffer): unknown {
    const message = this.codec.decode(frame);
    const header = (name: string) => {
      const h = message.headers[name];
      return h && h.type === "string" ? h.value : undefined;
    };
    const body = Buffer.from(message.body).toString("utf8");
    if (header(":message-type") === "exception" || header(":message-type") === "error")
      return { error: { type: header(":exception-type") ?? header(":error-code") ?? "error" } };
    if (header(":event-type") !== "chunk") return undefined;
    const payload = JSON.parse(body) as { bytes?: unknown };
    if (typeof payload.bytes !== "string") return undefined;
    return JSON.parse(Buffer.from(payload.bytes, "base64").toString("utf8"));
  }
}
