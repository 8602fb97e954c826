/**
 * Proves the test fakes against the REAL clients: @actions/artifact v6
 * (upload, same-run download, cross-run `findBy` download through the fake
 * REST API), @actions/github's octokit (comments, reactions, pulls,
 * collaborator permission, context from an event fixture) and
 * @octokit/plugin-retry (502 then success). The clients run in a child Node
 * process with a clean env, as in a runner step: @actions/github reads env at
 * import time.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { getOctokit } from "@actions/github";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createZip, listZipEntries, readZipEntry, startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { buildEvent, EVENT_FIXTURES, loadEvent, writeEvent, type EventFixture } from "../support/events.js";
import { createRepo, readBranchFiles, readBranchLog, listBranches, type GitRepoFixture } from "../support/git-fixtures.js";

const REPO_ROOT = resolve(import.meta.dirname, "../..");
const NODE = process.execPath;

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  result: Record<string, unknown>;
}

/** Run an ESM script (resolving packages from the repo root) with a clean env; it prints `RESULT:<json>`. */
function runNode(script: string, env: Record<string, string>, params: unknown = {}): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(NODE, ["--input-type=module", "-e", script], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        HOME: process.env["HOME"] ?? tmpdir(),
        TMPDIR: tmpdir(),
        ...env,
        TEST_PARAMS: JSON.stringify(params),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = stdout.split("\n").reverse().find((l) => l.startsWith("RESULT:"));
      const result = line ? (JSON.parse(line.slice("RESULT:".length)) as Record<string, unknown>) : {};
      if (code !== 0 || !line) {
        reject(new Error(`child exited ${code}\n--- stdout (tail)\n${stdout.slice(-3000)}\n--- stderr\n${stderr.slice(-3000)}`));
        return;
      }
      resolvePromise({ code, stdout, stderr, result });
    });
  });
}

let results: FakeActionsResults;
let gh: FakeGitHub;
let tmp: string;

beforeAll(async () => {
  results = await startFakeActionsResults();
  gh = await startFakeGitHub({ results });
  tmp = await mkdtemp(join(tmpdir(), "fakes-test-"));
});

