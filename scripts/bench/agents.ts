/**
 * Per-backend numbers for `npm run bench`: each real CLI, run through
 * dist/main.js against the stub model (write a file, run a command, answer),
 * timed from process start to its first model request and to the end.
 * Sandbox none and bwrap, so the sandbox's share is visible too.
 */
import type { AgentBackendName } from "../../src/config/schema.js";
import { makeWorkspace, runAgentAction } from "../../test/agents/helpers.js";
import { startStubModel } from "../../test/support/stub-model.js";
import { shellStep, writeFileStep } from "../../test/support/stub-model-tools.js";

const RUNS = Number(process.env.BENCH_AGENT_RUNS ?? 3);

/** How each backend is pointed at the stub: key name, base URL form and a model it knows. */
const SETUP: Record<Exclude<AgentBackendName, "command">, { key: string; v1: boolean; model: string }> = {
  claude: { key: "ANTHROPIC_API_KEY", v1: false, model: "claude-sonnet-4-5" },
  codex: { key: "OPENAI_API_KEY", v1: true, model: "gpt-5.5" },
  gemini: { key: "GEMINI_API_KEY", v1: false, model: "gemini-2.5-flash" },
  opencode: { key: "OPENAI_API_KEY", v1: true, model: "gpt-5.5" },
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const rows: Record<string, string | number>[] = [];
for (const [cli, setup] of Object.entries(SETUP) as [keyof typeof SETUP, (typeof SETUP)[keyof typeof SETUP]][]) {
  for (const sandbox of ["none", "bwrap"]) {
    const first: number[] = [];
    const total: number[] = [];
    let conclusion = "";
    for (let i = 0; i < RUNS; i++) {
      const workspace = makeWorkspace();
      const stub = await startStubModel([writeFileStep(cli, `${workspace}/hello.txt`, "hi\n"), shellStep(cli, "echo hi > shell.txt"), { text: "all done" }]);
      try {
        const run = await runAgentAction({
          workspace,
          stub,
          inputs: {
            agent: cli,
            prompt: "write hello.txt, then run a command",
            model: setup.model,
            "base-url": setup.v1 ? `${stub.url}/v1` : stub.url,
            secrets: `${setup.key}=bench-key`,
            sandbox,
          },
          timeoutMs: 180_000,
        });
        conclusion = run.result.conclusion;
        if (run.firstModelRequestMs !== undefined) first.push(run.firstModelRequestMs);
        total.push(run.totalMs);
      } catch (e) {
        // One backend failing must not hide the others' numbers.
        conclusion = `error: ${String(e).split("\n").find((l) => l.includes("::error::")) ?? String(e).slice(0, 120)}`;
      } finally {
        await stub.close();
      }
    }
    rows.push({
      agent: cli,
      sandbox,
      conclusion,
      "start→1st model request ms": median(first),
      "total ms": median(total),
    });
  }
}
console.log(`\nPer-backend overhead against the stub model (median of ${RUNS} runs; write + shell + answer)`);
console.table(rows);
