/**
 * What the run reports about `verify-command`: the output `verified`, the job
 * summary's Verify row and section, and the final comment's Verify line with
 * the checks folded.
 */
import { describe, expect, it } from "vitest";
import { finalBody, stickyMarker } from "../../src/publish/comment.js";
import { resultOutputs } from "../../src/publish/outputs.js";
import { summaryMarkdown } from "../../src/publish/summary.js";
import type { RunResult } from "../../src/result.js";
import { runResult } from "../support/run-result.js";

function result(over: Partial<RunResult> = {}): RunResult {
  return runResult({
    agentName: "claude",
    agentBackend: "claude",
    sandboxBackend: "bwrap",
    output: "Fixed add().",
    eventCount: 3,
    toolCalls: 2,
    numTurns: 2,
    usage: { inputTokens: 400, outputTokens: 80, cachedTokens: 160, requests: 4 },
    durationMs: 9_000,
    diff: { baseCommit: "b", baseTree: "t", patchPath: "/r/patch.diff", changedFiles: ["add.js"], agentCommits: [] },
    ...over,
  });
}

const checked = (passedLast: boolean): Partial<RunResult> => ({
  verified: passedLast ? "passed" : "failed",
  verify: {
    command: ["npm", "test"],
    maxFixRounds: 2,
    fixRounds: 1,
    runs: [
      { run: 1, passed: false, exitCode: 1, timedOut: false, durationMs: 1200, outputBytes: 2048, log: "verify/verify-1.log" },
      { run: 2, passed: passedLast, exitCode: passedLast ? 0 : 1, timedOut: false, durationMs: 900, outputBytes: 300, log: "verify/verify-2.log" },
    ],
  },
});

describe("verify in the run's report", () => {
  it("output verified: the verdict, not-run without a check (and for results of older versions)", () => {
    expect(resultOutputs(result(checked(true))).verified).toBe("passed");
    expect(resultOutputs(result(checked(false))).verified).toBe("failed");
    expect(resultOutputs(result({ verified: "not-run" })).verified).toBe("not-run");
    expect(resultOutputs(result()).verified).toBe("not-run");
  });

  it("job summary: a Verify row and a section with one row per check", () => {
    const md = summaryMarkdown(result(checked(true)));
    expect(md).toContain("| Verify | ✅ passed — ` npm test `, 2 checks, 1 fix round of 2 |");
    expect(md).toContain("### Verify");
    expect(md).toContain("| 1 | ❌ failed | 1 | 1.2 s | 2,048 B | ` verify/verify-1.log ` |");
    expect(md).toContain("| 2 | ✅ passed | 0 | 0.9 s | 300 B | ` verify/verify-2.log ` |");
    expect(summaryMarkdown(result())).not.toContain("Verify");
  });

  it("final comment: the Verify line and the checks folded; nothing without a check", () => {
    const body = finalBody({ marker: stickyMarker("k"), result: result({ ...checked(false), conclusion: "failure", reason: "verify-command `npm test` still fails" }), links: {} });
    expect(body).toContain("**Verify:** ❌ failed — ` npm test `, 2 checks, 1 fix round of 2");
    expect(body).toContain("<details><summary>Checks (2)</summary>");
    expect(body).toContain("| 2 | ❌ failed | 1 |");
    expect(finalBody({ marker: stickyMarker("k"), result: result(), links: {} })).not.toContain("Verify");
  });
});
