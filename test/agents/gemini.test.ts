/**
 * agent: gemini — the parser on recorded stream-json lines, the permission
 * and settings mapping, and the real Gemini CLI driven by the action
 * (dist/main.js) against the stub model: write + shell, resume and fork,
 * instructions / MCP / skill / deny rule reaching the CLI, failures, and no
 * traffic but the stub's.
 */
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GeminiParser, describeGeminiExit, findSessionFile, geminiAgent, geminiPermissions, policyToml } from "../../src/agents/gemini.js";
import { Agent } from "../../src/config/schema.js";
import { type RecordedRequest, type StubStep, systemPromptOf } from "../support/stub-model.js";
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

// ------------------------------------------------------------------ recorded lines (gemini 0.61.0)

const SID = "c33ca8cc-c300-43c6-a9c0-5daa8d2de5d2";
const INIT = `{"type":"init","timestamp":"2026-11-29T14:15:51.844Z","session_id":"${SID}","model":"gemini-2.5-pro"}`;
const USER = `{"type":"message","timestamp":"2026-11-29T14:15:51.845Z","role":"user","content":"hi"}`;
const WRITE = `{"type":"tool_use","timestamp":"2026-11-29T13:45:48.642Z","tool_name":"write_file","tool_id":"write_file__stubcall-ba95","parameters":{"file_path":"/w/hello.txt","content":"hi\\n"}}`;
const WRITE_OK = `{"type":"tool_result","timestamp":"2026-11-29T13:45:48.660Z","tool_id":"write_file__stubcall-ba95","status":"success"}`;
const SHELL = `{"type":"tool_use","timestamp":"2026-11-29T14:15:52.205Z","tool_name":"run_shell_command","tool_id":"run_shell_command__stubcall-8408","parameters":{"command":"rm -rf README.md"}}`;
const SHELL_DENIED = `{"type":"tool_result","timestamp":"2026-11-29T14:15:52.226Z","tool_id":"run_shell_command__stubcall-8408","status":"error","output":"Tool execution denied by policy. Refused by the workflow's permissions (bash(rm *)).","error":{"type":"policy_violation","message":"Tool execution denied by policy. Refused by the workflow's permissions (bash(rm *))."}}`;
const DELTA_1 = `{"type":"message","timestamp":"2026-11-29T13:45:48.726Z","role":"assistant","content":"All ","delta":true}`;
const DELTA_2 = `{"type":"message","timestamp":"2026-11-29T13:45:48.727Z","role":"assistant","content":"done.","delta":true}`;
const RESULT_OK = `{"type":"result","timestamp":"2026-11-29T13:45:48.729Z","status":"success","stats":{"total_tokens":480,"input_tokens":420,"output_tokens":60,"cached":120,"input":300,"duration_ms":200,"tool_calls":2,"models":{"gemini-2.5-pro":{"total_tokens":480,"input_tokens":420,"output_tokens":60,"cached":120,"input":300}}}}`;
const ZERO_STATS = `"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0}`;
const RESULT_401 = `{"type":"result","timestamp":"2026-11-29T13:49:07.497Z","status":"error","error":{"type":"unknown","message":"[API Error: {\\"error\\":{\\"code\\":401,\\"message\\":\\"stub error 401\\",\\"status\\":\\"UNAUTHENTICATED\\"}}]"},${ZERO_STATS}}`;
const RESULT_500 = `{"type":"result","timestamp":"2026-11-29T13:49:06.214Z","status":"error","error":{"type":"unknown","message":"[API Error: {\\"error\\":{\\"code\\":500,\\"message\\":\\"stub error 500\\",\\"status\\":\\"INTERNAL\\"}}]"},${ZERO_STATS}}`;
const RESULT_MALFORMED = `{"type":"result","timestamp":"2026-11-29T13:49:08.793Z","status":"error","error":{"type":"unknown","message":"[API Error: Unterminated string in JSON at position 43 (line 1 column 44)]"},${ZERO_STATS}}`;
const RESULT_TURNS = `{"type":"result","timestamp":"2026-11-29T13:49:08.793Z","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json."},${ZERO_STATS}}`;
const WARNING = `{"type":"error","timestamp":"2026-11-29T13:49:08.793Z","severity":"warning","message":"Agent execution blocked: hook said no"}`;

