/**
 * `provider: vertex` and `provider: azure` end to end: the action (dist/main.js) runs the real
 * CLIs under bwrap against cloud stubs on 127.0.0.1, and the model gateway signs for them.
 *
 * - Vertex: the credentials file is an `external_account` file in the workspace, as
 *   google-github-actions/auth leaves it (`gha-creds-<hex>.json`, its OIDC token fetched from a
 *   URL with a bearer); a fake STS mints access tokens that are due for refresh as soon as
 *   they are minted (lifetime = google-auth-library's early-refresh margin), so every model
 *   request of the run makes the gateway refresh its bearer, without the test waiting. The stub accepts only bearers
 *   the STS minted, and only on the workflow's project and region.
 * - Azure: an Azure OpenAI stub, once with the api-key from `secrets`, once with an Entra token
 *   from a fake authority (workload identity: AZURE_FEDERATED_TOKEN_FILE).
 * - No leaks: a shell step dumps what the agent can see (its environment, every /proc/<pid>/environ
 *   it can read, the credentials files) into the workspace; no credential value is in it, nor in
 *   the log, the outputs, the patch or any file the run wrote.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeEntra, startFakeGoogleSts, type FakeEntra } from "../support/fake-cloud-auth.js";
import { startAzureOpenAiStub, startVertexStub } from "../support/fake-cloud-model.js";
import { shellStep, writeFileStep } from "../support/stub-model-tools.js";
import type { CliName } from "../support/stub-model-clis.js";
import type { StubStep } from "../support/stub-model.js";
import { filesUnder, makeWorkspace, runAgentAction, type AgentRun } from "./helpers.js";

const RUN_TIMEOUT = 150_000;
/** What the agent can see, written into the workspace by a shell step. */
const PROBE =
  "{ env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$f\"; echo; done; cat gha-creds-*.json; cat \"$GOOGLE_APPLICATION_CREDENTIALS\" \"$AZURE_FEDERATED_TOKEN_FILE\"; ls -la ~ /tmp; } > agent-view.txt 2>&1; echo probed";

function probeScript(cli: CliName, workspace: string): StubStep[] {
  return [writeFileStep(cli, path.join(workspace, "hello.txt"), `hello from ${cli}\n`), shellStep(cli, PROBE, "look around"), { text: "done on the cloud" }];
}

/** No value of `secrets` anywhere the run or the agent left text. */
function expectNoLeak(r: AgentRun, workspace: string, secrets: string[]): void {
  const view = readFileSync(path.join(workspace, "agent-view.txt"), "utf8");
  expect(view.length).toBeGreaterThan(200);
  const resultsDir = path.dirname(r.main.outputs["patch-path"]!);
  const places: Array<[string, string]> = [
    ["the agent's view", view],
    // The runner masks what the action registers with ::add-mask::; every other line must be clean as written.
    ["the log", r.main.rawStdout.split("\n").filter((l) => !l.startsWith("::add-mask::")).join("\n")],
    ["stderr", r.main.stderr],
    ["the outputs", JSON.stringify(r.main.outputs)],
    ["the summary", r.main.summary],
    ...filesUnder(resultsDir).map((f): [string, string] => [f, readFileSync(f, "latin1")]),
  ];
  for (const secret of secrets.filter((s) => s.length >= 8))
    for (const [where, text] of places) expect(text.includes(secret), `${secret.slice(0, 12)}… in ${where}`).toBe(false);
}

function expectDelivered(r: AgentRun): void {
  expect(r.main.outputs.conclusion, r.main.log + r.main.stderr).toBe("success");
  expect(JSON.parse(r.main.outputs["changed-files"]!)).toContain("hello.txt");
  expect(JSON.parse(r.main.outputs["changed-files"]!).some((f: string) => f.startsWith("gha-creds-"))).toBe(false);
  expect(r.result.sandboxBackend).toBe("bwrap");
}

