/**
 * Proves test/support/stub-model.ts with the four real agent CLIs (no Agent Runner code involved):
 * each CLI, headless in a temp git repo with an isolated HOME and a minimal env, writes a file
 * with its write tool, runs a shell command, answers; then a second run resumes the session by
 * id against a *restarted* stub and must send the earlier turns back. A proxy tripwire catches
 * any attempt to leave 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { conversationOf, startStubModel, type StubModel } from "../support/stub-model.js";
import { startTripwire, type Tripwire } from "../support/stub-model-tripwire.js";
import { CLIS, STUB_API_KEY, cliArgs, makeSandbox, parseRun, runCli, setupCli, type CliName, type Sandbox } from "../support/stub-model-clis.js";
import { shellStep, writeFileStep } from "../support/stub-model-tools.js";

/** Per-run bound. opencode starts slowly (bun binary, snapshot repo): 5–40 s on a loaded 2-core box. */
const RUN_TIMEOUT_MS: Record<CliName, number> = { claude: 60_000, codex: 60_000, gemini: 60_000, opencode: 120_000 };

/** How each CLI sends the key. */
function apiKeyOf(cli: CliName, headers: Record<string, string | string[] | undefined>): string | undefined {
  switch (cli) {
    case "claude":
      return headers["x-api-key"] as string | undefined;
    case "gemini":
      return headers["x-goog-api-key"] as string | undefined;
    default:
      return (headers["authorization"] as string | undefined)?.replace(/^Bearer /, "");
  }
}

const PROMPT_1 = "Create hello.txt, then run the shell command, then say all done.";
const PROMPT_2 = "Second turn: write again.txt and finish.";
const CONTENT = "hello from the stub model\n";

