/**
 * Safe outputs without a runner: the input's parser, each kind's check (the
 * one both sides run), the hostile requests-file reader, the diff-line rule
 * for review comments, and the GitHub routes the publish side calls, each as
 * GitHub's OpenAPI description names it (through octokit's generated
 * endpoint table) and as the fake answers it.
 */
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseSettings } from "../../src/config/parse.js";
import { GitHubApi } from "../../src/github/api.js";
import { createOctokit } from "../../src/github/client.js";
import { enabledKinds, parseSafeOutputs } from "../../src/safe-outputs/config.js";
import { DiffLines } from "../../src/safe-outputs/diff-lines.js";
import { MAX_LINE_BYTES, readRequests } from "../../src/publish/safe-outputs/requests.js";
import { toSafeMarkdown } from "../../src/publish/safe-markdown.js";
import { startFakeGitHub } from "../support/fake-github.js";

const silent = { debug: () => {}, info: () => {}, warning: () => {}, error: () => {}, group: <T>(_t: string, fn: () => Promise<T>) => fn() };

describe("the safe-outputs input", () => {
  it("enables only the listed kinds, fills defaults, and names every mistake", () => {
    const ok = parseSafeOutputs({ "add-comment": true, "add-labels": { allowed: ["bug"] }, "create-pull-request-review": {}, "update-issue": false });
    expect(ok.problems).toEqual([]);
    expect(enabledKinds(ok.config).map((k) => [k.tool, k.limits.max])).toEqual([
      ["add_comment", 1],
      ["add_labels", 3],
      ["create_pull_request_review", 1],
    ]);
    const bad = parseSafeOutputs({ "add-coment": {}, "add-labels": {}, "create-issue": { target: 3 }, "add-comment": { max: 0 }, "update-issue": { fields: ["labels"] } });
    expect(bad.problems).toEqual([
      "'add-coment' is not a safe-output kind; use add-comment, create-issue, add-labels, remove-labels, update-issue, create-pull-request-review.",
      "'add-labels' needs 'allowed': the labels the agent may use, e.g. { allowed: [bug, question] }.",
      "'create-issue' takes no 'target'.",
      expect.stringMatching(/^'add-comment' max: /),
      expect.stringMatching(/^'update-issue' fields\.0: /),
    ]);
  });

  it("is read from YAML by the input parser; a user MCP server may not take our server's name", () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), "so-parse-"));
    const s = parseSettings({ agent: "command", "agent-command": "true", prompt: "p", "safe-outputs": "add-comment: { max: 2, target: '*' }\n" }, { cwd });
    expect(s.agent.safeOutputs).toEqual({ "add-comment": { max: 2, target: "*" } });
    expect(() => parseSettings({ agent: "command", "agent-command": "true", prompt: "p", "safe-outputs": "add-labels: {}" }, { cwd })).toThrow(/Input 'safe-outputs': 'add-labels' needs 'allowed'/);
    expect(() => parseSettings({ agent: "claude", prompt: "p", "mcp-servers": JSON.stringify({ "agent-runner": { command: "x" } }) }, { cwd })).toThrow(/Input 'mcp-servers': server name 'agent-runner' is Agent Runner's own/);
  });
});

describe("each kind's check", () => {
  const kinds = enabledKinds(
    parseSafeOutputs({
      "add-labels": { allowed: ["bug", "question"], max: 2 },
      "create-pull-request-review": { "max-comments": 1, target: "*" },
      "update-issue": { fields: ["state"], target: 5 },
    }).config,
  );
  const kind = (tool: string) => kinds.find((k) => k.tool === tool)!;

  it("refuses labels outside allowed, APPROVE, unknown fields and more comments than max-comments, each with a reason a model can act on", () => {
    expect(kind("add_labels").check({ labels: ["bug"] })).toMatchObject({ ok: true, request: { cost: 1 } });
    expect(kind("add_labels").check({ labels: ["wontfix"] })).toEqual({ ok: false, reason: "labels.0: must be one of the allowed labels: bug, question" });
    expect(kind("add_labels").check({ labels: ["bug"], issue_number: 3 })).toEqual({ ok: false, reason: "arguments: unknown field(s) 'issue_number'" });
    const review = kind("create_pull_request_review");
    expect(review.check({ body: "ok", event: "APPROVE" })).toEqual({ ok: false, reason: "event: must be COMMENT or REQUEST_CHANGES (an agent never approves)" });
    expect(review.check({ body: "ok", event: "COMMENT", pull_number: 9 })).toMatchObject({ ok: true, request: { requestedNumber: 9 } });
    const two = [1, 2].map((line) => ({ path: "a.ts", line, body: "x" }));
    expect(review.check({ body: "ok", event: "COMMENT", comments: two })).toEqual({ ok: false, reason: "comments: at most 1 comments" });
    expect(kind("update_issue").check({ title: "x" })).toEqual({ ok: false, reason: "arguments: unknown field(s) 'title'" });
    expect(kind("update_issue").check({})).toEqual({ ok: false, reason: "give at least one of title, body, state" });
  });
});