describe("provider: vertex", () => {
  const PROJECT = "vertex-project-7c1e";
  const REGION = "us-east5";

  it.each([
    ["claude", "claude-sonnet-4-5@20250929"],
    ["gemini", "gemini-2.5-pro"],
    // Vertex's OpenAI-compatible endpoint names Gemini models with their publisher.
    ["opencode", "google/gemini-2.5-pro"],
  ] as const)(
    "%s under bwrap: the bearer is minted through workload identity federation and refreshed mid-run; usage counted; no credential reaches the agent",
    async (cli, model) => {
      const workspace = makeWorkspace();
      // Usable for 0 ms: each model request finds the last bearer due for refresh, and the gateway refreshes it.
      const sts = await startFakeGoogleSts({ dir: workspace, subjectSource: "url", usableForMs: 0 });
      const stub = await startVertexStub(probeScript(cli, workspace), { project: PROJECT, region: REGION, accessTokenProblem: sts.accessTokenProblem });
      try {
        const credentials = readFileSync(sts.credentialsFile, "utf8");
        const r = await runAgentAction({
          workspace,
          stub: stub.stub,
          timeoutMs: RUN_TIMEOUT,
          inputs: { agent: cli, model, provider: "vertex", "vertex-region": REGION, "base-url": stub.url, sandbox: "bwrap", network: "model-only", prompt: "Create hello.txt" },
          // The project comes from the runner's env, as google-github-actions/auth sets it.
          env: {
            GOOGLE_APPLICATION_CREDENTIALS: sts.credentialsFile,
            GOOGLE_GHA_CREDS_PATH: sts.credentialsFile,
            GOOGLE_CLOUD_PROJECT: PROJECT,
            CLOUDSDK_CORE_PROJECT: PROJECT,
            ACTIONS_ID_TOKEN_REQUEST_TOKEN: sts.oidcRequestToken!,
            ACTIONS_ID_TOKEN_REQUEST_URL: `${sts.url}/oidc?api-version=2.0`,
          },
        });
        expectDelivered(r);
        expect(stub.seen.filter((s) => s.refused)).toEqual([]);
        const bearers = stub.bearers();
        expect(bearers.length, JSON.stringify(stub.seen)).toBeGreaterThanOrEqual(2);
        for (const b of bearers) expect(sts.accessTokens()).toContain(b);
        // Each model request reached the workflow's project and region, under a token of the STS flow.
        expect(stub.stub.modelRequests().length).toBeGreaterThanOrEqual(3);
        expect(r.result.usage.requests).toBe(stub.stub.modelRequests().length);
        expect(r.result.usage.inputTokens).toBeGreaterThan(0);
        expect(r.result.usage.outputTokens).toBeGreaterThan(0);
        // Priced from the table by Vertex's own model ids.
        expect(r.result.usage.costUsd).toBeGreaterThan(0);
        // The credentials file is intact on the host, and the agent saw neither it nor the project.
        expect(readFileSync(sts.credentialsFile, "utf8")).toBe(credentials);
        expectNoLeak(r, workspace, [...sts.secrets(), credentials, PROJECT]);
      } finally {
        await stub.close();
        await sts.close();
      }
    },
    RUN_TIMEOUT + 10_000,
  );

  it("fails before the agent starts when no Google credentials are on the runner, naming provider and the auth action", async () => {
    const workspace = makeWorkspace();
    const stub = await startVertexStub([], { project: PROJECT, region: REGION, accessTokenProblem: () => "none" });
    try {
      const r = await runAgentAction({
        workspace,
        stub: stub.stub,
        inputs: { agent: "claude", provider: "vertex", "vertex-project": PROJECT, "vertex-region": REGION, "base-url": stub.url, sandbox: "bwrap", prompt: "Create hello.txt" },
      }).catch((e: Error) => e);
      const log = r instanceof Error ? r.message : r.main.log + r.main.stderr;
      expect(log).toMatch(/'provider': vertex.*GOOGLE_APPLICATION_CREDENTIALS.*google-github-actions\/auth/);
      expect(stub.seen).toEqual([]);
    } finally {
      await stub.close();
    }
  });
});

