/**
 * Issue #23 acceptance, Bedrock end to end: the real Claude Code CLI (pinned)
 * with `provider: bedrock`, run by the action (dist/) under bubblewrap,
 * talks to the gateway with its placeholder; the gateway signs each request
 * with the job's AWS credentials for the stub Bedrock runtime, which checks
 * every signature with the AWS SDK's signer and answers in event-stream
 * frames. Claude writes a file through it, usage is counted, the budget
 * holds, and no AWS value reaches the agent (its environment, /proc, its
 * files), the log, the outputs or the results (the artifact's content).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_PATH, filesUnder, makeWorkspace } from "../agents/helpers.js";
import { runStep, type StepResult } from "../support/harness.js";
import { startStubBedrock, type StubBedrock } from "../support/stub-bedrock.js";
import type { StubScript } from "../support/stub-model.js";
import { writeFileStep } from "../support/stub-model-tools.js";

const CREDS = { accessKeyId: "AKIAE2ESTUBBEDROCK01", secretAccessKey: "e2eStubBedrockSecretAccessKey0123456789ab", sessionToken: "e2eStubBedrockSessionToken0123456789" };
const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const AWS_VALUES = [CREDS.accessKeyId, CREDS.secretAccessKey, CREDS.sessionToken];

let stub: StubBedrock;
beforeAll(async () => {
  stub = await startStubBedrock([], { credentials: CREDS, region: "eu-west-3" });
});
afterAll(() => stub.close());



async function claudeOnBedrock(ws: string, script: StubScript, extra: Record<string, string> = {}): Promise<StepResult> {
  return onBedrock(ws, script, { agent: "claude", model: MODEL, ...extra });
}

async function onBedrock(ws: string, script: StubScript, extra: Record<string, string>): Promise<StepResult> {
  stub.model.setScript(script);
  stub.requests.length = 0;
  return runStep("main", {
    workspace: ws,
    inputs: {
      provider: "bedrock",
      "base-url": stub.url,
      prompt: "write the file",
      "agent-version": "preinstalled",
      sandbox: "bwrap",
      network: "model-only",
      comment: "none",
      "upload-artifacts": "false",
      ...extra,
    },
    env: {
      PATH: AGENT_PATH,
      AWS_ACCESS_KEY_ID: CREDS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey,
      AWS_SESSION_TOKEN: CREDS.sessionToken,
      AWS_REGION: "eu-west-3",
    },
    timeoutMs: 150_000,
  });
}

// Real CLIs under bwrap on a shared machine: a minute is not always enough.
describe("Claude Code on Bedrock, signed by the gateway (bwrap)", { timeout: 300_000 }, () => {
  it("writes a file through the stub runtime; every request is correctly signed; usage is counted; no AWS value reaches the agent or leaves the host", async () => {
    const ws = makeWorkspace({ "README.md": "hi\n" });
    const probe = path.join(ws, "probe.txt");
    const main = await claudeOnBedrock(ws, [
      { tool: "Write", args: { file_path: path.join(ws, "hello.txt"), content: "signed by the gateway\n" } },
      {
        tool: "Bash",
        args: {
          // No value in the command itself (it lands in the transcript): everything the agent can read is copied out instead.
          command: `(env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; find "$HOME" "$TMPDIR" -type f -exec cat {} + 2>/dev/null) > ${probe}`,
          description: "probe",
        },
      },
      { text: "Done." },
    ]);
    expect(main.outputs.conclusion, main.log + main.stderr).toBe("success");
    expect(readFileSync(path.join(ws, "hello.txt"), "utf8")).toBe("signed by the gateway\n");

    // Every request reached the stub correctly signed, for the scripted model, by the job's key.
    const invokes = stub.requests.filter((r) => r.modelId);
    expect(invokes.length).toBeGreaterThanOrEqual(3);
    expect(stub.requests.filter((r) => !r.signatureValid)).toEqual([]);
    expect(new Set(invokes.map((r) => r.accessKeyId))).toEqual(new Set([CREDS.accessKeyId]));
    expect(invokes.some((r) => r.modelId === MODEL && r.path.includes("invoke-with-response-stream"))).toBe(true);

    // Usage, counted by the gateway from the event-stream frames.
    const usage = JSON.parse(main.outputs.usage!) as { inputTokens: number; outputTokens: number; requests: number; costUsd?: number };
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(usage.requests).toBeGreaterThanOrEqual(3);
    // Priced as Bedrock bills the model (genai-prices' aws table knows `us.anthropic.…-v1:0`).
    expect(usage.costUsd).toBeGreaterThan(0);

    // The agent's view: its environment, every /proc/<pid>/environ, its files.
    const seen = readFileSync(probe, "utf8");
    expect(seen).toContain("CLAUDE_CODE_USE_BEDROCK=1");
    for (const v of AWS_VALUES) expect(seen).not.toContain(v);
    const workspaceFiles = filesUnder(ws).filter((f) => f !== probe);
    expect(workspaceFiles.filter((f) => AWS_VALUES.some((v) => readFileSync(f, "latin1").includes(v)))).toEqual([]);
    expect(seen).not.toMatch(/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN)=/m);

    // The log, the outputs and the results (what the artifact uploads) hold none of them.
    const log = main.rawStdout.replace(/^::add-mask::.*$/gm, "");
    for (const v of AWS_VALUES) {
      expect(log).not.toContain(v);
      expect(main.stderr).not.toContain(v);
      expect(JSON.stringify(main.outputs)).not.toContain(v);
    }
    const results = path.dirname(main.outputs["patch-path"]!);
    const leaked = filesUnder(results).flatMap((f) => AWS_VALUES.filter((v) => readFileSync(f, "latin1").includes(v)).map((v) => `${f}: ${v.slice(0, 6)}…`));
    expect(leaked).toEqual([]);
    // Claude Code's own inference-profile listing is refused quietly: not a network attempt of the agent.
    expect(readFileSync(path.join(results, "trace.jsonl"), "utf8")).not.toContain('"type":"network_blocked"');
    expect(main.log).toMatch(/Model gateway: signing bedrock requests with credentials from AWS_ACCESS_KEY_ID with AWS_SESSION_TOKEN/);
  });

  it("max-model-requests stops Claude at the limit, counted at the gateway", async () => {
    const ws = makeWorkspace({ "README.md": "hi\n" });
    const main = await claudeOnBedrock(
      ws,
      [
        { tool: "Write", args: { file_path: path.join(ws, "one.txt"), content: "1\n" } },
        { tool: "Write", args: { file_path: path.join(ws, "two.txt"), content: "2\n" } },
        { text: "Done." },
      ],
      { "max-model-requests": "1" },
    );
    expect(main.outputs["budget-exceeded"], main.log).toBe("true");
    expect(existsSync(path.join(ws, "two.txt"))).toBe(false);
    expect(stub.requests.filter((r) => r.path.includes("/invoke"))).toHaveLength(1);
  });

  it.each(["codex", "opencode"] as const)("%s (OpenAI wire) writes a file through Bedrock's OpenAI-compatible API, signed by the gateway", async (cli) => {
    const ws = makeWorkspace({ "README.md": "hi\n" });
    // Codex picks its tools by model family: the stub's apply_patch shape is that of gpt-5.5.
    const model = cli === "codex" ? "gpt-5.5" : "openai.gpt-oss-120b-1:0";
    const main = await onBedrock(ws, [writeFileStep(cli, path.join(ws, "hello.txt"), "via bedrock\n"), { text: "Done." }], { agent: cli, model });
    expect(main.outputs.conclusion, main.log + main.stderr).toBe("success");
    expect(readFileSync(path.join(ws, "hello.txt"), "utf8")).toBe("via bedrock\n");
    const calls = stub.requests.filter((r) => /\/openai\/v1\/(responses|chat\/completions)$/.test(r.path));
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(stub.requests.filter((r) => !r.signatureValid)).toEqual([]);
    const usage = JSON.parse(main.outputs.usage!) as { inputTokens: number; requests: number };
    expect(usage.inputTokens).toBeGreaterThan(0);
    const log = main.rawStdout.replace(/^::add-mask::.*$/gm, "");
    for (const v of AWS_VALUES) expect(log).not.toContain(v);
    // (OpenCode's start-up and shutdown under bwrap take most of a minute on a loaded machine; its two model requests take milliseconds.)
  });

  it("without AWS credentials on the runner: fails before the agent starts, naming provider, what it looked for and the auth action", async () => {
    const ws = makeWorkspace({ "README.md": "hi\n" });
    const before = stub.requests.length;
    const main = await runStep("main", {
      workspace: ws,
      inputs: { agent: "claude", provider: "bedrock", model: MODEL, "base-url": stub.url, prompt: "p", "agent-version": "preinstalled", sandbox: "bwrap", comment: "none" },
      // No keys, no role; no profile file and no instance metadata for the SDK's chain to find.
      env: { PATH: AGENT_PATH, AWS_REGION: "eu-west-3", AWS_EC2_METADATA_DISABLED: "true", AWS_CONFIG_FILE: "/nonexistent/config", AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/credentials" },
    });
    expect(main.exitCode).not.toBe(0);
    expect(main.log).toMatch(/Input 'provider': bedrock found no AWS credentials on the runner \(looked for AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE, then the AWS SDK's default chain/);
    expect(main.log).toMatch(/Add aws-actions\/configure-aws-credentials/);
    expect(main.log).not.toMatch(/Starting claude/);
    expect(stub.requests.length).toBe(before);
  });

  it("an agent whose CLI cannot reach the provider is one error naming provider and agent", async () => {
    const main = await runStep("main", {
      workspace: makeWorkspace({ "README.md": "hi\n" }),
      inputs: { agent: "gemini", provider: "bedrock", prompt: "p", "agent-version": "preinstalled", sandbox: "bwrap", comment: "none" },
      env: { PATH: AGENT_PATH, AWS_REGION: "eu-west-3" },
    });
    expect(main.exitCode).not.toBe(0);
    expect(main.log).toMatch(/Input 'provider': agent 'gemini' cannot use provider 'bedrock' \(its pinned CLI supports gemini, vertex\)/);
  });
});
