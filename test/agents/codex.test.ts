/**
 * agent: codex — the parser on recorded `codex exec --json` lines, the
 * permission and config mapping, and the real Codex CLI driven by the action
 * (dist/main.js) against the stub model: write + shell, resume and fork,
 * instructions / MCP / skill / deny rules reaching the CLI, failures, and no
 * traffic but the stub's.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CODEX_PROVIDER_ID, CodexParser, codexAgent, codexConfigToml, codexPermissions, commandPrefix } from "../../src/agents/codex.js";
import { tomlString } from "../../src/agents/common.js";
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
  SKILL_MARKER,
  useStubModel,
  writeAndShellScript,
} from "./e2e-checks.js";
import { type AgentRun, filesUnder, makeWorkspace, parseAll, runAgentAction, testContext } from "./helpers.js";

// ------------------------------------------------------------------ recorded lines (codex 0.171.0)

const TID = "01a22799-af49-7e43-8826-5897ba0ece7a";
const STARTED = `{"type":"thread.started","thread_id":"${TID}"}`;
const TURN = `{"type":"turn.started"}`;
const CMD_START = `{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'echo hi > hello.txt'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`;
const CMD_DONE = `{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'echo hi > hello.txt'","aggregated_output":"","exit_code":0,"status":"completed"}}`;
const CMD_FAILED = `{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc false","aggregated_output":"boom\\n","exit_code":1,"status":"failed"}}`;
const PATCH = `{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/w/hello.txt","kind":"add"}],"status":"completed"}}`;
const MCP_START = `{"type":"item.started","item":{"id":"item_3","type":"mcp_tool_call","server":"tester","tool":"echo_marker","arguments":{"text":"yo"},"result":null,"error":null,"status":"in_progress"}}`;
const MCP_DONE = `{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"tester","tool":"echo_marker","arguments":{"text":"yo"},"result":{"content":[{"type":"text","text":"MM: yo"}],"structured_content":null},"error":null,"status":"completed"}}`;
const REASONING = `{"type":"item.completed","item":{"id":"item_4","type":"reasoning","text":"**Planning** the change"}}`;
const MESSAGE = `{"type":"item.completed","item":{"id":"item_5","type":"agent_message","text":"all done"}}`;
const DONE = `{"type":"turn.completed","usage":{"input_tokens":420,"cached_input_tokens":120,"cache_write_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":0}}`;
const METADATA_NOTICE = `{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for \`stub-model\` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}`;
const ERR_401 = `{"type":"error","message":"unexpected status 401 Unauthorized: stub error 401, url: http://127.0.0.1:35093/v1/responses, request id: req_stub_61b7fb1bbf95d924"}`;
const FAILED_401 = `{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: stub error 401, url: http://127.0.0.1:35093/v1/responses, request id: req_stub_61b7fb1bbf95d924"}}`;
const RECONNECT = `{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}`;

describe("codex exec --json parser", () => {
  it("turns a recorded run into session, tool calls and results, reasoning, text, usage and result", () => {
    const events = parseAll(new CodexParser(false), [STARTED, TURN, CMD_START, CMD_DONE, CMD_FAILED, PATCH, MCP_START, MCP_DONE, REASONING, MESSAGE, DONE]);
    expect(events.map((e) => e.type)).toEqual([
      "session",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "reasoning",
      "text",
      "usage",
      "result",
    ]);
    expect(events[0]).toEqual({ type: "session", sessionId: TID });
    expect(events[1]).toEqual({ type: "tool_call", id: "item_0", name: "bash", input: { command: "/bin/bash -lc 'echo hi > hello.txt'" } });
    expect(events[2]).toMatchObject({ type: "tool_result", id: "item_0", isError: false });
    expect(events[4]).toMatchObject({ type: "tool_result", output: "boom\n", isError: true });
    expect(events[5]).toMatchObject({ type: "tool_call", name: "apply_patch", input: { path: "add /w/hello.txt" } });
    expect(events[7]).toMatchObject({ type: "tool_call", name: "mcp__tester__echo_marker", input: { text: "yo" } });
    expect(events[8]).toMatchObject({ type: "tool_result", output: "MM: yo", isError: false });
    const usage = { inputTokens: 420, outputTokens: 60, cachedTokens: 120 };
    expect(events[11]).toEqual({ type: "usage", usage, cumulative: true });
    expect(events[12]).toEqual({ type: "result", text: "all done", isError: false, usage, numTurns: 1 });
  });

  it("skips non-JSON lines, unknown types and the unknown-model notice", () => {
    const events = parseAll(new CodexParser(false), ["Reading additional input from stdin...", "{bad", '{"type":"todo.whatever"}', STARTED, METADATA_NOTICE, MESSAGE, DONE]);
    expect(events.map((e) => e.type)).toEqual(["session", "text", "usage", "result"]);
  });

  it("fails the result on a failed turn, naming an authentication failure", () => {
    const events = parseAll(new CodexParser(false), [STARTED, TURN, ERR_401, FAILED_401]);
    expect(events.at(-1)).toMatchObject({ type: "result", isError: true, reason: expect.stringMatching(/^The model API refused the credentials \(authentication failed\): unexpected status 401/) });
  });

  it("names the HTTP status of the retries when Codex's final message does not", () => {
    const retry = `{"type":"error","message":"Reconnecting... 1/5 (unexpected status 500 Internal Server Error: stub error 500, url: http://127.0.0.1:1/v1/responses)"}`;
    const failed = `{"type":"turn.failed","error":{"message":"We’re currently experiencing high demand, which may cause temporary errors."}}`;
    expect(parseAll(new CodexParser(false), [STARTED, retry, failed]).at(-1)).toMatchObject({
      isError: true,
      reason: "We’re currently experiencing high demand, which may cause temporary errors. (unexpected status 500 Internal Server Error: stub error 500)",
    });
  });

  it("does not fail a run that recovered from a stream error", () => {
    expect(parseAll(new CodexParser(false), [STARTED, RECONNECT, MESSAGE, DONE]).at(-1)).toMatchObject({ isError: false, text: "all done" });
    expect(parseAll(new CodexParser(false), [STARTED, RECONNECT]).at(-1)).toMatchObject({ isError: true });
  });

  it("parses the final message as structured output when an output schema was given", () => {
    const json = `{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"{\\"answer\\":\\"42\\"}"}}`;
    expect(parseAll(new CodexParser(true), [STARTED, json, DONE]).at(-1)).toMatchObject({ structuredOutput: { answer: "42" } });
    expect(parseAll(new CodexParser(false), [STARTED, json, DONE]).at(-1)).not.toHaveProperty("structuredOutput");
  });
});

describe("codex permission and config mapping", () => {
  const agent = (permission: unknown, mcpServers = {}, maxTurns?: number) =>
    Agent.parse({ name: "codex", backend: "codex", permission, mcpServers, ...(maxTurns ? { maxTurns } : {}) });

  it("runs unconfined by its own sandbox when everything is allowed (Agent Runner's sandbox is the boundary)", () => {
    expect(codexPermissions(agent(undefined))).toMatchObject({ sandboxMode: "danger-full-access", shellTool: true, webSearch: true, rules: [], problems: [] });
  });

  it("maps denials to the shell tool switch, the read-only sandbox, web search off, command rules and MCP tool lists", () => {
    const p = codexPermissions(
      agent(
        {
          default: "allow",
          rules: [
            { tool: "edit", action: "deny" },
            { tool: "webfetch", action: "ask" },
            { tool: "bash", pattern: "git push:*", action: "deny" },
            { tool: "mcp__tester__echo_marker", action: "deny" },
            { tool: "mcp__other", action: "deny" },
          ],
        },
        { tester: { command: "node" }, other: { command: "node" } },
      ),
    );
    expect(p.problems).toEqual([]);
    expect(p).toMatchObject({ sandboxMode: "read-only", shellTool: true, webSearch: false });
    expect(p.rules).toEqual([expect.stringContaining('prefix_rule(pattern = ["git","push"], decision = "forbidden"')]);
    expect(p.mcp).toEqual({ tester: { enabled: true, disabledTools: ["echo_marker"] }, other: { enabled: false, disabledTools: [] } });
  });

  it("with default deny, turns everything off except what is allowed", () => {
    const p = codexPermissions(agent({ default: "deny", rules: [{ tool: "bash", action: "allow" }, { tool: "mcp__tester__echo_marker", action: "allow" }] }, { tester: { command: "node" } }));
    expect(p).toMatchObject({ sandboxMode: "read-only", shellTool: true, webSearch: false, problems: [] });
    expect(p.mcp.tester).toEqual({ enabled: true, enabledTools: ["echo_marker"], disabledTools: [] });
  });

  it("refuses what Codex cannot express, each naming the input", () => {
    const problems = codexAgent.unsupported(
      agent(
        {
          default: "deny",
          rules: [
            { tool: "read", action: "deny" },
            { tool: "write", pattern: "src/**", action: "allow" },
            { tool: "bash", pattern: "git status", action: "allow" },
            { tool: "bash", pattern: "rm -rf $HOME", action: "deny" },
            { tool: "teleport", action: "deny" },
            { tool: "mcp__x", pattern: "y", action: "deny" },
          ],
        },
        {},
        5,
      ),
      testContext().run,
    );
    expect(problems).toEqual([
      "Input 'permissions': 'read' cannot be honoured by agent 'codex': Codex always lets the agent read files.",
      "Input 'permissions': 'write(src/**)' cannot be honoured by agent 'codex': only shell commands can be limited by a pattern.",
      "Input 'permissions': 'bash(git status)' cannot be honoured by agent 'codex': Codex cannot allow only some shell commands while the shell is otherwise denied.",
      "Input 'permissions': 'bash(rm -rf $HOME)' cannot be honoured by agent 'codex': a shell pattern must be a command prefix such as 'git push *' or 'rm:*'.",
      "Input 'permissions': 'teleport' names no tool agent 'codex' knows; use bash, write, edit, read, webfetch, websearch or mcp__<server>[__<tool>].",
      "Input 'permissions': 'mcp__x(y)' cannot be honoured by agent 'codex': MCP tools take no patterns.",
      "Input 'max-turns' is not supported by agent 'codex': codex exec has no turn limit (use timeout-minutes).",
    ]);
  });

  it("refuses forking the last session, which codex exec fork cannot find", () => {
    expect(codexAgent.unsupported(agent(undefined), testContext({ run: { continueLast: true, forkSession: true } }).run)).toEqual([
      "Input 'fork-session' needs a session id with agent 'codex' (codex exec fork has no --last).",
    ]);
    expect(codexAgent.unsupported(agent(undefined), testContext({ run: { resumeSessionId: TID, continueLast: true, forkSession: true } }).run)).toEqual([]);
  });

  it("takes no inherited object key for a tool name", () => {
    const p = codexPermissions(agent({ default: "allow", rules: ["constructor", "toString", "__proto__"].map((tool) => ({ tool, action: "deny" })) }));
    expect(p.problems).toEqual(["constructor", "toString", "__proto__"].map((t) => expect.stringContaining(`'${t}' names no tool agent 'codex' knows`)));
    expect(p).toMatchObject({ sandboxMode: "danger-full-access", shellTool: true, webSearch: true, rules: [] });
  });

  it("reads command prefixes the way people write them", () => {
    expect(commandPrefix("rm *")).toEqual(["rm"]);
    expect(commandPrefix("git push:*")).toEqual(["git", "push"]);
    expect(commandPrefix("npm publish")).toEqual(["npm", "publish"]);
    expect(commandPrefix("git push*")).toEqual(["git", "push"]);
    expect(commandPrefix("rm -rf *.txt")).toBeUndefined();
    expect(commandPrefix("*")).toBeUndefined();
  });

  it("writes TOML strings Codex can read, whatever the text", () => {
    expect(tomlString('a "quoted"\nline\u007f\uD800')).toBe('"a \\"quoted\\"\\nline\\u007F\\ufffd"'.replace("\\ufffd", "\uFFFD"));
  });

  it("puts endpoint, key variable, instructions and MCP servers in config.toml, never the key itself", () => {
    const ctx = testContext({
      agent: { backend: "codex", model: "gpt-5.5", instructions: "Be brief.", mcpServers: { tester: { command: "node", args: ["s.mjs"], env: { A: "1" } } } },
    });
    const toml = codexConfigToml(ctx, codexPermissions(ctx.agent));
    expect(toml).toContain('model = "gpt-5.5"');
    expect(toml).toContain('base_url = "http://127.0.0.1:9/v1"');
    expect(toml).toContain('env_key = "OPENAI_API_KEY"');
    expect(toml).toContain('developer_instructions = "# Run context\\n\\nBe brief.\\n"');
    expect(toml).toContain('[mcp_servers."tester"]\ncommand = "node"\nargs = ["s.mjs"]\nenv = { "A" = "1" }');
    expect(toml).toContain("[analytics]\nenabled = false");
    expect(toml).not.toContain("placeholder-key");
    // Without a gateway there is no endpoint to name: Codex keeps its own provider.
    const noEndpoint = { ...ctx, endpoint: undefined };
    const own = codexConfigToml(noEndpoint, codexPermissions(ctx.agent));
    expect(own).not.toContain("model_provider");
    expect(own).not.toContain("base_url");
  });

  it("gives the CLI its home and the endpoint's key, and only the home without an endpoint", async () => {
    const ctx = testContext({ agent: { backend: "codex" } });
    const home = path.join(ctx.layout.home, ".codex");
    expect((await codexAgent.materialise(ctx)).env).toEqual({ CODEX_HOME: home, OPENAI_API_KEY: "placeholder-key" });
    expect((await codexAgent.materialise({ ...ctx, endpoint: undefined })).env).toEqual({ CODEX_HOME: home });
  });

  it("keeps secrets for MCP servers in the environment, and refuses one it would have to write down", async () => {
    const ctx = testContext({
      agent: { backend: "codex", mcpServers: { gh: { command: "gh-mcp", args: [], env: { GH_TOKEN: "tok-123456", MODE: "ro" } }, web: { url: "https://mcp.example.com/x", headers: { Authorization: "Bearer tok-123456" } } } },
      run: { secrets: { GH: "tok-123456" } },
    });
    const { env } = await codexAgent.materialise(ctx);
    const toml = readFileSync(path.join(ctx.layout.home, ".codex/config.toml"), "utf8");
    expect(toml).not.toContain("tok-123456");
    expect(toml).toContain('env = { "MODE" = "ro" }\nenv_vars = ["GH_TOKEN"]');
    expect(toml).toContain('env_http_headers = { "Authorization" = "AGENT_RUNNER_SECRET_0" }');
    expect(env).toEqual({ GH_TOKEN: "tok-123456", AGENT_RUNNER_SECRET_0: "Bearer tok-123456", CODEX_HOME: path.join(ctx.layout.home, ".codex"), OPENAI_API_KEY: "placeholder-key" });
    expect(codexAgent.sessionPaths(ctx)).toEqual([path.join(ctx.layout.home, ".codex/sessions")]);

    const inArgs = testContext({ agent: { backend: "codex", mcpServers: { gh: { command: "gh-mcp", args: ["--token", "tok-123456"], env: {} } } }, run: { secrets: { GH: "tok-123456" } } });
    expect(codexAgent.unsupported(inArgs.agent, inArgs.run)).toEqual([expect.stringContaining("Input 'mcp-servers': server 'gh' has a secret in its command, args or url")]);
  });

  it("builds the command line: prompt on stdin, resume and fork by id, output schema", async () => {
    const bin = { binPath: "/bin/codex", version: "x", readOnlyPaths: [] };
    const fresh = codexAgent.command(testContext({ agent: { backend: "codex" }, run: { prompt: "do it" } }), bin);
    expect(fresh.args).toEqual(["exec", "--json", "--skip-git-repo-check", "--", "-"]);
    expect(fresh.stdin).toBe("do it");
    expect(fresh.file).toBe("/bin/codex");
    const withSchema = testContext({ agent: { backend: "codex" }, run: { resumeSessionId: TID, outputSchema: { type: "object" }, extraArgs: ["-c", "x=1"] } });
    const schemaFile = path.join(withSchema.layout.home, ".agent-runner/codex-output-schema.json");
    expect(codexAgent.command(withSchema, bin).args).toEqual(["exec", "resume", "--json", "--skip-git-repo-check", "--output-schema", schemaFile, "-c", "x=1", "--", TID, "-"]);
    // The schema file the flag names is the one materialise writes.
    await codexAgent.materialise(withSchema);
    expect(JSON.parse(readFileSync(schemaFile, "utf8"))).toEqual({ type: "object" });
    const fork = codexAgent.command(testContext({ agent: { backend: "codex" }, run: { resumeSessionId: TID, forkSession: true } }), bin);
    expect(fork.args).toEqual(["exec", "fork", "--json", "--skip-git-repo-check", "--", TID, "-"]);
    const last = codexAgent.command(testContext({ agent: { backend: "codex" }, run: { continueLast: true } }), bin);
    expect(last.args).toEqual(["exec", "resume", "--json", "--skip-git-repo-check", "--last", "--", "-"]);
  });
});

// ------------------------------------------------------------------ the real CLI through the action

const KEY = "sk-openai-test-key-0123456789abcdef";
/** Codex retries failed requests with backoff; the failure tests do not wait for that. */
const NO_RETRIES = JSON.stringify(["-c", `model_providers.${CODEX_PROVIDER_ID}.request_max_retries=0`, "-c", `model_providers.${CODEX_PROVIDER_ID}.stream_max_retries=0`]);
const CODEX: BackendUnderTest = {
  cli: "codex",
  // Codex's own default model gets a different tool surface (code mode) than the stub speaks.
  inputs: (stub) => ({ agent: "codex", model: "gpt-5.5", "base-url": `${stub.url}/v1`, secrets: `OPENAI_API_KEY=${KEY}` }),
  sessionId: /^[0-9a-f-]{36}$/,
  failsWithinMs: 120_000,
};
const tools = (body: unknown) =>
  ((body as { tools?: { name?: string; type?: string; tools?: { name: string }[] }[] }).tools ?? []).flatMap((t) => [t.name ?? t.type ?? "?", ...(t.tools ?? []).map((n) => `${t.name}/${n.name}`)]);

