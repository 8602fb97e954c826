/**
 * What the model gateway's tests without a CLI share: the servers each test starts, closed after it; a gateway
 * over the stub model; a request as an agent of each provider sends it (the placeholder key in its header).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import type { RunResult } from "../../src/result.js";
import { Redactor } from "../../src/shared/redact.js";
import { buildRunSpans } from "../../src/trace/otel.js";
import { startModelGateway, type ModelGateway, type ModelGatewayOptions } from "../../src/sandbox/gateway.js";
import { startStubModel, type StubModel, type StubModelOptions, type StubStep } from "../support/stub-model.js";
import { recordingLogger, request, type Reply } from "./helpers.js";

export type Provider = ModelGatewayOptions["provider"];
export type Cleanups = Array<() => Promise<void>>;

/** A list of closers, emptied (last first) after each test of the file that calls this. */
export function cleanupsAfterEach(): Cleanups {
  const cleanups: Cleanups = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  return cleanups;
}

/** The header an agent of `provider` sends its key in. */
export const auth = (provider: Provider, key: string): Record<string, string> =>
  provider === "anthropic" ? { "x-api-key": key } : provider === "openai" ? { authorization: `Bearer ${key}` } : { "x-goog-api-key": key };

/** A JSON POST to the gateway with its placeholder key, as the agent sends it. */
export function call(gw: ModelGateway, provider: Provider, path: string, body: unknown): Promise<Reply> {
  return request(gw.url, path, { method: "POST", headers: { ...auth(provider, gw.placeholderKey), "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** The stub model (`script`, `stub` options) behind a gateway for `provider` with the key "real-key" and `gateway`'s options; both closed after the test. */
export async function gatewayOverStub(
  cleanups: Cleanups,
  provider: Provider,
  opts: { script?: StubStep[]; stub?: StubModelOptions; gateway?: Partial<ModelGatewayOptions> } = {},
): Promise<{ gw: ModelGateway; stub: StubModel; log: ReturnType<typeof recordingLogger> }> {
  const stub = await startStubModel(opts.script ?? [], opts.stub);
  cleanups.push(stub.close);
  const log = recordingLogger();
  const gw = await startModelGateway({ provider, upstream: provider === "openai" ? `${stub.url}/v1` : stub.url, apiKey: "real-key", log, ...opts.gateway });
  cleanups.push(gw.close);
  return { gw, stub, log };
}

/** The OTel spans of a claude run of `model` whose model requests went through `gw` (a cloud `provider`'s), its trace empty. */
export async function claudeRunSpans(gw: ModelGateway, model: string, provider: string): ReturnType<typeof buildRunSpans> {
  const trace = path.join(mkdtempSync(path.join(os.tmpdir(), `${provider}-otel-`)), "trace.jsonl");
  writeFileSync(trace, "");
  const result = {
    conclusion: "success",
    agentName: "claude",
    agentBackend: "claude",
    model,
    sandboxBackend: "none",
    startedAt: new Date().toISOString(),
    durationMs: 10,
    usage: gw.usage(),
    toolCalls: 0,
    numTurns: 1,
    networkBlocked: 0,
    permissionDenials: [],
    diff: { baseCommit: "", baseTree: "", patchPath: "", changedFiles: [], agentCommits: [] },
    metadata: { provider, modelRequests: gw.requestLog() },
  } as unknown as RunResult;
  return buildRunSpans(result, trace, { host: { repository: "octo/repo", runId: "1", runAttempt: "1", serverUrl: "https://github.com", eventName: "push" } }, new Redactor([]));
}
