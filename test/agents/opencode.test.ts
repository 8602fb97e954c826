/**
 * agent: opencode — the parser on recorded `opencode run --format json`
 * lines, the permission and config mapping, and the real OpenCode CLI driven
 * by the action (dist/main.js) against the stub model: write + shell, resume
 * and fork, instructions / MCP / skill / deny rule reaching the CLI,
 * failures, and no traffic but the stub's.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OpencodeParser, describeOpencodeExit, opencodeAgent, opencodePermissions } from "../../src/agents/opencode.js";
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

// ------------------------------------------------------------------ recorded lines (opencode 1.18.33)

const SID = "ses_dd871bf28ffeCogcrDy8yiiJ3U";
const line = (type: string, part: Record<string, unknown>) => JSON.stringify({ type, timestamp: 1795959967346, sessionID: SID, part: { sessionID: SID, messageID: "msg_1", id: "prt_1", ...part } });
const STEP = line("step_start", { type: "step-start", snapshot: "444a8fa9" });
const WRITE = line("tool_use", { type: "tool", tool: "write", callID: "call_stub_66c6", state: { status: "completed", input: { filePath: "/w/hello.txt", content: "hi\n" }, output: "Wrote file successfully.", metadata: {}, title: "hello.txt", time: { start: 1, end: 2 } } });
const BASH_DENIED = line("tool_use", {
  type: "tool",
  tool: "bash",
  callID: "call_stub_255c",
  state: { status: "error", input: { command: "rm -f README.md", description: "remove" }, error: 'The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules [{"permission":"bash","pattern":"rm *","action":"deny"}]', time: { start: 1, end: 2 } },
});
const TOOL_STEP_DONE = line("step_finish", { type: "step-finish", reason: "tool-calls", snapshot: "8f7e794c", tokens: { total: 160, input: 100, output: 20, reasoning: 0, cache: { write: 0, read: 40 } }, cost: 0 });
const REASONING = line("reasoning", { type: "reasoning", text: "thinking about it", time: { start: 1, end: 2 } });
const TEXT = line("text", { type: "text", text: "All done.", time: { start: 1795959969651, end: 1795959969671 } });
const FINAL_STEP_DONE = line("step_finish", { type: "step-finish", reason: "stop", snapshot: "8f7e794c", tokens: { total: 165, input: 100, output: 20, reasoning: 5, cache: { write: 0, read: 40 } }, cost: 0.0012 });
const ERR_401 = `{"type":"error","timestamp":1795960230963,"sessionID":"${SID}","error":{"name":"APIError","data":{"message":"stub error 401","statusCode":401,"isRetryable":false,"responseHeaders":{"content-type":"application/json"},"responseBody":"{\\"error\\":{\\"message\\":\\"stub error 401\\"}}","metadata":{"url":"http://127.0.0.1:1/v1/chat/completions"}}}}`;
const ERR_MALFORMED = `{"type":"error","timestamp":1795961139471,"sessionID":"${SID}","error":{"name":"UnknownError","data":{"message":"JSON parsing failed: Text: {\\"type\\": \\"message_start\\", \\"this is not json.\\nError message: JSON Parse error: Unterminated string"}}}`;

describe("opencode run --format json parser", () => {
  it("turns a recorded run into session, tool calls and results, denial, reasoning, text, usage and result", () => {
    const events = parseAll(new OpencodeParser(), [STEP, WRITE, BASH_DENIED, TOOL_STEP_DONE, STEP, REASONING, TEXT, FINAL_STEP_DONE]);
    expect(events.map((e) => e.type)).toEqual(["session", "tool_call", "tool_result", "tool_call", "tool_result", "permission_denied", "usage", "reasoning", "text", "usage", "result"]);
    expect(events[0]).toEqual({ type: "session", sessionId: SID });
    expect(events[1]).toEqual({ type: "tool_call", id: "call_stub_66c6", name: "write", input: { filePath: "/w/hello.txt", content: "hi\n" } });
    expect(events[2]).toEqual({ type: "tool_result", id: "call_stub_66c6", name: "write", output: "Wrote file successfully.", isError: false });
    expect(events[4]).toMatchObject({ type: "tool_result", name: "bash", isError: true });
    expect(events[5]).toEqual({ type: "permission_denied", tool: "bash", detail: "rm -f README.md" });
    expect(events[6]).toEqual({ type: "usage", usage: { inputTokens: 140, outputTokens: 20, cachedTokens: 40 } });
    expect(events[9]).toEqual({ type: "usage", usage: { inputTokens: 140, outputTokens: 25, cachedTokens: 40, costUsd: 0.0012 } });
    expect(events[10]).toEqual({ type: "result", text: "All done.", isError: false, usage: { inputTokens: 280, outputTokens: 45, cachedTokens: 80, costUsd: 0.0012 }, numTurns: 2 });
  });

  it("skips non-JSON lines, unknown types and broken JSON without losing the rest", () => {
    const events = parseAll(new OpencodeParser(), ["! permission requested: external_directory (/etc/*); auto-rejecting", "", "{not json", '{"type":"future"}', STEP, TEXT, FINAL_STEP_DONE]);
    expect(events.map((e) => e.type)).toEqual(["session", "text", "usage", "result"]);
  });

  it("fails the run on an error line, naming an authentication failure", () => {
    const events = parseAll(new OpencodeParser(), [STEP, ERR_401]);
    expect(events.at(-2)).toEqual({ type: "error", message: expect.stringMatching(/authentication failed.*401/) });
    expect(events.at(-1)).toMatchObject({ type: "result", isError: true, reason: expect.stringMatching(/^The model API refused the credentials \(authentication failed\): Model API error 401: stub error 401/) });
    expect(parseAll(new OpencodeParser(), [STEP, STEP, ERR_MALFORMED]).at(-1)).toMatchObject({ isError: true, reason: expect.stringContaining("JSON parsing failed"), numTurns: 2 });
  });

  it("reports no result for a run that stopped mid-step (the exit code tells the story)", () => {
    expect(parseAll(new OpencodeParser(), [STEP, WRITE, TOOL_STEP_DONE]).map((e) => e.type)).toEqual(["session", "tool_call", "tool_result", "usage"]);
  });

  it("explains an exit before the stream started with OpenCode's own error line", () => {
    expect(describeOpencodeExit(1, "\u001b[91m\u001b[1mError: \u001b[0mSession not found\n")).toBe("OpenCode failed (exit 1): Session not found");
    expect(describeOpencodeExit(1, "some log line\n")).toBeUndefined();
  });

  it("keeps a huge tool output bounded", () => {
    const big = line("tool_use", { type: "tool", tool: "bash", callID: "c", state: { status: "completed", input: { command: "yes" }, output: "y\n".repeat(300_000) } });
    const [, , result] = parseAll(new OpencodeParser(), [big]);
    expect((result as { output: string }).output.length).toBeLessThan(20_000);
  });
});

// ------------------------------------------------------------------ mapping

describe("opencode permission mapping", () => {
  const agent = (permission: unknown) => Agent.parse({ name: "opencode", backend: "opencode", permission });

  it("allows everything by default (the sandbox is the boundary), so nothing is left to ask about", () => {
    expect(opencodePermissions(agent(undefined), "/out").permission).toEqual({ "*": "allow" });
  });

  it("writes general rules before specific ones, allow before deny, in OpenCode's names", () => {
    const p = opencodePermissions(
      agent({
        default: "allow",
        rules: [
          { tool: "webfetch", action: "deny" },
          { tool: "bash", pattern: "git push:*", action: "deny" },
          { tool: "bash", pattern: "git *", action: "allow" },
          { tool: "mcp__tester__echo_marker", action: "allow" },
          { tool: "mcp__tester", action: "deny" },
          { tool: "glob", action: "deny" },
        ],
      }),
      "/out",
    );
    expect(p.problems).toEqual([]);
    expect(Object.entries(p.permission)).toEqual([
      ["*", "allow"],
      ["webfetch", "deny"],
      ["glob", "deny"],
      ["bash", { "git *": "allow", "git push *": "deny" }],
      ["tester_*", "deny"],
      ["tester_echo_marker", "allow"],
    ]);
  });

  it("with default deny keeps the outputs folder reachable, treats ask as deny, and lets a whole-tool deny win", () => {
    const p = opencodePermissions(
      agent({ default: "deny", rules: [{ tool: "edit", action: "allow" }, { tool: "read", action: "allow" }, { tool: "read", pattern: "*.env", action: "ask" }, { tool: "bash", action: "allow" }, { tool: "bash", action: "deny" }] }),
      "/out",
    );
    expect(p.permission).toEqual({ "*": "deny", external_directory: { "/out/*": "allow" }, edit: "allow", read: { "*": "allow", "*.env": "deny" }, bash: "deny" });
    expect(p.asked).toEqual(["read(*.env)"]);
  });

  it("refuses what OpenCode cannot express, each naming the input", () => {
    const problems = opencodeAgent.unsupported(
      Agent.parse({
        name: "opencode",
        backend: "opencode",
        permission: { default: "allow", rules: [{ tool: "teleport", action: "deny" }, { tool: "write", action: "allow" }, { tool: "edit", action: "deny" }, { tool: "mcp__x", pattern: "y", action: "deny" }] },
        skills: [{ name: "My_Skill", path: "/s" }],
        mcpServers: { q: { command: "srv", env: { TOKEN: 'a"b' } } },
      }),
      testContext({ run: { outputSchema: { type: "object" }, resumeSessionId: "-x", secrets: { T: 'a"b' } } }).run,
    );
    expect(problems).toEqual([
      "Input 'permissions': 'teleport' names no tool agent 'opencode' knows; use bash, write, edit, read, webfetch, websearch, mcp__<server>[__<tool>] or an OpenCode permission such as glob.",
      "Input 'permissions': 'mcp__x(y)' cannot be honoured by agent 'opencode': MCP tools take no patterns.",
      "Input 'permissions': agent 'opencode' cannot tell write from edit: one 'edit' permission covers writing, editing and patching files (it is set to deny).",
      "Input 'session': '-x' is not a session id (letters, digits, '.', '_', ':' and '-', not starting with '-').",
      "Input 'output-schema' is not supported by agent 'opencode': `opencode run` has no structured-output option.",
      "Input 'mcp-servers': server 'q' has a secret with quotes, backslashes or control characters, which agent 'opencode' cannot take from the environment.",
      "Input 'skills': OpenCode loads a skill only from a folder named in lower case letters, digits and single hyphens, matching its SKILL.md name; 'My_Skill' is not.",
    ]);
  });

  it("takes no inherited object key for a tool name", () => {
    const p = opencodePermissions(agent({ default: "allow", rules: ["constructor", "toString", "__proto__"].map((tool) => ({ tool, action: "deny" })) }), "/out");
    expect(p.problems).toEqual(["constructor", "toString", "__proto__"].map((t) => expect.stringContaining(`'${t}' names no tool agent 'opencode' knows`)));
    expect(p.permission).toEqual({ "*": "allow" });
  });
});

describe("opencode materialisation and command line", () => {
  it("writes opencode.json, instructions, skills and the plugin-install guard into HOME, keeping secrets in the environment", async () => {
    const skill = makeSkill("triage", "Triage issues");
    const ctx = testContext({
      agent: {
        backend: "opencode",
        model: "gpt-4o",
        instructions: "Be brief.",
        maxTurns: 5,
        skills: [{ name: "triage", path: skill }],
        permission: { default: "allow", rules: [{ tool: "bash", action: "deny" }] },
        mcpServers: MCP_SERVERS_HOLDING_SECRET,
      },
      run: { secrets: { GH: "tok-123456" } },
    });
    const { env } = await opencodeAgent.materialise(ctx);
    const home = ctx.layout.home;
    const dir = path.join(home, ".config/opencode");
    expect(readFileSync(path.join(home, ".agent-runner/opencode-instructions.md"), "utf8")).toBe("# Run context\n\nBe brief.\n");
    expect(readFileSync(path.join(dir, "skills/triage/SKILL.md"), "utf8")).toContain("Triage issues");
    expect(existsSync(path.join(dir, "node_modules"))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(dir, "package-lock.json"), "utf8")).packages[""].dependencies).toEqual({ "@opencode-ai/plugin": "*" });
    const raw = readFileSync(path.join(dir, "opencode.json"), "utf8");
    expect(raw).not.toContain("tok-123456");
    expect(raw).not.toContain("placeholder-key");
    const config = JSON.parse(raw);
    expect(config).toMatchObject({
      model: "agent-runner/gpt-4o",
      small_model: "agent-runner/gpt-4o",
      enabled_providers: ["agent-runner"],
      autoupdate: false,
      share: "disabled",
      snapshot: false,
      instructions: [path.join(home, ".agent-runner/opencode-instructions.md")],
      permission: { "*": "allow", bash: "deny" },
      agent: { build: { steps: 5 } },
      provider: { "agent-runner": { npm: "@ai-sdk/openai-compatible", options: { baseURL: "http://127.0.0.1:9/v1", apiKey: "{env:AGENT_RUNNER_MODEL_API_KEY}" }, models: { "gpt-4o": { tool_call: true } } } },
    });
    expect(config.mcp).toEqual({
      gh: { type: "local", command: ["gh-mcp", "--token", "{env:AGENT_RUNNER_SECRET_0}"], environment: { GH_TOKEN: "{env:AGENT_RUNNER_SECRET_1}", MODE: "ro" }, enabled: true },
      web: { type: "remote", url: "https://mcp.example.com/x", headers: { Authorization: "{env:AGENT_RUNNER_SECRET_2}" }, enabled: true },
    });
    const xdg = {
      XDG_CONFIG_HOME: path.join(home, ".config"),
      XDG_DATA_HOME: path.join(home, ".local/share"),
      XDG_CACHE_HOME: path.join(home, ".cache"),
      XDG_STATE_HOME: path.join(home, ".local/state"),
    };
    const switches = {
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_SHARE: "1",
      OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER: "1",
    };
    expect(env).toEqual({
      AGENT_RUNNER_SECRET_0: "tok-123456",
      AGENT_RUNNER_SECRET_1: "tok-123456",
      AGENT_RUNNER_SECRET_2: "Bearer tok-123456",
      OPENCODE_CONFIG_CONTENT: expect.any(String),
      ...xdg,
      AGENT_RUNNER_MODEL_API_KEY: "placeholder-key",
      ...switches,
    });
    // What must beat a repository's own opencode.json also goes in OPENCODE_CONFIG_CONTENT (no secrets in it).
    const content = JSON.parse(env.OPENCODE_CONFIG_CONTENT!);
    expect(Object.keys(content).sort()).toEqual(["autoupdate", "enabled_providers", "mcp", "model", "permission", "provider", "share", "small_model", "snapshot"]);
    expect(content.provider).toEqual(config.provider);
    expect(env.OPENCODE_CONFIG_CONTENT).not.toContain("tok-123456");
    expect(opencodeAgent.sessionPaths(ctx)).toEqual(["opencode.db", "opencode.db-wal", "opencode.db-shm", "snapshot", "storage"].map((f) => path.join(home, ".local/share/opencode", f)));
    // Without a gateway there is no key to hand over (the provider still reads the variable).
    const noEndpoint = { ...testContext({ agent: { backend: "opencode" }, home }), endpoint: undefined };
    expect((await opencodeAgent.materialise(noEndpoint)).env).toEqual({ OPENCODE_CONFIG_CONTENT: expect.any(String), ...xdg, ...switches });
  });

  it("builds the command line: prompt on stdin, fixed title, resume and fork", () => {
    const ctx = testContext({ agent: { backend: "opencode" }, run: { prompt: "do it with spaces", resumeSessionId: SID, forkSession: true, extraArgs: ["--variant", "high"] } });
    const inv = opencodeAgent.command(ctx, { binPath: "/bin/opencode", version: "x", readOnlyPaths: [] });
    expect(inv.stdin).toBe("do it with spaces");
    expect(inv.args).toEqual(["run", "--format", "json", "--pure", "--title", "Agent Runner", "--thinking", "--session", SID, "--fork", "--variant", "high"]);
  });
});

// ------------------------------------------------------------------ the real CLI through the action

const KEY = "sk-test-opencode-key-0123456789abcdef";
const MODEL = "stub-model";
/** OpenCode takes 4–5 s to start on an idle box, much more under load (other suites running). */
const SLOW = 300_000;
const OPENCODE: BackendUnderTest = {
  cli: "opencode",
  inputs: (stub) => ({ agent: "opencode", model: MODEL, "base-url": `${stub.url}/v1`, secrets: `OPENAI_API_KEY=${KEY}` }),
  sessionId: /^ses_[A-Za-z0-9]+$/,
  runTimeoutMs: SLOW,
  failsWithinMs: 120_000,
};
const toolNames = (body: unknown) => ((body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);

describe("opencode run by the action against the stub model", () => {
  const live = useStubModel(OPENCODE);

  it("writes a file and runs a shell command: success, the file in the patch, session id, usage and final message", { timeout: SLOW }, async () => {
    const ws = makeWorkspace();
    live.stub.setScript(writeAndShellScript("opencode", ws, "MARK-1 all done"));
    const r = await runAgentAction({ workspace: ws, stub: live.stub, timeoutMs: SLOW, inputs: live.inputs({ prompt: "Create hello.txt and shell.txt", env: live.tripwireEnv() }) });
    live.note("write+shell", r);
    expectBothFilesDelivered(r, "opencode", "MARK-1 all done");
    expect(r.main.outputs["session-id"]).toMatch(OPENCODE.sessionId);
    expect(JSON.parse(r.main.outputs.usage!)).toMatchObject({ inputTokens: 420, outputTokens: 60, cachedTokens: 120 });
    expect(r.result.numTurns).toBe(3);
    expect(r.trace.filter((e) => e.type === "tool_call").map((e) => (e as { name: string }).name)).toEqual(["write", "bash"]);
    // The prompt arrived verbatim on stdin (argv words with spaces would be quoted), and no title request was made.
    const first = live.stub.modelRequests().at(-3)!;
    expect(JSON.stringify(first.body)).toContain('"Create hello.txt and shell.txt"');
    expect(JSON.stringify(first.body)).not.toContain('\\"Create hello.txt');
    expect(live.stub.requests.filter((q) => q.kind === "side")).toEqual([]);
    expect(first.model).toBe(MODEL);
    // Also: no plugin install, no model catalogue, no update check left 127.0.0.1.
    expectKeyOnlyThroughGateway(live, r, "authorization", `Bearer ${KEY}`);
    // The session database was written, and no snapshot store beside it: a headless run takes no per-step copies of the workspace.
    const data = filesUnder(r.main.runnerTemp).filter((f) => f.includes("/home/.local/share/opencode/"));
    expect(data.some((f) => f.endsWith("/opencode.db")), data.join("\n")).toBe(true);
    expect(data.filter((f) => f.includes("/opencode/snapshot/"))).toEqual([]);
  });

  it("works the same inside the bwrap sandbox with network model-only, attempting no other host", { timeout: SLOW }, () => expectSameInBwrap(live));

  it("resumes the session given by id (the model sees the earlier turns), and fork-session starts a new id", { timeout: 3 * SLOW }, () => expectResumeAndFork(live));

  /**
   * One OpenCode run (~10 s of CPU each) serves three tests whose setups combine: the hand-off inputs
   * (instructions, an MCP server holding a secret, a skill, deny rules) in a repository that has its own
   * opencode.json, with max-turns 3 so the third step (the answer) is the one at the cap. Each test keeps
   * its own assertions on the shared run; it starts with the first test that needs it.
   */
  let combined: Promise<{ workspace: string; run: AgentRun; requests: RecordedRequest[] }> | undefined;
  const combinedRun = () =>
    (combined ??= (async () => {
      const workspace = makeWorkspace({
        "README.md": "# repo\n",
        "REPO-INSTRUCTIONS.md": "REPO-INSTRUCTIONS-MARKER\n",
        // With "$schema" as OpenCode writes it: OpenCode adds the line to a project opencode.json that lacks it,
        // which would show in changed-files.
        "opencode.json": JSON.stringify({
          $schema: "https://opencode.ai/config.json",
          model: "elsewhere/big-model",
          provider: { elsewhere: { npm: "@ai-sdk/openai-compatible", options: { baseURL: "http://127.0.0.1:9/v1" }, models: { "big-model": {} } } },
          permission: { bash: "allow" },
          instructions: ["REPO-INSTRUCTIONS.md"],
          mcp: { tester: { type: "local", command: ["false"], enabled: false } },
        }),
      });
      live.stub.setScript([
        { tool: "tester_echo_marker", args: { text: "ping" } },
        { tool: "bash", args: { command: "rm -f README.md", description: "remove the readme" } },
        { text: "summary at the cap" },
      ]);
      const before = live.stub.modelRequests().length;
      const run = await runAgentAction({ workspace, stub: live.stub, timeoutMs: SLOW, inputs: { ...handOffInputs(live), "max-turns": "3" } });
      live.note("instructions+mcp+skill+deny+repo-config+max-turns", run);
      return { workspace, run, requests: live.stub.modelRequests().slice(before) };
    })());

  it("hands instructions, an MCP server, a skill and a deny rule to the CLI", { timeout: SLOW }, async () => {
    const { workspace: w, run: r, requests } = await combinedRun();
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    expect(requests).toHaveLength(3);
    const [first, second] = requests;
    expect(systemPromptOf(first!)).toContain(INSTRUCTIONS_MARKER);
    expect(systemPromptOf(first!)).toContain("# Run context (Agent Runner)");
    const tools = toolNames(first!.body);
    expect(tools).toContain("tester_echo_marker");
    expect(tools).toContain("bash");
    expect(tools).toContain("skill");
    expect(tools).not.toContain("webfetch");
    expect(JSON.stringify(first!.body)).toContain(SKILL_MARKER);
    // The MCP server ran with its env, and its answer went back to the model.
    expect(JSON.stringify(second!.body)).toContain(`${MCP_SECRET}: ping`);
    expectSecretInNoFile(
      filesUnder(r.main.runnerTemp).filter((f) => /\/home\/(\.config\/opencode|\.agent-runner)\//.test(f)),
      "opencode.json",
    );
    // rm was refused: the file is still there and the denial is reported.
    expect(existsSync(path.join(w, "README.md"))).toBe(true);
    expect(r.result.permissionDenials).toEqual([{ tool: "bash", detail: "rm -f README.md" }]);
    expect(JSON.parse(r.main.outputs["changed-files"]!)).toEqual([]);
  });

  it("keeps the workflow's endpoint, permissions and MCP servers over a repository's own opencode.json", { timeout: SLOW }, async () => {
    // The repository's opencode.json names another model and provider, allows bash, adds its own instructions
    // and a disabled 'tester' MCP server; the workflow's inputs must win, the instructions add up.
    const { workspace: w, run: r, requests } = await combinedRun();
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    const first = requests[0]!;
    expect(first.model).toBe(MODEL);
    expect(toolNames(first.body)).toContain("tester_echo_marker");
    // Both sets of instructions: the repository's add to the workflow's.
    expect(systemPromptOf(first)).toContain(INSTRUCTIONS_MARKER);
    expect(systemPromptOf(first)).toContain("REPO-INSTRUCTIONS-MARKER");
    expect(existsSync(path.join(w, "README.md"))).toBe(true);
    expect(r.result.permissionDenials).toEqual([{ tool: "bash", detail: "rm -f README.md" }]);
  });

  it("caps the agentic steps at max-turns: at the cap the model is told to answer without tools", { timeout: SLOW }, async () => {
    const { run: r, requests } = await combinedRun();
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    // Steps 1 and 2 are under the cap of 3; the third request is the one at the cap.
    expect(JSON.stringify(requests[1]!.body)).not.toContain("MAXIMUM STEPS REACHED");
    expect(JSON.stringify(requests.at(-1)!.body)).toContain("MAXIMUM STEPS REACHED");
    expect(r.main.outputs["final-message"]).toBe("summary at the cap");
  });

  it("a session id that was never saved is one error naming 'session' and the id, before the CLI starts", { timeout: SLOW }, async () => {
    live.stub.setScript([{ text: "never" }]);
    const before = live.stub.modelRequests().length;
    await expect(
      runAgentAction({ workspace: makeWorkspace(), stub: live.stub, timeoutMs: SLOW, inputs: live.inputs({ prompt: "go on", session: "ses_doesnotexist123" }) }),
    ).rejects.toThrow(/Input 'session': no saved session 'ses_doesnotexist123' was found to resume/);
    expect(live.stub.modelRequests().length).toBe(before);
  });

  const failures: FailureCase[] = [
    // OpenCode retries a 5xx five times, honouring retry-after-ms (else 2 s, 4 s, … backoff).
    ["server errors (500)", Array(7).fill({ status: 500, headers: { "retry-after-ms": "0" } }), /Model API error 500: stub error 500/],
    // (The stub's `malformed` body reads as a retryable network error to OpenCode — "Unterminated" matches its
    // /terminated/ — and takes ~60 s of backoff; a stream that is plainly not JSON fails at once.)
    ["a malformed stream", Array(3).fill({ status: 200, body: "data: {not json at all\n\n" }), /JSON parsing failed/],
    ["an authentication error (401)", Array(3).fill({ status: 401 }), /authentication failed.*401/],
  ];
  it.each(failures)("fails with the reason, in bounded time, on %s", { timeout: SLOW }, (_label, script, reason) => expectBoundedFailure(live, script, reason));
});
