/** A RunResult for the tests of what reads one (verdicts, reports, comments), without a run. */
import type { RunResult } from "../../src/result.js";

/** A command agent's successful run outside a sandbox: one turn, one changed file (a.txt), no cost; `over` on top. */
export function runResult(over: Partial<RunResult> = {}): RunResult {
  return {
    conclusion: "success",
    agentName: "command",
    agentBackend: "command",
    sandboxBackend: "none",
    command: [],
    returncode: 0,
    output: "Done.",
    stdoutPath: "",
    stderrPath: "",
    tracePath: "",
    eventCount: 1,
    toolCalls: 0,
    numTurns: 1,
    permissionDenials: [],
    networkBlocked: 0,
    usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 },
    startedAt: "",
    durationMs: 1000,
    diff: { baseCommit: "b", baseTree: "t", patchPath: "/r/patch.diff", changedFiles: ["a.txt"], agentCommits: [] },
    artifacts: [],
    metadata: {},
    ...over,
  };
}
