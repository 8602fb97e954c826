/**
 * Issue #35 end to end, through dist/ against the fake GitHub and the fake
 * Actions results service: a pull request of 400 files and 30,000 changed
 * lines is planned into shards (`phase: plan`, `task: review`), each shard's
 * job runs a `command` agent that records the task it got and asks for a
 * review, and gather posts ONE review. One shard's agent fails: the review
 * names its files and the conclusion is `partial`. Then a new commit: the
 * `since-last-review` plan covers only that commit.
 *
 * The 400-file pull request is made once for the file (one commit of
 * generated files), not per test.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errors } from "../artifacts/helpers.js";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import type { FakeActionsResults } from "../support/fake-actions-results.js";
import type { FakeGitHub } from "../support/fake-github.js";
import { cloneRepo, git, type GitRepoFixture } from "../support/git-fixtures.js";
import { runStep, type StepResult } from "../support/harness.js";
import { startStubModel } from "../support/stub-model.js";
import { bigPullRequest, diffHunks as prHunks, reviewAgent, shardFilesOf, type BigPullRequest, type ReviewAgent } from "./fixture.js";

const TOKEN = "ghs_reviewE2eToken0123456789abcdefABCDEFGH";
const REPO = FIXTURE_REPO;
/** This workflow run's id: the incremental review is a later run. */
let runId = 3535;
const PR = 7;
const FILES = 400;
const LINES = 75; // 400 × 75 = 30,000 added lines
const SHARD_LINES = "7500";
const FAIL_SHARD = 3;

let pull: BigPullRequest;
let agent: ReviewAgent;
let repo: GitRepoFixture;
let results: FakeActionsResults;
let gh: FakeGitHub;
let eventEnv: Record<string, string>;
let script: string;

beforeAll(async () => {
  pull = await bigPullRequest({ token: TOKEN, number: PR, files: FILES, lines: LINES });
  ({ repo, results, gh } = pull);
  ({ env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "review-event-")), buildEvent("schedule")));
  agent = reviewAgent();
  script = agent.script;
}, 120_000);
afterAll(async () => {
  await pull?.close();
  agent?.cleanup();
});

async function runJob(job: string, inputs: Record<string, string>, attempt = 1): Promise<StepResult> {
  const ws = await cloneRepo(repo.origin);
  const r = await runStep("main", {
    workspace: ws,
    inputs: { agent: "command", "agent-command": script, task: "review", "issue-number": String(PR), "review-shard-lines": SHARD_LINES, ...inputs },
    githubToken: TOKEN,
    env: { ...eventEnv, ...results.runtimeEnv({ runId, runAttempt: attempt, job, repository: REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }), GITHUB_WORKFLOW: "review" },
  });
  return r;
}

const tasks = () => agent.tasks();
const diffHunks = (from: string, to: string, file: string) => prHunks(repo.dir, from, to, file);

type Matrix = { include: { shard: number; shards: number; range: string; key: string; "issue-number": number }[] };

async function planAndRun(extra: Record<string, string> = {}): Promise<{ matrix: Matrix; legs: StepResult[] }> {
  const plan = await runJob("plan", { phase: "plan", ...extra });
  expect(errors(plan), plan.log + plan.stderr).toEqual([]);
  const matrix = JSON.parse(plan.outputs["matrix"]!) as Matrix;
  expect(plan.outputs["count"]).toBe(String(matrix.include.length));
  const legs: StepResult[] = [];
  for (const m of matrix.include)
    legs.push(await runJob(`run shard ${m.shard}`, { phase: "run", "review-shard": String(m.shard), "review-range": m.range, sandbox: "none", comment: "none", deliver: "none", env: `FAIL_SHARD=${FAIL_SHARD}`, ...extra }));
  return { matrix, legs };
}

