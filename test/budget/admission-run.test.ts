/**
 * Budget admission as the runner runs it (dist/, bwrap): a `codex` that is
 * really a bash script fires 30 model requests at once at the gateway it was
 * given, under `max-tokens`. The provider (billing-upstream.ts, which honours
 * the output limit) bills no more than the limit, the requests that do not
 * fit get the provider-shaped 400, and the run ends `failure` with
 * `Budget exceeded:` and `budget-exceeded=true`, not `success`.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { attackReport } from "../support/attack-report.js";
import { runActionSteps } from "../support/harness.js";
import { makeWorkspace } from "../agents/helpers.js";
import { startBillingUpstream } from "./billing-upstream.js";

function fakeCodex(script: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "budget-run-cli-"));
  mkdirSync(path.join(root, "bin"));
  const file = path.join(root, "bin", "codex");
  writeFileSync(file, `#!/bin/bash\n${script}\necho "REPORT done=1"\n`);
  chmodSync(file, 0o755);
  return path.join(root, "bin");
}

describe("30 parallel model requests under max-tokens, through dist/", () => {
  it("the provider bills no more than max-tokens, later requests are refused, the run ends failure with Budget exceeded", async () => {
    // Every answer takes 8 s, so all 30 are in flight before the first is settled (the old gateway admitted them all and ended `success`).
    const up = await startBillingUpstream("openai", 6000, 8000);
    try {
      const body = JSON.stringify({ model: "gpt-5.5", input: "Refactor the parser. ".repeat(100) });
      const bin = fakeCodex(`
B=$(grep -o 'http://127.0.0.1:[0-9]*/v1' "$CODEX_HOME/config.toml" | head -1)
for i in $(seq 1 30); do
  curl -sS --noproxy '*' -o /dev/null -w '%{http_code}\\n' -m 20 -H "Authorization: Bearer $OPENAI_API_KEY" -H 'content-type: application/json' -d '${body}' "$B/responses" > "$TMPDIR/status.$i" &
done
wait
echo "REPORT ok=$(cat "$TMPDIR"/status.* | grep -c '^200$')"
echo "REPORT refused=$(cat "$TMPDIR"/status.* | grep -c '^400$')"
`);
      const { main } = await runActionSteps({
        workspace: makeWorkspace(),
        inputs: {
          agent: "codex",
          "agent-version": "preinstalled",
          prompt: "spend",
          sandbox: "bwrap",
          comment: "none",
          "upload-artifacts": "false",
          "base-url": `${up.url}/v1`,
          secrets: "OPENAI_API_KEY=sk-real-model-key-0123456789abcdef",
          model: "gpt-5.5",
          "max-tokens": "40000",
        },
        env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin` },
      });
      const report = attackReport(main);
      expect(report.done, main.log).toBe("1");
      // The run does not end `success` with the budget spent past its limit.
      expect(main.outputs.conclusion).toBe("failure");
      expect(main.outputs["budget-exceeded"]).toBe("true");
      expect(Number(report.ok) + Number(report.refused)).toBe(30);
      expect(Number(report.refused)).toBeGreaterThanOrEqual(20);
      expect(up.billed).toHaveLength(Number(report.ok));
      // Input at 4 bytes per token is within the gateway's 3-byte estimate: the stated bound adds nothing.
      expect(up.total()).toBeLessThanOrEqual(40_000);
      expect(main.log).toMatch(/Budget exceeded: [\d,]+ tokens used .*max-tokens is 40,000/);
    } finally {
      await up.close();
    }
  });
});
