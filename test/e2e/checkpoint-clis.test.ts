/**
 * Issue #36, checkpoints with the real CLIs against the stub model, through
 * dist/ and the fake GitHub: the model has the agent write the first half,
 * then hangs (no bytes, no output, no file change). claude is cut by
 * `timeout-minutes`, codex by the stall watchdog (gemini and opencode are left
 * out: each start costs seconds of CPU here and adds nothing the two do not show); each ends `incomplete` with
 * the first half on the checkpoint ref, and `@agent continue` has the agent
 * write the second half and delivers one pull request with both halves on
 * the original base.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentBackendName } from "../../src/config/schema.js";
import { AGENT_PATH } from "../agents/helpers.js";
import { scenario } from "../github/scenario.js";
import { buildEvent, writeEvent } from "../support/events.js";
import type { CliName } from "../support/stub-model-clis.js";
import { shellStep } from "../support/stub-model-tools.js";
import { startStubModel } from "../support/stub-model.js";

const git = (dir: string, ...args: string[]) => execFileSync("git", ["-C", dir, ...args], { encoding: "utf8" }).trim();

const CASES: Array<{ cli: CliName & AgentBackendName; cut: Record<string, string>; cause: string; inputs: (url: string) => Record<string, string> }> = [
  {
    cli: "claude",
    cut: { "timeout-minutes": "0.4", "stall-minutes": "0" },
    cause: "time-limit",
    inputs: (url) => ({ agent: "claude", model: "claude-sonnet-4-5", "base-url": url, secrets: "ANTHROPIC_API_KEY=sk-ant-test-key-checkpoint-0123456789" }),
  },
  {
    cli: "codex",
    cut: { "timeout-minutes": "3", "stall-minutes": "0.15" },
    cause: "stalled",
    inputs: (url) => ({ agent: "codex", model: "gpt-5.5", "base-url": `${url}/v1`, secrets: "OPENAI_API_KEY=sk-openai-test-key-checkpoint-0123" }),
  },
];

describe.each(CASES)("checkpoint with $cli", ({ cli, cut, cause, inputs }) => {
  it(`cut (${cause}) → incomplete with the first half on the checkpoint ref; @agent continue delivers both halves as one PR`, async () => {
    const stub = await startStubModel([shellStep(cli, "echo one > part1.txt"), { hang: true }, shellStep(cli, "echo two > part2.txt"), { text: "Both parts written." }]);
    const s = await scenario({ fixture: "issue_comment.issue", tweaks: { body: "@agent write the two parts", author: "alice" } });
    try {
      const issue = s.ev.payload["issue"].number as number;
      const ref = `refs/agent-runner/checkpoints/${issue}`;
      const base = git(s.repo.origin, "rev-parse", "main");
      const common = { ...inputs(stub.url), "agent-command": "", "agent-version": "preinstalled" };
      const env = { PATH: AGENT_PATH, HOME: process.env.HOME ?? os.tmpdir(), LANG: "C.UTF-8" };
      const first = await s.run({ ...common, ...cut }, env);
      expect(first.outputs.conclusion, first.log.slice(-3000)).toBe("incomplete");
      const result = JSON.parse(readFileSync(path.join(path.dirname(first.outputs["patch-path"]!), "result.json"), "utf8"));
      expect(result.checkpoint.cause).toBe(cause);
      if (cause === "stalled") expect(Number(first.outputs["duration-ms"])).toBeLessThan(Number(cut["stall-minutes"]) * 60_000 + 30_000 + 20_000);
      expect(JSON.parse(first.outputs["changed-files"]!)).toEqual(["part1.txt"]);
      const cp = git(s.repo.origin, "rev-parse", ref);
      expect(git(s.repo.origin, "rev-parse", `${cp}^1`)).toBe(base);
      expect(git(s.repo.origin, "show", `${cp}:part1.txt`)).toBe("one");

      const ev2 = buildEvent("issue_comment.issue", { body: "@agent continue", author: "alice", number: issue });
      s.gh.seedEvent(ev2);
      const { env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "event-continue-")), ev2);
      const second = await s.run({ ...common, "timeout-minutes": "3" }, { ...env, ...eventEnv });
      expect(second.outputs.conclusion, second.log.slice(-3000)).toBe("success");
      const pulls = s.gh.pulls();
      expect(pulls).toHaveLength(1);
      const head = git(s.repo.origin, "rev-parse", `refs/heads/${pulls[0]!.head.ref}`);
      expect(git(s.repo.origin, "rev-parse", `${head}^1`)).toBe(base);
      expect(git(s.repo.origin, "diff", "--name-only", base, head).split("\n").sort()).toEqual(["part1.txt", "part2.txt"]);
      // The continued agent was told it continues.
      const continued = stub.modelRequests().filter((r) => (r.index ?? 0) >= 2);
      expect(JSON.stringify(continued[0]?.body ?? "")).toContain("continues unfinished work");
    } finally {
      await s.close();
      await stub.close();
    }
  });
});
