/**
 * A cloud behind the model gateway: where requests go, which routes the
 * agent may call there, and how each request is signed with credentials
 * that stay on the runner. The gateway (gateway.ts) keeps doing everything
 * else the same for every provider: the placeholder check, the body policy,
 * budgets, usage and refusals. One file per cloud (bedrock.ts, vertex.ts,
 * azure.ts), loaded by registry.ts only when a run uses that cloud, so the
 * cloud SDKs never slow down a run that does not.
 */
import type { CloudName, CloudSettings, ModelProvider } from "../../shared/agents.js";
import type { Logger } from "../../logger.js";

/**
 * An agent-facing route of the cloud's own API (Bedrock's InvokeModel) and
 * the wire route whose rules apply to it: its body is that route's body
 * (Claude on Bedrock sends Anthropic Messages bodies), so the body policy,
 * budget admission and usage reading work on `canonical`.
 */
export interface CloudRoute {
  method: "GET" | "POST";
  /** Matches the request path; the first group, URL-decoded, is the model id. */
  path: RegExp;
  /** The wire route (`/v1/messages`) the request counts as. */
  canonical: string;
  /** Whether the response streams (the body has no `stream` flag on these routes). */
  stream: boolean;
  /**
   * The upstream path (under `upstream`'s path) for a matched request, when it
   * is not the agent's path: Vertex puts the workflow's project and region in
   * place of the placeholders the agent was given.
   */
  upstreamPath?(match: RegExpExecArray): string;
}

/** Turns a binary streamed response body (AWS event stream) into the JSON documents it carries. */
export interface FrameReader {
  push(chunk: Buffer): unknown[];
}

/** One request as it will be sent upstream: the signer signs exactly these headers and this body. */
export interface SignableRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
}

export interface CloudUpstream {
  readonly provider: CloudName;
  /** The base URL requests are forwarded to (origin and path prefix). */
  readonly upstream: URL;
  /** The cloud's own routes the agent calls, when they are not the wire API's (undefined: the wire's routes, under `upstream`). */
  readonly routes?: CloudRoute[];
  /**
   * Requests the CLI makes on its own that are answered 404 without being
   * recorded as blocked network attempts (Claude Code's listing of Bedrock
   * inference profiles, a control-plane read it does without and falls back from).
   */
  readonly quietlyRefused?: Array<{ method: string; path: RegExp }>;
  /** The query parameters forwarded upstream (any other is dropped before signing): Vertex's `alt`, Azure's `api-version`. */
  readonly queryParams: readonly string[];
  /** Request header name prefixes forwarded besides the wire API's allowlist (Bedrock's `x-amzn-bedrock-`). */
  readonly forwardedHeaderPrefixes?: string[];
  /** The price table's provider id for this cloud's model ids and prices (genai-prices: `aws` for Bedrock). */
  readonly priceTable?: string;
  /** Where the credentials came from, for the log: names only, never a value. */
  readonly credentialSource: string;
  /** Headers that authenticate the request upstream (added to `headers`; a signature covers them). */
  sign(request: SignableRequest): Promise<Record<string, string>>;
  /** A reader for a binary streamed response of this content type, or undefined (SSE and JSON are read as usual). */
  frameReader?(contentType: string): FrameReader | undefined;
  /** Stops token refreshes, if any. */
  close?(): void;
}

export interface CloudUpstreamOptions {
  /** The wire API the agent speaks to the gateway for this cloud (agents/<agent>.ts). */
  wire: ModelProvider;
  cloud: CloudSettings;
  /** Input `base-url`: the cloud endpoint to sign for, instead of the public one. */
  baseUrl?: string;
  /** The runner's cloud credential variables (SandboxHost.cloudEnv). */
  env: Record<string, string>;
  /** The run's `secrets` (an Azure api-key may be given there). */
  secrets: Record<string, string>;
  log: Logger;
}

export interface CloudModule {
  createUpstream(opts: CloudUpstreamOptions): Promise<CloudUpstream>;
}