describe("the requests file, read as hostile input", () => {
  const dir = () => mkdtempSync(path.join(os.tmpdir(), "so-req-"));

  it("skips an overlong line without holding it, keeps reading after it, and refuses a symlink", async () => {
    const d = dir();
    const file = path.join(d, "safe-outputs.jsonl");
    writeFileSync(file, [JSON.stringify({ type: "a" }), "x".repeat(MAX_LINE_BYTES * 3), "[1]", JSON.stringify({ type: "b" })].join("\n"));
    const read = await readRequests(file);
    expect(read.problems).toEqual([]);
    expect(read.requests).toEqual([
      { line: 1, value: { type: "a" } },
      { line: 2, error: "the request is longer than 512 KiB" },
      { line: 3, error: "not a JSON object" },
      { line: 4, value: { type: "b" } },
    ]);
    const link = path.join(d, "link.jsonl");
    symlinkSync(file, link);
    expect((await readRequests(link)).problems).toEqual(["The requests file was not read: it is a symbolic link, which is never followed."]);
    expect(await readRequests(path.join(d, "missing"))).toEqual({ requests: [], problems: [] });
  });

  it("looks at no more than 100 requests", async () => {
    const file = path.join(dir(), "safe-outputs.jsonl");
    writeFileSync(file, Array.from({ length: 150 }, () => '{"type":"add_comment","body":"x"}').join("\n"));
    const read = await readRequests(file);
    expect(read.requests).toHaveLength(100);
    expect(read.problems).toEqual(["Requests after the first 100 were ignored."]);
  });
});

describe("review comments only on lines the diff shows", () => {
  const diff = new DiffLines([
    { filename: "src/a.ts", patch: "@@ -1,3 +1,4 @@\n line1\n-old2\n+new2\n+new3\n line3\n@@ -20,2 +21,2 @@\n ctx20\n-gone\n+here" },
    { filename: "logo.png" },
  ]);
  it("RIGHT takes added and context lines, LEFT deleted and context ones, a range stays in one hunk", () => {
    expect(diff.problem({ path: "src/a.ts", line: 3, side: "RIGHT" })).toBeUndefined();
    expect(diff.problem({ path: "src/a.ts", line: 2, side: "LEFT" })).toBeUndefined();
    expect(diff.problem({ path: "src/a.ts", line: 22, side: "RIGHT" })).toBeUndefined();
    expect(diff.problem({ path: "src/a.ts", line: 10, side: "RIGHT" })).toBe("line 10 (RIGHT) of 'src/a.ts' is not in the pull request's diff");
    expect(diff.problem({ path: "src/a.ts", line: 22, side: "RIGHT", startLine: 2 })).toBe("lines 2-22 (RIGHT) of 'src/a.ts' are not inside one hunk of the pull request's diff");
    expect(diff.problem({ path: "other.ts", line: 1, side: "RIGHT" })).toBe("'other.ts' is not changed by this pull request");
    expect(diff.problem({ path: "logo.png", line: 1, side: "RIGHT" })).toBe("'logo.png' has no diff GitHub shows (binary or too large)");
  });
});

describe("the routes the publish side calls", () => {
  const ROUTES = [
    "GET /repos/{owner}/{repo}/issues/{issue_number}",
    "POST /repos/{owner}/{repo}/issues",
    "PATCH /repos/{owner}/{repo}/issues/{issue_number}",
    "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
    "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/files",
    "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
  ];

  it("are GitHub's (octokit's table, generated from the OpenAPI description), and the fake answers each through a real octokit", async () => {
    const table = readFileSync(path.resolve("node_modules/@octokit/plugin-rest-endpoint-methods/dist-src/generated/endpoints.js"), "utf8");
    for (const route of ROUTES) expect(table, route).toContain(`"${route}"`);
    const gh = await startFakeGitHub();
    try {
      gh.addIssue({ number: 3, title: "Bug", body: "b", labels: ["needs-triage"] });
      const api = new GitHubApi(await createOctokit({ token: "ghs_fake_token", apiUrl: gh.url, log: silent, retryBaseMs: 1 }), { owner: "octo-org", name: "octo-repo", fullName: "octo-org/octo-repo" });
      expect(await api.issue(3)).toMatchObject({ number: 3, isPull: false, state: "open" });
      expect(await api.issue(404)).toBeUndefined();
      const created = await api.createIssue({ title: "[agent] New", body: toSafeMarkdown("x", { serverUrl: gh.serverUrl }), labels: ["agent"] });
      await api.addLabels(3, ["bug"]);
      expect(await api.removeLabel(3, "needs-triage")).toBe(true);
      expect(await api.removeLabel(3, "needs-triage")).toBe(false);
      await api.updateIssue(3, { state: "closed" });
      expect(gh.repo().issues.get(3)).toMatchObject({ labels: ["bug"], state: "closed" });
      expect(gh.repo().issues.get(created.number)).toMatchObject({ title: "[agent] New", labels: ["agent"] });
      expect(gh.unhandled).toEqual([]);
    } finally {
      await gh.close();
    }
  });
});
