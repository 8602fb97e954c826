/**
 * Issue #14, `phase: plan`: the items of a fan-out as JSON for
 * `strategy.matrix`, from a search query (the fake GitHub answers
 * GET /search/issues as GitHub does; its response type is GitHub's OpenAPI
 * `issue-search-result-item`), a list of numbers or a list of repositories.
 * Run through dist/main.js as the runner runs it.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errors } from "../artifacts/helpers.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { runStep, type StepResult } from "../support/harness.js";

const TOKEN = "ghs_fanOutPlanToken0123456789abcdefABCDEF";
const REPO = "octo-org/octo-repo";
let gh: FakeGitHub;
const ws = mkdtempSync(path.join(os.tmpdir(), "plan-ws-"));

beforeAll(async () => {
  gh = await startFakeGitHub({ token: TOKEN, repo: REPO });
  for (let n = 1; n <= 5; n++) gh.addIssue({ number: n, title: `Bug ${n}`, labels: ["needs-triage"] });
  gh.addIssue({ number: 6, title: "Triaged", labels: ["bug"] });
  gh.addIssue({ number: 7, title: "Closed one", labels: ["needs-triage"], state: "closed" });
  gh.addPull({ number: 8, title: "A PR", labels: ["needs-triage"], head: { ref: "feature" } });
  gh.addIssue({ repo: "octo-org/other", number: 3, title: "Elsewhere", labels: ["needs-triage"] });
  // Strangers' issues GitHub-wide, and an archive of the workflow's owner.
  gh.addIssue({ repo: "stranger/app", number: 11, title: "Not yours", labels: ["needs-triage"] });
  gh.addIssue({ repo: "Mallory/tool", number: 12, title: "Not yours either", labels: ["needs-triage"] });
  gh.addIssue({ repo: "octo-org/archive", number: 4, title: "Archived", labels: ["needs-triage"] });
});
afterAll(async () => {
  await gh?.close();
});

function plan(inputs: Record<string, string>): Promise<StepResult> {
  return runStep("main", {
    workspace: ws,
    githubToken: TOKEN,
    inputs: { agent: "command", phase: "plan", ...inputs },
    env: { GITHUB_API_URL: gh.url, GITHUB_SERVER_URL: gh.serverUrl, GITHUB_REPOSITORY: REPO, GITHUB_EVENT_NAME: "schedule" },
  });
}

const matrixOf = (step: StepResult) => JSON.parse(step.outputs.matrix ?? "null") as { include: Record<string, unknown>[] };

describe("phase: plan", () => {
  it("a query matching 5 issues with max-items 3: a matrix of 3, and the plan says 5 matched", async () => {
    gh.clearRequests();
    const step = await plan({ "items-query": "is:issue is:open label:needs-triage", "max-items": "3" });
    expect(errors(step), step.log + step.stderr).toEqual([]);
    expect(step.exitCode).toBe(0);
    const matrix = matrixOf(step);
    expect(matrix.include).toHaveLength(3);
    expect(step.outputs.count).toBe("3");
    expect(matrix.include.map((i) => i["item"])).toEqual([`${REPO}#5`, `${REPO}#4`, `${REPO}#3`]);
    expect(matrix.include[0]).toEqual({ item: `${REPO}#5`, key: "5", repository: REPO, "repository-owner": "octo-org", "repository-name": "octo-repo", "issue-number": 5 });
    expect(step.log).toContain(`Plan: 5 items matched the search 'is:issue is:open label:needs-triage repo:${REPO}'; kept the first 3 (max-items: 3).`);
    expect(step.summary).toContain("kept the first 3");
    // One search request (3 ≤ 100 per page), scoped to this repository, and nothing written.
    const searches = gh.requestsTo("GET /search/issues");
    expect(searches).toHaveLength(1);
    expect(gh.writes()).toEqual([]);
    expect(gh.unhandled).toEqual([]);
  });

  it("pages through more than 100 results and keeps max-items", async () => {
    for (let n = 100; n < 330; n++) gh.addIssue({ repo: "octo-org/big", number: n, title: `Many ${n}`, labels: ["chore"] });
    gh.clearRequests();
    const step = await plan({ "items-query": "repo:octo-org/big label:chore", "max-items": "150" });
    expect(errors(step), step.log).toEqual([]);
    expect(matrixOf(step).include).toHaveLength(150);
    expect(step.log).toContain("Plan: 230 items matched");
    expect(gh.requestsTo("GET /search/issues")).toHaveLength(2);
  });

  it("a query naming its own scope is left alone; other repositories' items get their own key", async () => {
    const step = await plan({ "items-query": "org:octo-org label:needs-triage is:issue is:open", "max-items": "20" });
    expect(errors(step), step.log).toEqual([]);
    const items = matrixOf(step).include;
    expect(items.map((i) => i["item"])).toContain("octo-org/other#3");
    expect(items.find((i) => i["item"] === "octo-org/other#3")).toMatchObject({ key: "octo-org-other-3", repository: "octo-org/other", "issue-number": 3 });
  });

  it("a query whose only repo qualifier is negated (-repo:) stays in this repository: no stranger's item becomes a matrix item", async () => {
    gh.clearRequests();
    const step = await plan({ "items-query": "is:issue is:open label:needs-triage -repo:octo-org/archive", "max-items": "20" });
    expect(errors(step), step.log).toEqual([]);
    const items = matrixOf(step).include;
    expect(items.map((i) => i["repository"])).not.toContain("stranger/app");
    expect(items.every((i) => i["repository"] === REPO), JSON.stringify(items)).toBe(true);
    expect(step.log).toContain(`the search 'is:issue is:open label:needs-triage -repo:octo-org/archive repo:${REPO}'`);
  });

  it.each([
    ["a search reaching other owners", { "items-query": "is:issue is:open label:needs-triage -repo:octo-org/archive repo:stranger/app repo:Mallory/tool repo:octo-org/other" }],
    ["an items list naming other owners", { items: `["stranger/app#11", "octo-org/other#3", "Mallory/tool#12"]` }],
  ])("%s: their items are dropped, and the warning and the summary name each", async (_, inputs) => {
    const step = await plan({ ...inputs, "max-items": "20" });
    expect(errors(step), step.log).toEqual([]);
    expect(matrixOf(step).include.map((i) => i["item"])).toEqual(["octo-org/other#3"]);
    expect(step.outputs.count).toBe("1");
    const warning = step.rawStdout.split("\n").find((l) => l.startsWith("::warning::Plan: left out"));
    expect(warning, step.log).toBeDefined();
    expect(warning).toContain("left out 2 items of other owners than octo-org: ");
    expect(warning).toContain("stranger/app#11");
    expect(warning).toContain("Mallory/tool#12");
    expect(warning).toContain("allow-foreign-items: true");
    expect(step.summary).toContain("Left out (other owners; `allow-foreign-items` is not `true`): 2");
    expect(step.summary).toContain("- stranger/app#11");
    expect(step.summary).toContain("- Mallory/tool#12");
  });

  it("allow-foreign-items: true keeps other owners' items (control)", async () => {
    const step = await plan({ items: `["stranger/app#11", "octo-org/other#3"]`, "allow-foreign-items": "true" });
    expect(errors(step), step.log).toEqual([]);
    expect(matrixOf(step).include.map((i) => i["item"])).toEqual(["stranger/app#11", "octo-org/other#3"]);
    expect(step.log).not.toContain("left out");
  });

  it("items: numbers and owner/repo#n, deduplicated", async () => {
    const step = await plan({ items: `[2, "#2", "octo-org/other#3", 9]` });
    expect(errors(step), step.log).toEqual([]);
    expect(matrixOf(step).include.map((i) => i["item"])).toEqual([`${REPO}#2`, "octo-org/other#3", `${REPO}#9`]);
    expect(step.log).toContain("Plan: 3 items matched 'items'; kept all 3.");
  });

  it("two items whose names would collide (a-b/c#1 and a/b-c#1) are refused, naming both", async () => {
    const step = await plan({ items: `["a-b/c#1", "a/b-c#1"]` });
    expect(step.exitCode).toBe(1);
    expect(errors(step).join("\n")).toContain("'a/b-c#1' and 'a-b/c#1' would share the artifact and session names 'a-b-c-1'");
    expect(step.outputs.matrix).toBeUndefined();
  });

  it("repositories: one item each, no issue number", async () => {
    const step = await plan({ repositories: "octo-org/a\nocto-org/b # the second\n\nocto-org/a" });
    expect(errors(step), step.log).toEqual([]);
    expect(matrixOf(step).include).toEqual([
      { item: "octo-org/a", key: "octo-org-a", repository: "octo-org/a", "repository-owner": "octo-org", "repository-name": "a" },
      { item: "octo-org/b", key: "octo-org-b", repository: "octo-org/b", "repository-owner": "octo-org", "repository-name": "b" },
    ]);
  });

  it.each([
    [{ "max-items": "3" }, "Input 'items-query': 'phase: plan' needs one source of items"],
    [{ "items-query": "x", items: "[1]" }, "give only one source of items"],
    [{ items: "[1]", "max-items": "300" }, "Input 'max-items': '300' must be a whole number from 1 to 256"],
    [{ items: `["../x#1"]` }, "Input 'items': \"../x#1\" is not an issue/pull request number"],
    [{ repositories: "not a repo" }, "Input 'repositories': 'not a repo' is not owner/repo."],
  ])("refuses %j naming the input", async (inputs, message) => {
    const step = await plan(inputs);
    expect(step.exitCode).toBe(1);
    expect(errors(step).join("\n")).toContain(message);
    expect(step.outputs.matrix).toBeUndefined();
  });
});