afterAll(async () => {
  await gh?.close();
  await results?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const UPLOAD_SCRIPT = `
import { DefaultArtifactClient } from "@actions/artifact";
const p = JSON.parse(process.env.TEST_PARAMS);
const client = new DefaultArtifactClient();
const up = await client.uploadArtifact(p.name, p.files, p.root, { retentionDays: 5 });
const got = await client.getArtifact(p.name);
const dl = await client.downloadArtifact(up.id, { path: p.downloadTo });
const list = await client.listArtifacts();
console.log("RESULT:" + JSON.stringify({ node: process.versions.node, up, got: got.artifact, dl, list: list.artifacts }));
`;

const CROSS_RUN_SCRIPT = `
import { DefaultArtifactClient } from "@actions/artifact";
import { getOctokit } from "@actions/github";
const p = JSON.parse(process.env.TEST_PARAMS);
const client = new DefaultArtifactClient();
const findBy = { token: p.token, workflowRunId: p.fromRun, repositoryOwner: p.owner, repositoryName: p.repo };
const got = await client.getArtifact(p.name, { findBy });
const dl = await client.downloadArtifact(got.artifact.id, { path: p.downloadTo, findBy, expectedHash: got.artifact.digest });
const seededFindBy = { ...findBy, workflowRunId: p.seededRun };
const seeded = await client.getArtifact(p.seededName, { findBy: seededFindBy });
const dl2 = await client.downloadArtifact(seeded.artifact.id, { path: p.downloadTo2, findBy: seededFindBy });
const listed = await client.listArtifacts({ findBy, latest: true });
// The same listing through octokit, as a workflow would do it (GITHUB_API_URL is the fake).
const octokit = getOctokit(p.token);
const byName = await octokit.rest.actions.listArtifactsForRepo({ owner: p.owner, repo: p.repo, name: p.name });
console.log("RESULT:" + JSON.stringify({ node: process.versions.node, got: got.artifact, dl, seeded: seeded.artifact, dl2, listed: listed.artifacts, byName: byName.data }));
`;

describe("fake Actions results service + real @actions/artifact", () => {
  it("uploads two files and downloads them in the same run and, through the fake REST API, from another run", async () => {
    const ws = join(tmp, "ws-artifacts");
    await mkdir(join(ws, "out", "raw"), { recursive: true });
    await writeFile(join(ws, "out", "result.json"), JSON.stringify({ conclusion: "success", output: "héllo ✓" }));
    await writeFile(join(ws, "out", "raw", "stdout.jsonl"), '{"type":"text","text":"one"}\n{"type":"text","text":"two"}\n');
    const name = "agent-run-101-1";

    // Run 101 uploads.
    const env101 = results.runtimeEnv({ runId: 101, github: gh, workspace: ws });
    expect(env101["GITHUB_SERVER_URL"]).toMatch(/^http:\/\/github\.localhost:\d+$/);
    const a = await runNode(UPLOAD_SCRIPT, env101, {
      name,
      files: [join(ws, "out", "result.json"), join(ws, "out", "raw", "stdout.jsonl")],
      root: join(ws, "out"),
      downloadTo: join(ws, "same-run"),
    });
    expect(Number((a.result["node"] as string).split(".")[0])).toBeGreaterThanOrEqual(24);
    const up = a.result["up"] as { id: number; size: number; digest: string };

    // State of the fake: one finalized artifact of run 101 holding both files.
    const stored = results.artifacts({ runId: 101 });
    expect(stored.map((x) => x.name)).toEqual([name]);
    expect(stored[0]!.id).toBe(up.id);
    expect(stored[0]!.digest).toBe(`sha256:${up.digest}`);
    expect(stored[0]!.computedDigest).toBe(stored[0]!.digest);
    expect(stored[0]!.expiresAt).toBeTruthy();
    expect(results.artifactFiles(name)).toEqual(["raw/stdout.jsonl", "result.json"]);
    expect(JSON.parse(results.readArtifactFile(name, "result.json").toString("utf8"))).toEqual({ conclusion: "success", output: "héllo ✓" });
    // The client staged blocks, committed a block list, and spoke twirp.
    const blobPuts = results.requests.filter((r) => r.method === "PUT");
    expect(blobPuts.some((r) => r.query["comp"] === "block")).toBe(true);
    expect(blobPuts.some((r) => r.query["comp"] === "blocklist")).toBe(true);
    expect(results.calls().map((c) => c.method)).toEqual([
      "CreateArtifact",
      "FinalizeArtifact",
      "ListArtifacts",
      "ListArtifacts",
      "GetSignedArtifactURL",
      "ListArtifacts",
    ]);
    expect(results.calls("CreateArtifact")[0]!.body).toMatchObject({ name, version: 7, mime_type: "application/zip" });

    // Same-run download extracted the files.
    expect(await readFile(join(ws, "same-run", "raw", "stdout.jsonl"), "utf8")).toContain('"two"');
    expect(a.result["dl"]).toMatchObject({ digestMismatch: false });

    // An earlier run's artifact, seeded with createZip, to prove the zip writer against unzip-stream.
    results.addArtifact({ name: "agent-session-7", runId: 90, files: { "session/state.json": '{"id":"s-1"}', "session/": "" } });

    // Run 102 downloads run 101's artifact through REST (findBy), plus the seeded one.
    gh.clearRequests();
    const env102 = results.runtimeEnv({ runId: 102, github: gh, workspace: ws });
    const b = await runNode(CROSS_RUN_SCRIPT, env102, {
      token: gh.token,
      fromRun: 101,
      seededRun: 90,
      owner: "octo-org",
      repo: "octo-repo",
      name,
      seededName: "agent-session-7",
      downloadTo: join(ws, "cross-run"),
      downloadTo2: join(ws, "seeded"),
    });
    expect(b.result["got"]).toMatchObject({ id: up.id, name });
    expect(b.result["dl"]).toMatchObject({ digestMismatch: false });
    expect(JSON.parse(await readFile(join(ws, "cross-run", "result.json"), "utf8"))).toMatchObject({ output: "héllo ✓" });
    expect(await readFile(join(ws, "seeded", "session", "state.json"), "utf8")).toBe('{"id":"s-1"}');
    expect(b.result["listed"]).toEqual([expect.objectContaining({ id: up.id, name })]);
    expect((b.result["byName"] as { total_count: number }).total_count).toBe(1);

    // The REST side: listed by run, redirected to the blob, with the token.
    expect(gh.requestsTo("GET /repos/octo-org/octo-repo/actions/runs/101/artifacts")).not.toHaveLength(0);
    const zips = gh.requestsTo("GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip");
    expect(zips.map((r) => r.status)).toEqual([302, 302]);
    expect(zips.every((r) => r.authorization === `token ${gh.token}`)).toBe(true);
    expect(gh.unhandled).toEqual([]);
    expect(gh.errors).toEqual([]);
  });

  it("answers twirp errors as JSON (no 30 s retry loop) and refuses a duplicate name in a run", async () => {
    const ws = join(tmp, "ws-dup");
    await mkdir(ws, { recursive: true });
    await writeFile(join(ws, "a.txt"), "a");
    const env = results.runtimeEnv({ runId: 101, github: gh, workspace: ws });
    const script = `
      import { DefaultArtifactClient } from "@actions/artifact";
      const p = JSON.parse(process.env.TEST_PARAMS);
      const started = Date.now();
      let error = "";
      try { await new DefaultArtifactClient().uploadArtifact("agent-run-101-1", [p.file], p.root); } catch (e) { error = String(e.message); }
      console.log("RESULT:" + JSON.stringify({ error, ms: Date.now() - started }));`;
    const r = await runNode(script, env, { file: join(ws, "a.txt"), root: ws });
    expect(r.result["error"]).toMatch(/409.*already exists/);
    expect(r.result["ms"]).toBeLessThan(5000);
  });

  it("zip helpers round-trip", () => {
    const zip = createZip({ "a/b.txt": "bee", "c.bin": Buffer.from([0, 1, 2, 255]), "d/": "" });
    expect(listZipEntries(zip).map((e) => [e.name, e.isDirectory, e.size])).toEqual([
      ["a/b.txt", false, 3],
      ["c.bin", false, 4],
      ["d/", true, 0],
    ]);
    expect(readZipEntry(zip, "a/b.txt").toString()).toBe("bee");
    expect([...readZipEntry(zip, "c.bin")]).toEqual([0, 1, 2, 255]);
  });
});

const OCTOKIT_SCRIPT = `
import * as github from "@actions/github";
import { retry } from "@octokit/plugin-retry";
const p = JSON.parse(process.env.TEST_PARAMS);
const { owner, repo } = github.context.repo;
const octokit = github.getOctokit(p.token, { baseUrl: p.baseUrl });
const out = { node: process.versions.node, eventName: github.context.eventName, issueNumber: github.context.issue.number,
  commentBody: github.context.payload.comment?.body, apiUrl: github.context.apiUrl };

// Who may trigger.
const perm = async (username) => {
  try { return (await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username })).data; }
  catch (e) { return { status: e.status }; }
};
out.alice = await perm("alice");
out.mallory = await perm("mallory");
out.ghost = await perm("ghost");

// A fork PR: head info comes from the pulls API, not the issue_comment payload.
const pr = (await octokit.rest.pulls.get({ owner, repo, pull_number: github.context.issue.number })).data;
out.head = { repo: pr.head.repo.full_name, ref: pr.head.ref, sha: pr.head.sha, fork: pr.head.repo.fork };

// Acknowledge, then a sticky progress comment edited in place.
const reaction = await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: github.context.payload.comment.id, content: "eyes" });
out.reactionStatus = reaction.status;
const again = await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: github.context.payload.comment.id, content: "eyes" });
out.reactionAgainStatus = again.status;
const created = await octokit.rest.issues.createComment({ owner, repo, issue_number: github.context.issue.number, body: "Working on it…" });
const edited = await octokit.rest.issues.updateComment({ owner, repo, comment_id: created.data.id, body: "Done: 2 files changed." });
out.comment = { id: created.data.id, url: created.data.html_url, body: edited.data.body, user: edited.data.user.login, type: edited.data.user.type };
const all = await octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: github.context.issue.number, per_page: 1 });
out.commentCount = all.length;

// Open a draft PR, find it by head, edit it.
const opened = await octokit.rest.pulls.create({ owner, repo, title: "Agent: fix typo", head: "agent/fix-typo", base: "main", body: "Patch", draft: true });
const found = await octokit.rest.pulls.list({ owner, repo, head: owner + ":agent/fix-typo", state: "open" });
await octokit.rest.pulls.update({ owner, repo, pull_number: opened.data.number, body: "Patch (updated)" });
let dup = null;
try { await octokit.rest.pulls.create({ owner, repo, title: "again", head: "agent/fix-typo", base: "main" }); } catch (e) { dup = { status: e.status, message: e.message }; }
out.pr = { number: opened.data.number, draft: opened.data.draft, url: opened.data.html_url, found: found.data.map((x) => x.number), dup };

// Retries: 502, 502, then success with @octokit/plugin-retry (fast backoff for the test).
const retrying = github.getOctokit(p.token, { baseUrl: p.baseUrl, retry: { retryAfterBaseValue: 5 } }, retry);
const retried = await retrying.rest.issues.createComment({ owner, repo, issue_number: github.context.issue.number, body: "after retries" });
out.retried = { status: retried.status, id: retried.data.id };
// 429 with retry-after is retried too; a 403 secondary rate limit is not (plugin-retry's doNotRetry).
const r429 = await retrying.rest.issues.get({ owner, repo, issue_number: github.context.issue.number });
out.r429 = r429.status;
try { await retrying.rest.repos.get({ owner, repo }); out.r403 = "no error"; }
catch (e) { out.r403 = { status: e.status, retryAfter: e.response?.headers["retry-after"], message: e.message }; }
// Without the plugin, a 502 throws at once.
try { await octokit.rest.pulls.listFiles({ owner, repo, pull_number: github.context.issue.number }); out.plain502 = "no error"; }
catch (e) { out.plain502 = e.status; }

// A read-only token cannot write; a wrong token is rejected.
const ro = github.getOctokit(p.readToken, { baseUrl: p.baseUrl });
try { await ro.rest.issues.createComment({ owner, repo, issue_number: 13, body: "x" }); } catch (e) { out.readOnlyWrite = e.status; }
out.readOnlyRead = (await ro.rest.issues.get({ owner, repo, issue_number: 13 })).status;
try { await github.getOctokit("wrong", { baseUrl: p.baseUrl }).rest.repos.get({ owner, repo }); } catch (e) { out.badToken = e.status; }
console.log("RESULT:" + JSON.stringify(out));
`;

describe("fake GitHub + real octokit", () => {
  it("serves comments, reactions, pulls and permissions from an issue_comment on a fork PR", async () => {
    const gh2 = await startFakeGitHub({ tokens: { ghs_read: { access: "read" } } });
    try {
      const ev = buildEvent("issue_comment.pr-fork", { body: "@agent make it shorter" });
      gh2.seedEvent(ev);
      gh2.setPermission("alice", "write");
      gh2.setPermission("ghost", null);
      const { env: eventEnv } = await writeEvent(join(tmp, "event-fork"), ev);
      // The first comment post ("Working on it…") goes through; the next two answer 502.
      gh2.failNext("POST /repos/{owner}/{repo}/issues/{n}/comments", { skip: 1, times: 2, status: 502 });
      gh2.failNext("GET /repos/*/*/issues/13", { kind: "secondary-rate-limit", status: 429, retryAfter: 0 });
      gh2.failNext("GET /repos/{owner}/{repo}", { kind: "secondary-rate-limit", retryAfter: 60 });
      gh2.failNext("GET /repos/{owner}/{repo}/pulls/{n}/files", { status: 502 });

      const r = await runNode(
        OCTOKIT_SCRIPT,
        { ...eventEnv, GITHUB_API_URL: gh2.url, GITHUB_SERVER_URL: gh2.serverUrl },
        { token: gh2.token, readToken: "ghs_read", baseUrl: gh2.url },
      );
      const out = r.result as Record<string, any>; // child JSON
      expect(Number(String(out["node"]).split(".")[0])).toBeGreaterThanOrEqual(24);
      expect(out).toMatchObject({ eventName: "issue_comment", issueNumber: 13, commentBody: "@agent make it shorter", apiUrl: gh2.url });

      // Permissions: collaborator, public-repo non-collaborator (read), missing user (404).
      expect(out["alice"]).toMatchObject({ permission: "write", role_name: "write", user: { login: "alice" } });
      expect(out["mallory"]).toMatchObject({ permission: "read" });
      expect(out["ghost"]).toEqual({ status: 404 });

      expect(out["head"]).toEqual({ repo: "mallory/octo-repo", ref: "patch-1", sha: ev.pull!.headSha, fork: true });

      // Reactions: 201 then 200 for the same one; stored once.
      expect([out["reactionStatus"], out["reactionAgainStatus"]]).toEqual([201, 200]);
      expect(gh2.reactions({ subject: "issue_comment", subjectId: ev.payload["comment"].id })).toEqual([
        expect.objectContaining({ content: "eyes", user: "github-actions[bot]" }),
      ]);

      // Comments: the original + ours (edited) + the one after retries.
      const comments = gh2.issueComments(13);
      expect(comments.map((c) => [c.user, c.body])).toEqual([
        ["alice", "@agent make it shorter"],
        ["github-actions[bot]", "Done: 2 files changed."],
        ["github-actions[bot]", "after retries"],
      ]);
      expect(out["comment"]).toMatchObject({ user: "github-actions[bot]", type: "Bot", body: "Done: 2 files changed." });
      expect(out["comment"].url).toBe(`${gh2.serverUrl}/octo-org/octo-repo/pull/13#issuecomment-${out["comment"].id}`);
      expect(out["commentCount"]).toBe(2); // paginated with per_page=1 through Link headers

      // Pull request opened as a draft, found by head, duplicate refused like GitHub.
      expect(out["pr"]).toMatchObject({ number: 14, draft: true, found: [14], dup: { status: 422 } });
      expect(out["pr"].dup.message).toMatch(/A pull request already exists for octo-org:agent\/fix-typo/);
      expect(gh2.pulls().find((p) => p.number === 14)).toMatchObject({ body: "Patch (updated)", draft: true, head: { ref: "agent/fix-typo" } });

      // Retry: two injected 502s then 201; exactly one comment stored for it. (The last
      // post is the read-only token's, refused.)
      const posts = gh2.requestsTo("POST /repos/octo-org/octo-repo/issues/13/comments");
      expect(posts.map((p) => [p.status, p.injected])).toEqual([
        [201, false],
        [502, true],
        [502, true],
        [201, false],
        [403, false],
      ]);
      expect(posts[4]!.authorization).toBe("token ghs_read");
      expect(out["retried"]).toMatchObject({ status: 201 });
      expect(out["r429"]).toBe(200);
      expect(out["r403"]).toMatchObject({ status: 403, retryAfter: "60" });
      expect(out["r403"].message).toMatch(/secondary rate limit/);
      expect(out["plain502"]).toBe(502);

      expect(out["readOnlyWrite"]).toBe(403);
      expect(out["readOnlyRead"]).toBe(200);
      expect(out["badToken"]).toBe(401);

      // Every request carried a token; nothing hit an unknown route.
      expect(gh2.requests.every((q) => /^(token|bearer) /i.test(q.authorization ?? ""))).toBe(true);
      expect(gh2.unhandled).toEqual([]);
      expect(gh2.errors).toEqual([]);
    } finally {
      await gh2.close();
    }
  });
});

describe("fake GitHub in-process", () => {
  it("review comments, reactions, reviews and a standalone artifact store", async () => {
    const gh5 = await startFakeGitHub();
    try {
      const ev = buildEvent("pull_request_review_comment", { author: "bob" });
      gh5.seedEvent(ev);
      gh5.seedEvent(buildEvent("issues.opened"));
      const octokit = getOctokit(gh5.token, { baseUrl: gh5.url });
      const o = { owner: "octo-org", repo: "octo-repo" };
      const cid = ev.payload["comment"].id as number;

      const rc = await octokit.rest.pulls.getReviewComment({ ...o, comment_id: cid });
      expect(rc.data).toMatchObject({ path: "src/greet.ts", user: { login: "bob" }, diff_hunk: expect.stringContaining("Hello") });
      await octokit.rest.reactions.createForPullRequestReviewComment({ ...o, comment_id: cid, content: "rocket" });
      await octokit.rest.reactions.createForIssue({ ...o, issue_number: 21, content: "+1" });
      await expect(octokit.rest.reactions.createForIssue({ ...o, issue_number: 21, content: "nope" as "+1" })).rejects.toMatchObject({ status: 422 });
      expect(gh5.reactions().map((r) => [r.subject, r.subjectId, r.content])).toEqual([
        ["pull_comment", cid, "rocket"],
        ["issue", 21, "+1"],
      ]);
      const reply = await octokit.rest.pulls.createReplyForReviewComment({ ...o, pull_number: 12, comment_id: cid, body: "Done in abc123" });
      expect(reply.data).toMatchObject({ in_reply_to_id: cid, path: "src/greet.ts" });
      const review = await octokit.rest.pulls.createReview({ ...o, pull_number: 12, event: "COMMENT", body: "Looks good", comments: [{ path: "src/greet.ts", line: 2, body: "nit" }] });
      expect(review.data).toMatchObject({ state: "COMMENTED", user: { login: "github-actions[bot]" } });
      expect(gh5.reviewComments(12).map((c) => c.body)).toEqual(["@agent use a template literal here and add a unit test", "Done in abc123", "nit"]);
      await expect(octokit.rest.issues.createComment({ ...o, issue_number: 21, body: "x".repeat(65537) })).rejects.toMatchObject({ status: 422 });
      await expect(octokit.rest.issues.createComment({ ...o, issue_number: 999, body: "x" })).rejects.toMatchObject({ status: 404 });
      expect(gh5.issueComments(21)).toEqual([]);

      // Without a results fake the GitHub fake serves its store's blobs itself.
      const a = gh5.artifactStore.add({ name: "agent-run-5-1", runId: 5, files: { "result.json": "{}" } });
      const listed = await octokit.rest.actions.listWorkflowRunArtifacts({ ...o, run_id: 5 });
      expect(listed.data.artifacts.map((x) => [x.id, x.name, x.workflow_run?.id])).toEqual([[a.id, "agent-run-5-1", 5]]);
      const dl = await octokit.rest.actions.downloadArtifact({ ...o, artifact_id: a.id, archive_format: "zip", request: { redirect: "manual" } });
      expect(dl.status).toBe(302);
      const location = String(dl.headers.location);
      expect(location.startsWith(gh5.url)).toBe(true);
      const blob = await fetch(location);
      expect(blob.headers.get("content-type")).toBe("application/zip");
      expect(readZipEntry(Buffer.from(await blob.arrayBuffer()), "result.json").toString()).toBe("{}");
      expect((await fetch(location.replace(/sig=[^&]+/, "sig=bad"))).status).toBe(403);
      await octokit.rest.actions.deleteArtifact({ ...o, artifact_id: a.id });
      expect(gh5.artifacts()).toEqual([]);

      // Unauthenticated → 401; unknown route → 404 and recorded.
      expect((await fetch(`${gh5.url}/repos/octo-org/octo-repo`)).status).toBe(401);
      expect((await fetch(`${gh5.url}/repos/octo-org/octo-repo/%E0%A4%A`, { headers: { authorization: `Bearer ${gh5.token}` } })).status).toBe(404);
      expect(gh5.unhandled).toHaveLength(1);
      expect(gh5.errors).toEqual([]);
    } finally {
      await gh5.close();
    }
  });
});

describe("git fixtures + fake GitHub backed by a bare origin", () => {
  let repo: GitRepoFixture;
  afterAll(async () => {
    await repo?.cleanup();
  });

  it("creates a repo with an origin and branches, and the fake reads PR heads and files from git", async () => {
    repo = await createRepo({
      fileCount: 2,
      author: { name: "Ada", email: "ada@example.com" },
      branches: { "feature/x": { "src/file-1.txt": "changed\n", "new.txt": "new\n" } },
    });
    expect(await listBranches(repo.origin)).toEqual(["feature/x", "main"]);
    expect(Object.keys(await readBranchFiles(repo.origin, "main")).sort()).toEqual(["README.md", "src/file-1.txt", "src/file-2.txt"]);
    const files = await readBranchFiles(repo.origin, "feature/x");
    expect(files["new.txt"]).toBe("new\n");
    const log = await readBranchLog(repo.origin, "feature/x");
    expect(log.map((c) => c.subject)).toEqual(["Changes on feature/x", "Initial commit"]);
    expect(log[0]).toMatchObject({ authorName: "Ada", authorEmail: "ada@example.com" });
    expect(log[0]!.files).toEqual([
      { status: "A", path: "new.txt" },
      { status: "M", path: "src/file-1.txt" },
    ]);

    const gh3 = await startFakeGitHub({ repo: { fullName: "octo-org/octo-repo", gitDir: repo.origin } });
    try {
      const octokit = getOctokit(gh3.token, { baseUrl: gh3.url });
      const o = { owner: "octo-org", repo: "octo-repo" };
      // Missing head branch → 422 like GitHub.
      await expect(octokit.rest.pulls.create({ ...o, title: "t", head: "nope", base: "main" })).rejects.toMatchObject({ status: 422 });
      const pr = await octokit.rest.pulls.create({ ...o, title: "Feature X", head: "feature/x", base: "main" });
      expect(pr.data.head.sha).toBe(log[0]!.sha);
      const prFiles = await octokit.rest.pulls.listFiles({ ...o, pull_number: pr.data.number });
      expect(prFiles.data.map((f) => [f.filename, f.status, f.additions, f.deletions])).toEqual([
        ["new.txt", "added", 1, 0],
        ["src/file-1.txt", "modified", 1, 2],
      ]);
      expect(prFiles.data[0]!.patch).toContain("+new");

      // A later push moves the head sha the API reports.
      const sha = await repo.commit({ "more.txt": "more\n" }, "More", { branch: "feature/x", push: true });
      expect((await octokit.rest.pulls.get({ ...o, pull_number: pr.data.number })).data.head.sha).toBe(sha);
      // No commits between → 422.
      await repo.git(["push", "-q", "origin", "main:refs/heads/empty"]);
      await expect(octokit.rest.pulls.create({ ...o, title: "t", head: "empty", base: "main" })).rejects.toMatchObject({
        status: 422,
        message: expect.stringMatching(/No commits between main and empty/),
      });
      expect((await octokit.rest.repos.getBranch({ ...o, branch: "feature/x" })).data.commit.sha).toBe(sha);
      expect(gh3.unhandled).toEqual([]);
    } finally {
      await gh3.close();
    }
  });
});

describe("event fixtures", () => {
  it("every fixture loads with its event name and repository", () => {
    for (const f of Object.keys(EVENT_FIXTURES) as EventFixture[]) {
      const ev = loadEvent(f);
      expect(ev.eventName).toBe(EVENT_FIXTURES[f]);
      expect(ev.payload["repository"].full_name).toBe("octo-org/octo-repo");
      if (f !== "schedule") expect(ev.payload["sender"].login).toBeTruthy();
    }
    expect(loadEvent("issue_comment.pr").payload["issue"].pull_request).toBeTruthy();
    expect(loadEvent("issue_comment.issue").payload["issue"].pull_request).toBeUndefined();
    expect(loadEvent("pull_request_review_comment").payload["comment"]).toMatchObject({ path: "src/greet.ts", diff_hunk: expect.stringContaining("@@") });
    expect(loadEvent("pull_request.opened-fork").payload["pull_request"].head.repo.full_name).toBe("mallory/octo-repo");
    expect(loadEvent("workflow_dispatch").payload["inputs"]).toHaveProperty("prompt");
    expect(loadEvent("repository_dispatch").payload["client_payload"]).toHaveProperty("prompt");
    expect(loadEvent("schedule").payload["schedule"]).toBe("0 3 * * 1");
  });

  it("the builder tweaks body, author, bot type, repo, number and fork head", async () => {
    const ev = buildEvent("issue_comment.pr", {
      body: "/agent go",
      author: "renovate[bot]",
      repo: "acme/widgets",
      number: 99,
      headRepo: "eve/widgets",
    });
    expect(ev.payload["comment"].body).toBe("/agent go");
    expect(ev.payload["comment"].user).toMatchObject({ login: "renovate[bot]", type: "Bot" });
    expect(ev.payload["sender"].login).toBe("renovate[bot]");
    expect(ev.payload["repository"]).toMatchObject({ full_name: "acme/widgets", name: "widgets", owner: { login: "acme" } });
    expect(ev.payload["issue"].number).toBe(99);
    expect(ev.payload["issue"].pull_request.url).toMatch(/\/repos\/acme\/widgets\/pulls\/99$/);
    expect(JSON.stringify(ev.payload)).not.toMatch(/octo-org|octo-repo/);
    expect(ev.pull).toMatchObject({ headRepo: "eve/widgets" });

    const fork = buildEvent("pull_request.opened", { headRepo: "eve/octo-repo", author: "eve" });
    expect(fork.payload["pull_request"].head.repo).toMatchObject({ full_name: "eve/octo-repo", fork: true });
    expect(fork.payload["pull_request"].user.login).toBe("eve");

    const gh4 = await startFakeGitHub({ repo: "acme/widgets" });
    try {
      gh4.seedEvent(ev);
      const octokit = getOctokit(gh4.token, { baseUrl: gh4.url });
      const pr = await octokit.rest.pulls.get({ owner: "acme", repo: "widgets", pull_number: 99 });
      expect(pr.data.head.repo?.full_name).toBe("eve/widgets");
      const issue = await octokit.rest.issues.get({ owner: "acme", repo: "widgets", issue_number: 99 });
      expect(issue.data.pull_request).toBeTruthy();
      const c = await octokit.rest.issues.getComment({ owner: "acme", repo: "widgets", comment_id: ev.payload["comment"].id });
      expect(c.data.user).toMatchObject({ login: "renovate[bot]", type: "Bot" });
    } finally {
      await gh4.close();
    }
  });
});
