/**
 * The end-to-end checks every CLI backend passes alike, called from each
 * backend's own test file: the real CLI driven by the action (dist/main.js)
 * or the `agent-runner` CLI against the stub model, with a proxy tripwire
 * that catches any other traffic. Kept out of helpers.ts, which the bench
 * script imports outside vitest.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import type { CliName } from "../support/stub-model-clis.js";
import { shellStep, writeFileStep } from "../support/stub-model-tools.js";
import { startStubModel, type StubModel, type StubScript, type StubStep } from "../support/stub-model.js";
import { startTripwire, type Tripwire } from "../support/stub-model-tripwire.js";
import { MCP_TEST_SERVER, makeSkill, makeWorkspace, runAgentAction, runAgentCli, type AgentRun } from "./helpers.js";

/** One backend as the shared checks drive it. */
export interface BackendUnderTest {
  cli: CliName;
  /** The action inputs that select the backend and point it at the stub: agent, model, base-url, secrets. */
  inputs(stub: StubModel): Record<string, string>;
  /** What the CLI's session ids look like. */
  sessionId: RegExp;
  /** How long one run may take (default: runAgentAction's). */
  runTimeoutMs?: number;
  /** A failing run must be over sooner than this: the CLI must not retry for minutes. */
  /** Far under the run's own limit: a CLI that retried the failure for minutes would pass it; a loaded machine would not. */
  failsWithinMs: number;
}

/** The stub model and tripwire of one describe block, and the backend they serve. */
export interface LiveStub {
  readonly backend: BackendUnderTest;
  readonly stub: StubModel;
  readonly tripwire: Tripwire;
  /** The backend's inputs, with `extra` on top. */
  inputs(extra?: Record<string, string>): Record<string, string>;
  /** The `env` input that routes every proxy-aware request to the tripwire. */
  tripwireEnv(): string;
  /** Keeps a run's timings; they are printed when the describe block ends. */
  note(label: string, run: AgentRun): void;
}

/** Starts the stub model and the tripwire before the enclosing describe block's tests, and stops them after. */
export function useStubModel(backend: BackendUnderTest): LiveStub {
  let stub: StubModel | undefined;
  let tripwire: Tripwire | undefined;
  const timings: string[] = [];
  beforeAll(async () => {
    stub = await startStubModel([]);
    tripwire = await startTripwire();
  });
  afterAll(async () => {
    await stub?.close();
    await tripwire?.close();
    if (timings.length) console.info(`[${backend.cli}] ${timings.join("; ")}`);
  });
  const started = <T>(server: T | undefined): T => {
    if (server === undefined) throw new Error("the stub model and tripwire start in beforeAll");
    return server;
  };
  return {
    backend,
    get stub() {
      return started(stub);
    },
    get tripwire() {
      return started(tripwire);
    },
    inputs: (extra = {}) => ({ ...backend.inputs(started(stub)), ...extra }),
    tripwireEnv: () =>
      Object.entries(started(tripwire).env())
        .map(([k, v]) => `${k}=${v}`)
        .join("\n"),
    note: (label, r) => timings.push(`${label}: first model request ${r.firstModelRequestMs ?? "-"} ms, total ${r.totalMs} ms`),
  };
}

/** Writes hello.txt with the CLI's file tool, shell.txt with its shell, then answers `finalText`. */
export function writeAndShellScript(cli: CliName, workspace: string, finalText: string): StubStep[] {
  return [writeFileStep(cli, path.join(workspace, "hello.txt"), `hello from ${cli}\n`), shellStep(cli, "echo made-by-shell > shell.txt"), { text: finalText }];
}

/** The run of writeAndShellScript succeeded: both files in the patch, and the final message. */
export function expectBothFilesDelivered(r: AgentRun, cli: CliName, finalMessage: string): void {
  expect(r.main.outputs.conclusion, r.main.log).toBe("success");
  expect(JSON.parse(r.main.outputs["changed-files"]!).sort()).toEqual(["hello.txt", "shell.txt"]);
  expect(readFileSync(r.main.outputs["patch-path"]!, "utf8")).toContain(`hello from ${cli}`);
  expect(r.main.outputs["final-message"]).toBe(finalMessage);
}

/** The same write-and-shell run inside the bwrap sandbox with network model-only, attempting no other host. */
/**
 * The real key reached the stub only through the gateway (the CLI held a
 * placeholder), never appears in the log, and nothing tried to leave
 * 127.0.0.1 through the proxy the agent was given.
 */
export function expectKeyOnlyThroughGateway(live: LiveStub, r: AgentRun, header: string, value: string): void {
  expect(live.stub.modelRequests().at(-1)!.headers[header]).toBe(value);
  expect(r.main.log).not.toContain(value.replace(/^Bearer /, ""));
  expect(live.tripwire.hits).toEqual([]);
}

