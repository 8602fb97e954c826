/**
 * Issue #5 acceptance, API robustness: retries with backoff on 5xx and rate
 * limits, no duplicates, and an API failure after the agent ran never loses
 * the result. Also: the progress comment ends with the reason on failures.
 */
import { existsSync, readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readHostContext } from "../../src/config/host.js";
import { revParse } from "../support/git-fixtures.js";
import { runStep } from "../support/harness.js";
import { scenario, TOKEN, type Scenario } from "./scenario.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const botComments = (sc: Scenario, n: number) => sc.gh.issueComments(n).filter((c) => c.user === "github-actions[bot]");
const FIX = "sed -i 's/Teh/The/' README.md\necho 'Fixed.'";

describe("GitHub API robustness", () => {
  it("the fake returns 502 twice then succeeds: delivered once, no duplicate comments or pull requests", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX });
    s.gh.failNext("POST /repos/{owner}/{repo}/issues/{number}/comments", { times: 2, status: 502 });
    s.gh.failNext("POST /repos/{owner}/{repo}/pulls", { times: 2, status: 502 });
    // The same back-off (quadratic, 1, 4, 9 × base), on a 10 ms base instead of 1 s: the retries, not the waiting, are under test.
    const r = await s.run({}, { AGENT_RUNNER_TEST: "1", AGENT_RUNNER_TEST_API_RETRY_MS: "10" });
    expect(r.exitCode).toBe(0);
    expect(r.outputs.conclusion).toBe("success");
    expect(botComments(s, 7)).toHaveLength(1);
    expect(s.gh.pulls()).toHaveLength(1);
    const posts = s.gh.requestsTo("POST /repos/*/*/pulls");
    expect(posts.map((p) => p.status)).toEqual([502, 502, 201]);
    expect(r.outputs["pull-request-number"]).toBe(String(s.gh.pulls()[0]!.number));
  });

  it("a secondary rate limit waits for retry-after and goes on", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX });
    s.gh.failNext("GET /repos/{owner}/{repo}/collaborators/{user}/permission", { kind: "secondary-rate-limit", retryAfter: 1 });
    s.gh.failNext("PATCH /repos/{owner}/{repo}/issues/comments/{id}", { kind: "secondary-rate-limit", status: 429, retryAfter: 1 });
    const r = await s.run();
    expect(r.exitCode).toBe(0);
    expect(r.log).toMatch(/rate limit on GET .*permission; retrying in 1 s/);
    expect(s.gh.pulls()).toHaveLength(1);
    expect(botComments(s, 7)[0]!.body).toContain("Agent Runner finished");
  });

  // GitHub's refusals (403, 422) are delivery in part: test/github/delivery-refusals.e2e.test.ts.
  it("opening the pull request fails after the agent ran (the token expired): a clear error, the branch, commit and outputs kept, the comment says why and links the compare page", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX });
    s.gh.failNext("POST /repos/{owner}/{repo}/pulls", { status: 401, body: { message: "Bad credentials" } });
    const r = await s.run();
    expect(r.exitCode).toBe(1);
    expect(r.rawStdout).toMatch(/::error::.*opening the pull request failed: HTTP 401: Bad credentials/);
    // Nothing is lost: outputs, results folder, the pushed branch; the conclusion says delivery failed.
    expect(r.outputs.conclusion).toBe("failure");
    expect(r.outputs["final-message"]).toBe("Fixed.");
    expect(r.outputs.branch).toBe("agent/7-typo-in-readme");
    expect(await revParse(s.repo.origin, "refs/heads/agent/7-typo-in-readme")).toBe(r.outputs["commit-sha"]);
    expect(readFileSync(r.outputs["patch-path"]!, "utf8")).toContain("+The demo project.");
    expect(existsSync(path.join(path.dirname(r.outputs["patch-path"]!), "result.json"))).toBe(true);
    const [c] = botComments(s, 7);
    expect(r.outputs["comment-url"]).toMatch(new RegExp(`#issuecomment-${c!.id}$`));
    expect(c!.body).toContain("Delivery failed");
    expect(c!.body).toMatch(/^### ❌ Agent Runner: delivery failed$/m);
    expect(c!.body).toContain("/compare/main...agent/7-typo-in-readme?expand=1");
  });

  it("the comment API is down for the whole run: the agent still runs and delivers; the step reports the missing comment", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX });
    s.gh.failNext("POST /repos/{owner}/{repo}/issues/{number}/comments", { times: 100, status: 403, body: { message: "Resource not accessible by integration" } });
    const r = await s.run();
    expect(s.agentRuns()).toBe(1);
    expect(s.gh.pulls()).toHaveLength(1);
    expect(r.outputs["pull-request-url"]).toMatch(new RegExp(`/pull/${s.gh.pulls()[0]!.number}$`));
    expect(r.rawStdout).toMatch(/::warning::Could not post the progress comment/);
    expect(r.rawStdout).toMatch(/::error::.*Could not post the result comment: HTTP 403/);
    expect(r.exitCode).toBe(1);
  });
});