describe("task: review, sharded on the matrix", () => {
  it("400 files / 30,000 lines: ≥4 shards, each agent sees only its shard's diff and the whole file list, gather posts one review naming every shard and the failed one's files", async () => {
    const { matrix, legs } = await planAndRun();
    expect(matrix.include.length).toBeGreaterThanOrEqual(4);
    expect(new Set(matrix.include.map((m) => m.key)).size).toBe(matrix.include.length);
    expect(gh.writes()).toEqual([]);
    legs.forEach((leg, i) => expect(leg.outputs.conclusion, leg.log).toBe(matrix.include[i]!.shard === FAIL_SHARD ? "failure" : "success"));

    // Each agent: its own shard's diff only, every file of the PR listed, the PR's description as data.
    const seen = tasks();
    expect([...seen.keys()].sort()).toEqual(matrix.include.map((m) => m.shard).sort());
    const union: string[] = [];
    for (const [, task] of seen) {
      const listed = task.split("\n").filter((l) => /^[* ] (\+\d+ -\d+|binary)\t/.test(l));
      expect(listed).toHaveLength(FILES);
      const mine = listed.filter((l) => l.startsWith("*")).map((l) => l.split("\t")[1]!);
      const diffed = [...task.matchAll(/^diff --git a\/(\S+) b\//gm)].map((m) => m[1]!);
      expect(diffed.sort()).toEqual([...mine].sort());
      expect(task).toContain("PR-DESCRIPTION-MARK");
      expect(task).toMatch(/<untrusted-github-data kind="pull-request-diff">/);
      union.push(...mine);
    }
    expect(union.sort()).toEqual([...new Set(union)].sort());
    expect(union).toHaveLength(FILES);

    const gather = await runJob("gather", { phase: "gather", items: JSON.stringify(matrix) });
    expect(errors(gather), gather.log + gather.stderr).toEqual([]);
    expect(gather.outputs["conclusion"]).toBe("partial");
    const reviews = gh.reviews(PR);
    expect(reviews).toHaveLength(1);
    const body = reviews[0]!.body;
    for (const m of matrix.include) expect(body).toMatch(new RegExp(`^\\| ${m.shard} \\|`, "m"));
    expect(body).toContain("### Not reviewed");
    const failedFiles = shardFilesOf(seen.get(FAIL_SHARD)!);
    for (const f of failedFiles.slice(0, 50)) expect(body).toContain(`\` ${f} \``);
    // Attacks: a comment on another shard's file, and one on a line outside the diff, are left out (and counted).
    expect(body).toContain("on files of another shard left out");
    expect(body).toContain("outside the reviewed diff left out");
    // Inline comments: one per reviewed shard, each on a line the PR's diff shows.
    const comments = gh.reviewComments(PR);
    expect(comments).toHaveLength(matrix.include.length - 1);
    for (const c of comments) {
      const hunks = await diffHunks("main", "feature", c.path);
      expect(hunks.some((h) => h.RIGHT.has(c.line!)), `${c.path}:${c.line}`).toBe(true);
      expect(c.body).not.toMatch(/forged|outside the diff/);
    }
    const report = JSON.parse(gather.outputs["report"]!) as { shard: number; status: string }[];
    expect(report.find((r) => r.shard === FAIL_SHARD)?.status).toBe("failed");

    // A new commit: since-last-review plans only it, and its agent sees only its diff.
    const changed = "pkg0/mod0/file000.ts";
    await repo.commit({ [changed]: "export const changed = 1;\n" + "x\n".repeat(3) }, "Follow-up", { branch: "feature", push: true });
    const before = new Set(agent.recorded());
    runId += 1;
    const next = await planAndRun({ "review-scope": "since-last-review" });
    expect(next.matrix.include).toHaveLength(1);
    const fresh = agent.recorded().filter((f) => !before.has(f));
    expect(fresh).toHaveLength(1);
    const task = agent.read(fresh[0]!);
    expect([...task.matchAll(/^diff --git a\/(\S+) b\//gm)].map((m) => m[1])).toEqual([changed]);
    expect(task).toContain("Only the commits since the last review");
    const again = await runJob("gather", { phase: "gather", items: JSON.stringify(next.matrix), "review-scope": "since-last-review" });
    expect(errors(again), again.log).toEqual([]);
    expect(again.outputs["conclusion"]).toBe("success");
    expect(gh.reviews(PR)).toHaveLength(2);
    expect(gh.reviews(PR)[1]!.body).toContain("Only the commits since the last review");
    expect(gh.unhandled).toEqual([]);
  }, 300_000);

  it("in one job (phase all): the agent's review is posted as one marked review on diff lines, never applied twice", async () => {
    const head = (await git(repo.dir, ["rev-parse", "feature"])).trim();
    const before = gh.reviews(PR).length;
    runId += 1;
    // NOTE: a comment no earlier review made (the sharded review's shard 1 made the same one on this line, which is not repeated).
    const step = await runJob("review", { phase: "all", sandbox: "none", "review-max-comments": "5", env: "NOTE= (one job)" });
    expect(errors(step), gh.reviews(PR).at(-1)?.body).toEqual([]);
    expect(step.outputs["conclusion"]).toBe("success");
    const reviews = gh.reviews(PR).slice(before);
    expect(reviews).toHaveLength(1);
    expect(reviews[0]!.body).toContain(`<!-- agent-runner-review head=${head} -->`);
    expect(reviews[0]!.body).toContain("Shard 1 summary");
    const comments = gh.reviewComments(PR).filter((c) => c.reviewId === reviews[0]!.id);
    expect(comments).toHaveLength(1);
    const hunks = await diffHunks("main", "feature", comments[0]!.path);
    expect(hunks.some((h) => h.RIGHT.has(comments[0]!.line!))).toBe(true);
  }, 120_000);

  it("in two jobs (run, then publish, as agent.yml runs it): the publish job posts the run's review with the one-job checks", async () => {
    const head = (await git(repo.dir, ["rev-parse", "feature"])).trim();
    const before = gh.reviews(PR).length;
    const beforeComments = gh.reviewComments(PR).length;
    runId += 1;
    const run = await runJob("run", { phase: "run", sandbox: "none", comment: "none", deliver: "none", env: "NOTE= (two jobs)" });
    expect(run.outputs.conclusion, run.log).toBe("success");
    expect(gh.reviews(PR)).toHaveLength(before);
    const publish = await runJob("publish", { phase: "publish", "review-max-comments": "5" });
    expect(errors(publish), publish.log + publish.stderr).toEqual([]);
    const reviews = gh.reviews(PR).slice(before);
    expect(reviews).toHaveLength(1);
    expect(reviews[0]!.body).toContain(`<!-- agent-runner-review head=${head} -->`);
    expect(reviews[0]!.body).toContain("Shard 1 summary");
    // The forged comment (a file outside the pull request) and the one outside the diff are left out, as gather leaves them out.
    expect(reviews[0]!.body).toContain("on files of another shard left out");
    expect(reviews[0]!.body).toContain("outside the reviewed diff left out");
    const comments = gh.reviewComments(PR).slice(beforeComments);
    expect(comments.map((c) => c.body)).toEqual([expect.stringContaining("Check this in shard 1 (two jobs)")]);
    const hunks = await diffHunks("main", "feature", comments[0]!.path);
    expect(hunks.some((h) => h.RIGHT.has(comments[0]!.line!))).toBe(true);
    // Publishing the same run again repeats no comment: the earlier one is this project's own.
    runId += 1;
    const again = await runJob("run", { phase: "run", sandbox: "none", comment: "none", deliver: "none", env: "NOTE= (two jobs)" });
    expect(again.outputs.conclusion).toBe("success");
    const republished = await runJob("publish", { phase: "publish" });
    expect(errors(republished), republished.log).toEqual([]);
    expect(gh.reviews(PR).slice(before)).toHaveLength(2);
    expect(gh.reviewComments(PR).slice(beforeComments)).toHaveLength(1);
    expect(gh.reviews(PR).at(-1)!.body).toContain("1 duplicate left out");
  }, 180_000);

  it("in one job: an agent that plants a textconv program in the workspace's .git cannot make the host's review run it", async () => {
    // The agent writes `diff.x.textconv` into the repository's config and `* diff=x` into its attributes, then asks
    // for a review with an inline comment (so the host computes that file's diff). Host git reading the workspace's
    // `.git` would run the program on the host; the review reads only the private repository made before the agent.
    const dir = mkdtempSync(path.join(os.tmpdir(), "review-textconv-"));
    const marker = path.join(dir, "textconv-ran");
    const textconv = path.join(dir, "textconv.sh");
    writeFileSync(textconv, `#!/bin/sh\necho ran >> "${marker}"\ncat "$1"\n`);
    chmodSync(textconv, 0o755);
    const agent = path.join(dir, "agent.sh");
    writeFileSync(
      agent,
      [
        "#!/bin/bash",
        "set -e",
        "task=$(cat)",
        `printf '[diff "x"]\\n\\ttextconv = ${textconv}\\n' >> .git/config`,
        "mkdir -p .git/info && echo '* diff=x' >> .git/info/attributes",
        "file=$(printf '%s' \"$task\" | grep -m1 '^+++ b/' | cut -c7-)",
        'printf \'{"type":"create_pull_request_review","body":"Textconv summary","event":"COMMENT","comments":[{"path":"%s","line":2,"body":"Look here","severity":"major"}]}\\n\' "$file" >> "$AGENT_SAFE_OUTPUTS"',
        "",
      ].join("\n"),
    );
    chmodSync(agent, 0o755);
    try {
      const before = gh.reviews(PR).length;
      runId += 1;
      const step = await runJob("review", { phase: "all", sandbox: "none", "agent-command": agent });
      expect(existsSync(marker), "the textconv program ran on the host").toBe(false);
      expect(errors(step), step.log + step.stderr).toEqual([]);
      const reviews = gh.reviews(PR).slice(before);
      expect(reviews).toHaveLength(1);
      expect(reviews[0]!.body).toContain("Textconv summary");
      const comments = gh.reviewComments(PR).filter((c) => c.reviewId === reviews[0]!.id);
      expect(comments.map((c) => c.body)).toEqual([expect.stringContaining("Look here")]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("in one job, a review its budget stopped says it ran out of budget, covers nothing and fails the step", async () => {
    // A `codex` on PATH that is a script: two model requests through the gateway it was given; max-model-requests 1 stops it.
    const root = mkdtempSync(path.join(os.tmpdir(), "review-budget-"));
    const bin = path.join(root, "bin");
    const stub = await startStubModel([]);
    try {
      mkdirSync(bin);
      writeFileSync(
        path.join(bin, "codex"),
        `#!/bin/bash
B=$(grep -o 'http://127.0.0.1:[0-9]*/v1' "$CODEX_HOME/config.toml" | head -1)
for i in 1 2; do
  curl -sS --noproxy '*' -o /dev/null -m 30 -H "Authorization: Bearer $OPENAI_API_KEY" -H 'content-type: application/json' -d '{"model":"stub-model","input":"review","max_output_tokens":200}' "$B/responses" || true
done
`,
      );
      chmodSync(path.join(bin, "codex"), 0o755);
      const before = gh.reviews(PR).length;
      runId += 1;
      const ws = await cloneRepo(repo.origin);
      const step = await runStep("main", {
        workspace: ws,
        inputs: {
          agent: "codex",
          "agent-version": "preinstalled",
          task: "review",
          "issue-number": String(PR),
          phase: "all",
          sandbox: "none",
          "threat-detection": "none",
          "base-url": `${stub.url}/v1`,
          model: "stub-model",
          secrets: "OPENAI_API_KEY=sk-stub-model-key-0123456789abcdef",
          "max-cost-usd": "none",
          "max-model-requests": "1",
        },
        githubToken: TOKEN,
        env: {
          ...eventEnv,
          ...results.runtimeEnv({ runId, runAttempt: 1, job: "review", repository: REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }),
          PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
          GITHUB_WORKFLOW: "review",
        },
      });
      expect(step.outputs["budget-exceeded"], step.log.slice(-3000)).toBe("true");
      expect(step.exitCode).toBe(1);
      const reviews = gh.reviews(PR).slice(before);
      expect(reviews).toHaveLength(1);
      expect(reviews[0]!.body).toContain("This review covered nothing");
      expect(reviews[0]!.body).toContain("- **Shard 1** (ran out of budget: the shard's agent was stopped by its budget");
      expect(reviews[0]!.body).not.toContain("(failed");
      expect(reviews[0]!.body).not.toContain("agent-runner-review head=");
    } finally {
      await stub.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});