export async function expectSameInBwrap(live: LiveStub): Promise<void> {
  const { cli, runTimeoutMs } = live.backend;
  const workspace = makeWorkspace();
  live.stub.setScript(writeAndShellScript(cli, workspace, "done in the sandbox"));
  const r = await runAgentAction({
    workspace,
    stub: live.stub,
    timeoutMs: runTimeoutMs,
    inputs: live.inputs({ prompt: "Create hello.txt and shell.txt", sandbox: "bwrap", network: "model-only" }),
  });
  live.note("bwrap", r);
  expectBothFilesDelivered(r, cli, "done in the sandbox");
  expect(r.result.sandboxBackend).toBe("bwrap");
  expect(r.result.networkBlocked).toBe(0);
}

/**
 * A second run resumes the first one's session by id (the model sees the
 * earlier turns), and a third with fork-session starts a new id that still
 * carries the history. Session state travels between runs through a store;
 * locally that is the CLI's --state-dir.
 */
export async function expectResumeAndFork(live: LiveStub): Promise<void> {
  const { sessionId, runTimeoutMs } = live.backend;
  const workspace = makeWorkspace();
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "agent-state-"));
  const run = (prompt: string, extra: Record<string, string> = {}) =>
    runAgentCli({ workspace, stateDir, timeoutMs: runTimeoutMs, inputs: live.inputs({ prompt, ...extra }) });
  const lastRequest = () => JSON.stringify(live.stub.modelRequests().at(-1)!.body);

  live.stub.setScript([{ text: "MARK-1 first answer" }]);
  const first = await run("First turn");
  expect(first.outputs.conclusion, first.stdout + first.stderr).toBe("success");
  const id = first.outputs["session-id"]!;
  expect(id).toMatch(sessionId);

  live.stub.setScript([{ text: "resumed" }]);
  const resumed = await run("Second turn", { session: id });
  expect(resumed.outputs.conclusion, resumed.stdout + resumed.stderr).toBe("success");
  expect(resumed.outputs["session-id"]).toBe(id);
  expect(lastRequest()).toContain("MARK-1 first answer");
  expect(lastRequest()).toContain("Second turn");

  live.stub.setScript([{ text: "forked" }]);
  const forked = await run("Third turn", { session: id, "fork-session": "true" });
  expect(forked.outputs.conclusion, forked.stdout + forked.stderr).toBe("success");
  expect(forked.outputs["session-id"]).toMatch(sessionId);
  expect(forked.outputs["session-id"]).not.toBe(id);
  expect(lastRequest()).toContain("MARK-1 first answer");
  expect(lastRequest()).toContain("Third turn");
}

/** A failing model (the label names it), and the reason the run must give. */
export type FailureCase = [label: string, script: StubScript, reason: RegExp];

/** Against a model answering `script`, the run fails with `reason`, exit code 1, and in bounded time. */
export async function expectBoundedFailure(
  live: LiveStub,
  script: StubScript,
  reason: RegExp,
  opts: { inputs?: Record<string, string>; workspace?: string } = {},
): Promise<void> {
  live.stub.setScript(script);
  const r = await runAgentAction({
    workspace: opts.workspace ?? makeWorkspace(),
    stub: live.stub,
    timeoutMs: live.backend.runTimeoutMs,
    inputs: live.inputs({ prompt: "fail", ...opts.inputs }),
  });
  expect(r.main.outputs.conclusion, r.main.log).toBe("failure");
  expect(r.result.reason).toMatch(reason);
  expect(r.main.exitCode).toBe(1);
  expect(r.totalMs).toBeLessThan(live.backend.failsWithinMs);
}

/** The MCP server's secret in the hand-off run: it must reach the server through its env, and no file. */
export const MCP_SECRET = "ENV-MARKER-s3cr3t";
export const INSTRUCTIONS_MARKER = "INSTRUCTIONS-MARKER: always answer in haiku.";
export const SKILL_MARKER = "SKILL-MARKER write release notes";

/**
 * The hand-off run's inputs: standing instructions, the test MCP server
 * (whose env holds MCP_SECRET, declared a secret), a skill, and deny rules
 * for webfetch and `rm`.
 */
export function handOffInputs(live: LiveStub): Record<string, string> {
  const base = live.inputs();
  return {
    ...base,
    prompt: "Use the tools",
    instructions: INSTRUCTIONS_MARKER,
    secrets: `${base.secrets}\nMCP_SECRET=${MCP_SECRET}`,
    "mcp-servers": JSON.stringify({ tester: { command: "node", args: [MCP_TEST_SERVER], env: { MCP_TEST_MARKER: MCP_SECRET } } }),
    skills: makeSkill("release-notes", SKILL_MARKER),
    permissions: JSON.stringify({ default: "allow", deny: ["webfetch", "bash(rm *)"] }),
  };
}

/** The config files the runner wrote include `configName`, and none of them holds the MCP secret. */
export function expectSecretInNoFile(written: string[], configName: string): void {
  expect(written.some((f) => path.basename(f) === configName), written.join("\n")).toBe(true);
  for (const f of written) expect(readFileSync(f, "utf8"), f).not.toContain(MCP_SECRET);
}