describe("provider: azure", () => {
  it("fails before the agent starts when no Azure credentials are on the runner, naming provider and the auth action", async () => {
    const workspace = makeWorkspace();
    const stub = await startAzureOpenAiStub([], { apiKey: "never-used-key-123" });
    try {
      const r = await runAgentAction({
        workspace,
        stub: stub.stub,
        inputs: { agent: "codex", provider: "azure", "base-url": stub.url, sandbox: "bwrap", prompt: "Create hello.txt" },
        env: { AZURE_CONFIG_DIR: workspace },
      }).catch((e: Error) => e);
      const log = r instanceof Error ? r.message : r.main.log + r.main.stderr;
      expect(log).toMatch(/'provider': azure needs credentials.*AZURE_OPENAI_API_KEY.*AZURE_CLIENT_ID.*azure\/login/);
      expect(stub.seen).toEqual([]);
    } finally {
      await stub.close();
    }
  });

  let entra: FakeEntra;
  beforeAll(async () => {
    entra = await startFakeEntra();
  });
  afterAll(async () => {
    await entra?.close();
  });

  it.each([
    ["codex", "gpt-5.5"],
    ["opencode", "gpt-4o"],
  ] as const)(
    "%s under bwrap with the api-key from secrets: the key signs every request and stays on the runner",
    async (cli, model) => {
      const key = "azure-openai-key-3f9a1c0d7e5b";
      const workspace = makeWorkspace();
      const stub = await startAzureOpenAiStub(probeScript(cli, workspace), { apiKey: key });
      try {
        const r = await runAgentAction({
          workspace,
          stub: stub.stub,
          timeoutMs: RUN_TIMEOUT,
          inputs: { agent: cli, model, provider: "azure", "base-url": stub.url, sandbox: "bwrap", network: "model-only", prompt: "Create hello.txt", secrets: `AZURE_OPENAI_API_KEY=${key}` },
        });
        expectDelivered(r);
        expect(stub.seen.filter((s) => s.refused)).toEqual([]);
        expect(stub.seen.every((s) => s.apiKey === key && s.bearer === undefined)).toBe(true);
        expect(r.result.usage.requests).toBe(stub.stub.modelRequests().length);
        expect(r.result.usage.inputTokens).toBeGreaterThan(0);
        expect(r.result.usage.costUsd).toBeGreaterThan(0);
        expectNoLeak(r, workspace, [key]);
      } finally {
        await stub.close();
      }
    },
    RUN_TIMEOUT + 10_000,
  );

  it(
    "codex under bwrap with an Entra token from workload identity (AZURE_FEDERATED_TOKEN_FILE)",
    async () => {
      const workspace = makeWorkspace();
      const stub = await startAzureOpenAiStub(probeScript("codex", workspace), { accessTokenProblem: entra.accessTokenProblem });
      try {
        const r = await runAgentAction({
          workspace,
          stub: stub.stub,
          timeoutMs: RUN_TIMEOUT,
          inputs: { agent: "codex", model: "gpt-5.5", provider: "azure", "base-url": stub.url, sandbox: "bwrap", network: "model-only", prompt: "Create hello.txt" },
          env: {
            AZURE_CLIENT_ID: entra.clientId,
            AZURE_TENANT_ID: entra.tenantId,
            AZURE_FEDERATED_TOKEN_FILE: entra.federatedTokenFile,
            AZURE_AUTHORITY_HOST: entra.authorityHost,
            // The fake authority's self-signed certificate, trusted by the action's process only.
            NODE_EXTRA_CA_CERTS: entra.caFile,
          },
        });
        expectDelivered(r);
        expect(stub.seen.filter((s) => s.refused)).toEqual([]);
        expect(stub.bearers().length).toBeGreaterThanOrEqual(1);
        for (const b of stub.bearers()) expect(entra.accessTokens()).toContain(b);
        expect(r.result.usage.requests).toBe(stub.stub.modelRequests().length);
        expectNoLeak(r, workspace, [...entra.secrets(), entra.clientId, entra.tenantId]);
      } finally {
        await stub.close();
      }
    },
    RUN_TIMEOUT + 10_000,
  );

  it(
    "claude under bwrap on Microsoft Foundry with an Entra token from the job's OIDC token (client assertion)",
    async () => {
      const workspace = makeWorkspace();
      const stub = await startAzureOpenAiStub(probeScript("claude", workspace), { accessTokenProblem: entra.accessTokenProblem });
      try {
        const r = await runAgentAction({
          workspace,
          stub: stub.stub,
          timeoutMs: RUN_TIMEOUT,
          inputs: { agent: "claude", model: "claude-sonnet-4-5", provider: "azure", "base-url": stub.url, sandbox: "bwrap", network: "model-only", prompt: "Create hello.txt" },
          env: {
            AZURE_CLIENT_ID: entra.clientId,
            AZURE_TENANT_ID: entra.tenantId,
            AZURE_AUTHORITY_HOST: entra.authorityHost,
            ACTIONS_ID_TOKEN_REQUEST_URL: entra.oidcRequest.url,
            ACTIONS_ID_TOKEN_REQUEST_TOKEN: entra.oidcRequest.token,
            NODE_EXTRA_CA_CERTS: entra.caFile,
          },
        });
        expectDelivered(r);
        expect(stub.seen.filter((s) => s.refused)).toEqual([]);
        expect(stub.seen.every((s) => s.path.startsWith("/anthropic/v1/messages"))).toBe(true);
        for (const b of stub.bearers()) expect(entra.accessTokens()).toContain(b);
        expect(stub.bearers().length).toBeGreaterThanOrEqual(1);
        expect(r.result.usage.requests).toBe(stub.stub.modelRequests().length);
        expectNoLeak(r, workspace, [...entra.secrets(), entra.clientId, entra.tenantId]);
      } finally {
        await stub.close();
      }
    },
    RUN_TIMEOUT + 10_000,
  );
});
