/**
 * Issue #23: which CLI speaks which provider (AgentBackend.providers), the
 * one error for a pair the pinned CLI cannot do, and Claude Code's env per
 * provider (checked against its 2.1.197 bundle: CLAUDE_CODE_USE_BEDROCK,
 * ANTHROPIC_BEDROCK_BASE_URL, CLAUDE_CODE_SKIP_BEDROCK_AUTH, and the
 * Authorization of ANTHROPIC_CUSTOM_HEADERS it sends when auth is skipped).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseSettings } from "../../src/config/parse.js";
import { claudeProviderEnv } from "../../src/agents/claude.js";
import { geminiAgent, geminiEndpointEnv } from "../../src/agents/gemini.js";
import { testContext } from "./helpers.js";
import { chooseProvider, supportedProviders } from "../../src/agents/providers.js";
import { agentBackend } from "../../src/agents/registry.js";
import { AGENT_BACKENDS } from "../../src/shared/agents.js";
import { ConfigurationError } from "../../src/errors.js";
import { configProblems } from "../support/config-problems.js";

describe("CLI × provider", () => {
  it("each backend lists its own provider first", () => {
    expect(Object.fromEntries(AGENT_BACKENDS.map((b) => [b, supportedProviders(agentBackend(b))]))).toEqual({
      claude: ["anthropic", "bedrock", "vertex", "azure"],
      codex: ["openai", "bedrock", "azure"],
      opencode: ["openai", "bedrock", "azure", "vertex"],
      gemini: ["gemini", "vertex"],
      command: [],
    });
  });

  it("defaults to the agent's own and gives the wire API it speaks", () => {
    expect(chooseProvider(agentBackend("claude"), { name: "claude" })).toEqual({ provider: "anthropic", wire: "anthropic" });
    expect(chooseProvider(agentBackend("claude"), { name: "claude", provider: "bedrock" })).toEqual({ provider: "bedrock", wire: "anthropic" });
    expect(chooseProvider(agentBackend("codex"), { name: "codex", provider: "bedrock" })).toEqual({ provider: "bedrock", wire: "openai" });
    expect(chooseProvider(agentBackend("command"), { name: "command" })).toBeUndefined();
  });

  it("an unsupported pair is one ConfigurationError naming provider and agent", () => {
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const e1 = err(() => chooseProvider(agentBackend("gemini"), { name: "gemini", provider: "azure" }));
    expect(e1).toBeInstanceOf(ConfigurationError);
    expect((e1 as ConfigurationError).problems).toEqual([
      "Input 'provider': agent 'gemini' cannot use provider 'azure' (its pinned CLI supports gemini, vertex); choose one of those, or an agent that speaks 'azure'.",
    ]);
    const e2 = err(() => chooseProvider(agentBackend("command"), { name: "command", provider: "bedrock" }));
    expect((e2 as ConfigurationError).problems[0]).toMatch(/^Input 'provider': agent 'command' makes no model requests of its own/);
    expect(err(() => chooseProvider(agentBackend("claude"), { name: "claude", provider: "openai" }))).toBeInstanceOf(ConfigurationError);
  });

  it("Claude Code on Bedrock: the gateway as its Bedrock endpoint, its own AWS auth off, the placeholder as Authorization, only the region from AWS", () => {
    const env = claudeProviderEnv({ baseUrl: "http://127.0.0.1:9", apiKey: "sk-ant-placeholder", provider: "bedrock", cloud: { awsRegion: "eu-west-3" } });
    expect(env).toEqual({
      CLAUDE_CODE_USE_BEDROCK: "1",
      ANTHROPIC_BEDROCK_BASE_URL: "http://127.0.0.1:9",
      CLAUDE_CODE_SKIP_BEDROCK_AUTH: "1",
      AWS_REGION: "eu-west-3",
      ANTHROPIC_CUSTOM_HEADERS: "Authorization: Bearer sk-ant-placeholder",
    });
    expect(claudeProviderEnv({ baseUrl: "http://127.0.0.1:9", apiKey: "k" })).toEqual({ ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_API_KEY: "k" });
  });

  it("Claude Code on Vertex: the gateway as its Vertex base (with /v1), Google auth off, placeholders for project and region, the placeholder as its key", () => {
    const env = claudeProviderEnv({ baseUrl: "http://127.0.0.1:9", apiKey: "sk-ant-placeholder", provider: "vertex", cloud: { vertexProject: "real-project", vertexRegion: "us-east5" } });
    expect(env).toEqual({
      CLAUDE_CODE_USE_VERTEX: "1",
      CLAUDE_CODE_SKIP_VERTEX_AUTH: "1",
      ANTHROPIC_VERTEX_BASE_URL: "http://127.0.0.1:9/v1",
      ANTHROPIC_VERTEX_PROJECT_ID: "agent-runner",
      CLOUD_ML_REGION: "global",
      ANTHROPIC_API_KEY: "sk-ant-placeholder",
    });
    expect(JSON.stringify(env)).not.toMatch(/real-project|us-east5/);
  });

  it("Claude Code on Azure: Microsoft Foundry mode at the gateway, the placeholder as its Foundry key", () => {
    expect(claudeProviderEnv({ baseUrl: "http://127.0.0.1:9", apiKey: "sk-ant-placeholder", provider: "azure", cloud: {} })).toEqual({
      CLAUDE_CODE_USE_FOUNDRY: "1",
      ANTHROPIC_FOUNDRY_BASE_URL: "http://127.0.0.1:9",
      ANTHROPIC_FOUNDRY_API_KEY: "sk-ant-placeholder",
    });
  });

  it("Gemini CLI on Vertex: Vertex mode at the gateway with the placeholder as its key (express paths), and vertex-ai auth selected", async () => {
    expect(geminiEndpointEnv({ baseUrl: "http://127.0.0.1:9", apiKey: "ph", provider: "vertex", cloud: { vertexProject: "real-project" } })).toEqual({
      GOOGLE_GENAI_USE_VERTEXAI: "true",
      GOOGLE_VERTEX_BASE_URL: "http://127.0.0.1:9",
      GOOGLE_API_KEY: "ph",
    });
    expect(geminiEndpointEnv({ baseUrl: "http://127.0.0.1:9", apiKey: "ph" })).toEqual({ GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9", GEMINI_API_KEY: "ph" });
    const ctx = testContext({ agent: { backend: "gemini" } });
    ctx.endpoint = { baseUrl: "http://127.0.0.1:9", apiKey: "ph", provider: "vertex", cloud: {} };
    const out = await geminiAgent.materialise(ctx);
    const settings = JSON.parse(readFileSync(path.join(ctx.layout.home, ".gemini", "settings.json"), "utf8")) as { security: { auth: { selectedType: string } } };
    expect(settings.security.auth.selectedType).toBe("vertex-ai");
    expect(out.env.GOOGLE_GENAI_USE_VERTEXAI).toBe("true");
  });
});

describe("the cloud inputs", () => {
  const parse = (raw: Record<string, string>, cloudDefaults = {}) => parseSettings({ agent: "claude", prompt: "p", ...raw }, { cwd: mkdtempSync(path.join(os.tmpdir(), "cloud-inputs-")), cloudDefaults });
  const problems = (raw: Record<string, string>) => configProblems(() => parse(raw));

  it("take the runner's AWS_REGION, GOOGLE_CLOUD_PROJECT and CLOUD_ML_REGION as defaults; inputs win", () => {
    const defaults = { awsRegion: "eu-west-3", vertexProject: "my-project-123", vertexRegion: "us-east5" };
    expect(parse({ provider: "bedrock" }, defaults).agent).toMatchObject({ provider: "bedrock", cloud: defaults });
    expect(parse({ "aws-region": "us-west-2", "vertex-region": "global" }, defaults).agent.cloud).toEqual({ ...defaults, awsRegion: "us-west-2", vertexRegion: "global" });
    expect(parse({}).agent.provider).toBeUndefined();
    // A runner default of another shape is ignored, not an error: the run may not use that cloud.
    expect(parse({}, { awsRegion: "local" }).agent.cloud).toEqual({});
  });

  it("name each bad value", () => {
    expect(problems({ provider: "aws", "aws-region": "us_east_1", "vertex-region": "../x" })).toEqual([
      "Input 'provider': 'aws' is not allowed; use one of: anthropic, openai, gemini, bedrock, vertex, azure.",
      "Input 'aws-region': 'us_east_1' is not a valid AWS region (like us-east-1).",
      "Input 'vertex-region': '../x' is not a valid Vertex AI region (global, us-east5, europe-west1 …).",
    ]);
  });
});
