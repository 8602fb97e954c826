/**
 * Issue #5 acceptance, delivery: pull request from an issue (and reruns that
 * update it), commit to a same-repo PR's branch (also after it moved),
 * comment for forks, stable branches for scheduled runs, workflow changes
 * refused unless allowed, and a 200 KB patch that still fits a comment.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { FIXTURE_REPO } from "../support/events.js";
import { cloneRepo, git, listBranches, readBranchFile, readBranchLog, revParse } from "../support/git-fixtures.js";
import { scenario, TOKEN, type Scenario } from "./scenario.js";
import { closeAfterEach } from "../support/close-after-each.js";

let s: Scenario | undefined;
let results: FakeActionsResults | undefined;
closeAfterEach(() => s, () => results);

const botComments = (sc: Scenario, n: number) => sc.gh.issueComments(n).filter((c) => c.user === "github-actions[bot]");

/** Each run writes a different RUN.txt, so reruns produce different commits. */
const FIX_TYPO = `sed -i 's/Teh/The/' README.md\nn=$(wc -l < "$CAPTURE/runs.log")\necho "run $n" > RUN.txt\necho "Fixed the typo (run $n)."`;

async function allRefs(dir: string): Promise<string> {
  return git(dir, ["for-each-ref", "--format=%(refname) %(objectname)"]);
}

describe("deliver: pull request", () => {
  it("@agent on an issue with deliver auto: branch pushed, draft PR with Closes #N, sticky comment finalized with the PR link; a rerun edits the same comment and updates the same PR", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX_TYPO });
    const first = await s.run();
    expect(first.exitCode).toBe(0);
    expect(first.stderr).toBe("");
    const branch = "agent/7-typo-in-readme";
    expect(first.outputs.branch).toBe(branch);
    expect(await readBranchFile(s.repo.origin, branch, "README.md")).toContain("The demo project.");
    const [commit] = await readBranchLog(s.repo.origin, branch, { max: 1 });
    expect(commit!.sha).toBe(first.outputs["commit-sha"]);
    expect(commit!.parents).toEqual([s.repo.initialSha]);

    const pulls = s.gh.pulls();
    expect(pulls).toHaveLength(1);
    const pr = pulls[0]!;
    expect(pr.draft).toBe(true);
    expect(pr.head.ref).toBe(branch);
    expect(pr.base.ref).toBe("main");
    expect(pr.body).toMatch(/^Closes #7\n/);
    expect(pr.body).toContain("/actions/runs/4242");
    expect(pr.body).toContain("Fixed the typo (run 1).");
    expect(first.outputs["pull-request-number"]).toBe(String(pr.number));
    expect(first.outputs["pull-request-url"]).toMatch(new RegExp(`/pull/${pr.number}$`));

    // 👀 on the triggering comment; one comment, finalized, with the PR link.
    expect(s.gh.reactions({ subject: "issue_comment", subjectId: 2400000101 }).map((r) => r.content)).toEqual(["eyes"]);
    const comments = botComments(s, 7);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("Agent Runner finished");
    expect(comments[0]!.body).toContain(`[#${pr.number}](${first.outputs["pull-request-url"]})`);
    expect(first.outputs["comment-url"]).toContain(`#issuecomment-${comments[0]!.id}`);
    expect(first.summary).toContain("### Delivery");

    // The rerun (same event, new attempt).
    s.gh.clearRequests();
    const second = await s.run({}, { GITHUB_RUN_ATTEMPT: "2" });
    expect(second.exitCode).toBe(0);
    expect(s.gh.pulls()).toHaveLength(1);
    expect(second.outputs["pull-request-number"]).toBe(String(pr.number));
    expect(s.gh.writes("POST /repos/*/*/pulls")).toEqual([]);
    expect(s.gh.writes("PATCH /repos/*/*/pulls/*")).toHaveLength(1);
    expect(s.gh.pulls()[0]!.body).toContain("Fixed the typo (run 2).");
    expect(await revParse(s.repo.origin, `refs/heads/${branch}`)).toBe(second.outputs["commit-sha"]);
    expect(await readBranchFile(s.repo.origin, branch, "RUN.txt")).toBe("run 2\n");
    // Force-pushed: one commit on top of main, not a pile of them.
    expect((await readBranchLog(s.repo.origin, branch)).map((c) => c.sha)).toEqual([second.outputs["commit-sha"], s.repo.initialSha]);

    const after = botComments(s, 7);
    expect(after).toHaveLength(1);
    expect(after[0]!.id).toBe(comments[0]!.id);
    expect(after[0]!.body).toContain("run 2");
    expect(s.gh.writes("POST /repos/*/*/issues/*/comments")).toEqual([]);
  });

  it("a scheduled run opens a PR on a stable branch per workflow and updates it (force-push) on the next run", async () => {
    s = await scenario({ fixture: "schedule", agent: FIX_TYPO });
    const first = await s.run({ prompt: "Fix typos." });
    expect(first.exitCode).toBe(0);
    expect(first.outputs.branch).toBe("agent/agent-nightly");
    const second = await s.run({ prompt: "Fix typos." });
    expect(second.outputs.branch).toBe("agent/agent-nightly");
    expect(s.gh.pulls()).toHaveLength(1);
    expect(second.outputs["pull-request-number"]).toBe(first.outputs["pull-request-number"]);
    expect(await revParse(s.repo.origin, "refs/heads/agent/agent-nightly")).toBe(second.outputs["commit-sha"]);
    expect(s.gh.pulls()[0]!.body).not.toContain("Closes #");
  });

  it("base-branch, branch-prefix and draft: false are honoured", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: FIX_TYPO, branches: { develop: { "DEVELOP.md": "dev\n" } } });
    const r = await s.run({ "base-branch": "develop", "branch-prefix": "bots/agent-", draft: "false" });
    expect(r.exitCode).toBe(0);
    expect(r.outputs.branch).toBe("bots/agent-7-typo-in-readme");
    const [pr] = s.gh.pulls();
    expect(pr!.base.ref).toBe("develop");
    expect(pr!.draft).toBe(false);
    expect(await readBranchFile(s.repo.origin, r.outputs.branch!, "DEVELOP.md")).toBe("dev\n");
  });

  it("a workflow_dispatch run on another branch opens its pull request against that branch", async () => {
    s = await scenario({
      fixture: "workflow_dispatch",
      agent: FIX_TYPO,
      branches: { release: { "RELEASE.md": "1.0\n" } },
      tweaks: { mutate: (p) => void (p["ref"] = "refs/heads/release") },
    });
    const r = await s.run();
    expect(r.exitCode).toBe(0);
    expect(r.outputs.branch).toBe("agent/agent");
    expect(s.gh.pulls()[0]!.base.ref).toBe("release");
    expect(await readBranchFile(s.repo.origin, "agent/agent", "RELEASE.md")).toBe("1.0\n");
  });

  it("no changes: the comment carries the final message, nothing is pushed", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: "echo 'Nothing to change: the README is fine.'" });
    const before = await allRefs(s.repo.origin);
    const r = await s.run();
    expect(r.exitCode).toBe(0);
    expect(await allRefs(s.repo.origin)).toBe(before);
    expect(s.gh.pulls()).toEqual([]);
    const [c] = botComments(s, 7);
    expect(c!.body).toContain("No changes were made.");
    expect(c!.body).toContain("Nothing to change: the README is fine.");
    expect(r.outputs.branch).toBeUndefined();
  });
});

