/**
 * Issue #31, GitHub's defaults: the quickstart's delivery (an `@agent`
 * comment on an issue, `deliver: auto` → a pull request) on repositories
 * whose settings make GitHub refuse part of it, through dist/ against the
 * fake GitHub answering as GitHub does (fake-github-policy.ts). Each refusal
 * names its setting; the headline, the job summary and the `conclusion`
 * output say what happened.
 */
import { afterEach, describe, expect, it } from "vitest";
import { listBranches, readBranchFile, revParse } from "../support/git-fixtures.js";
import { scenario, type Scenario } from "./scenario.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const BRANCH = "agent/7-typo-in-readme";
const FIX_TYPO = "sed -i 's/Teh/The/' README.md\necho 'Fixed the typo.'";
const ADD_WORKFLOW = "mkdir -p .github/workflows\necho 'on: push' > .github/workflows/ci.yml\necho 'Added CI.'";
const SETTING = "Settings → Actions → General → Workflow permissions → Allow GitHub Actions to create and approve pull requests";

const botComment = (sc: Scenario) => {
  const mine = sc.gh.issueComments(7).filter((c) => c.user === "github-actions[bot]");
  expect(mine).toHaveLength(1);
  return mine[0]!.body;
};
const headlineOf = (body: string) => body.split("\n").find((l) => l.startsWith("### "));

describe("GitHub refuses to open the pull request: the branch is still delivered", () => {
  it("'Allow GitHub Actions to create and approve pull requests' off (GitHub's default): branch pushed, compare link and the setting named, ⚠️, conclusion partial, the step passes", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX_TYPO });
    await s.gh.setPolicy({ actionsCreatePullRequests: false });
    const r = await s.run();
    expect(r.exitCode, r.log).toBe(0);

    // What GitHub answered: one refused POST /pulls, 403 with its message.
    const posts = s.gh.requestsTo("POST /repos/*/*/pulls");
    expect(posts).toHaveLength(1);
    expect(posts[0]!.status).toBe(403);
    expect(s.gh.pulls()).toEqual([]);

    // The branch is in origin with the change, and the outputs name it.
    expect(await readBranchFile(s.repo.origin, BRANCH, "README.md")).toContain("The demo project.");
    expect(await revParse(s.repo.origin, `refs/heads/${BRANCH}`)).toBe(r.outputs["commit-sha"]);
    expect(r.outputs.branch).toBe(BRANCH);
    expect(r.outputs["pull-request-url"]).toBeUndefined();
    expect(r.outputs.conclusion).toBe("partial");

    const body = botComment(s);
    expect(headlineOf(body)).toBe("### ⚠️ Agent Runner finished in part: the pull request was not opened");
    const compare = `${s.gh.serverUrl}/${s.ev.payload["repository"].full_name}/compare/main...${BRANCH}?expand=1`;
    expect(body).toContain(`[Open the pull request](${compare})`);
    expect(body).toContain(SETTING);
    expect(body).toContain("GitHub Actions is not permitted to create or approve pull requests");
    expect(body).not.toContain("✅");
    expect(body).not.toContain("Delivery failed");

    expect(r.summary).toMatch(/^## ⚠️ Agent Runner finished in part: the pull request was not opened$/m);
    expect(r.summary).toContain("| Conclusion | ⚠️ partial |");
    expect(r.summary).toContain(compare);
    expect(r.rawStdout).toMatch(/::warning::.*GitHub refused to open the pull request \(403/);
  });

  it("no 'pull-requests: write' on the token: branch pushed, the permission named, ⚠️, conclusion partial", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX_TYPO });
    await s.gh.setPolicy({ pullRequestsPermission: "none" });
    const r = await s.run();
    expect(r.exitCode, r.log).toBe(0);
    expect(s.gh.requestsTo("POST /repos/*/*/pulls")[0]!.status).toBe(403);
    expect(await revParse(s.repo.origin, `refs/heads/${BRANCH}`)).toBe(r.outputs["commit-sha"]);
    expect(r.outputs.conclusion).toBe("partial");
    const body = botComment(s);
    expect(headlineOf(body)).toMatch(/^### ⚠️ /);
    expect(body).toContain("Resource not accessible by integration");
    expect(body).toContain("`pull-requests: write`");
    expect(body).toContain(`/compare/main...${BRANCH}?expand=1`);
  });

  it("a 422 from POST /pulls: branch pushed, GitHub's reason and the compare link, ⚠️, conclusion partial", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX_TYPO });
    const reason = "Head sha can't be blank, Base sha can't be blank";
    s.gh.failNext("POST /repos/{owner}/{repo}/pulls", { status: 422, body: { message: "Validation Failed", errors: [{ resource: "PullRequest", code: "custom", message: reason }], status: "422" } });
    const r = await s.run();
    expect(r.exitCode, r.log).toBe(0);
    expect(await revParse(s.repo.origin, `refs/heads/${BRANCH}`)).toBe(r.outputs["commit-sha"]);
    expect(r.outputs.conclusion).toBe("partial");
    const body = botComment(s);
    expect(headlineOf(body)).toMatch(/^### ⚠️ /);
    expect(body).toContain(`GitHub refused to open the pull request (422): Validation Failed: ${reason}`);
    expect(body).toContain(`/compare/main...${BRANCH}?expand=1`);
  });
});

