/**
 * Shared by the backend tests: a git workspace, the action run through the
 * harness (dist/main.js) with a preinstalled CLI and sandbox none, and what
 * the run left behind (outputs, result.json, trace).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AgentContext } from "../../src/agents/types.js";
import { Agent, RunConfig } from "../../src/config/schema.js";
import type { Logger } from "../../src/logger.js";
import type { RunResult } from "../../src/result.js";
import type { TracedEvent } from "../../src/shared/events.js";
import { ACTION_ROOT, REPO_ROOT, runStep, type StepResult } from "../support/harness.js";
import type { StubModel } from "../support/stub-model.js";

const BIN_DIR = path.join(REPO_ROOT, "node_modules/.bin");
export const MCP_TEST_SERVER = path.join(REPO_ROOT, "test/support/mcp-test-server.mjs");

/** The pinned CLIs first, Node 24 next (the CLIs are tested on it), then the system. */
export const AGENT_PATH = [BIN_DIR, path.join(REPO_ROOT, "node_modules/node/bin"), "/usr/local/bin", "/usr/bin", "/bin"].join(":");

export function makeWorkspace(files: Record<string, string> = { "README.md": "# test repo\n" }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "agent-ws-"));
  const env = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" };
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: dir, env });
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  execFileSync("git", ["add", "-A"], { cwd: dir, env });
  execFileSync("git", ["commit", "-qm", "initial"], { cwd: dir, env });
  return dir;
}

/** A skill folder with a recognisable description. */
export function makeSkill(name: string, description: string): string {
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), "skill-")), name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\n\nFollow the ${name} steps.\n`);
  return dir;
}

export interface AgentRun {
  main: StepResult;
  result: RunResult;
  trace: TracedEvent[];
  /** ms from starting dist/main.js to the stub's first model request (undefined: none). */
  firstModelRequestMs?: number;
  totalMs: number;
}

export async function runAgentAction(opts: {
  workspace: string;
  inputs: Record<string, string>;
  stub?: StubModel;
  env?: Record<string, string>;
  timeoutMs?: number;
}): Promise<AgentRun> {
  const before = opts.stub?.modelRequests().length ?? 0;
  const started = Date.now();
  const main = await runStep("main", {
    workspace: opts.workspace,
    inputs: { "agent-version": "preinstalled", sandbox: "none", "upload-artifacts": "false", comment: "none", ...opts.inputs },
    env: { PATH: AGENT_PATH, ...(opts.env ?? {}) },
    timeoutMs: opts.timeoutMs ?? 90_000,
  });
  const patch = main.outputs["patch-path"];
  if (!patch) throw new Error(`the run wrote no results (exit ${main.exitCode}):\n${main.log}\n${main.stderr}`);
  const dir = path.dirname(patch);
  const result = JSON.parse(readFileSync(path.join(dir, "result.json"), "utf8")) as RunResult;
  const trace = readFileSync(path.join(dir, "trace.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TracedEvent);
  const first = opts.stub?.modelRequests()[before];
  return { main, result, trace, ...(first ? { firstModelRequestMs: first.receivedAt - started } : {}), totalMs: Date.now() - started };
}

export interface CliRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  result: RunResult;
}

/**
 * The same pipeline through dist/cli.js (`agent-runner run`): with
 * `--state-dir` it carries session state between runs without a GitHub
 * thread or artifact service, which a resume test needs.
 */
export async function runAgentCli(opts: { workspace: string; inputs: Record<string, string>; stateDir: string; timeoutMs?: number }): Promise<CliRun> {
  const resultsDir = path.join(mkdtempSync(path.join(os.tmpdir(), "agent-cli-")), "results");
  const args = [path.join(ACTION_ROOT, "dist/cli.js"), "run", "--results-dir", resultsDir, "--state-dir", opts.stateDir];
  const inputs = { "agent-version": "preinstalled", sandbox: "none", ...opts.inputs };
  for (const [k, v] of Object.entries(inputs)) args.push(`--${k}`, v);
  const child = spawn(process.execPath, args, {
    cwd: opts.workspace,
    env: { PATH: AGENT_PATH, HOME: process.env.HOME ?? os.tmpdir(), LANG: "C.UTF-8" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 90_000);
  const exitCode = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  const read = (f: string) => JSON.parse(readFileSync(path.join(resultsDir, f), "utf8")) as unknown;
  try {
    return { exitCode, stdout, stderr, outputs: read("outputs.json") as Record<string, string>, result: read("result.json") as RunResult };
  } catch {
    throw new Error(`agent-runner run wrote no results (exit ${exitCode}):\n${stdout}\n${stderr}`);
  }
}

const silentLog: Logger = {
  debug: () => {},
  info: () => {},
  warning: () => {},
  error: () => {},
  group: (_t, fn) => fn(),
};

/**
 * MCP servers holding the secret "tok-123456" (declare it in `secrets`) in
 * every place a config could name it: an argument, an env value, a header.
 */
export const MCP_SERVERS_HOLDING_SECRET = {
  gh: { command: "gh-mcp", args: ["--token", "tok-123456"], env: { GH_TOKEN: "tok-123456", MODE: "ro" } },
  web: { url: "https://mcp.example.com/x", headers: { Authorization: "Bearer tok-123456" } },
};

/** An AgentContext for unit tests, with schema defaults applied. */
export function testContext(over: { agent?: Partial<Agent>; run?: Partial<RunConfig>; home?: string } = {}): AgentContext {
  const home = over.home ?? mkdtempSync(path.join(os.tmpdir(), "agent-home-"));
  return {
    agent: Agent.parse({ name: "x", backend: "claude", ...over.agent }),
    run: RunConfig.parse({ prompt: "p", network: { mode: "open" }, timeoutSeconds: 60, ...over.run }),
    layout: { workspace: "/ws", home, tmp: path.join(home, "tmp"), outputsDir: path.join(home, "out"), readOnlyPaths: [] },
    endpoint: { baseUrl: "http://127.0.0.1:9/v1", apiKey: "placeholder-key" },
    runContext: "# Run context",
    log: silentLog,
  };
}

/** Feed recorded stdout lines to a parser, then end it. */
export function parseAll(parser: { push(l: string): unknown[]; end(): unknown[] }, lines: string[]): TracedEvent[] {
  return [...lines.flatMap((l) => parser.push(l)), ...parser.end()] as TracedEvent[];
}

/** Every file below `dir`, for checking what a run wrote. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name));
}