describe("the API back-off's test setting (AGENT_RUNNER_TEST_API_RETRY_MS)", () => {
  it("is ignored unless AGENT_RUNNER_TEST=1 is set too: a stray value in a workflow does not shorten the back-off", () => {
    expect(readHostContext({ GITHUB_ACTIONS: "true", AGENT_RUNNER_TEST_API_RETRY_MS: "10" }).apiRetryBaseMs).toBeUndefined();
    expect(readHostContext({ AGENT_RUNNER_TEST: "true", AGENT_RUNNER_TEST_API_RETRY_MS: "10" }).apiRetryBaseMs).toBeUndefined();
    expect(readHostContext({ AGENT_RUNNER_TEST: "1", AGENT_RUNNER_TEST_API_RETRY_MS: "soon" }).apiRetryBaseMs).toBeUndefined();
    expect(readHostContext({ AGENT_RUNNER_TEST: "1", AGENT_RUNNER_TEST_API_RETRY_MS: "10" }).apiRetryBaseMs).toBe(10);
  });
});

describe("the comment ends with the reason when the run fails", () => {
  it("a timeout finalizes the sticky comment: stopped before finishing, the work kept as a checkpoint (#36)", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: "echo partial > PARTIAL.md\necho working\nsleep 100" });
    const r = await s.run({ "timeout-minutes": "0.03" });
    expect(r.exitCode).toBe(1);
    expect(r.outputs.conclusion).toBe("incomplete");
    const [c] = botComments(s, 7);
    expect(c!.body).toContain("Agent Runner: stopped before finishing");
    expect(c!.body).toContain("timeout-minutes");
    expect(c!.body).toContain("refs/agent-runner/checkpoints/7");
    expect(c!.body).toContain("+partial");
    expect(s.gh.pulls()).toEqual([]);
  });

  it("an error after the comment was posted (an input the agent cannot honour) ends the comment with the message", async () => {
    s = await scenario({ fixture: "issue_comment.issue" });
    const r = await s.run({ "mcp-servers": '{"docs": {"command": "true"}}' });
    expect(r.exitCode).toBe(1);
    const [c] = botComments(s, 7);
    expect(c!.body).toContain("could not run");
    expect(c!.body).toContain("mcp-servers");
  });

  it("comment: new posts a fresh comment per run; comment: none posts nothing but still reacts", async () => {
    s = await scenario({ fixture: "issue_comment.issue" });
    await s.run({ comment: "new", deliver: "none" });
    await s.run({ comment: "new", deliver: "none" });
    expect(botComments(s, 7)).toHaveLength(2);
    await s.close();

    s = await scenario({ fixture: "issue_comment.issue" });
    const r = await s.run({ comment: "none", deliver: "none" });
    expect(r.exitCode).toBe(0);
    expect(botComments(s, 7)).toEqual([]);
    expect(s.gh.reactions().map((x) => x.content)).toEqual(["eyes"]);
    expect(r.outputs["comment-url"]).toBeUndefined();
  });

  it("the working comment is posted before the agent starts and links the run", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: `date +%s%3N > "$CAPTURE/started"\necho ok` });
    await s.run({ deliver: "none" });
    const started = Number(readFileSync(path.join(s.capture, "started"), "utf8"));
    const [post] = s.gh.requestsTo("POST /repos/*/*/issues/*/comments");
    expect(post!.at).toBeLessThan(started);
    expect(String((post!.body as { body: string }).body)).toMatch(/Agent Runner is working…[\s\S]*\/actions\/runs\/4242/);
  });
});

describe("the event file", () => {
  it("a malformed event is a configuration error naming GITHUB_EVENT_PATH", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "bad-event-"));
    const bad = path.join(dir, "event.json");
    writeFileSync(bad, "{ not json");
    s = await scenario({ fixture: "issue_comment.issue" });
    const env = { GITHUB_EVENT_NAME: "issue_comment", GITHUB_EVENT_PATH: bad, GITHUB_API_URL: s.gh.url, GITHUB_REPOSITORY: "octo-org/octo-repo" };
    const inputs = { agent: "command", "agent-command": "true", sandbox: "none" };
    const r = await runStep("main", { workspace: s.repo.dir, inputs, env, githubToken: TOKEN });
    expect(r.exitCode).toBe(1);
    expect(r.rawStdout).toMatch(/::error::GITHUB_EVENT_PATH \(.*event\.json\) is not valid JSON/);
    expect(r.rawStdout).not.toContain("this is a bug");

    writeFileSync(bad, JSON.stringify({ action: "created", issue: { number: "seven", title: "x" }, comment: { id: 1, body: "@agent hi", user: { login: "alice" } } }));
    const r2 = await runStep("main", { workspace: s.repo.dir, inputs, env, githubToken: TOKEN });
    expect(r2.exitCode).toBe(1);
    expect(r2.rawStdout).toMatch(/::error::The 'issue_comment' event payload at GITHUB_EVENT_PATH .*issue\.number/);
    expect(s.gh.requests).toEqual([]);
  });
});
