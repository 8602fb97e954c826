/**
 * `task: review` computes its diff with host git on the workspace's
 * repository before its agent starts. After an earlier agent step of the
 * same job that repository is the agent's to rewrite: here it planted a
 * textconv program (config + attributes) and pointed `commondir` at a copy
 * of its own. A review step after it must run no host git there: it is
 * refused before any git call, the program never runs, no second agent runs
 * and nothing is posted.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { scenario, type Scenario } from "../github/scenario.js";

const made: Scenario[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of made) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("task: review after an earlier agent step of the same job", () => {
  it("refuses to read the repository the first agent could rewrite: no host git on it, no textconv program, no second agent, no review", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "review-second-"));
    dirs.push(dir);
    const marker = path.join(dir, "textconv-ran");
    const first = String.raw`if [ ! -f "$CAPTURE/planted" ]; then
  touch "$CAPTURE/planted"
  printf '#!/bin/sh\necho ran >> "${marker}"\ncat "$1"\n' > "$CAPTURE/textconv.sh" && chmod +x "$CAPTURE/textconv.sh"
  printf '[diff "x"]\n\ttextconv = %s\n' "$CAPTURE/textconv.sh" >> .git/config
  mkdir -p .git/info && echo '* diff=x' >> .git/info/attributes
  mkdir -p "$CAPTURE/evil" && cp -r .git/. "$CAPTURE/evil/" && echo "$CAPTURE/evil" > .git/commondir
fi`;
    const s = await scenario({ fixture: "issue_comment.pr", tweaks: { body: "@agent review this" }, agent: first });
    made.push(s);
    const one = await s.run({ deliver: "none", comment: "none" });
    expect(one.outputs.conclusion, one.log).toBe("success");
    const before = s.gh.reviews().length;
    const two = await s.run({ task: "review", deliver: "none", comment: "none" }, {}, { runnerTemp: one.runnerTemp });
    expect(two.exitCode).toBe(1);
    expect(two.log).toMatch(/an agent already ran in .* earlier in this job/);
    expect(existsSync(marker), "the planted textconv program ran on the host").toBe(false);
    expect(s.agentRuns()).toBe(1);
    expect(s.gh.reviews()).toHaveLength(before);
  });
});