describe("gemini stream-json parser", () => {
  it("turns a recorded run into session, tool calls and results, one text per message, denial, usage and result", () => {
    const events = parseAll(new GeminiParser(), [INIT, USER, WRITE, WRITE_OK, SHELL, SHELL_DENIED, DELTA_1, DELTA_2, RESULT_OK]);
    expect(events.map((e) => e.type)).toEqual(["session", "tool_call", "tool_result", "tool_call", "tool_result", "permission_denied", "text", "usage", "result"]);
    expect(events[0]).toEqual({ type: "session", sessionId: SID, model: "gemini-2.5-pro" });
    expect(events[1]).toMatchObject({ type: "tool_call", id: "write_file__stubcall-ba95", name: "write_file", input: { file_path: "/w/hello.txt" } });
    expect(events[2]).toEqual({ type: "tool_result", id: "write_file__stubcall-ba95", name: "write_file", output: "", isError: false });
    expect(events[4]).toMatchObject({ type: "tool_result", name: "run_shell_command", isError: true });
    expect(events[5]).toEqual({ type: "permission_denied", tool: "run_shell_command", detail: "rm -rf README.md" });
    expect(events[6]).toEqual({ type: "text", text: "All done." });
    const usage = { inputTokens: 420, outputTokens: 60, cachedTokens: 120 };
    expect(events[7]).toEqual({ type: "usage", usage, cumulative: true });
    expect(events[8]).toEqual({ type: "result", text: "All done.", isError: false, usage, numTurns: 3 });
  });

  it("skips non-JSON lines, unknown types and broken JSON without losing the rest", () => {
    const events = parseAll(new GeminiParser(), ["Warning: 256-color support not detected.", "", "{not json", '{"type":"future_event"}', "[1]", INIT, DELTA_1, RESULT_OK]);
    expect(events.map((e) => e.type)).toEqual(["session", "text", "usage", "result"]);
  });

  it("keeps only the text after the last tool call as the final message, and flushes text at the end", () => {
    const events = parseAll(new GeminiParser(), [INIT, DELTA_1, WRITE, WRITE_OK, DELTA_2, RESULT_OK]);
    expect(events.filter((e) => e.type === "text").map((e) => (e as { text: string }).text)).toEqual(["All ", "done."]);
    expect(events.at(-1)).toMatchObject({ type: "result", text: "done." });
    expect(parseAll(new GeminiParser(), [INIT, DELTA_1]).at(-1)).toEqual({ type: "text", text: "All " });
  });

  it("fails the result with a one-line reason: authentication, server error, malformed answer, turn limit", () => {
    expect(parseAll(new GeminiParser(), [INIT, RESULT_401]).at(-1)).toMatchObject({ isError: true, reason: expect.stringMatching(/authentication failed.*401 UNAUTHENTICATED: stub error 401/) });
    expect(parseAll(new GeminiParser(), [INIT, RESULT_500]).at(-1)).toMatchObject({ isError: true, reason: "Model API error 500 INTERNAL: stub error 500" });
    expect(parseAll(new GeminiParser(), [INIT, RESULT_MALFORMED]).at(-1)).toMatchObject({ isError: true, reason: expect.stringContaining("Unterminated string in JSON") });
    expect(parseAll(new GeminiParser(4), [INIT, RESULT_TURNS]).at(-1)).toMatchObject({ isError: true, reason: expect.stringContaining("'max-turns' limit (4)") });
  });

  it("reports warnings as errors, marked as warnings", () => {
    expect(parseAll(new GeminiParser(), [WARNING])).toEqual([{ type: "error", message: "Warning: Agent execution blocked: hook said no" }]);
  });

  it("explains the CLI's fatal exit codes with its own message, skipping the banner noise", () => {
    const stderr = [
      "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.",
      'Error resuming session: Invalid session identifier "1111".',
      "  Searched for sessions in /h/.gemini/tmp/work/chats.",
      "  Use --list-sessions to see available sessions, then use --resume {number}, --resume {uuid}, or --resume latest.",
    ].join("\n");
    expect(describeGeminiExit(42, stderr)).toBe('Gemini CLI refused its input (exit 42): Error resuming session: Invalid session identifier "1111".');
    expect(describeGeminiExit(41, "YOLO mode is enabled. All tool calls will be automatically approved.\nInvalid auth method selected.\n")).toBe(
      "Gemini CLI could not authenticate (exit 41): Invalid auth method selected.",
    );
    expect(describeGeminiExit(53, "")).toBe("The agent stopped at the 'max-turns' limit before finishing (exit 53).");
    expect(describeGeminiExit(1, "anything")).toBeUndefined();
  });

  it("keeps a huge tool output and a huge message bounded", () => {
    const big = JSON.stringify({ type: "tool_result", tool_id: "t", status: "success", output: "x".repeat(500_000) });
    const [result] = parseAll(new GeminiParser(), [big]);
    expect((result as { output: string }).output.length).toBeLessThan(20_000);
    const deltas = Array.from({ length: 200 }, () => JSON.stringify({ type: "message", role: "assistant", content: "y".repeat(10_000), delta: true }));
    const events = parseAll(new GeminiParser(), [...deltas, RESULT_OK]);
    expect(JSON.stringify(events).length).toBeLessThan(200_000);
  });
});

