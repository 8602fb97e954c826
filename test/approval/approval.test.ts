/**
 * The pieces an approval stands on, without GitHub: the comment verbs, the
 * record in the staging comment, and the digest's canonical form.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson, digestMatches, stagedContent, stagedDigest, type StagedPlan } from "../../src/publish/approval/digest.js";
import { approvalMarker, defuseApprovalMarkers, readApprovalMarker, withRecord, type ApprovalRecord } from "../../src/publish/approval/record.js";
import { approvalVerb } from "../../src/trigger/approval-command.js";
import { artifactProblem, runProblem, stagingComments, withOutcome } from "../../src/publish/approval/enact.js";
import type { GitHubApi, IssueComment } from "../../src/github/api.js";
import { parseSettings, type RawInputs } from "../../src/config/parse.js";
import type { RunResult } from "../../src/result.js";
import { DIGEST, GITHUB_RECORD, stagedResult, WF } from "./fixtures.js";

const RECORD: ApprovalRecord = { ...GITHUB_RECORD, actor: "alice" };

describe("approval verbs", () => {
  it.each([
    ["/approve abcdef012345", { kind: "approve", digest: "abcdef012345" }],
    ["  /approve ABCDEF012345\n", { kind: "approve", digest: "abcdef012345" }],
    ["/approve", { kind: "malformed" }],
    ["/approve please", { kind: "malformed" }],
    ["/approve abcdef012345 and also delete main", { kind: "malformed" }],
    ["/reject", { kind: "reject" }],
    ["/reject: not this", { kind: "reject" }],
    ["/rejected", undefined],
    ["please /approve abcdef012345", undefined],
    ["@agent fix it", undefined],
  ])("%j", (body, verb) => {
    expect(approvalVerb(body)).toEqual(verb);
  });
});

describe("the approval record", () => {
  it("round-trips at the start of a comment, and only there", () => {
    const body = `${approvalMarker(RECORD)}\n### staged\n`;
    expect(readApprovalMarker(body)).toEqual(RECORD);
    // Pasted anywhere but the start (a quote, the agent's text, a code block) it is not a record.
    expect(readApprovalMarker(`> ${body}`)).toBeUndefined();
    expect(readApprovalMarker(`text\n${approvalMarker(RECORD)}`)).toBeUndefined();
    // A record that does not parse (a bad digest) is no record.
    expect(readApprovalMarker(approvalMarker({ ...RECORD, digest: "zz" }))).toBeUndefined();
  });

  it("in agent text the action posts (safe outputs) is defused: shown, never read as a record", () => {
    const forged = `${approvalMarker(RECORD)}\nlooks staged`;
    expect(readApprovalMarker(defuseApprovalMarkers(forged))).toBeUndefined();
    expect(readApprovalMarker(defuseApprovalMarkers(forged.replace("<!--", "<!--  ")))).toBeUndefined();
  });

  it("is replaced in place, the rest of the comment kept", () => {
    const body = `${approvalMarker(RECORD)}\nrest of the comment`;
    const next = withRecord(body, { ...RECORD, state: "enacted", decision: { by: "bob", at: "t" } });
    expect(readApprovalMarker(next)?.state).toBe("enacted");
    expect(next.endsWith("\nrest of the comment")).toBe(true);
  });
});

describe("the outcome line in the staging comment", () => {
  it("replaces the heading and the waiting line; a line quoting $' $` $& (a branch name others chose) is put in as text", () => {
    const body = "<!-- record -->\n### Agent Runner: enacting\n\n⏳ publishing\n\nThe agent's message.\n**Digest** abc\n";
    const line = "❌ The pull request's branch 'x$'$`$&$$' no longer exists";
    const out = withOutcome(body, "failed", line);
    expect(out).toBe(`<!-- record -->\n### Agent Runner: failed\n\n${line}\n\nThe agent's message.\n**Digest** abc\n`);
  });
});

describe("where a staging record may point", () => {
  /** A GitHubApi with only what stagingComments reads. */
  const api = (comments: IssueComment[], me?: string) => ({ issueComments: async () => comments, authenticatedLogin: async () => me }) as unknown as GitHubApi;
  const staged = (author: string, authorType = "Bot"): IssueComment => ({ id: 1, url: "u", body: `${approvalMarker(RECORD)}\nstaged`, author, authorType });

  it("with an unknown token identity, only github-actions[bot]'s comments are staging comments, not any bot's", async () => {
    const req = { repository: "o/r", thread: 7, workflow: RECORD.workflow };
    expect(await stagingComments(api([staged("evil-app[bot]"), staged("dependabot[bot]")]), req)).toEqual([]);
    expect((await stagingComments(api([staged("evil-app[bot]"), staged("github-actions[bot]")]), req)).map((x) => x.comment.author)).toEqual(["github-actions[bot]"]);
    // A personal token: its own login only.
    expect((await stagingComments(api([staged("github-actions[bot]"), staged("me", "User")], "me"), req)).map((x) => x.comment.author)).toEqual(["me"]);
  });

  it("only records this workflow staged count: another workflow's approve job never reads them", async () => {
    const req = { repository: "o/r", thread: 7 };
    const comments = [staged("github-actions[bot]")];
    expect(await stagingComments(api(comments), { ...req, workflow: "o/r/.github/workflows/agent.yml" })).toHaveLength(1);
    expect(await stagingComments(api(comments), { ...req, workflow: "O/R/.github/workflows/AGENT.yml" })).toHaveLength(1);
    expect(await stagingComments(api(comments), { ...req, workflow: "o/r/.github/workflows/lenient.yml" })).toEqual([]);
    expect(await stagingComments(api(comments), { ...req, workflow: undefined })).toEqual([]);
  });

  it("the artifact must be the one named, of the staging run, not expired", () => {
    expect(artifactProblem({ name: "agent-run-42-1", runId: 42, expired: false }, RECORD)).toBeUndefined();
    expect(artifactProblem({ name: "agent-run-42-1", runId: 43, expired: false }, RECORD)).toMatch(/belongs to run 43, not to the staging run 42/);
    expect(artifactProblem({ name: "agent-run-42-1", expired: false }, RECORD)).toMatch(/belongs to run unknown/);
    expect(artifactProblem({ name: "other", runId: 42, expired: false }, RECORD)).toMatch(/called 'other', not 'agent-run-42-1'/);
    expect(artifactProblem({ name: "agent-run-42-1", runId: 42, expired: true }, RECORD)).toMatch(/has expired/);
  });

  it("the staging run must be this workflow's, on the repository itself", () => {
    const want = { repository: "o/r", workflow: "o/r/.github/workflows/agent.yml" };
    const run = { id: 42, path: ".github/workflows/agent.yml", repository: "o/r", headRepository: "o/r" };
    expect(runProblem(run, want)).toBeUndefined();
    expect(runProblem({ ...run, path: ".github/workflows/agent.yml@refs/heads/main" }, want)).toBeUndefined();
    expect(runProblem({ ...run, headRepository: "mallory/r" }, want)).toMatch(/ran for mallory\/r \(a fork's pull request\)/);
    expect(runProblem({ ...run, headRepository: undefined } as never, want)).toMatch(/a fork's pull request/);
    expect(runProblem({ ...run, repository: "x/y", headRepository: "x/y" }, want)).toMatch(/belongs to x\/y, not o\/r/);
    expect(runProblem({ ...run, path: ".github/workflows/other.yml" }, want)).toMatch(/of the workflow '.github\/workflows\/other.yml', not this one/);
    expect(runProblem(run, { ...want, workflow: undefined })).toMatch(/GITHUB_WORKFLOW_REF/);
  });
});

describe("the digest", () => {
  it("canonical JSON sorts keys at every level and drops undefined", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: undefined, x: "s" }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"x":"s","z":1}]},"b":1}');
  });

  it("changes with any staged byte, request, plan, artifact or workflow, and not with key order", async () => {
    const { result, patchPath } = stagedResult("c".repeat(40), "digest-");
    const plan: StagedPlan = { mode: "pull-request", repository: "o/r", thread: 7, baseCommit: "c".repeat(40) };
    const artifact = { runId: "42", id: 9, name: "agent-run-42-1" };
    const requests = { requests: [{ line: 1, value: { type: "add_labels", labels: ["bug"] } }], problems: [] };
    const base = stagedDigest(await stagedContent(result, requests, plan, artifact, WF));
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    const reordered = { requests: [{ line: 1, value: { labels: ["bug"], type: "add_labels" } }], problems: [] };
    expect(stagedDigest(await stagedContent(result, reordered, plan, artifact, WF))).toBe(base);
    const others = [
      stagedDigest(await stagedContent(result, { requests: [{ line: 1, value: { type: "add_labels", labels: ["wontfix"] } }], problems: [] }, plan, artifact, WF)),
      stagedDigest(await stagedContent(result, requests, { ...plan, mode: "commit" }, artifact, WF)),
      stagedDigest(await stagedContent(result, requests, plan, { ...artifact, id: 10 }, WF)),
      stagedDigest(await stagedContent({ ...result, output: "other" } as RunResult, requests, plan, artifact, WF)),
      stagedDigest(await stagedContent(result, requests, plan, artifact, "o/r/.github/workflows/other.yml")),
    ];
    writeFileSync(patchPath, "diff --git a/x b/x\n ");
    others.push(stagedDigest(await stagedContent(result, requests, plan, artifact, WF)));
    expect(new Set([base, ...others]).size).toBe(7);
  });

  it("an approver's prefix matches from 12 hex digits on", () => {
    expect(digestMatches(DIGEST, DIGEST.slice(0, 12))).toBe(true);
    expect(digestMatches(DIGEST, DIGEST.slice(0, 12).toUpperCase())).toBe(true);
    expect(digestMatches(DIGEST, DIGEST.slice(0, 11))).toBe(false);
    expect(digestMatches(DIGEST, "cd".repeat(6))).toBe(false);
  });
});

