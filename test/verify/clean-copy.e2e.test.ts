/**
 * Issue #32: `verify-command` judges exactly what is delivered. Through
 * dist/main.js in bubblewrap, the command agent breaks `add.js` and then
 * tries to make `npm test` pass from outside the patch:
 *
 * - `script-shell=/bin/true` in its sandbox HOME's `.npmrc` (npm then runs
 *   every script with /bin/true);
 * - its own shim over the git-ignored `node_modules/.bin/check-add`, the
 *   dependency the test script calls.
 *
 * Either way the patch shows only `add.js`; against the dist/ before this
 * change the check ran in the agent's workspace with its HOME and passed.
 * Now it runs on a clean copy (the patch's tree, the ignored files as they
 * were before the agent started, a fresh HOME): `verified=failed`, the
 * check's log holds the real test's failure, and the fix round's prompt says
 * where the check runs. A legitimate fix passes, and the ignored dependency
 * installed before the agent ran is there for the check.
 *
 * The agent saves each prompt it gets under `.agent-notes/` (ignored: never
 * in the patch, never in the copy), which the test reads on the host.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { makeWorkspace } from "../agents/helpers.js";
import { runWithVerify } from "./helpers.js";

const MARKER = "ADD-CHECK-FAILED";
/** Printed by the dependency as installed before the agent ran: the check used that one. */
const DEP_MARKER = "CHECK-ADD-FROM-BASELINE";
const TEST_JS = `const add = require("./add.js");
const got = add(2, 3);
if (got !== 5) {
  console.error("${MARKER}: add(2, 3) should be 5, got " + got);
  process.exitCode = 1;
} else console.log("all 1 tests passed");
`;
const PACKAGE_JSON = JSON.stringify({ name: "adder", version: "1.0.0", private: true, scripts: { test: "check-add" } }, null, 2) + "\n";
/** The installed "test runner": ignored, present before the agent starts (as `npm ci` would leave it). */
const CHECK_ADD = `#!/bin/sh\necho ${DEP_MARKER}\nexec node test.js\n`;

const WRONG = `printf 'module.exports = (a, b) => a - b;\\n' > add.js`;
const RIGHT = `printf 'module.exports = (a, b) => a + b;\\n' > add.js`;
/** Every agent run first saves its prompt (round n → .agent-notes/prompt-n.txt). */
const SAVE_PROMPT = `mkdir -p .agent-notes; n=$(ls .agent-notes | grep -c '^prompt-' || true); cat > ".agent-notes/prompt-$((n + 1)).txt"`;

/** A repository like a Node project after `npm ci`: node_modules ignored and installed, add.js correct. */
function nodeProject(): string {
  const ws = makeWorkspace({
    ".gitignore": "node_modules/\n.agent-notes/\n",
    "package.json": PACKAGE_JSON,
    "add.js": "module.exports = (a, b) => a + b;\n",
    "test.js": TEST_JS,
  });
  mkdirSync(path.join(ws, "node_modules/.bin"), { recursive: true });
  writeFileSync(path.join(ws, "node_modules/.bin/check-add"), CHECK_ADD);
  chmodSync(path.join(ws, "node_modules/.bin/check-add"), 0o755);
  return ws;
}

/**
 * The agent's script, as the command's program: the sandbox shows that one file (read-only) wherever it
 * is, while it hides /tmp and may hide the checkout too (a CI clone under /tmp).
 */
function agentCommand(body: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "clean-copy-agent-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "agent.sh");
  writeFileSync(file, `#!/bin/bash\nset -e\n${SAVE_PROMPT}\n${body}\necho done\n`);
  chmodSync(file, 0o755);
  return file;
}

const run = (ws: string, agent: string, extra: Record<string, string> = {}, runnerTemp?: string) =>
  runWithVerify(
    ws,
    { agent: "command", "agent-command": agent, prompt: "Change add.js.", network: "none", "verify-command": "npm test", "max-fix-rounds": "1", ...extra },
    {},
    undefined,
    runnerTemp,
  );
/** A shim over the ignored dependency that passes whatever add.js does. */
const SHIM = `printf '#!/bin/sh\\necho all tests passed\\nexit 0\\n' > node_modules/.bin/check-add`;