// ------------------------------------------------------------------ mapping

describe("gemini permission mapping", () => {
  const agent = (permission: unknown, mcpServers = {}) => Agent.parse({ name: "gemini", backend: "gemini", permission, mcpServers });

  it("writes nothing for the default allow, and policy rules for denials that outrank yolo", () => {
    expect(geminiPermissions(agent(undefined), "/ws").rules).toEqual([]);
    const p = geminiPermissions(
      agent({ default: "allow", rules: [{ tool: "webfetch", action: "deny" }, { tool: "bash", pattern: "rm *", action: "deny" }, { tool: "mcp__tester__echo_marker", action: "deny" }] }),
      "/ws",
    );
    expect(p.problems).toEqual([]);
    expect(p.rules).toEqual([
      { toolName: "web_fetch", decision: "deny", denyMessage: "Refused by the workflow's permissions (webfetch).", priority: 300 },
      { toolName: "run_shell_command", commandPrefix: "rm", decision: "deny", denyMessage: "Refused by the workflow's permissions (bash(rm *)).", priority: 500 },
      { mcpName: "tester", toolName: "echo_marker", decision: "deny", denyMessage: "Refused by the workflow's permissions (mcp__tester__echo_marker).", priority: 300 },
    ]);
  });

  it("with default deny, denies every tool but the allowed ones; ask is refused; patterns beat whole tools", () => {
    const p = geminiPermissions(
      agent({ default: "deny", rules: [{ tool: "edit", action: "allow" }, { tool: "bash", pattern: "git status", action: "allow" }, { tool: "write", pattern: "docs/**", action: "allow" }, { tool: "read", action: "ask" }] }),
      "/ws",
    );
    expect(p.asked).toEqual(["read"]);
    expect(p.rules[0]).toMatchObject({ toolName: "*", decision: "deny", priority: 100 });
    expect(p.rules).toContainEqual({ toolName: "replace", decision: "allow", priority: 200 });
    expect(p.rules).toContainEqual({ toolName: "run_shell_command", commandRegex: 'git status"\\x00', decision: "allow", priority: 400 });
    expect(p.rules).toContainEqual({ toolName: "write_file", argsPattern: '\\x00"file_path":"docs/[^\\x00]*"\\x00', decision: "allow", priority: 400 });
    expect(p.rules).toContainEqual({ toolName: "write_file", argsPattern: '\\x00"file_path":"/ws/docs/[^\\x00]*"\\x00', decision: "allow", priority: 400 });
    expect(p.rules).toContainEqual(expect.objectContaining({ toolName: ["read_file", "read_many_files"], decision: "deny", priority: 300 }));
  });

  it("builds regexes that match the CLI's stable-JSON arguments, quotes included", () => {
    const p = geminiPermissions(agent({ default: "allow", rules: [{ tool: "bash", pattern: "git * --force", action: "deny" }, { tool: "read", pattern: "*.env", action: "deny" }] }), "/ws");
    const stable = (args: Record<string, string>) => Object.keys(args).sort().map((k) => `\0${JSON.stringify(k)}:${JSON.stringify(args[k])}\0`).join("");
    const shell = new RegExp(`"command":"${p.rules[0]!.commandRegex}`);
    expect(shell.test(stable({ command: 'git push "origin" --force', description: "x" }))).toBe(true);
    expect(shell.test(stable({ command: "git push", description: "--force" }))).toBe(false);
    const file = p.rules.filter((r) => r.argsPattern).map((r) => new RegExp(r.argsPattern!));
    expect(file.some((re) => re.test(stable({ file_path: "/ws/.env" })))).toBe(true);
    expect(file.some((re) => re.test(stable({ file_path: "/ws/sub/.env" })))).toBe(false);
    // A denied read path closes read_many_files, which takes globs a path pattern cannot follow.
    expect(p.rules).toContainEqual(expect.objectContaining({ toolName: "read_many_files", decision: "deny" }));
  });

  it("refuses what Gemini CLI cannot express, each naming the input", () => {
    const problems = geminiAgent.unsupported(
      agent({
        default: "allow",
        rules: [
          { tool: "teleport", action: "deny" },
          { tool: "webfetch", pattern: "https://x/*", action: "deny" },
          { tool: "mcp__my_server", action: "deny" },
          { tool: "mcp__x", pattern: "y", action: "deny" },
        ],
      }),
      testContext({ run: { outputSchema: { type: "object" }, resumeSessionId: "--yolo" } }).run,
    );
    expect(problems).toEqual([
      "Input 'permissions': 'teleport' names no tool agent 'gemini' knows; use bash, write, edit, read, webfetch, websearch, mcp__<server>[__<tool>] or a Gemini CLI tool name such as run_shell_command.",
      "Input 'permissions': 'webfetch(https://x/*)' cannot be honoured by agent 'gemini': only shell commands and file tools (write, edit, read) take patterns.",
      "Input 'permissions': 'mcp__my_server': Gemini CLI cannot match rules for an MCP server whose name has '_'; rename the server (e.g. 'my-server').",
      "Input 'permissions': 'mcp__x(y)' cannot be honoured by agent 'gemini': MCP tools take no patterns.",
      "Input 'session': '--yolo' is not a session id (letters, digits, '.', '_', ':' and '-', not starting with '-').",
      "Input 'output-schema' is not supported by agent 'gemini': Gemini CLI has no structured-output option.",
    ]);
  });

  it("takes no inherited object key for a tool name", () => {
    const p = geminiPermissions(agent({ default: "allow", rules: ["constructor", "toString", "__proto__"].map((tool) => ({ tool, action: "deny" })) }), "/ws");
    expect(p.problems).toEqual(["constructor", "toString", "__proto__"].map((t) => expect.stringContaining(`'${t}' names no tool agent 'gemini' knows`)));
    expect(p.rules).toEqual([]);
  });

  it("writes a policy file Gemini CLI parses (TOML strings, arrays, numbers)", () => {
    const toml = policyToml([{ toolName: ["a", "b"], commandRegex: 'x"\\x00', decision: "deny", priority: 500, denyMessage: 'say "no"' }]);
    expect(toml).toContain('[[rule]]\ntoolName = ["a", "b"]\ncommandRegex = "x\\"\\\\x00"\ndecision = "deny"\npriority = 500\ndenyMessage = "say \\"no\\""');
  });
});

