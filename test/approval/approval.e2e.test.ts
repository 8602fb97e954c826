/**
 * Issue #34 acceptance, through dist/ against the fake GitHub and its
 * artifact service: `@agent` with `approval: required` stages (one comment,
 * nothing else written); an allowed `/approve <digest>` publishes exactly the
 * staged bytes; every refusal writes a reply naming the reason and nothing
 * else. One staged run is shared by the refusal cases.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { buildEvent, FIXTURE_REPO, writeEvent, type EventTweaks } from "../support/events.js";
import { listBranches, readBranchFile } from "../support/git-fixtures.js";
import { scenario, type Scenario } from "../github/scenario.js";

const STAGE_RUN = 4242;
const AGENT = [
  "sed -i 's/Teh/The/' README.md",
  'echo \'{"type":"add_labels","labels":["bug"]}\' >> "$AGENT_SAFE_OUTPUTS"',
  'echo "Fixed the typo."',
].join("\n");
const INPUTS = { approval: "required", "safe-outputs": JSON.stringify({ "add-labels": { allowed: ["bug"] } }) };

let results: FakeActionsResults;
let s: Scenario;
let digest = "";
let stagingId = 0;
beforeAll(async () => {
  results = await startFakeActionsResults({ repository: FIXTURE_REPO });
  s = await scenario({ fixture: "issue_comment.issue", agent: AGENT, results, collaborators: { alice: "write", bob: "write", carol: "read" } });
});
afterAll(async () => {
  await s?.close();
  await results?.close();
});

const bot = (n = 7) => s.gh.issueComments(n).filter((c) => c.user === "github-actions[bot]");

/** A later workflow run on an `issue_comment` event: `body` from `author`. */
async function comment(runId: number, tweaks: EventTweaks, extraEnv: Record<string, string> = {}) {
  const ev = buildEvent("issue_comment.issue", { ...tweaks, mutate: (p) => (p["comment"].id = 2400000200 + runId) });
  const dir = mkdtempSync(path.join(os.tmpdir(), "approve-event-"));
  const { env } = await writeEvent(dir, ev);
  return s.run(INPUTS, { ...env, ...results.runtimeEnv({ runId, github: s.gh, repository: FIXTURE_REPO }), GITHUB_RUN_ID: String(runId), ...extraEnv });
}

describe("approval: required", () => {
  it("@agent on an issue stages: one comment with the digest; no branch, no pull request, no label", async () => {
    const r = await s.run(INPUTS, results.runtimeEnv({ runId: STAGE_RUN, github: s.gh, repository: FIXTURE_REPO }));
    expect(r.exitCode, r.log + r.stderr).toBe(0);
    expect(r.outputs["approval-state"]).toBe("staged");
    digest = r.outputs["approval-digest"]!;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    const comments = bot();
    expect(comments).toHaveLength(1);
    stagingId = comments[0]!.id;
    expect(comments[0]!.body).toContain(`/approve ${digest.slice(0, 12)}`);
    expect(comments[0]!.body).toContain("+The demo project.");
    expect(comments[0]!.body).toContain("add_labels");
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);
    expect(s.gh.pulls()).toEqual([]);
    expect(s.gh.repo().issues.get(7)!.labels).toEqual([]);
  });
});