const prompts = (ws: string) =>
  readdirSync(path.join(ws, ".agent-notes"))
    .filter((f) => f.startsWith("prompt-"))
    .sort()
    .map((f) => readFileSync(path.join(ws, ".agent-notes", f), "utf8"));

describe("verify-command on a clean copy: what the patch does not show does not count", () => {
  it("HOME/.npmrc script-shell=/bin/true: the check still runs the real test, fails, verified=failed; the fix round says where the check runs", async () => {
    const ws = nodeProject();
    const r = await run(ws, agentCommand(`${WRONG}\nprintf 'script-shell=/bin/true\\n' > "$HOME/.npmrc"`));
    expect(r.outputs.verified, r.log).toBe("failed");
    expect(r.outputs.conclusion).toBe("failure");
    expect(r.exitCode).not.toBe(0);
    // Two checks, both the real test failing (exit 1 from node test.js, not /bin/true's 0).
    expect(r.result.verify!.runs.map((v) => [v.run, v.passed, v.exitCode])).toEqual([
      [1, false, 1],
      [2, false, 1],
    ]);
    const log = readFileSync(path.join(r.resultsDir, "verify/verify-1.log"), "utf8");
    expect(log).toContain(`${MARKER}: add(2, 3) should be 5, got -1`);
    expect(log).toContain(DEP_MARKER);
    // The patch is add.js only: the weakening never shows in it, and is not delivered.
    expect(r.result.diff.changedFiles).toEqual(["add.js"]);
    // The fix round was told the failure and why its HOME does not count.
    const [, fix] = prompts(ws);
    expect(fix).toContain(MARKER);
    expect(fix).toMatch(/clean copy.*fresh empty HOME/s);
    expect(r.log).toMatch(/Runs on a clean copy: the base commit with the patch \(1 file\(s\)\), 1 ignored path\(s\) as they were before the agent started, a fresh HOME/);
  }, 300_000);

  it("a shim over the ignored node_modules/.bin/check-add: the check uses the dependency as installed before the agent ran, fails, verified=failed", async () => {
    const ws = nodeProject();
    const shim = `printf '#!/bin/sh\\necho all tests passed\\nexit 0\\n' > node_modules/.bin/check-add`;
    const r = await run(ws, agentCommand(`${WRONG}\n${shim}`));
    expect(r.outputs.verified, r.log).toBe("failed");
    expect(r.result.verify!.runs.map((v) => v.exitCode)).toEqual([1, 1]);
    const log = readFileSync(path.join(r.resultsDir, "verify/verify-2.log"), "utf8");
    expect(log).toContain(DEP_MARKER);
    expect(log).toContain(MARKER);
    expect(log).not.toContain("all tests passed");
    expect(r.result.diff.changedFiles).toEqual(["add.js"]);
    // The agent's workspace still holds its shim: the copy was made from the snapshot, which the agent could not reach.
    expect(readFileSync(path.join(ws, "node_modules/.bin/check-add"), "utf8")).toContain("all tests passed");
    expect(prompts(ws)[1]).toContain("ignored files (such as installed dependencies) as they were before you started");
  }, 300_000);

  it("a legitimate fix in the fix round passes, with the dependency installed before the agent ran", async () => {
    const ws = nodeProject();
    // Round 0 writes the wrong add.js; the fix round (its prompt names the failure) writes the right one.
    const agent = agentCommand(`if grep -q ${MARKER} ".agent-notes/prompt-$((n + 1)).txt"; then ${RIGHT}; else ${WRONG}; fi`);
    const r = await run(ws, agent);
    expect(r.outputs.verified, r.log).toBe("passed");
    expect(r.exitCode).toBe(0);
    expect(r.result.verify!.runs.map((v) => [v.run, v.passed, v.exitCode])).toEqual([
      [1, false, 1],
      [2, true, 0],
    ]);
    const log = readFileSync(path.join(r.resultsDir, "verify/verify-2.log"), "utf8");
    expect(log).toContain(DEP_MARKER);
    expect(log).toContain("all 1 tests passed");
    expect(r.result.diff.changedFiles).toEqual([]);
    expect(readFileSync(path.join(ws, "add.js"), "utf8")).toBe("module.exports = (a, b) => a + b;\n");
  }, 300_000);

  it("attempts: 2: each attempt's check runs on its own clean copy; both shims and both HOMEs count for nothing, verified=failed", async () => {
    const ws = nodeProject();
    const shim = `printf '#!/bin/sh\\necho all tests passed\\nexit 0\\n' > node_modules/.bin/check-add`;
    const r = await run(ws, agentCommand(`${WRONG}\n${shim}\nprintf 'script-shell=/bin/true\\n' > "$HOME/.npmrc"`), { attempts: "2", "max-fix-rounds": "0" });
    expect(r.outputs.verified, r.log).toBe("failed");
    expect(r.result.attempts!.map((a) => [a.attempt, a.verified])).toEqual([
      [1, "failed"],
      [2, "failed"],
    ]);
    for (const n of [1, 2]) {
      const log = readFileSync(path.join(r.resultsDir, `attempt-${n}`, "verify/verify-1.log"), "utf8");
      expect(log).toContain(DEP_MARKER);
      expect(log).toContain(MARKER);
    }
  }, 300_000);

  describe("a second agent step of the same job (one RUNNER_TEMP, one workspace)", () => {
    it("step 1's agent plants a shim in the ignored node_modules/.bin: step 2's check uses the ignored files kept before step 1's agent, verified=failed", async () => {
      const ws = nodeProject();
      // Step 1: add.js stays right, the shim is planted (its check passes on the real dependency).
      const first = await run(ws, agentCommand(SHIM));
      expect(first.outputs.verified, first.log).toBe("passed");
      expect(readFileSync(path.join(ws, "node_modules/.bin/check-add"), "utf8")).toContain("all tests passed");
      // Step 2 breaks add.js: the workspace's shim would pass it.
      const second = await run(ws, agentCommand(WRONG), { "max-fix-rounds": "0" }, first.runnerTemp);
      expect(second.log).toContain("An agent of this job already ran in this repository");
      expect(second.outputs.verified, second.log).toBe("failed");
      expect(second.result.verify!.runs.map((v) => [v.run, v.passed, v.exitCode])).toEqual([[1, false, 1]]);
      const log = readFileSync(path.join(second.resultsDir, "verify/verify-1.log"), "utf8");
      expect(log).toContain(DEP_MARKER);
      expect(log).toContain(MARKER);
      expect(log).not.toContain("all tests passed");
      expect(second.result.diff.changedFiles).toEqual(["add.js"]);
      expect(second.log).toMatch(/1 ignored path\(s\) as they were before this job's first agent started/);
    }, 300_000);

    it("step 1's agent weakens the tracked test.js: step 2's check runs the base commit's test.js (the patch never carries it), verified=failed", async () => {
      const ws = nodeProject();
      const first = await run(ws, agentCommand(`printf 'console.log("all 1 tests passed");\\n' > test.js`));
      expect(first.outputs.verified, first.log).toBe("passed");
      const second = await run(ws, agentCommand(WRONG), { "max-fix-rounds": "0" }, first.runnerTemp);
      expect(second.outputs.verified, second.log).toBe("failed");
      expect(readFileSync(path.join(second.resultsDir, "verify/verify-1.log"), "utf8")).toContain(MARKER);
      // test.js is left out of step 2's patch: what was checked is what is delivered.
      expect(second.result.diff.changedFiles).toEqual(["add.js"]);
      expect(second.outputs["excluded-files"]).toContain("test.js");
      expect(second.log).toMatch(/1 path\(s\) changed before this run as the base commit has them/);
    }, 300_000);

    it("step 1 had no verify-command (nothing kept): step 2's check gets no ignored files, says so, and the shim does not pass it", async () => {
      const ws = nodeProject();
      const first = await run(ws, agentCommand(SHIM), { "verify-command": "", "max-fix-rounds": "" });
      expect(first.result.verify, first.log).toBeUndefined();
      const second = await run(ws, agentCommand(WRONG), { "max-fix-rounds": "0" }, first.runnerTemp);
      expect(second.outputs.verified, second.log).toBe("failed");
      expect(second.log).toMatch(/no ignored files \(such as installed dependencies\) were kept from before it/);
      expect(second.log).toMatch(/no ignored files \(none were kept before this job's first agent started\)/);
      expect(readFileSync(path.join(second.resultsDir, "verify/verify-1.log"), "utf8")).not.toContain("all tests passed");
    }, 300_000);
  });
});