describe("gemini materialisation and command line", () => {
  it("writes settings, the context file, skills and policies into ~/.gemini, keeping secrets in the environment", async () => {
    const skill = makeSkill("triage", "Triage issues");
    const ctx = testContext({
      agent: {
        backend: "gemini",
        instructions: "Be brief.",
        maxTurns: 9,
        skills: [{ name: "triage", path: skill }],
        permission: { default: "allow", rules: [{ tool: "bash", action: "deny" }] },
        mcpServers: MCP_SERVERS_HOLDING_SECRET,
      },
      run: { secrets: { GH: "tok-123456" } },
    });
    const { env } = await geminiAgent.materialise(ctx);
    const dir = path.join(ctx.layout.home, ".gemini");
    expect(readFileSync(path.join(dir, "GEMINI.md"), "utf8")).toBe("# Run context\n\nBe brief.\n");
    expect(readFileSync(path.join(dir, "skills/triage/SKILL.md"), "utf8")).toContain("Triage issues");
    expect(readFileSync(path.join(dir, "policies/agent-runner.toml"), "utf8")).toContain('toolName = "run_shell_command"\ndecision = "deny"');
    const raw = readFileSync(path.join(dir, "settings.json"), "utf8");
    expect(raw).not.toContain("tok-123456");
    const settings = JSON.parse(raw);
    expect(settings.security.auth.selectedType).toBe("gemini-api-key");
    expect(settings.privacy.usageStatisticsEnabled).toBe(false);
    expect(settings.model.maxSessionTurns).toBe(9);
    expect(settings.context.includeDirectories).toEqual([ctx.layout.outputsDir]);
    expect(settings.mcpServers).toEqual({
      gh: { command: "gh-mcp", args: ["--token", "${AGENT_RUNNER_SECRET_0}"], env: { GH_TOKEN: "${AGENT_RUNNER_SECRET_1}", MODE: "ro" } },
      web: { httpUrl: "https://mcp.example.com/x", headers: { Authorization: "${AGENT_RUNNER_SECRET_2}" } },
    });
    const switches = { GEMINI_CLI_TRUST_WORKSPACE: "true", GEMINI_CLI_NO_RELAUNCH: "true", GEMINI_SANDBOX: "false", GEMINI_TELEMETRY_ENABLED: "false" };
    expect(env).toEqual({
      AGENT_RUNNER_SECRET_0: "tok-123456",
      AGENT_RUNNER_SECRET_1: "tok-123456",
      AGENT_RUNNER_SECRET_2: "Bearer tok-123456",
      GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9/v1",
      GEMINI_API_KEY: "placeholder-key",
      ...switches,
    });
    expect(settings.telemetry).toEqual({ enabled: false, logPrompts: false });
    expect(settings.general).toMatchObject({ enableAutoUpdate: false, enableAutoUpdateNotification: false });
    expect(geminiAgent.sessionPaths(ctx)).toEqual([path.join(dir, "tmp"), path.join(dir, "projects.json")]);
    // Without a gateway there is no endpoint to name: the CLI keeps its own.
    const noEndpoint = { ...testContext({ agent: { backend: "gemini" }, home: ctx.layout.home }), endpoint: undefined };
    expect((await geminiAgent.materialise(noEndpoint)).env).toEqual(switches);
  });

  it("builds the command line: prompt on stdin, yolo under the policy, a model to skip routing, resume", () => {
    const ctx = testContext({ agent: { backend: "gemini" }, run: { prompt: "do it", resumeSessionId: SID, extraArgs: ["--debug"] } });
    const inv = geminiAgent.command(ctx, { binPath: "/bin/gemini", version: "x", readOnlyPaths: [] });
    expect(inv.stdin).toBe("do it");
    expect(inv.args).toEqual(["--output-format", "stream-json", "--approval-mode", "yolo", "--model", "gemini-2.5-pro", "--resume", SID, "--debug"]);
  });

  it("forks by importing the session's chat file as a new session", () => {
    const ctx = testContext({ agent: { backend: "gemini" }, run: { resumeSessionId: SID, forkSession: true } });
    const chats = path.join(ctx.layout.home, ".gemini/tmp/repo/chats");
    mkdirSync(chats, { recursive: true });
    const file = path.join(chats, `session-2026-11-29T14-15-${SID.slice(0, 8)}.jsonl`);
    writeFileSync(file, JSON.stringify({ sessionId: SID, lastUpdated: "2026-11-29T14:15:51.839Z" }) + "\n");
    const newer = path.join(chats, "session-2026-11-29T14-16-aaaaaaaa.jsonl");
    writeFileSync(newer, JSON.stringify({ sessionId: "aaaaaaaa-0000" }) + "\n");
    utimesSync(file, new Date(1_000_000), new Date(1_000_000));
    expect(findSessionFile(ctx.layout.home, SID)).toBe(file);
    expect(findSessionFile(ctx.layout.home, undefined)).toBe(newer);
    expect(findSessionFile(ctx.layout.home, "bbbbbbbb-0000")).toBeUndefined();
    const inv = geminiAgent.command(ctx, { binPath: "/bin/gemini", version: "x", readOnlyPaths: [] });
    expect(inv.args.join(" ")).toContain(`--session-file ${file}`);
    expect(inv.args).not.toContain("--resume");
  });
});