describe("the approval inputs", () => {
  const parse = (raw: RawInputs) => parseSettings({ agent: "command", "agent-command": "true", prompt: "x", ...raw }, { cwd: mkdtempSync(path.join(os.tmpdir(), "approval-parse-")) });

  it("default to none, write permission, not the triggering person, 72 hours", () => {
    expect(parse({}).approval).toEqual({ mode: "none", approvers: [], self: false, expiresHours: 72 });
    expect(parse({ approval: "required", approvers: "alice, bob", "approval-self": "true", "approval-expires-hours": "1.5" }).approval).toEqual({
      mode: "required",
      approvers: ["alice", "bob"],
      self: true,
      expiresHours: 1.5,
    });
  });

  it.each([
    [{ approval: "maybe" }, /Input 'approval': 'maybe' is not allowed; use one of: none, required/],
    [{ approval: "required", "approval-expires-hours": "0" }, /'approval-expires-hours': '0' must be a positive number of hours/],
    [{ approval: "required", "approval-expires-hours": "100", "retention-days": "1" }, /outlives the artifact .*'retention-days: 1', 24 hours/],
    [{ approval: "required", comment: "none" }, /Input 'comment': 'none' leaves 'approval: required' nowhere to show what it staged/],
  ])("%j is refused, naming the input", (raw, message) => {
    expect(() => parse(raw as RawInputs)).toThrow(message);
  });

  it("lets the reusable workflows' run and reserve jobs (comment: none) take approval: required: only a publishing phase stages", () => {
    expect(parse({ approval: "required", comment: "none", phase: "run" }).approval.mode).toBe("required");
    expect(() => parse({ approval: "required", comment: "none", phase: "publish" })).toThrow(/Input 'comment': 'none' leaves 'approval: required' nowhere/);
  });
});
