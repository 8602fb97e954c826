/**
 * agent: claude — the parser on recorded stream-json lines, the permission
 * mapping, and the real Claude Code CLI driven by the action (dist/main.js)
 * against the stub model: write + shell, resume and fork, instructions / MCP /
 * skill / deny rule reaching the CLI, failures, and no traffic but the stub's.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ClaudeParser, claudeAgent, claudePermissions } from "../../src/agents/claude.js";
import { Agent } from "../../src/config/schema.js";
import { type RecordedRequest, systemPromptOf } from "../support/stub-model.js";
import {
  type BackendUnderTest,
  expectBothFilesDelivered,
  expectBoundedFailure,
  expectKeyOnlyThroughGateway,
  expectResumeAndFork,
  expectSameInBwrap,
  expectSecretInNoFile,
  type FailureCase,
  handOffInputs,
  INSTRUCTIONS_MARKER,
  MCP_SECRET,
  SKILL_MARKER,
  useStubModel,
  writeAndShellScript,
} from "./e2e-checks.js";
import { type AgentRun, MCP_SERVERS_HOLDING_SECRET, filesUnder, makeSkill, makeWorkspace, parseAll, runAgentAction, testContext } from "./helpers.js";

// ------------------------------------------------------------------ recorded lines (claude 2.1.197)

const SID = "fd71e4ed-a14b-44af-a6da-9e5d6017c69a";
const INIT = `{"type":"system","subtype":"init","cwd":"/w","session_id":"${SID}","tools":["Bash","Write"],"mcp_servers":[],"model":"claude-sonnet-4-5","permissionMode":"dontAsk","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197"}`;
const WRITE_CALL = `{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"/w/hello.txt","content":"hi\\n"}}],"stop_reason":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":10,"cache_read_input_tokens":40,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"${SID}"}`;
const WRITE_RESULT = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"File created successfully at: /w/hello.txt"}]},"parent_tool_use_id":null,"session_id":"${SID}","tool_use_result":{"type":"create"}}`;
const DENIED_RESULT = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"Permission to use Bash with command rm -f a.txt has been denied.","is_error":true,"tool_use_id":"toolu_2"}]},"parent_tool_use_id":null,"session_id":"${SID}"}`;
const THINKING_AND_TEXT = `{"type":"assistant","message":{"id":"msg_2","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"consider it"},{"type":"text","text":"all done"}]},"parent_tool_use_id":null,"session_id":"${SID}"}`;
const RESULT_OK = `{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":509,"num_turns":4,"result":"all done","stop_reason":"end_turn","session_id":"${SID}","total_cost_usd":0.002598,"usage":{"input_tokens":400,"cache_creation_input_tokens":40,"cache_read_input_tokens":160,"output_tokens":80},"permission_denials":[{"tool_name":"Bash","tool_use_id":"toolu_2","tool_input":{"command":"rm -f a.txt"}}],"terminal_reason":"completed"}`;
const RETRY = `{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":612,"error_status":500,"error":"server_error","session_id":"${SID}"}`;
const SYNTHETIC_ERROR = `{"type":"assistant","message":{"id":"x","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","type":"message","content":[{"type":"text","text":"API Error: 500 stub error 500."}]},"parent_tool_use_id":null,"session_id":"${SID}","error":"server_error"}`;
const RESULT_500 = `{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"num_turns":1,"result":"API Error: 500 stub error 500.","session_id":"${SID}","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"permission_denials":[]}`;
const RESULT_401 = `{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"num_turns":1,"result":"Failed to authenticate. API Error: 401 stub error 401","session_id":"${SID}","usage":{"input_tokens":0,"output_tokens":0},"permission_denials":[]}`;
const RESULT_MAX_TURNS = `{"type":"result","subtype":"error_max_turns","duration_ms":461,"is_error":true,"num_turns":2,"stop_reason":"tool_use","session_id":"${SID}","total_cost_usd":0.0006495,"usage":{"input_tokens":100,"cache_creation_input_tokens":10,"cache_read_input_tokens":40,"output_tokens":20},"permission_denials":[],"terminal_reason":"max_turns","errors":["Reached maximum number of turns (1)"]}`;
const RESULT_SCHEMA = `{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"{\\"answer\\":\\"42\\"}","session_id":"${SID}","usage":{"input_tokens":100,"output_tokens":20},"permission_denials":[],"structured_output":{"answer":"42"}}`;

describe("claude stream-json parser", () => {
  it("turns a recorded run into session, tool call, tool result, text, reasoning, denial, usage and result events", () => {
    const events = parseAll(new ClaudeParser(), [INIT, WRITE_CALL, WRITE_RESULT, DENIED_RESULT, THINKING_AND_TEXT, RESULT_OK]);
    expect(events.map((e) => e.type)).toEqual(["session", "tool_call", "tool_result", "tool_result", "reasoning", "text", "permission_denied", "usage", "result"]);
    expect(events[0]).toEqual({ type: "session", sessionId: SID, model: "claude-sonnet-4-5" });
    expect(events[1]).toMatchObject({ type: "tool_call", id: "toolu_1", name: "Write", input: { file_path: "/w/hello.txt" } });
    expect(events[2]).toMatchObject({ type: "tool_result", id: "toolu_1", name: "Write", isError: false });
    expect(events[3]).toMatchObject({ type: "tool_result", isError: true });
    expect(events[6]).toEqual({ type: "permission_denied", tool: "Bash", detail: "rm -f a.txt" });
    const usage = { inputTokens: 600, outputTokens: 80, cachedTokens: 160, costUsd: 0.002598 };
    expect(events[7]).toEqual({ type: "usage", usage, cumulative: true });
    expect(events[8]).toEqual({ type: "result", text: "all done", isError: false, usage, numTurns: 4 });
  });

  it("skips non-JSON lines, unknown types and broken JSON without losing the rest", () => {
    const events = parseAll(new ClaudeParser(), ["Warning: something printed by a hook", "", "{not json", '{"type":"stream_event","event":{}}', "[1,2]", INIT, RESULT_OK]);
    expect(events.map((e) => e.type)).toEqual(["session", "permission_denied", "usage", "result"]);
  });

  it("reports API retries as errors and a failed API call as a failed result with its reason", () => {
    const events = parseAll(new ClaudeParser(), [INIT, RETRY, SYNTHETIC_ERROR, RESULT_500]);
    expect(events.filter((e) => e.type === "text")).toEqual([]);
    expect(events.filter((e) => e.type === "error").map((e) => (e as { message: string }).message)).toEqual([
      "Model request failed (HTTP 500 server_error); retry 1 of 10.",
      "API Error: 500 stub error 500.",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "result", isError: true, reason: "API Error: 500 stub error 500." });
  });

  it("names an authentication failure and a turn limit in the reason", () => {
    expect(parseAll(new ClaudeParser(), [RESULT_401]).at(-1)).toMatchObject({ isError: true, reason: expect.stringMatching(/authentication failed.*401/) });
    expect(parseAll(new ClaudeParser(3), [RESULT_MAX_TURNS]).at(-1)).toMatchObject({ isError: true, reason: expect.stringContaining("'max-turns' limit (3)") });
  });

  it("passes structured output through", () => {
    expect(parseAll(new ClaudeParser(), [RESULT_SCHEMA]).at(-1)).toMatchObject({ isError: false, structuredOutput: { answer: "42" } });
  });

  it("keeps a huge tool output bounded", () => {
    const big = JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t", content: "x".repeat(500_000) }] }, session_id: SID });
    const [, result] = parseAll(new ClaudeParser(), [big]);
    expect((result as { output: string }).output.length).toBeLessThan(20_000);
  });
});

describe("claude materialisation", () => {
  it("writes instructions, MCP servers and skills into HOME, keeping secrets in the environment", async () => {
    const skill = makeSkill("triage", "Triage issues");
    const ctx = testContext({
      agent: { backend: "claude", instructions: "Be brief.", skills: [{ name: "triage", path: skill }], mcpServers: MCP_SERVERS_HOLDING_SECRET },
      run: { secrets: { GH: "tok-123456" } },
    });
    const { env } = await claudeAgent.materialise(ctx);
    const home = ctx.layout.home;
    expect(readFileSync(path.join(home, ".agent-runner/claude-instructions.md"), "utf8")).toBe("# Run context\n\nBe brief.\n");
    expect(readFileSync(path.join(home, ".claude/skills/triage/SKILL.md"), "utf8")).toContain("Triage issues");
    const mcp = readFileSync(path.join(home, ".agent-runner/claude-mcp.json"), "utf8");
    expect(mcp).not.toContain("tok-123456");
    expect(JSON.parse(mcp).mcpServers).toEqual({
      gh: { type: "stdio", command: "gh-mcp", args: ["--token", "${AGENT_RUNNER_SECRET_0}"], env: { GH_TOKEN: "${AGENT_RUNNER_SECRET_1}", MODE: "ro" } },
      web: { type: "http", url: "https://mcp.example.com/x", headers: { Authorization: "${AGENT_RUNNER_SECRET_2}" } },
    });
    const offline = { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_TELEMETRY: "1", DISABLE_ERROR_REPORTING: "1", DISABLE_AUTOUPDATER: "1", DISABLE_BUG_COMMAND: "1", MCP_CONNECT_TIMEOUT_MS: "120000" };
    expect(env).toEqual({
      AGENT_RUNNER_SECRET_0: "tok-123456",
      AGENT_RUNNER_SECRET_1: "tok-123456",
      AGENT_RUNNER_SECRET_2: "Bearer tok-123456",
      CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9/v1",
      ANTHROPIC_API_KEY: "placeholder-key",
      ...offline,
    });
    expect(claudeAgent.sessionPaths(ctx)).toEqual([path.join(home, ".claude/projects")]);
    // Without a gateway there is no endpoint to name: the CLI keeps its own.
    const noEndpoint = { ...testContext({ agent: { backend: "claude" }, home }), endpoint: undefined };
    expect((await claudeAgent.materialise(noEndpoint)).env).toEqual({ CLAUDE_CONFIG_DIR: path.join(home, ".claude"), ...offline });
  });
});

describe("claude permission mapping", () => {
  const agent = (permission: unknown, mcpServers = {}) => Agent.parse({ name: "claude", backend: "claude", permission, mcpServers });

  it("pre-approves the built-in tools and configured MCP servers when the default is allow, and denies what is denied", () => {
    const p = claudePermissions(agent({ default: "allow", rules: [{ tool: "webfetch", action: "deny" }, { tool: "bash", pattern: "rm *", action: "deny" }] }, { tester: { command: "node" } }));
    expect(p.allowed).toEqual(expect.arrayContaining(["Bash", "Edit", "Write", "Read", "WebFetch", "mcp__tester"]));
    expect(p.disallowed).toEqual(["WebFetch", "Bash(rm *)"]);
    expect(p.problems).toEqual([]);
  });

  it("allows only what is listed when the default is deny, and treats ask as deny", () => {
    const p = claudePermissions(agent({ default: "deny", rules: [{ tool: "edit", action: "allow" }, { tool: "bash", pattern: "git status", action: "allow" }, { tool: "write", action: "ask" }] }));
    expect(p.allowed).toEqual(["Edit", "Bash(git status)"]);
    expect(p.disallowed).toEqual(["Write"]);
  });

  it("refuses tool names it does not know, naming the input", () => {
    expect(claudeAgent.unsupported(agent({ default: "allow", rules: [{ tool: "teleport", action: "deny" }] }), testContext().run)).toEqual([
      "Input 'permissions': 'teleport' names no tool agent 'claude' knows; use bash, write, edit, read, webfetch, websearch, mcp__<server>[__<tool>] or a Claude Code tool name such as NotebookEdit.",
    ]);
  });

  it("takes no inherited object key for a tool name", () => {
    const p = claudePermissions(agent({ default: "deny", rules: ["constructor", "toString", "__proto__"].map((tool) => ({ tool, action: "deny" })) }));
    expect(p.problems).toEqual(["constructor", "toString", "__proto__"].map((t) => expect.stringContaining(`'${t}' names no tool agent 'claude' knows`)));
    expect(p.disallowed).toEqual([]);
  });

  it("refuses a session id that could read as an option", () => {
    expect(claudeAgent.unsupported(agent(undefined), testContext({ run: { resumeSessionId: "--dangerously-skip-permissions" } }).run)).toEqual([
      expect.stringContaining("Input 'session': '--dangerously-skip-permissions' is not a session id"),
    ]);
  });

  it("builds the command line: prompt on stdin, dontAsk mode, resume and fork, schema and turn limit", () => {
    const ctx = testContext({
      agent: { backend: "claude", model: "claude-sonnet-4-5", maxTurns: 7 },
      run: { prompt: "do it", resumeSessionId: SID, forkSession: true, outputSchema: { type: "object" }, extraArgs: ["--effort", "low"] },
    });
    const inv = claudeAgent.command(ctx, { binPath: "/bin/claude", version: "x", readOnlyPaths: [] });
    expect(inv.stdin).toBe("do it");
    expect(inv.file).toBe("/bin/claude");
    const runnerFiles = path.join(ctx.layout.home, ".agent-runner");
    expect(inv.args).toEqual([
      "-p",
      "--allowedTools",
      "Bash,Edit,Write,NotebookEdit,Read,Glob,Grep,WebFetch,WebSearch",
      "--mcp-config",
      path.join(runnerFiles, "claude-mcp.json"),
      "--strict-mcp-config",
      "--permission-mode",
      "dontAsk",
      "--append-system-prompt-file",
      path.join(runnerFiles, "claude-instructions.md"),
      "--model",
      "claude-sonnet-4-5",
      "--max-turns",
      "7",
      "--json-schema",
      '{"type":"object"}',
      "--resume",
      SID,
      "--fork-session",
      "--output-format",
      "stream-json",
      "--verbose",
      "--effort",
      "low",
    ]);
    const last = claudeAgent.command(testContext({ agent: { backend: "claude", permission: { default: "deny", rules: [{ tool: "bash", action: "deny" }] } }, run: { continueLast: true } }), { binPath: "/bin/claude", version: "x", readOnlyPaths: [] });
    expect(last.args).not.toContain("--allowedTools");
    expect(last.args.join(" ")).toContain("--disallowedTools Bash --mcp-config");
    expect(last.args.join(" ")).toContain("--continue --output-format");
    expect(last.args).not.toContain("--fork-session");
  });
});

// ------------------------------------------------------------------ the real CLI through the action

const KEY = "sk-ant-test-key-0123456789abcdef";
const CLAUDE: BackendUnderTest = {
  cli: "claude",
  inputs: (stub) => ({ agent: "claude", model: "claude-sonnet-4-5", "base-url": stub.url, secrets: `ANTHROPIC_API_KEY=${KEY}` }),
  sessionId: /^[0-9a-f-]{36}$/,
  failsWithinMs: 120_000,
};

describe("claude run by the action against the stub model", () => {
  const live = useStubModel(CLAUDE);

  it("writes a file and runs a shell command: success, the file in the patch, session id, usage and final message", async () => {
    const ws = makeWorkspace();
    live.stub.setScript(writeAndShellScript("claude", ws, "MARK-1 all done"));
    const r = await runAgentAction({ workspace: ws, stub: live.stub, inputs: live.inputs({ prompt: "Create hello.txt and shell.txt", env: live.tripwireEnv() }) });
    live.note("write+shell", r);
    expectBothFilesDelivered(r, "claude", "MARK-1 all done");
    expect(r.main.outputs["session-id"]).toMatch(CLAUDE.sessionId);
    const usage = JSON.parse(r.main.outputs.usage!);
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(usage.costUsd).toBeGreaterThan(0);
    expect(r.trace.filter((e) => e.type === "tool_call").map((e) => (e as { name: string }).name)).toEqual(["Write", "Bash"]);
    expectKeyOnlyThroughGateway(live, r, "x-api-key", KEY);
  });

  it("works the same inside the bwrap sandbox with network model-only, attempting no other host", () => expectSameInBwrap(live));

  it("resumes the session given by id (the model sees the earlier turns), and fork-session starts a new id", () => expectResumeAndFork(live));

  /**
   * One run serves two tests whose setups combine: the hand-off inputs (instructions, an MCP server holding a
   * secret, a skill, deny rules) with an output-schema, answered through the StructuredOutput tool. Each test
   * keeps its own assertions on the shared run; it starts with the first test that needs it.
   */
  let combined: Promise<{ workspace: string; run: AgentRun; requests: RecordedRequest[] }> | undefined;
  const combinedRun = () =>
    (combined ??= (async () => {
      const workspace = makeWorkspace();
      live.stub.setScript([
        { tool: "mcp__tester__echo_marker", args: { text: "ping" } },
        { tool: "Bash", args: { command: "rm -f README.md" } },
        { tool: "StructuredOutput", args: { answer: "42" } },
        { text: "ok" },
      ]);
      const before = live.stub.modelRequests().length;
      const inputs = { ...handOffInputs(live), "output-schema": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }) };
      const run = await runAgentAction({ workspace, stub: live.stub, inputs });
      live.note("instructions+mcp+skill+deny+output-schema", run);
      return { workspace, run, requests: live.stub.modelRequests().slice(before) };
    })());

  it("hands instructions, an MCP server, a skill and a deny rule to the CLI", async () => {
    const { workspace: w, run: r, requests } = await combinedRun();
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    const [first, second] = requests;
    expect(systemPromptOf(first!)).toContain(INSTRUCTIONS_MARKER);
    expect(systemPromptOf(first!)).toContain("# Run context (Agent Runner)");
    const tools = ((first!.body as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
    expect(tools).toContain("mcp__tester__echo_marker");
    expect(tools).toContain("Bash");
    expect(tools).not.toContain("WebFetch");
    expect(JSON.stringify(first!.body)).toContain(SKILL_MARKER);
    // The MCP server ran with its env, and its answer went back to the model.
    expect(JSON.stringify(second!.body)).toContain(`${MCP_SECRET}: ping`);
    // (The CLI's own session log holds the tool's answer, like any tool output; session capture redacts it.)
    expectSecretInNoFile(
      filesUnder(r.main.runnerTemp).filter((f) => f.includes("/home/.agent-runner/")),
      "claude-mcp.json",
    );
    // rm was refused: the file is still there and the denial is reported.
    expect(existsSync(path.join(w, "README.md"))).toBe(true);
    expect(r.result.permissionDenials).toEqual([{ tool: "Bash", detail: "rm -f README.md" }]);
    // Nothing was written into the user's repository.
    expect(JSON.parse(r.main.outputs["changed-files"]!)).toEqual([]);
  });

  it("returns the structured output when output-schema is set", async () => {
    const { run: r } = await combinedRun();
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    expect(JSON.parse(r.main.outputs["structured-output"]!)).toEqual({ answer: "42" });
  });

  it("fails with the turn limit as the reason when max-turns is reached", async () => {
    live.stub.setScript([{ tool: "Bash", args: { command: "echo one" } }, { tool: "Bash", args: { command: "echo two" } }, { text: "never" }]);
    const r = await runAgentAction({ workspace: makeWorkspace(), stub: live.stub, inputs: live.inputs({ prompt: "loop", "max-turns": "1" }) });
    expect(r.main.outputs.conclusion).toBe("failure");
    expect(r.result.reason).toContain("'max-turns' limit (1)");
  });

  const failures: FailureCase[] = [
    ["server errors (500)", Array(5).fill({ status: 500 }), /500/],
    ["a malformed stream", Array(5).fill({ malformed: true }), /API Error/],
    ["an authentication error (401)", Array(5).fill({ status: 401 }), /authentication failed.*401/],
  ];
  it.each(failures)("fails with the reason, in bounded time, on %s", (_label, script, reason) =>
    // Claude retries failed calls up to 10 times with backoff; the test does not wait for that.
    expectBoundedFailure(live, script, reason, { inputs: { env: "CLAUDE_CODE_MAX_RETRIES=0" } }),
  );
});
