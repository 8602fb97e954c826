/**
 * Issue #34 acceptance, through dist/ against the fake GitHub and its
 * artifact service: `@agent` with `approval: required` stages (one comment,
 * nothing else written); an allowed `/approve <digest>` publishes exactly the
 * staged bytes; every refusal of someone who may decide writes a reply naming
 * the reason and nothing else, a stranger's is refused without a reply. One
 * staged run is shared by the refusal cases.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { buildEvent, FIXTURE_REPO, writeEvent, type EventTweaks } from "../support/events.js";
import { createZip, readZipFiles } from "../support/fake-actions-results-zip.js";
import { git, listBranches, readBranchLog } from "../support/git-fixtures.js";
import { scenario, type Scenario } from "../github/scenario.js";

const STAGE_RUN = 4242;
const AGENT = [
  "sed -i 's/Teh/The/' README.md",
  'echo \'{"type":"add_labels","labels":["bug"]}\' >> "$AGENT_SAFE_OUTPUTS"',
  'echo "Fixed the typo."',
].join("\n");
const INPUTS = { approval: "required", "safe-outputs": JSON.stringify({ "add-labels": { allowed: ["bug"] } }) };

const WORKFLOW = ".github/workflows/agent.yml";

let results: FakeActionsResults;
let s: Scenario;
let digest = "";
let stagingId = 0;
let artifactName = "";
beforeAll(async () => {
  results = await startFakeActionsResults({ repository: FIXTURE_REPO });
  s = await scenario({ fixture: "issue_comment.issue", agent: AGENT, results, collaborators: { alice: "write", bob: "write", dave: "maintain", carol: "read" } });
  // The staging runs, as GitHub lists them (GET …/actions/runs/{id}): runs of this workflow on the repository itself.
  for (const id of [STAGE_RUN, 7001, 8001]) s.gh.addWorkflowRun({ id, path: WORKFLOW, repo: FIXTURE_REPO });
});
afterAll(async () => {
  await s?.close();
  await results?.close();
});

/** The decision locks in the origin: `refs/agent-runner/approvals/<digest>`. */
const lockRefs = async () =>
  (await s.repo.git(["--git-dir", s.repo.origin, "for-each-ref", "--format=%(refname)", "refs/agent-runner/approvals/"])).split("\n").filter(Boolean);

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
    artifactName = `agent-run-${STAGE_RUN}-1`;
    expect(results.artifacts({ runId: STAGE_RUN }).map((a) => a.name)).toEqual([artifactName]);
    expect(comments[0]!.body).toContain(`/approve ${digest.slice(0, 12)}`);
    expect(comments[0]!.body).toContain("+The demo project.");
    expect(comments[0]!.body).toContain("add_labels");
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);
    expect(s.gh.pulls()).toEqual([]);
    expect(s.gh.repo().issues.get(7)!.labels).toEqual([]);
    // `agent-runner show` on the step's results folder prints the approval record.
    const shown = execFileSync(process.execPath, [path.resolve("dist/cli.js"), "show", path.dirname(r.outputs["patch-path"]!)], { encoding: "utf8" });
    expect(shown).toMatch(new RegExp(`approval: +staged; digest ${digest}; staged .* from run ${STAGE_RUN} \\(artifact 'agent-run-${STAGE_RUN}-1'\\)`));
  });

  /** Nothing was written but the replies: no branch, no pull request, no label, no lock, the staging comment as staged. */
  async function expectNothingWritten() {
    expect(bot().find((c) => c.id === stagingId)!.body).toContain("waiting for approval");
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);
    expect(s.gh.pulls()).toEqual([]);
    expect(s.gh.repo().issues.get(7)!.labels).toEqual([]);
    expect((await s.repo.git(["--git-dir", s.repo.origin, "tag", "--list"])).trim()).toBe("");
    expect(await lockRefs()).toEqual([]);
  }

  const refusals: Array<[string, EventTweaks, RegExp, Record<string, string>?]> = [
    ["an edited /approve comment", { author: "bob", action: "edited", body: "/approve DIGEST" }, /the comment was edited/],
    ["the person who triggered the run", { author: "alice", body: "/approve DIGEST" }, /@alice triggered this run, and 'approval-self' is false/],
    ["a digest that matches no staged run", { author: "bob", body: "/approve 0123456789ab" }, /no staged run on this thread has the digest `0123456789ab`/],
    ["an expired staged run", { author: "bob", body: "/approve DIGEST" }, /the staged run expired at/, { AGENT_RUNNER_TEST: "1", AGENT_RUNNER_TEST_NOW: "2099-01-01T00:00:00Z" }],
  ];
  // Strangers (neither in `approvers` nor with write permission), and a thread with no staging comment of this
  // workflow: refused without a reply, so that anyone who can comment cannot make the bot write.
  const silent: Array<[string, EventTweaks, RegExp, Record<string, string>?]> = [
    ["a user with read permission", { author: "carol", body: "/approve DIGEST" }, /@carol is neither listed in 'approvers' nor has write, maintain or admin permission/],
    ["a user with no permission, twice", { author: "mallory", body: "/approve DIGEST" }, /@mallory is neither listed/],
    ["a user with no permission, twice", { author: "mallory", body: "/reject" }, /@mallory is neither listed/],
    ["a bot without write permission", { author: "dependabot[bot]", authorType: "Bot", body: "/approve DIGEST" }, /dependabot\[bot\] is neither listed/],
    [
      "another workflow's approve job (its own records only)",
      { author: "bob", body: "/approve DIGEST" },
      /there is no staging comment of this workflow on this thread/,
      { GITHUB_WORKFLOW_REF: `${FIXTURE_REPO}/.github/workflows/lenient.yml@refs/heads/main` },
    ],
  ];
  let runId = 5000;
  it(`refuses ${refusals.map(([l]) => l).join("; ")}: each with one reply naming the reason, nothing else written`, async () => {
    const before = bot().length;
    // Independent of each other: run at once, as GitHub would start them.
    const runs = await Promise.all(refusals.map(([, tweaks, , env]) => comment(runId++, { ...tweaks, body: tweaks.body!.replace("DIGEST", digest.slice(0, 12)) }, env)));
    const replies = bot().slice(before);
    expect(replies).toHaveLength(refusals.length);
    refusals.forEach(([label, , reason], i) => {
      expect(runs[i]!.exitCode, label + runs[i]!.log).toBe(0);
      expect(runs[i]!.outputs["approval-state"], label).toBe("refused");
      expect(replies.filter((c) => reason.test(c.body) && /was refused/.test(c.body)).length, label).toBe(1);
    });
    await expectNothingWritten();
  });

  it(`refuses ${silent.map(([l]) => l).join("; ")} silently: no reply, the reason in the log and the step summary`, async () => {
    const before = bot().length;
    const runs = await Promise.all(silent.map(([, tweaks, , env]) => comment(runId++, { ...tweaks, body: tweaks.body!.replace("DIGEST", digest.slice(0, 12)) }, env)));
    expect(bot().slice(before).map((c) => c.body)).toEqual([]);
    silent.forEach(([label, , reason], i) => {
      expect(runs[i]!.exitCode, label + runs[i]!.log).toBe(0);
      expect(runs[i]!.outputs["approval-state"], label).toBe("refused");
      expect(runs[i]!.log, label).toMatch(reason);
      expect(runs[i]!.log, label).toContain("without a reply");
    });
    await expectNothingWritten();
  });

  it("refuses a replaced artifact: the recomputed digest does not match", async () => {
    const [stored] = results.artifacts({ runId: STAGE_RUN });
    const original = stored!.bytes!;
    const files = Object.fromEntries([...readZipFiles(original)].map(([k, v]) => [k, v]));
    files["patch.diff"] = Buffer.from(files["patch.diff"]!.toString("utf8").replace("+The demo project.", "+The evil project."));
    const swap = (bytes: Buffer) => {
      stored!.bytes = bytes;
      stored!.digest = stored!.computedDigest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    };
    swap(createZip(files));
    try {
      const before = bot().length;
      const r = await comment(runId++, { author: "bob", body: `/approve ${digest.slice(0, 12)}` });
      expect(r.outputs["approval-state"]).toBe("refused");
      expect(bot().slice(before).map((c) => c.body)).toEqual([expect.stringMatching(/the digest does not match/)]);
      await expectNothingWritten();
    } finally {
      swap(original);
    }
  });

  it("refuses a staging run that is a fork's pull request's, or another workflow's: read from GitHub before any download", async () => {
    const cases: Array<[Parameters<Scenario["gh"]["addWorkflowRun"]>[0], RegExp]> = [
      [{ id: STAGE_RUN, path: WORKFLOW, repo: FIXTURE_REPO, headRepo: "mallory/fork" }, /ran for mallory\/fork \(a fork's pull request\)/],
      [{ id: STAGE_RUN, path: ".github/workflows/other.yml", repo: FIXTURE_REPO }, /is of the workflow '\.github\/workflows\/other\.yml', not this one/],
    ];
    try {
      for (const [seed, reason] of cases) {
        s.gh.addWorkflowRun(seed);
        const before = bot().length;
        const r = await comment(runId++, { author: "bob", body: `/approve ${digest.slice(0, 12)}` });
        expect(r.outputs["approval-state"], r.log).toBe("refused");
        expect(bot().slice(before).map((c) => c.body)).toEqual([expect.stringMatching(reason)]);
        expect(r.log).not.toContain("downloaded again");
        await expectNothingWritten();
      }
    } finally {
      // The newest seed of an id is what GitHub answers: the staging run as it was.
      s.gh.addWorkflowRun({ id: STAGE_RUN, path: WORKFLOW, repo: FIXTURE_REPO });
    }
  });

  it("two /approve at once: exactly one delivery, a PR whose tree is the staged patch on its base, the staged label applied, the audit recorded", async () => {
    const before = bot().length;
    const [a, b] = await Promise.all([
      comment(6001, { author: "bob", body: `/approve ${digest.slice(0, 12)}` }),
      comment(6002, { author: "dave", body: `/approve ${digest}` }),
    ]);
    expect([a.exitCode, b.exitCode], a.log + b.log).toEqual([0, 0]);
    const states = [a.outputs["approval-state"], b.outputs["approval-state"]].sort();
    expect(states).toEqual(["enacted", "refused"]);
    const winner = a.outputs["approval-state"] === "enacted" ? { r: a, by: "bob" } : { r: b, by: "dave" };
    expect(winner.r.outputs["approval-digest"]).toBe(digest);

    const pulls = s.gh.pulls();
    expect(pulls).toHaveLength(1);
    const pr = pulls[0]!;
    expect(pr.body).toContain(`Approved by @${winner.by}: the staged outputs with digest \`${digest}\``);
    // The PR's tree is the staged patch applied to its base, byte for byte.
    const patchFile = path.join(mkdtempSync(path.join(os.tmpdir(), "staged-patch-")), "patch.diff");
    writeFileSync(patchFile, results.readArtifactFile(artifactName, "patch.diff"));
    const index = path.join(path.dirname(patchFile), "index");
    const env = { ...process.env, GIT_INDEX_FILE: index };
    const [commit] = await readBranchLog(s.repo.origin, pr.head.ref, { max: 1 });
    await git(s.repo.origin, ["read-tree", commit!.parents[0]!], { env });
    await git(s.repo.origin, ["apply", "--cached", "--binary", patchFile], { env });
    const expected = (await git(s.repo.origin, ["write-tree"], { env })).trim();
    expect((await s.repo.git(["--git-dir", s.repo.origin, "rev-parse", `${pr.head.ref}^{tree}`])).trim()).toBe(expected);
    expect(commit!.parents[0]).toBe(s.repo.initialSha);
    expect(await s.repo.git(["--git-dir", s.repo.origin, "log", "-1", "--format=%B", pr.head.ref])).toContain(`Approval-digest: ${digest}`);
    // The lock: a ref outside refs/tags and refs/heads (creating it starts no workflow), on a root commit the
    // action made, not on the staged base commit (which can be a fork's).
    expect(await lockRefs()).toEqual([`refs/agent-runner/approvals/${digest}`]);
    expect((await s.repo.git(["--git-dir", s.repo.origin, "tag", "--list"])).trim()).toBe("");
    const lock = (await s.repo.git(["--git-dir", s.repo.origin, "rev-list", "--parents", "-n", "1", `refs/agent-runner/approvals/${digest}`])).trim().split(" ");
    expect(lock).toHaveLength(1);
    expect(lock[0]).not.toBe(s.repo.initialSha);
    expect(await s.repo.git(["--git-dir", s.repo.origin, "ls-tree", "--name-only", lock[0]!])).toBe("DECISION\n");
    // The staged safe output, applied once.
    expect(s.gh.repo().issues.get(7)!.labels).toEqual(["bug"]);
    // The loser: one reply naming why; the staging comment records the approval.
    const comments = bot();
    const staging = comments.find((c) => c.id === stagingId)!;
    expect(staging.body).toContain(`Approved by @${winner.by}`);
    expect(staging.body).toContain("published");
    expect(comments.filter((c) => /was taken first|already enacting|already enacted/.test(c.body))).toHaveLength(1);
    const shown = execFileSync(process.execPath, [path.resolve("dist/cli.js"), "show", path.dirname(winner.r.outputs["patch-path"]!)], { encoding: "utf8" });
    expect(shown).toMatch(new RegExp(`approval: +enacted by @${winner.by} at \\S+; digest ${digest}`));
    expect(comments.length).toBeGreaterThan(before);
  });

  it("refuses a second approval after the first was enacted", async () => {
    const before = bot().length;
    const pullsBefore = s.gh.pulls().length;
    const r = await comment(runId++, { author: "bob", body: `/approve ${digest.slice(0, 12)}` });
    expect(r.outputs["approval-state"]).toBe("refused");
    expect(bot()).toHaveLength(before + 1);
    expect(bot().at(-1)!.body).toMatch(/was already enacted by @/);
    expect(s.gh.pulls()).toHaveLength(pullsBefore);
  });

  it("/reject: the staging comment records it, a reply says so, and a later /approve is refused", async () => {
    const staged = await comment(7001, { author: "alice", body: "@agent please fix the typo in the README" });
    expect(staged.outputs["approval-state"], staged.log).toBe("staged");
    const second = staged.outputs["approval-digest"]!;
    expect(second).not.toBe(digest);
    const pullsBefore = s.gh.pulls().length;
    // A decision already taken (the lock exists, as while an /approve is publishing): /reject records nothing.
    const lockRef = `refs/agent-runner/approvals/${second}`;
    await s.repo.git(["--git-dir", s.repo.origin, "update-ref", lockRef, s.repo.initialSha]);
    const raced = await comment(7004, { author: "bob", body: "/reject" });
    expect(raced.outputs["approval-state"], raced.log).toBe("refused");
    expect(bot().at(-1)!.body).toMatch(/was already decided by another `\/approve` or `\/reject`/);
    expect(bot().find((c) => c.body.includes(second) && c.body.includes("waiting for approval"))).toBeDefined();
    await s.repo.git(["--git-dir", s.repo.origin, "update-ref", "-d", lockRef]);
    const rejected = await comment(7002, { author: "bob", body: "/reject" });
    expect(rejected.outputs["approval-state"]).toBe("rejected");
    const staging = bot().find((c) => c.body.includes(second) && c.body.includes("Rejected by @bob"));
    expect(staging).toBeDefined();
    expect(bot().at(-1)!.body).toContain("rejected the staged run");
    // The rejection took the same lock as an approval, on a commit of the action's own.
    expect(await lockRefs()).toContain(lockRef);
    expect((await s.repo.git(["--git-dir", s.repo.origin, "rev-parse", lockRef])).trim()).not.toBe(s.repo.initialSha);
    const late = await comment(7003, { author: "bob", body: `/approve ${second.slice(0, 12)}` });
    expect(late.outputs["approval-state"]).toBe("refused");
    expect(bot().at(-1)!.body).toMatch(/was already rejected by @bob/);
    expect(s.gh.pulls()).toHaveLength(pullsBefore);
  });

  it("a base that moved so that the approved patch no longer applies: said so, nothing pushed, no merge attempted", async () => {
    const staged = await comment(8001, { author: "alice", body: "@agent please fix the typo in the README" });
    const third = staged.outputs["approval-digest"]!;
    const branch = s.gh.pulls()[0]!.head.ref;
    const branchBefore = (await s.repo.git(["--git-dir", s.repo.origin, "rev-parse", branch])).trim();
    await s.repo.commit({ "README.md": "# Demo\n\nTeh demo project, rewritten upstream.\n" }, "Upstream rewrite", { branch: "main", push: true });
    const r = await comment(8002, { author: "bob", body: `/approve ${third.slice(0, 12)}` });
    expect(r.exitCode).toBe(1);
    expect(r.log).toContain("the approved patch does not apply as it is");
    expect((await s.repo.git(["--git-dir", s.repo.origin, "rev-parse", branch])).trim()).toBe(branchBefore);
    expect(s.gh.pulls()).toHaveLength(1);
    const staging = bot().find((c) => c.body.includes(third))!;
    expect(staging.body).toMatch(/but nothing was published/);
  });
});