describe("deliver: commit and comment on pull requests", () => {
  it("@agent on a same-repo PR: a commit on its head branch in origin, by the bot, co-authored by the requester", async () => {
    s = await scenario({ fixture: "issue_comment.pr", agent: "echo 'test' > greeting.test.js\necho 'Added a test.'" });
    const head = (await revParse(s.repo.origin, "refs/heads/feature/greeting"))!;
    const r = await s.run();
    expect(r.exitCode).toBe(0);
    expect(r.outputs.branch).toBe("feature/greeting");
    const [c] = await readBranchLog(s.repo.origin, "feature/greeting", { max: 1 });
    expect(c!.sha).toBe(r.outputs["commit-sha"]);
    expect(c!.parents).toEqual([head]);
    expect(c!.files).toEqual([{ status: "A", path: "greeting.test.js" }]);
    expect(c!.authorName).toBe("github-actions[bot]");
    expect(c!.subject).toBe("add a test for the greeting");
    expect(c!.body).toContain("Co-authored-by: alice <1001+alice@users.noreply.github.com>");
    expect(s.gh.pulls()).toHaveLength(1); // the PR itself, no new one
    expect(botComments(s, 12)[0]!.body).toContain(`Committed [\`${r.outputs["commit-sha"]!.slice(0, 7)}\`]`);
  });

  it("@agent on a fork PR: a comment with the patch, nothing pushed anywhere; deliver: commit asked there is done in part (⚠️ partial, saying why and what to do), deliver: auto is done (✅)", async () => {
    s = await scenario({ fixture: "issue_comment.pr-fork", agent: "echo 'fixed' > SPELLING.md\necho 'Done.'" });
    const before = await allRefs(s.repo.origin);
    const r = await s.run({ deliver: "commit" });
    expect(r.exitCode).toBe(0);
    expect(await allRefs(s.repo.origin)).toBe(before);
    expect(r.outputs["commit-sha"]).toBeUndefined();
    const [c] = botComments(s, 13);
    expect(c!.body).toContain("comes from a fork");
    expect(c!.body).toContain("<details><summary>Patch");
    expect(c!.body).toContain("+fixed");
    // A commit was asked for and none was made: not ✅ but ⚠️ partial, the comment says why and what the author can do.
    const partial = "⚠️ Agent Runner finished in part: no commit was pushed (the pull request comes from a fork)";
    expect(r.outputs.conclusion).toBe("partial");
    expect(c!.body.split("\n")).toContain(`### ${partial}`);
    expect(c!.body).not.toContain("✅");
    expect(c!.body).toContain("`deliver: commit` was asked for, but the pull request comes from a fork (mallory/octo-repo), and Agent Runner never pushes to forks.");
    expect(c!.body).toContain("the pull request's author can apply it to the head branch with `git apply` and push it");
    expect(r.summary.split("\n")).toContain(`## ${partial}`);
    expect(r.summary).toContain("| Conclusion | ⚠️ partial |");
    expect(r.summary).toContain("- ⚠️ Not done: no commit was pushed (the pull request comes from a fork).");

    // deliver: auto on a fork PR is a comment with the patch by contract (DESIGN.md): everything asked was done.
    const auto = await s.run();
    expect(auto.exitCode).toBe(0);
    expect(await allRefs(s.repo.origin)).toBe(before);
    expect(auto.outputs.conclusion).toBe("success");
    const [again, ...more] = botComments(s, 13);
    expect(more).toEqual([]);
    expect(again!.id).toBe(c!.id);
    expect(again!.body).toMatch(/^### ✅ Agent Runner finished$/m);
    expect(again!.body).toContain("The pull request comes from a fork (mallory/octo-repo); Agent Runner never pushes to forks, so the changes are in the patch below.");
    expect(again!.body).toContain("+fixed");
  });

  it("the PR branch moved after the event: the commit lands on top of the new tip", async () => {
    s = await scenario({ fixture: "issue_comment.pr", agent: "echo 'test' > greeting.test.js\necho 'Added a test.'" });
    // Someone pushes to the branch while the agent is queued.
    const other = await cloneRepo(s.repo.origin, { branch: "feature/greeting" });
    await git(other, ["commit", "-q", "--allow-empty", "-m", "meanwhile"]);
    execFileSync("sh", ["-c", "echo docs > DOCS.md && git add DOCS.md && git -c user.name=x -c user.email=x@x commit -qm docs && git push -q origin HEAD:feature/greeting"], { cwd: other });
    const moved = (await revParse(s.repo.origin, "refs/heads/feature/greeting"))!;

    // The workflow's own checkout of the old head (pr-checkout would take the new one).
    const r = await s.run({ "pr-checkout": "none" });
    expect(r.exitCode).toBe(0);
    expect(r.log).toMatch(/Branch .feature\/greeting. is at [0-9a-f]{7}, the agent started from [0-9a-f]{7}/);
    const [c] = await readBranchLog(s.repo.origin, "feature/greeting", { max: 1 });
    expect(c!.parents).toEqual([moved]);
    expect(await readBranchFile(s.repo.origin, "feature/greeting", "DOCS.md")).toBe("docs\n");
    expect(await readBranchFile(s.repo.origin, "feature/greeting", "greeting.test.js")).toBe("test\n");
  });

  it("the PR branch moved and conflicts: a clear error, nothing pushed, the outputs and the patch kept", async () => {
    s = await scenario({ fixture: "issue_comment.pr", agent: "echo 'agent version' > GREETING.md\necho 'Rewrote it.'" });
    const other = await cloneRepo(s.repo.origin, { branch: "feature/greeting" });
    execFileSync("sh", ["-c", "echo 'human version' > GREETING.md && git commit -qam human && git push -q origin HEAD:feature/greeting"], { cwd: other });
    const moved = await revParse(s.repo.origin, "refs/heads/feature/greeting");

    const r = await s.run({ "pr-checkout": "none" });
    expect(r.exitCode).toBe(1);
    expect(r.rawStdout).toMatch(/::error::.*conflict with branch .feature\/greeting. as it is now.*GREETING\.md/);
    expect(await revParse(s.repo.origin, "refs/heads/feature/greeting")).toBe(moved);
    expect(r.outputs.conclusion).toBe("failure");
    expect(readFileSync(r.outputs["patch-path"]!, "utf8")).toContain("+agent version");
    const [c] = botComments(s, 12);
    expect(c!.body).toMatch(/^### ❌ Agent Runner: delivery failed$/m);
    expect(c!.body).toContain("Delivery failed");
    expect(c!.body).toContain("+agent version");
  });
});

describe("deliver: limits", () => {
  it("a 200 KB patch: the comment stays under 65,536 characters and points to the artifact; the full patch is in the results folder", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    const big = "for i in $(seq 1 4000); do echo \"line $i of a long generated file, padded to be about fifty chars\"; done > big.txt\necho done";
    s = await scenario({ fixture: "issue_comment.issue", agent: big });
    const runtime = results.runtimeEnv({ runId: 4242, github: s.gh, repository: FIXTURE_REPO });
    const r = await s.run({ deliver: "comment" }, runtime);
    expect(r.exitCode).toBe(0);
    const patchPath = r.outputs["patch-path"]!;
    expect(statSync(patchPath).size).toBeGreaterThan(200_000);
    expect(readFileSync(patchPath, "utf8")).toContain("+line 4000 of a long generated file");

    const [c] = botComments(s, 7);
    expect(c!.body.length).toBeLessThan(65_536);
    expect(c!.body).toContain("The patch is too long for a comment");
    expect(c!.body).toContain(`[the run's artifact](${r.outputs["artifact-url"]})`);
    expect(c!.body).toContain("+line 1 of a long generated file");
    expect(c!.body).not.toContain("+line 4000 of");
    // The patch in the results folder applies and reproduces the file.
    const clean = await cloneRepo(s.repo.origin);
    execFileSync("git", ["apply", patchPath], { cwd: clean });
    expect(readFileSync(path.join(clean, "big.txt"), "utf8").split("\n")).toHaveLength(4001);
  });

  it("a patch that edits .github/workflows/ci.yml is refused and explained; with allow-workflow-changes it is delivered", async () => {
    const agent = "mkdir -p .github/workflows\necho 'on: push' > .github/workflows/ci.yml\necho 'Added CI.'";
    s = await scenario({ fixture: "issue_comment.issue", agent });
    const before = await listBranches(s.repo.origin);
    const refused = await s.run();
    expect(refused.exitCode).toBe(1);
    expect(refused.rawStdout).toMatch(/::error::.*\.github\/workflows\/ci\.yml.*allow-workflow-changes/);
    expect(await listBranches(s.repo.origin)).toEqual(before);
    expect(s.gh.pulls()).toEqual([]);
    const [c] = botComments(s, 7);
    expect(c!.body).toContain(".github/workflows/ci.yml");
    expect(c!.body).toContain("allow-workflow-changes");
    expect(c!.body).toContain("+on: push");
    // Refused, the run still reports before the step fails: its outputs and the job summary; ❌, never ✅.
    expect(c!.body).toMatch(/^### ❌ Agent Runner: the changes were refused$/m);
    expect(refused.outputs.conclusion).toBe("failure");
    expect(JSON.parse(refused.outputs["changed-files"]!)).toEqual([".github/workflows/ci.yml"]);
    expect(refused.outputs["comment-url"]).toMatch(new RegExp(`#issuecomment-${c!.id}$`));
    expect(refused.outputs["pull-request-url"]).toBeUndefined();
    // The refusal names agent paths: a code block in the summary.
    expect(refused.summary).toMatch(/- ❌ Not delivered: the patch was refused\.\n\n`{3,}text\nThe patch from this run was refused: .*\.github\/workflows\/ci\.yml/);

    const allowed = await s.run({ "allow-workflow-changes": "true" });
    expect(allowed.exitCode).toBe(0);
    expect(await readBranchFile(s.repo.origin, allowed.outputs.branch!, ".github/workflows/ci.yml")).toBe("on: push\n");
    expect(s.gh.pulls()).toHaveLength(1);
    expect(botComments(s, 7)).toHaveLength(1);
  });
});

describe("the token", () => {
  it("pushes authenticate from outside: the token is in no git config, no remote URL and not in the agent's environment", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: `env > "$CAPTURE/env.txt"\n${FIX_TYPO}` });
    const r = await s.run();
    expect(r.exitCode).toBe(0);
    expect(readFileSync(path.join(s.repo.dir, ".git/config"), "utf8")).not.toContain(TOKEN);
    expect(readFileSync(path.join(s.repo.dir, ".git/config"), "utf8")).not.toMatch(/extraheader/i);
    expect(readFileSync(path.join(s.capture, "env.txt"), "utf8")).not.toContain(TOKEN);
    expect(readFileSync(path.join(s.capture, "env.txt"), "utf8")).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString("base64"));
  });
});