// ------------------------------------------------------------------ the real CLI through the action

const KEY = "AIza-test-gemini-key-0123456789abcdef";
const GEMINI: BackendUnderTest = {
  cli: "gemini",
  inputs: (stub) => ({ agent: "gemini", model: "gemini-2.5-pro", "base-url": stub.url, secrets: `GEMINI_API_KEY=${KEY}` }),
  sessionId: /^[0-9a-f-]{36}$/,
  failsWithinMs: 120_000,
};
/** Gemini CLI retries a failed request up to 10 times with backoff; the repository's own settings cut that. */
const ONE_ATTEMPT = { ".gemini/settings.json": JSON.stringify({ general: { maxAttempts: 1 } }) };

describe("gemini run by the action against the stub model", () => {
  const live = useStubModel(GEMINI);

  it("writes a file and runs a shell command: success, the file in the patch, session id, usage and final message", async () => {
    const ws = makeWorkspace();
    // The trailing space is trimmed from the final message.
    live.stub.setScript(writeAndShellScript("gemini", ws, "MARK-1 all "));
    const r = await runAgentAction({ workspace: ws, stub: live.stub, inputs: live.inputs({ prompt: "Create hello.txt and shell.txt", env: live.tripwireEnv() }) });
    live.note("write+shell", r);
    expectBothFilesDelivered(r, "gemini", "MARK-1 all");
    expect(r.main.outputs["session-id"]).toMatch(GEMINI.sessionId);
    const usage = JSON.parse(r.main.outputs.usage!);
    expect(usage).toMatchObject({ inputTokens: 420, outputTokens: 60, cachedTokens: 120 });
    expect(r.result.numTurns).toBe(3);
    expect(r.trace.filter((e) => e.type === "tool_call").map((e) => (e as { name: string }).name)).toEqual(["write_file", "run_shell_command"]);
    // The prompt went in on stdin, and -m saved the routing call: every request was a model turn.
    expect(JSON.stringify(live.stub.modelRequests().at(-3)!.body)).toContain("Create hello.txt and shell.txt");
    expect(live.stub.requests.filter((q) => q.kind === "side")).toEqual([]);
    expectKeyOnlyThroughGateway(live, r, "x-goog-api-key", KEY);
  });

  it("works the same inside the bwrap sandbox with network model-only, attempting no other host", () => expectSameInBwrap(live));

  it("resumes the session given by id (the model sees the earlier turns), and fork-session starts a new id", () => expectResumeAndFork(live));

  /**
   * One Gemini CLI run (two node processes, ~4 s of CPU) serves two tests whose setups combine: the hand-off
   * inputs (instructions, an MCP server holding a secret, a skill, deny rules), and a file-tool write into the
   * outputs folder. Each test keeps its own assertions on the shared run; it starts with the first that needs it.
   */
  let combined: Promise<{ workspace: string; run: AgentRun; requests: RecordedRequest[] }> | undefined;
  const combinedRun = () =>
    (combined ??= (async () => {
      const workspace = makeWorkspace();
      // The outputs folder is known once the run starts: the script reads it from the run context.
      const steps = (dir: string | undefined): StubStep[] => [
        { tool: "mcp_tester_echo_marker", args: { text: "ping" } },
        { tool: "run_shell_command", args: { command: "rm -f README.md" } },
        dir ? { tool: "write_file", args: { file_path: path.join(dir, "report.md"), content: "REPORT-MARKER\n" } } : { text: "no outputs folder in the run context" },
        { text: "checked and reported" },
      ];
      live.stub.setScript((req, i) => steps(/in (\S+) \(also in \$AGENT_OUTPUT_DIR\)/.exec(systemPromptOf(req))?.[1])[Math.min(i, 3)]!);
      const before = live.stub.modelRequests().length;
      const run = await runAgentAction({ workspace, stub: live.stub, inputs: { ...handOffInputs(live), prompt: "Use the tools and write a report" } });
      live.note("instructions+mcp+skill+deny+outputs", run);
      return { workspace, run, requests: live.stub.modelRequests().slice(before) };
    })());

  it("hands instructions, an MCP server, a skill and a deny rule to the CLI", async () => {
    const { workspace: w, run: r, requests } = await combinedRun();
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    const [first, second] = requests;
    expect(systemPromptOf(first!)).toContain(INSTRUCTIONS_MARKER);
    expect(systemPromptOf(first!)).toContain("# Run context (Agent Runner)");
    const tools = ((first!.body as { tools: { functionDeclarations: { name: string }[] }[] }).tools ?? []).flatMap((t) => t.functionDeclarations.map((f) => f.name));
    expect(tools).toContain("mcp_tester_echo_marker");
    expect(tools).toContain("run_shell_command");
    expect(tools).toContain("activate_skill");
    expect(tools).not.toContain("web_fetch");
    expect(systemPromptOf(first!)).toContain(SKILL_MARKER);
    // The MCP server ran with its env, and its answer went back to the model.
    expect(JSON.stringify(second!.body)).toContain(`${MCP_SECRET}: ping`);
    expectSecretInNoFile(
      filesUnder(r.main.runnerTemp).filter((f) => f.includes("/home/.gemini/") && !f.includes("/.gemini/tmp/")),
      "settings.json",
    );
    // rm was refused: the file is still there and the denial is reported.
    expect(existsSync(path.join(w, "README.md"))).toBe(true);
    expect(r.result.permissionDenials).toEqual([{ tool: "run_shell_command", detail: "rm -f README.md" }]);
    // Nothing was written into the user's repository.
    expect(JSON.parse(r.main.outputs["changed-files"]!)).toEqual([]);
  });

  it("lets the file tools write a report into the outputs folder, outside the workspace", async () => {
    const { run: r } = await combinedRun();
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    const writeCall = r.trace.find((e) => e.type === "tool_call" && (e as { name: string }).name === "write_file") as { id: string } | undefined;
    expect(writeCall, "the agent made no write_file call").toBeDefined();
    expect(r.trace.find((e) => e.type === "tool_result" && (e as { id: string }).id === writeCall!.id)).toMatchObject({ isError: false });
    expect(readFileSync(path.join(path.dirname(r.main.outputs["patch-path"]!), "outputs", "report.md"), "utf8")).toBe("REPORT-MARKER\n");
  });

  it("fails with the turn limit as the reason when max-turns is reached", async () => {
    live.stub.setScript([
      { tool: "run_shell_command", args: { command: "echo one" } },
      { tool: "run_shell_command", args: { command: "echo two" } },
      { tool: "run_shell_command", args: { command: "echo three" } },
      { text: "never" },
    ]);
    const r = await runAgentAction({ workspace: makeWorkspace(), stub: live.stub, inputs: live.inputs({ prompt: "loop", "max-turns": "2" }) });
    expect(r.main.outputs.conclusion, r.main.log).toBe("failure");
    expect(r.result.reason).toContain("'max-turns' limit (2)");
  });

  it("a session id that was never saved is one error naming 'session' and the id, before the CLI starts", async () => {
    live.stub.setScript([{ text: "never" }]);
    const before = live.stub.modelRequests().length;
    await expect(
      runAgentAction({ workspace: makeWorkspace(), stub: live.stub, inputs: live.inputs({ prompt: "go on", session: "11111111-2222-3333-4444-555555555555" }) }),
    ).rejects.toThrow(/Input 'session': no saved session '11111111-2222-3333-4444-555555555555' was found to resume/);
    expect(live.stub.modelRequests().length).toBe(before);
  });

  const failures: FailureCase[] = [
    ["server errors (500)", Array(5).fill({ status: 500 }), /Model API error 500 INTERNAL: stub error 500/],
    ["a malformed stream", Array(5).fill({ malformed: true }), /Model API error: .*JSON/],
    ["an authentication error (401)", Array(5).fill({ status: 401 }), /authentication failed.*401/],
  ];
  it.each(failures)("fails with the reason, in bounded time, on %s", (_label, script, reason) =>
    expectBoundedFailure(live, script, reason, { workspace: makeWorkspace({ "README.md": "x\n", ...ONE_ATTEMPT }) }),
  );
});
