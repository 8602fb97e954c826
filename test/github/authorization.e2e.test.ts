/**
 * Issue #5 acceptance, who may trigger: write access or an explicit listing.
 * Everyone else gets a neutral skip — exit 0, no comment, no reaction, no
 * agent — so a stranger cannot make a repository's checks go red.
 */
import { afterEach, describe, expect, it } from "vitest";
import { scenario, type Scenario } from "./scenario.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

async function expectNeutralSkip(sc: Scenario, inputs: Record<string, string> = {}) {
  const r = await sc.run(inputs);
  expect(r.exitCode).toBe(0);
  expect(r.outputs.conclusion).toBe("skipped");
  expect(r.rawStdout).not.toMatch(/::(error|warning)::/);
  expect(sc.agentRuns()).toBe(0);
  // Nothing written to GitHub: no comment, no reaction.
  expect(sc.gh.writes()).toEqual([]);
  expect(sc.gh.reactions()).toEqual([]);
  return r;
}

describe("who may trigger", () => {
  it("a non-collaborator's @agent comment is skipped: no comment, no reaction, exit 0", async () => {
    s = await scenario({ fixture: "issue_comment.issue", tweaks: { author: "mallory" }, collaborators: { alice: "write" } });
    const r = await expectNeutralSkip(s);
    expect(r.log).toContain("@mallory has 'read' permission on the repository (write, maintain or admin needed)");
    expect(s.gh.issueComments(7)).toHaveLength(1); // only the triggering comment
  });

  it("triage permission is not enough; maintain and admin are", async () => {
    s = await scenario({ fixture: "issue_comment.issue", tweaks: { author: "tina" }, collaborators: { tina: "triage", mia: "maintain" } });
    await expectNeutralSkip(s);
    await s.close();

    s = await scenario({ fixture: "issue_comment.issue", tweaks: { author: "mia" }, collaborators: { mia: "maintain" } });
    const r = await s.run({ deliver: "none" });
    expect(r.outputs.conclusion).toBe("success");
    expect(r.log).toContain("Triggered by @mia (maintain permission)");
  });

  it("allowed-users lets a listed user without write access trigger", async () => {
    s = await scenario({ fixture: "issue_comment.issue", tweaks: { author: "mallory" } });
    const r = await s.run({ deliver: "none", "allowed-users": "someone-else\nMallory" });
    expect(r.outputs.conclusion).toBe("success");
    expect(r.log).toContain("Triggered by @mallory (allowed-users)");
    expect(s.agentRuns()).toBe(1);
  });

  it("a bot is skipped even with write access, unless listed in allowed-bots", async () => {
    const bot = { fixture: "issue_comment.issue" as const, tweaks: { author: "renovate[bot]" }, collaborators: { "renovate[bot]": "admin" as const } };
    s = await scenario(bot);
    const r = await expectNeutralSkip(s);
    expect(r.log).toContain("@renovate[bot] is a bot and not listed in 'allowed-bots'");
    await s.close();

    s = await scenario(bot);
    const allowed = await s.run({ deliver: "none", "allowed-bots": "renovate" });
    expect(allowed.outputs.conclusion).toBe("success");
    expect(allowed.log).toContain("Triggered by @renovate[bot] (allowed-bots)");
  });

  it("a '[bot]' suffix grants nothing: a bot named like a collaborator is still a bot", async () => {
    s = await scenario({ fixture: "issue_comment.issue", tweaks: { author: "alice[bot]" }, collaborators: { alice: "admin" } });
    const r = await expectNeutralSkip(s, { "allowed-users": "alice" });
    expect(r.log).toContain("@alice[bot] is a bot and not listed in 'allowed-bots'");
  });

  it("an unknown user (permission API 404) is skipped", async () => {
    s = await scenario({ fixture: "issue_comment.issue", tweaks: { author: "ghost" }, collaborators: { ghost: null } });
    const r = await expectNeutralSkip(s);
    expect(r.log).toContain("@ghost has 'none' permission");
  });
});
