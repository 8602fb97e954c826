/**
 * Issue #26, `verify-command` and `max-fix-rounds` with the real agent CLIs
 * against the stub model, through dist/main.js, in bubblewrap. The task's
 * first answer writes an `add.js` that fails `node test.js`; the check's
 * output goes back to the agent as the next prompt of its resumed session
 * (asserted on the body of the request the stub received); the second answer
 * fixes it: `verified=passed` after exactly two checks.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorkspace } from "../agents/helpers.js";
import type { CliName } from "../support/stub-model-clis.js";
import { shellStep } from "../support/stub-model-tools.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";
import { runWithVerify } from "./helpers.js";

const MARKER = "ADD-CHECK-FAILED";
const TEST_JS = `const add = require("./add.js");
const got = add(2, 3);
if (got !== 5) {
  console.error("${MARKER}: add(2, 3) should be 5, got " + got);
  process.exitCode = 1;
} else console.log("all 1 tests passed");
`;
const WRONG = `printf 'module.exports = (a, b) => a - b;\\n' > add.js`;
const RIGHT = `printf 'module.exports = (a, b) => a + b;\\n' > add.js`;

let stub: StubModel;
beforeAll(async () => {
  stub = await startStubModel([]);
});
afterAll(async () => {
  await stub?.close();
});

const KEYS = {
  claude: "ANTHROPIC_API_KEY=sk-ant-test-key-verify-0123456789",
  codex: "OPENAI_API_KEY=sk-openai-test-key-verify-0123456789",
  gemini: "GEMINI_API_KEY=gemini-test-key-verify-0123456789",
  opencode: "OPENAI_API_KEY=sk-openai-test-key-verify-0123456789",
} as const;

const agentInputs = (cli: CliName): Record<string, string> => ({
  claude: { agent: "claude", model: "claude-sonnet-4-5", "base-url": stub.url },
  codex: { agent: "codex", model: "gpt-5.5", "base-url": `${stub.url}/v1` },
  gemini: { agent: "gemini", model: "gemini-2.5-flash", "base-url": stub.url },
  opencode: { agent: "opencode", model: "gpt-5.5", "base-url": `${stub.url}/v1` },
})[cli];

// claude and codex are the acceptance; gemini and opencode resume their sessions the same way.
describe.each(["claude", "codex", "gemini", "opencode"] as const)("a fix round with %s", (cli) => {
  it("the failing check's output is the next request's prompt, in the resumed session; the second answer passes: verified=passed, two checks", async () => {
    const ws = makeWorkspace({ "test.js": TEST_JS, "README.md": "# adder\n" });
    const task = `TASK-${cli}: write add.js`;
    stub.setScript([shellStep(cli, WRONG), { text: `FIRST-ANSWER-${cli}` }, shellStep(cli, RIGHT), { text: `FIXED-ANSWER-${cli}` }]);
    const before = stub.modelRequests().length;
    const r = await runWithVerify(ws, { ...agentInputs(cli), secrets: KEYS[cli], prompt: task, "verify-command": "node test.js", "max-fix-rounds": "2" });
    expect(r.exitCode, r.log).toBe(0);
    expect(r.outputs.verified).toBe("passed");
    expect(r.outputs.conclusion).toBe("success");

    // Four model requests: the task (tool call, answer), then the fix round (tool call, answer).
    const requests = stub.modelRequests().slice(before);
    expect(requests).toHaveLength(4);
    const fixRequest = JSON.stringify(requests[2]!.body);
    // The check's failing output, framed as data, is in the fix round's first request…
    expect(fixRequest).toContain(`${MARKER}: add(2, 3) should be 5, got -1`);
    expect(fixRequest).toMatch(/verify-output-[0-9a-f]{8}/);
    expect(fixRequest).toContain("node test.js");
    // …of the same session: the task and the first answer are in its history.
    expect(fixRequest).toContain(task);
    expect(fixRequest).toContain(`FIRST-ANSWER-${cli}`);
    expect(JSON.stringify(requests[0]!.body)).not.toContain(MARKER);

    // Exactly two checks: failed, then passed; each one's output in its log.
    expect(r.result.verified).toBe("passed");
    expect(r.result.verify).toMatchObject({ command: ["node", "test.js"], maxFixRounds: 2, fixRounds: 1 });
    expect(r.result.verify!.runs.map((v) => [v.run, v.passed, v.exitCode])).toEqual([
      [1, false, 1],
      [2, true, 0],
    ]);
    expect(readFileSync(path.join(r.resultsDir, "verify/verify-1.log"), "utf8")).toContain(`${MARKER}: add(2, 3) should be 5, got -1`);
    expect(readFileSync(path.join(r.resultsDir, "verify/verify-2.log"), "utf8")).toContain("all 1 tests passed");
    expect(existsSync(path.join(r.resultsDir, "verify/verify-3.log"))).toBe(false);
    // The trace shows both checks as the runner's tool calls, the failure's output with the first.
    const checks = r.trace.filter((e) => e.type === "tool_result" && e.name === "verify-command");
    expect(checks.map((e) => (e.type === "tool_result" ? e.isError : undefined))).toEqual([true, false]);
    expect(JSON.stringify(checks[0])).toContain(MARKER);
    // The session went on (one id), the final message is the fix round's, and the workspace holds the fix.
    expect(r.outputs["session-id"]).toBe(r.result.sessionId);
    expect(r.outputs["final-message"]).toBe(`FIXED-ANSWER-${cli}`);
    expect(readFileSync(path.join(ws, "add.js"), "utf8")).toBe("module.exports = (a, b) => a + b;\n");
    expect(r.summary).toContain("### Verify");
    expect(r.summary).toMatch(/✅ passed — ` ?node test\.js ?`, 2 checks, 1 fix round of 2/);
  }, 300_000);
});

describe("one budget over every round", () => {
  it("claude with max-model-requests: 2: the fix round's request is refused at the gateway, verified=failed, budget-exceeded, two requests reach the stub", async () => {
    const ws = makeWorkspace({ "test.js": TEST_JS, "README.md": "# adder\n" });
    stub.setScript([shellStep("claude", WRONG), { text: "FIRST-ANSWER" }, shellStep("claude", RIGHT), { text: "FIXED" }]);
    const before = stub.modelRequests().length;
    const r = await runWithVerify(ws, {
      ...agentInputs("claude"),
      secrets: KEYS.claude,
      prompt: "write add.js",
      "verify-command": "node test.js",
      "max-fix-rounds": "2",
      "max-model-requests": "2",
    });
    expect(r.exitCode).not.toBe(0);
    expect(stub.modelRequests().length - before).toBe(2);
    expect(r.outputs["budget-exceeded"]).toBe("true");
    expect(r.outputs.verified).toBe("failed");
    expect(r.outputs.conclusion).toBe("failure");
    expect(r.result.reason).toMatch(/^Budget exceeded/);
    // One check, one fix round that the budget stopped: no second check.
    expect(r.result.verify).toMatchObject({ fixRounds: 1 });
    expect(r.result.verify!.runs).toHaveLength(1);
  }, 300_000);
});