describe.each(CLIS)("%s against the stub model", (cli) => {
  let sandbox: Sandbox;
  let tripwire: Tripwire;
  let stub: StubModel | undefined;
  let sessionId: string | undefined;
  let firstRunToolIds: string[] = [];
  const timings: string[] = [];

  beforeAll(async () => {
    sandbox = await makeSandbox(`stub-e2e-${cli}-`);
    tripwire = await startTripwire();
  });

  afterAll(async () => {
    await stub?.close();
    await tripwire?.close();
    if (timings.length) console.info(`[${cli}] ${timings.join(", ")}`);
    await sandbox?.cleanup();
  });

  it(
    "writes a file, runs a shell command and answers with the final text",
    async () => {
      const hello = path.join(sandbox.work, "hello.txt");
      stub = await startStubModel([writeFileStep(cli, hello, CONTENT), shellStep(cli, "echo hi > shell.txt", "write shell.txt"), { text: "all done" }]);
      const env = await setupCli(cli, { sandbox, stubUrl: stub.url, extraEnv: tripwire.env() });
      const run = await runCli(cli, cliArgs(cli, { prompt: PROMPT_1 }), { cwd: sandbox.work, env, timeoutMs: RUN_TIMEOUT_MS[cli] });
      timings.push(`run 1: ${run.durationMs} ms`);
      const diag = `exit=${run.exitCode} timedOut=${run.timedOut}\nstdout:\n${run.stdout.slice(-3000)}\nstderr:\n${run.stderr.slice(-3000)}`;

      expect(run.timedOut, diag).toBe(false);
      expect(run.exitCode, diag).toBe(0);
      expect(readFileSync(hello, "utf8")).toBe(CONTENT);
      expect(readFileSync(path.join(sandbox.work, "shell.txt"), "utf8")).toBe("hi\n");

      const parsed = parseRun(cli, run.events);
      expect(parsed.isError, diag).toBe(false);
      expect(parsed.finalText).toBe("all done");
      expect(parsed.sessionId).toBeTruthy();
      // Usage flows through: the stub reports 20 output / 40 cached tokens per answer, 3 answers.
      expect(parsed.usage?.outputTokens).toBe(60);
      expect(parsed.usage?.cachedTokens).toBe(120);
      sessionId = parsed.sessionId;

      // The stub saw three model turns, each carrying the key, and nothing unexpected on the side.
      const model = stub.modelRequests();
      expect(model).toHaveLength(3);
      for (const r of model) expect(apiKeyOf(cli, r.headers)).toBe(STUB_API_KEY);
      expect(stub.sideRequests().filter((r) => r.sideReason === "unknown endpoint")).toEqual([]);
      expect(stub.allText()).toContain(PROMPT_1);
      // The prompt arrives verbatim as a user text item (opencode would quote it if given as argv).
      expect(stub.conversation(model[0]).some((i) => i.role === "user" && i.type === "text" && i.text.trim() === PROMPT_1)).toBe(true);
      // Turn 2 and 3 carry the tool results back.
      firstRunToolIds = stub.issuedToolCallIds();
      expect(firstRunToolIds).toHaveLength(2);
      const last = stub.conversation();
      for (const id of firstRunToolIds) {
        expect(last.some((i) => i.type === "tool_call" && i.id === id)).toBe(true);
        expect(last.some((i) => i.type === "tool_result" && i.id === id)).toBe(true);
      }

      expect(tripwire.hits, JSON.stringify(tripwire.hits)).toEqual([]);
    },
    RUN_TIMEOUT_MS[cli] + 20_000,
  );

  it(
    "resumes the session by id against a restarted stub, which sees the earlier turns",
    async () => {
      expect(sessionId, "first run gave no session id").toBeTruthy();
      await stub?.close();
      const again = path.join(sandbox.work, "again.txt");
      stub = await startStubModel([writeFileStep(cli, again, "again\n"), { text: "resumed ok" }]);
      // Same HOME and cwd; only the stub URL changes.
      const env = await setupCli(cli, { sandbox, stubUrl: stub.url, extraEnv: tripwire.env() });
      const run = await runCli(cli, cliArgs(cli, { prompt: PROMPT_2, resume: sessionId }), {
        cwd: sandbox.work,
        env,
        timeoutMs: RUN_TIMEOUT_MS[cli],
      });
      timings.push(`resume: ${run.durationMs} ms`);
      const diag = `exit=${run.exitCode}\nstdout:\n${run.stdout.slice(-3000)}\nstderr:\n${run.stderr.slice(-3000)}`;

      expect(run.exitCode, diag).toBe(0);
      expect(existsSync(again)).toBe(true);
      const parsed = parseRun(cli, run.events);
      expect(parsed.finalText).toBe("resumed ok");
      expect(parsed.sessionId).toBe(sessionId); // all four keep the id on resume

      const first = stub.modelRequests()[0]!;
      const conv = stub.conversation(first);
      // Earlier turns: the first prompt, both tool calls with their results, the final answer.
      expect(conv.some((i) => i.role === "user" && i.type === "text" && i.text.includes(PROMPT_1))).toBe(true);
      for (const id of firstRunToolIds) {
        expect(conv.some((i) => i.type === "tool_call" && i.id === id)).toBe(true);
        expect(conv.some((i) => i.type === "tool_result" && i.id === id)).toBe(true);
      }
      expect(conv.some((i) => i.role === "assistant" && i.type === "text" && i.text === "all done")).toBe(true);
      // …followed by the new prompt.
      const lastUser = conv.filter((i) => i.role === "user" && i.type === "text").at(-1);
      expect(lastUser?.type === "text" && lastUser.text).toContain(PROMPT_2);
      // Fresh tool ids after the restart do not collide with the resumed history.
      const newIds = stub.issuedToolCallIds();
      expect(newIds).toHaveLength(1);
      expect(firstRunToolIds).not.toContain(newIds[0]);

      expect(tripwire.hits, JSON.stringify(tripwire.hits)).toEqual([]);
    },
    RUN_TIMEOUT_MS[cli] + 20_000,
  );
});

