/**
 * Cloud model endpoints for the gateway's Vertex and Azure signers: the stub model
 * (stub-model.ts, same scripts) behind a front that checks each request's credentials the way
 * the cloud does, and its path against the cloud's routes.
 *
 * - {@link startVertexStub}: Vertex AI. `Authorization: Bearer` must be an access token the fake
 *   STS minted and still valid; paths `/v1/projects/<project>/locations/<region>/publishers/
 *   {anthropic,google}/models/<model>:<verb>` (Anthropic-on-Vertex `streamRawPredict` /
 *   `rawPredict` answered as Messages SSE / JSON, Gemini `streamGenerateContent` /
 *   `generateContent` in Gemini's shapes), and the OpenAI-compatible
 *   `/v1/projects/<project>/locations/<region>/endpoints/openapi/chat/completions`.
 * - {@link startAzureOpenAiStub}: Azure OpenAI. `api-key: <key>`, or `Authorization: Bearer` from
 *   the fake Entra authority; paths `/openai/v1/{responses,chat/completions}`,
 *   `/openai/deployments/<d>/chat/completions?api-version=…`, `/openai/responses?api-version=…`,
 *   and Foundry's Anthropic `/anthropic/v1/messages`.
 *
 * A refused request never reaches the stub model; every request is recorded in `seen` with the
 * credential it carried and the reason it was refused, if it was.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { startStubModel, type StubModel, type StubModelOptions, type StubScript } from "./stub-model.js";

export interface SeenRequest {
  method: string;
  path: string;
  /** The bearer token (without `Bearer `), if any. */
  bearer?: string;
  /** The `api-key` / `x-api-key` / `x-goog-api-key` header, if any. */
  apiKey?: string;
  /** Why the front refused it; undefined when it was passed to the stub model. */
  refused?: string;
}

export interface CloudStub {
  /** `http://127.0.0.1:PORT`: the `base-url` to give the action. */
  url: string;
  stub: StubModel;
  seen: SeenRequest[];
  /** Distinct bearers of accepted requests, in order of first use. */
  bearers(): string[];
  close(): Promise<void>;
}

type Check = (req: http.IncomingMessage, pathname: string) => string | undefined;

async function startFront(stub: StubModel, check: Check): Promise<{ url: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const target = new URL(stub.url);
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://front").pathname;
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const key = req.headers["api-key"] ?? req.headers["x-api-key"] ?? req.headers["x-goog-api-key"];
    const apiKey = Array.isArray(key) ? key.join(",") : key;
    const problem = check(req, pathname);
    seen.push({ method: req.method ?? "GET", path: req.url ?? "/", bearer, apiKey, refused: problem });
    if (problem) {
      req.resume();
      const body = JSON.stringify({ error: { code: 401, message: `cloud stub: ${problem}`, status: "UNAUTHENTICATED" } });
      res.writeHead(problem.startsWith("not a route") ? 404 : 401, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function cloudStub(stub: StubModel, front: { url: string; seen: SeenRequest[]; close(): Promise<void> }): CloudStub {
  return {
    url: front.url,
    stub,
    seen: front.seen,
    bearers: () => [...new Set(front.seen.filter((s) => !s.refused && s.bearer).map((s) => s.bearer!))],
    close: async () => {
      await front.close();
      await stub.close();
    },
  };
}

export interface VertexStubOptions extends StubModelOptions {
  project: string;
  region: string;
  /** The fake STS's check of a bearer (FakeGoogleSts.accessTokenProblem). */
  accessTokenProblem(bearer: string | undefined): string | undefined;
}

export async function startVertexStub(script: StubScript, options: VertexStubOptions): Promise<CloudStub> {
  const stub = await startStubModel(script, options);
  const route = new RegExp(
    `^/v1(beta1)?/projects/${options.project}/locations/${options.region}/(publishers/(anthropic/models/[^/:]+:(streamRawPredict|rawPredict)|anthropic/models/count-tokens:rawPredict|google/models/[^/:]+:(streamGenerateContent|generateContent|countTokens))|endpoints/openapi/chat/completions)$`,
  );
  const front = await startFront(stub, (req, pathname) => {
    if (req.method !== "POST" || !route.test(pathname)) return `not a route of project ${options.project} in ${options.region}: ${req.method} ${pathname}`;
    // Vertex takes the OAuth bearer only; an API key here would be the agent's placeholder leaking through.
    if (req.headers["x-api-key"] || req.headers["x-goog-api-key"]) return "an API key header reached Vertex";
    return options.accessTokenProblem(/^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1]);
  });
  return cloudStub(stub, front);
}

export interface AzureOpenAiStubOptions extends StubModelOptions {
  /** The resource's key (`api-key` header). */
  apiKey?: string;
  /** The fake Entra authority's check of a bearer (FakeEntra.accessTokenProblem). */
  accessTokenProblem?(bearer: string | undefined): string | undefined;
}

const AZURE_ROUTES = [
  /^\/openai\/v1\/(responses|chat\/completions)$/,
  /^\/openai\/deployments\/[^/]+\/chat\/completions$/,
  /^\/openai\/responses$/,
  /^\/anthropic\/v1\/messages(\/count_tokens)?$/,
];

export async function startAzureOpenAiStub(script: StubScript, options: AzureOpenAiStubOptions): Promise<CloudStub> {
  const stub = await startStubModel(script, options);
  const front = await startFront(stub, (req, pathname) => {
    if (req.method !== "POST" || !AZURE_ROUTES.some((r) => r.test(pathname))) return `not a route of Azure OpenAI: ${req.method} ${pathname}`;
    const search = new URL(req.url ?? "/", "http://front").searchParams;
    if (!pathname.startsWith("/openai/v1/") && !pathname.startsWith("/anthropic/") && !search.get("api-version")) return "not a route: api-version missing";
    const key = req.headers["api-key"] ?? req.headers["x-api-key"];
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (key !== undefined && bearer !== undefined) return "both an api-key and a bearer";
    if (key !== undefined) return options.apiKey !== undefined && key === options.apiKey ? undefined : "a wrong api-key";
    if (options.accessTokenProblem) return options.accessTokenProblem(bearer);
    return "no credentials";
  });
  return cloudStub(stub, front);
}
