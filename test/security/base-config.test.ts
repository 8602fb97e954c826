/**
 * Attack table, item 3: on pull request events the settings come from the
 * base branch, and the PR cannot steer where they are read from. A PR whose
 * config file moves `working-directory` out of the repository (so the old
 * lookup found no base commit and fell back to the PR's own settings) gets
 * the base's settings; when the base cannot be read at all, the run is
 * skipped with a reason instead of running with the PR's settings.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeEvent } from "../support/events.js";
import { scenario, type Scenario } from "../github/scenario.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("the base config lookup cannot be steered by the pull request", () => {
  it("a fork PR whose config sets working-directory outside the repository and adds its author to allowed-users: base settings hold, the run is skipped", async () => {
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), "not-a-repo-"));
    s = await scenario({
      fixture: "issue_comment.pr-fork",
      tweaks: { author: "mallory" },
      collaborators: { alice: "write", mallory: "read" },
      forkHead: { ".github/agent-runner.yml": `allowed-users: mallory\nworking-directory: ${elsewhere}\n` },
    });
    const r = await s.run();
    expect(r.exitCode).toBe(0);
    expect(r.outputs.conclusion).toBe("skipped");
    expect(r.log).toContain("@mallory has 'read' permission");
    expect(r.log).not.toContain("Triggered by @mallory");
    expect(s.agentRuns()).toBe(0);
  });

  it("the base commit cannot be read or fetched: skipped with the reason, nothing runs with the PR's settings", async () => {
    s = await scenario({
      fixture: "pull_request.opened-fork",
      tweaks: { author: "alice" },
      forkHead: { ".github/agent-runner.yml": "prompt: from the pull request\n", "FORK.md": "x\n" },
    });
    // The payload names a base that exists nowhere (a force-pushed, deleted base branch).
    const ev = structuredClone(s.ev);
    ev.payload["pull_request"]["base"]["sha"] = "0123456789abcdef0123456789abcdef01234567";
    ev.payload["pull_request"]["base"]["ref"] = "gone";
    const { env } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "event-")), ev);
    const r = await s.run({}, { GITHUB_EVENT_PATH: env.GITHUB_EVENT_PATH! });
    expect(r.exitCode).toBe(0);
    expect(r.outputs.conclusion).toBe("skipped");
    expect(r.log).toMatch(/Agent Runner skipped: the settings for pull request #\d+ come from its base branch gone, and its base commit 0123456789abcdef0123456789abcdef01234567 could not be found or fetched/);
    expect(r.log).not.toContain("using the workspace's settings");
    expect(s.agentRuns()).toBe(0);
    expect(s.gh.issueComments(ev.payload["pull_request"]["number"]).length).toBe(0);
  });

  it("a PR config that changes working-directory inside the repository does not move the lookup: the base file at the step's location is used", async () => {
    s = await scenario({
      fixture: "issue_comment.pr-fork",
      tweaks: { author: "mallory" },
      collaborators: { alice: "write", mallory: "read" },
      files: { "README.md": "# Demo\n", "sub/README.md": "sub\n" },
      forkHead: {
        ".github/agent-runner.yml": "working-directory: sub\n",
        "sub/.github/agent-runner.yml": "allowed-users: mallory\n",
      },
    });
    const r = await s.run();
    expect(r.outputs.conclusion).toBe("skipped");
    expect(r.log).toContain("@mallory has 'read' permission");
    expect(s.agentRuns()).toBe(0);
  });
});