/** The stub on its own, over plain fetch: fast checks of the parts the CLI runs don't reach. */
describe("stub model server", () => {
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

  it("renders one script in all four wire formats, side requests do not consume steps", async () => {
    const stub = await startStubModel([
      { tool: "Write", args: { file_path: "/x", content: "y" } },
      { text: "chat text" },
      { tool: "exec_command", args: { cmd: "ls" } },
      { text: "gemini text" },
    ]);
    try {
      expect((await fetch(stub.url, { method: "HEAD" })).status).toBe(200);
      const models = (await (await fetch(`${stub.url}/v1/models`)).json()) as { data: unknown[]; models: unknown[] };
      expect(models.data.length).toBeGreaterThan(0);
      expect(models.models.length).toBeGreaterThan(0);
      expect(await (await post(`${stub.url}/v1/messages/count_tokens`, { messages: [] })).json()).toEqual({ input_tokens: 100 });

      const a = await (await post(`${stub.url}/v1/messages?beta=true`, { model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": "k1" })).text();
      expect(a).toContain("event: message_start");
      expect(a).toMatch(/"type":"tool_use","id":"toolu_stub_[0-9a-f]{24}","name":"Write"/);
      expect(a).toContain('"stop_reason":"tool_use"');
      expect(a).toContain('"cache_read_input_tokens":40');

      const c = await (await post(`${stub.url}/v1/chat/completions`, { model: "m", stream: true, messages: [] })).text();
      expect(c).toContain('"content":"chat text"');
      expect(c).toContain('"finish_reason":"stop"');
      expect(c).toContain('"prompt_tokens":140');
      expect(c.trimEnd().endsWith("data: [DONE]")).toBe(true);

      const r = await (await post(`${stub.url}/v1/responses`, { model: "m", stream: true, input: [], tools: [{ type: "function", name: "exec_command" }] })).text();
      expect(r).toContain('"type":"function_call"');
      expect(r).toContain('"arguments":"{\\"cmd\\":\\"ls\\"}"');
      expect(r).toContain("event: response.completed");

      // gemini's JSON utility call (routing classifier) is a side request answered from its schema.
      const routing = await post(`${stub.url}/v1beta/models/flash-lite:generateContent`, {
        contents: [],
        generationConfig: { responseMimeType: "application/json", responseJsonSchema: { type: "object", properties: { model_choice: { type: "string", enum: ["flash", "pro"] } } } },
      });
      const routed = (await routing.json()) as { candidates: Array<{ content: { parts: Array<{ text: string }> } }> };
      expect(JSON.parse(routed.candidates[0]!.content.parts[0]!.text)).toEqual({ model_choice: "flash" });

      const g = await (await post(`${stub.url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, { contents: [{ role: "user", parts: [{ text: "hi" }] }] })).text();
      expect(g).toMatch(/^data: \{"candidates":\[\{"content":\{"role":"model","parts":\[\{"text":"gemini text"\}\]\}/);
      expect(g).toContain('"cachedContentTokenCount":40');

      // Script exhausted: "done".
      expect(await (await post(`${stub.url}/v1/chat/completions`, { model: "m", stream: false, messages: [] })).json()).toMatchObject({
        choices: [{ message: { content: "done" }, finish_reason: "stop" }],
      });

      expect(stub.modelRequests().map((q) => q.api)).toEqual(["anthropic", "openai-chat", "openai-responses", "gemini", "openai-chat"]);
      expect(stub.sideRequests().map((q) => q.sideReason)).toEqual([
        "HEAD probe",
        "GET /v1/models",
        "count tokens",
        "gemini JSON utility call (routing / next speaker / loop check)",
      ]);
      expect(stub.modelRequests()[0]!.headers["x-api-key"]).toBe("k1");
      expect(stub.allText()).toContain('"content":"hi"');
      expect(conversationOf(stub.modelRequests()[3]!)).toEqual([{ role: "user", type: "text", text: "hi" }]);
    } finally {
      await stub.close();
    }
  });

  it("answers errors, malformed bodies, delays, request-dependent steps, and drops hung requests on close", async () => {
    const stub = await startStubModel((req, index) => {
      const prompt = JSON.stringify(req.body);
      if (prompt.includes("auth")) return { status: 401 };
      if (prompt.includes("busy")) return { status: 429, headers: { "retry-after": "0" } };
      if (prompt.includes("garbage")) return { malformed: true };
      if (prompt.includes("slow")) return { text: "slow", delayMs: 300 };
      if (prompt.includes("hang")) return { hang: true };
      return { text: `step ${index}` };
    });
    const ask = (text: string) => post(`${stub.url}/v1/messages`, { model: "m", stream: true, messages: [{ role: "user", content: text }] });
    const e401 = await ask("auth");
    expect(e401.status).toBe(401);
    expect(await e401.json()).toEqual({ type: "error", error: { type: "authentication_error", message: "stub error 401" } });
    const e429 = await ask("busy");
    expect(e429.status).toBe(429);
    expect(e429.headers.get("retry-after")).toBe("0");
    const bad = await (await ask("garbage")).text();
    expect(() => JSON.parse(bad)).toThrow();
    const t0 = Date.now();
    expect(await (await ask("slow")).text()).toContain('"text":"slow"');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect(await (await ask("anything")).text()).toContain('"text":"step 4"');
    const hung = ask("hang").then(
      () => "answered",
      () => "dropped",
    );
    await new Promise((r) => setTimeout(r, 100));
    await stub.close();
    expect(await hung).toBe("dropped");
  });

  it("gives every tool call a fresh id, also across restarts", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const stub = await startStubModel([{ tools: [{ tool: "a", args: {} }, { tool: "b", args: {} }] }]);
      await post(`${stub.url}/v1/chat/completions`, { model: "m", stream: true, messages: [] });
      ids.push(...stub.issuedToolCallIds());
      await stub.close();
    }
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
  });
});