describe("GitHub refuses the push: nothing delivered, ❌, the reason and the setting named", () => {
  for (const method of ["api", "git"] as const) {
    it(`a ruleset restricting branch creation (commit-method: ${method}): GH013 explained, ❌ headline, conclusion failure, the step fails`, async () => {
      s = await scenario({ fixture: "issue_comment.issue", agent: FIX_TYPO });
      await s.gh.setPolicy({ restrictBranchCreation: true });
      const before = await listBranches(s.repo.origin);
      const r = await s.run({ "commit-method": method });
      expect(r.exitCode).toBe(1);
      expect(await listBranches(s.repo.origin)).toEqual(before);
      expect(s.gh.pulls()).toEqual([]);
      expect(s.gh.requestsTo("POST /repos/*/*/pulls")).toEqual([]);
      expect(r.outputs.conclusion).toBe("failure");

      const body = botComment(s);
      expect(headlineOf(body)).toBe("### ❌ Agent Runner: delivery failed");
      expect(body).not.toContain("✅");
      expect(body).toMatch(/Repository rule violations found/);
      expect(body).toContain("Settings → Rules → Rulesets");
      expect(body).toContain("` agent/** `"); // through codeName (src/publish/markdown-code.ts), which pads a name inside its backticks
      expect(body).toContain("+The demo project.");
      expect(r.summary).toMatch(/^## ❌ Agent Runner: delivery failed$/m);
      expect(r.summary).toContain("| Conclusion | ❌ failure |");
      expect(r.rawStdout).toMatch(/::error::.*Pushing branch .agent\/7-typo-in-readme. failed:.*Repository rule violations found/);
    });

    it(`a workflow-file change with a token lacking 'workflows' (commit-method: ${method}): refused by GitHub, explained, ❌, conclusion failure`, async () => {
      s = await scenario({ fixture: "issue_comment.issue", agent: ADD_WORKFLOW });
      await s.gh.setPolicy({ workflowsPermission: false });
      const before = await listBranches(s.repo.origin);
      const r = await s.run({ "allow-workflow-changes": "true", "commit-method": method });
      expect(r.exitCode).toBe(1);
      expect(await listBranches(s.repo.origin)).toEqual(before);
      expect(s.gh.pulls()).toEqual([]);
      expect(r.outputs.conclusion).toBe("failure");

      const body = botComment(s);
      expect(headlineOf(body)).toBe("### ❌ Agent Runner: delivery failed");
      expect(body).toContain("refusing to allow a GitHub App to create or update workflow");
      expect(body).toContain("`.github/workflows/ci.yml`");
      expect(body).toContain("`github-token`");
      expect(body).toContain("Workflows: write");
      expect(body).toContain("+on: push");
    });
  }
});

describe("the same repository with GitHub's settings allowing it", () => {
  it("✅ only when everything asked was done: the pull request opened, conclusion success", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX_TYPO });
    const r = await s.run();
    expect(r.exitCode, r.log).toBe(0);
    expect(s.gh.pulls()).toHaveLength(1);
    expect(r.outputs.conclusion).toBe("success");
    expect(headlineOf(botComment(s))).toBe("### ✅ Agent Runner finished");
    expect(r.summary).toMatch(/^## ✅ Agent Runner finished$/m);
  });
});