describe("codex run by the action against the stub model", () => {
  const live = useStubModel(CODEX);

  it("writes a file and runs a shell command: success, the file in the patch, session id, usage and final message", async () => {
    const ws = makeWorkspace();
    live.stub.setScript(writeAndShellScript("codex", ws, "MARK-1 all done"));
    const r = await runAgentAction({ workspace: ws, stub: live.stub, inputs: live.inputs({ prompt: "Create hello.txt and shell.txt", env: live.tripwireEnv() }) });
    live.note("write+shell", r);
    expectBothFilesDelivered(r, "codex", "MARK-1 all done");
    expect(r.main.outputs["session-id"]).toMatch(CODEX.sessionId);
    const usage = JSON.parse(r.main.outputs.usage!);
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(r.trace.filter((e) => e.type === "tool_call").map((e) => (e as { name: string }).name)).toEqual(["apply_patch", "bash"]);
    expectKeyOnlyThroughGateway(live, r, "authorization", `Bearer ${KEY}`);
  });

  it("works the same inside the bwrap sandbox with network model-only, attempting no other host", () => expectSameInBwrap(live));

  it("resumes the session given by id (the model sees the earlier turns), and fork-session starts a new id", () => expectResumeAndFork(live));

  it("hands instructions, an MCP server, a skill and deny rules to the CLI", async () => {
    const w = makeWorkspace();
    live.stub.setScript([{ tool: "exec_command", args: { cmd: "rm -f README.md" } }, { text: "checked" }]);
    // An unknown model has no tool-search support, so Codex lists MCP tools up front.
    const r = await runAgentAction({ workspace: w, stub: live.stub, inputs: { ...handOffInputs(live), model: "stub-model" } });
    live.note("instructions+mcp+skill+deny", r);
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    const [first, second] = live.stub.modelRequests().slice(-2);
    expect(systemPromptOf(first!)).toContain(INSTRUCTIONS_MARKER);
    expect(systemPromptOf(first!)).toContain("# Run context (Agent Runner)");
    expect(systemPromptOf(first!)).toContain(SKILL_MARKER);
    const names = tools(first!.body);
    expect(names).toContain("mcp__tester/echo_marker");
    expect(names).toContain("exec_command");
    expect(names).not.toContain("web_search");
    // The MCP server's secret is forwarded from the environment (env_vars), not written into config.toml.
    expectSecretInNoFile(
      filesUnder(r.main.runnerTemp).filter((f) => /\/home\/(\.agent-runner\/|\.codex\/(config\.toml|rules\/))/.test(f)),
      "config.toml",
    );
    // `rm` was refused by the command rule: the file is still there, and the model was told.
    expect(existsSync(path.join(w, "README.md"))).toBe(true);
    expect(JSON.stringify(second!.body)).toMatch(/rejected/);
    expect(JSON.parse(r.main.outputs["changed-files"]!)).toEqual([]);
  });

  /**
   * One run serves two tests whose setups combine: bash denied, and an output-schema answered as JSON text.
   * Each test keeps its own assertions on the shared run; it starts with the first test that needs it.
   */
  let combined: Promise<{ run: AgentRun; requests: RecordedRequest[] }> | undefined;
  const combinedRun = () =>
    (combined ??= (async () => {
      live.stub.setScript([{ text: '{"answer":"42"}' }]);
      const before = live.stub.modelRequests().length;
      const run = await runAgentAction({
        workspace: makeWorkspace(),
        stub: live.stub,
        inputs: live.inputs({
          prompt: "answer",
          permissions: JSON.stringify({ default: "allow", deny: ["bash"] }),
          "output-schema": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false }),
        }),
      });
      return { run, requests: live.stub.modelRequests().slice(before) };
    })());

  it("takes the shell tool away when bash is denied", async () => {
    const { run: r, requests } = await combinedRun();
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    expect(requests.length).toBeGreaterThan(0);
    expect(tools(requests.at(-1)!.body)).not.toContain("exec_command");
  });

  it("returns the structured output when output-schema is set", async () => {
    const { run: r, requests } = await combinedRun();
    expect(r.main.outputs.conclusion, r.main.log).toBe("success");
    expect(JSON.parse(r.main.outputs["structured-output"]!)).toEqual({ answer: "42" });
    expect(JSON.stringify(requests.at(-1)!.body)).toContain('"json_schema"');
  });

  it("refuses max-turns before starting anything (codex has no turn limit)", async () => {
    const before = live.stub.requests.length;
    const r = await runAgentAction({ workspace: makeWorkspace(), stub: live.stub, inputs: live.inputs({ prompt: "p", "max-turns": "3" }) }).catch((e: Error) => e);
    expect(r).toBeInstanceOf(Error);
    expect(String(r)).toContain("Input 'max-turns' is not supported by agent 'codex'");
    expect(live.stub.requests.length).toBe(before);
  });

  const failures: FailureCase[] = [
    ["server errors (500)", Array(5).fill({ status: 500 }), /high demand|500/],
    ["a malformed stream", Array(5).fill({ malformed: true }), /stream/],
    ["an authentication error (401)", Array(5).fill({ status: 401 }), /authentication failed.*401/],
  ];
  it.each(failures)("fails with the reason, in bounded time, on %s", (_label, script, reason) =>
    expectBoundedFailure(live, script, reason, { inputs: { "agent-args": NO_RETRIES } }),
  );
});
