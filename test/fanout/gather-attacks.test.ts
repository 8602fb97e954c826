/**
 * Issue #14, `phase: gather` against hostile artifacts. Any job of the
 * workflow run (one that ran agent code included) could upload an
 * `agent-run-*` or `agent-delivery-*` artifact, so gather treats each as
 * hostile: unzipped only through publish/unzip.ts with its caps, result.json
 * and the delivery record validated with zod, links kept only to this
 * GitHub, names that are not item references shown as code, and the
 * tracking comment written through neutralizeForGitHub and found only among
 * our own comments. Each case runs dist/main.js as the runner does and
 * checks the host afterwards: files, the fake GitHub's comments, the summary.
 */
import { existsSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errors } from "../artifacts/helpers.js";
import { FIXTURE_REPO } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { runStep, type StepResult } from "../support/harness.js";

const TOKEN = "ghs_gatherAttackToken0123456789abcdefABCD";
const REPO = FIXTURE_REPO;
let results: FakeActionsResults;
let gh: FakeGitHub;
let nextRun = 9100;
const ws = mkdtempSync(path.join(os.tmpdir(), "gather-ws-"));

beforeAll(async () => {
  results = await startFakeActionsResults({ repository: REPO });
  gh = await startFakeGitHub({ token: TOKEN, results, repo: { fullName: REPO } });
});
afterAll(async () => {
  await gh?.close();
  await results?.close();
});

const good = (changedFiles: string[] = ["a.txt"]) =>
  JSON.stringify({ conclusion: "success", durationMs: 1200, usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0, costUsd: 0.01 }, diff: { changedFiles } });

function seed(runId: number, name: string, files: Record<string, string>): void {
  results.addArtifact({ name, runId, repository: REPO, files });
}

function gather(runId: number, inputs: Record<string, string> = {}, runnerTemp?: string): Promise<StepResult> {
  return runStep("main", {
    workspace: ws,
    githubToken: TOKEN,
    inputs: { agent: "command", phase: "gather", ...inputs },
    ...(runnerTemp ? { runnerTemp } : {}),
    env: {
      ...results.runtimeEnv({ runId, repository: REPO, job: "gather", github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }),
      GITHUB_EVENT_NAME: "schedule",
      GITHUB_WORKFLOW: "triage",
      GITHUB_WORKFLOW_REF: `${REPO}/.github/workflows/triage.yml@refs/heads/main`,
    },
  });
}

const report = (s: StepResult) => JSON.parse(s.outputs.report ?? "[]") as Record<string, unknown>[];

describe("gather with hostile artifacts", () => {
  it("an artifact entry escaping with ../ is refused by the one extractor: nothing lands outside, the row says unreadable, the others still count", async () => {
    const runId = nextRun++;
    const runnerTemp = mkdtempSync(path.join(os.tmpdir(), "gather-temp-"));
    seed(runId, `agent-run-${runId}-1-7`, { "result.json": good(), "../../../gather-escape-marker": "pwned" });
    seed(runId, `agent-run-${runId}-1-8`, { "result.json": good() });
    const step = await gather(runId, {}, runnerTemp);
    expect(errors(step), step.log).toEqual([]);
    expect(existsSync(path.join(runnerTemp, "gather-escape-marker"))).toBe(false);
    expect(existsSync(path.join(path.dirname(runnerTemp), "gather-escape-marker"))).toBe(false);
    const rows = report(step);
    expect(rows.find((r) => r["key"] === "7")).toMatchObject({ item: `${REPO}#7`, conclusion: "unreadable" });
    expect(String(rows.find((r) => r["key"] === "7")!["error"])).toContain("is not a plain relative path");
    expect(rows.find((r) => r["key"] === "8")).toMatchObject({ item: `${REPO}#8`, conclusion: "success", changedFiles: 1 });
  });

  it("a result.json of the wrong shape, or one past the size cap, is not used", async () => {
    const runId = nextRun++;
    seed(runId, `agent-run-${runId}-1-3`, { "result.json": JSON.stringify({ conclusion: "success", durationMs: -5, usage: {}, diff: { changedFiles: "x" } }) });
    seed(runId, `agent-run-${runId}-1-4`, { "result.json": `{"pad":"${"x".repeat(17 * 1024 * 1024)}"}` });
    const step = await gather(runId);
    expect(errors(step), step.log).toEqual([]);
    const rows = report(step);
    expect(rows.map((r) => r["conclusion"]).sort()).toEqual(["unreadable", "unreadable"]);
    expect(String(rows.find((r) => r["key"] === "4")!["error"])).toContain("more than 16777216");
  });

  it("a delivery record with outside links, another item's key or a forged item: links dropped, the forgery not used", async () => {
    const runId = nextRun++;
    seed(runId, `agent-run-${runId}-1-5`, { "result.json": good() });
    seed(runId, `agent-delivery-${runId}-1-5`, {
      "delivery.json": JSON.stringify({
        version: 1,
        item: "octo-org/octo-repo#5",
        key: "5",
        conclusion: "success",
        pullRequestUrl: "https://evil.example/octo-org/octo-repo/pull/1",
        commentUrl: "javascript:alert(1)",
      }),
    });
    seed(runId, `agent-run-${runId}-1-6`, { "result.json": good() });
    seed(runId, `agent-delivery-${runId}-1-6`, {
      "delivery.json": JSON.stringify({ version: 1, item: "victim/repo#1", key: "victim-repo-1", conclusion: "success", pullRequestUrl: `${gh.serverUrl}/victim/repo/pull/1` }),
    });
    const step = await gather(runId);
    expect(errors(step), step.log).toEqual([]);
    const rows = report(step);
    const five = rows.find((r) => r["key"] === "5")!;
    expect(five["pullRequestUrl"]).toBeUndefined();
    expect(five["commentUrl"]).toBeUndefined();
    const six = rows.find((r) => r["key"] === "6")!;
    expect(six).toMatchObject({ item: `${REPO}#6`, delivery: "unknown" });
    expect(six["pullRequestUrl"]).toBeUndefined();
    expect(step.summary).not.toContain("evil.example");
    expect(step.summary).not.toContain("javascript:");
    expect(step.summary).not.toContain("victim/repo");
    expect(step.log).toContain("names another item");
  });

  it("the delivery record's conclusion (delivery included) stands over result.json's; a record with an error is never shown as success", async () => {
    const runId = nextRun++;
    const record = (key: string, extra: Record<string, unknown>) =>
      seed(runId, `agent-delivery-${runId}-1-${key}`, { "delivery.json": JSON.stringify({ version: 1, item: `${REPO}#${key}`, key, ...extra }) });
    for (const key of ["11", "12", "13"]) seed(runId, `agent-run-${runId}-1-${key}`, { "result.json": good() });
    record("11", { conclusion: "partial", commentUrl: `${gh.serverUrl}/${REPO}/issues/11#issuecomment-1` });
    record("12", { conclusion: "success", error: "Delivery failed: Pushing to 'agent/12-x' failed." });
    record("13", { conclusion: "success", pullRequestUrl: `${gh.serverUrl}/${REPO}/pull/3` });
    const step = await gather(runId);
    expect(errors(step), step.log).toEqual([]);
    const rows = report(step);
    expect(rows.find((r) => r["key"] === "11")).toMatchObject({ conclusion: "partial", delivery: "delivered" });
    expect(rows.find((r) => r["key"] === "12")).toMatchObject({ conclusion: "failure", delivery: "failed" });
    expect(rows.find((r) => r["key"] === "13")).toMatchObject({ conclusion: "success", delivery: "delivered" });
    expect(step.summary).toMatch(new RegExp(`^\\| ${REPO}#11 \\| ⚠️ partial \\|`, "m"));
    expect(step.summary).toMatch(new RegExp(`^\\| ${REPO}#12 \\| ❌ failure \\|.*delivery failed \\|$`, "m"));
    expect(step.summary).toContain("3 items, 1 succeeded, ");
  });

  it("a delivery record speaks for its own attempt only: a re-run that left none is not shown as the earlier attempt's success; a name past this attempt, or with the attempt written another way, is not this run's; a record's item must be its key's", async () => {
    const runId = nextRun++;
    const failed = JSON.stringify({ conclusion: "failure", durationMs: 900, usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 }, diff: { changedFiles: [] } });
    // Attempt 1 delivered a pull request; attempt 2 (a re-run) failed and uploaded no record.
    seed(runId, `agent-run-${runId}-1-21`, { "result.json": good() });
    seed(runId, `agent-delivery-${runId}-1-21`, { "delivery.json": JSON.stringify({ version: 1, item: `${REPO}#21`, key: "21", conclusion: "success", pullRequestUrl: `${gh.serverUrl}/${REPO}/pull/21` }) });
    seed(runId, `agent-run-${runId}-2-21`, { "result.json": failed });
    // Names claiming attempt 9 while gather runs in attempt 2: not written by this run's jobs.
    seed(runId, `agent-run-${runId}-9-22`, { "result.json": good() });
    seed(runId, `agent-run-${runId}-2-22`, { "result.json": failed });
    seed(runId, `agent-delivery-${runId}-9-23`, { "delivery.json": JSON.stringify({ version: 1, item: `${REPO}#23`, key: "23", conclusion: "success", pullRequestUrl: `${gh.serverUrl}/${REPO}/pull/23` }) });
    // Attempt 2 again, written "02" and uploaded later: not the runner's name for it, so it is no record of item 22.
    seed(runId, `agent-delivery-${runId}-02-22`, { "delivery.json": JSON.stringify({ version: 1, item: `${REPO}#22`, key: "22", conclusion: "success", pullRequestUrl: `${gh.serverUrl}/${REPO}/pull/22` }) });
    // A record of an unplanned key that calls itself item #21.
    seed(runId, `agent-delivery-${runId}-2-zzz`, { "delivery.json": JSON.stringify({ version: 1, item: `${REPO}#21`, key: "zzz", conclusion: "success" }) });
    const step = await runStep("main", {
      workspace: ws,
      githubToken: TOKEN,
      inputs: { agent: "command", phase: "gather" },
      env: {
        ...results.runtimeEnv({ runId, runAttempt: 2, repository: REPO, job: "gather", github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }),
        GITHUB_EVENT_NAME: "schedule",
        GITHUB_WORKFLOW: "triage",
      },
    });
    expect(errors(step), step.log).toEqual([]);
    const rows = report(step);
    expect(rows.find((r) => r["key"] === "21")).toMatchObject({ conclusion: "failure", artifact: `agent-run-${runId}-2-21` });
    expect(rows.find((r) => r["key"] === "21")!["pullRequestUrl"]).toBeUndefined();
    expect(step.log).toContain(`the delivery record 'agent-delivery-${runId}-1-21' is from another attempt`);
    expect(rows.find((r) => r["key"] === "22")).toMatchObject({ conclusion: "failure", artifact: `agent-run-${runId}-2-22` });
    expect(rows.find((r) => r["key"] === "23")).toBeUndefined();
    expect(rows.filter((r) => r["item"] === `${REPO}#21`)).toHaveLength(1);
    expect(rows.find((r) => r["key"] === "zzz")!["item"]).toBe("zzz");
    // The only success is that record's own row, under its own name.
    expect(rows.filter((r) => r["conclusion"] === "success").map((r) => r["key"])).toEqual(["zzz"]);
    expect(step.summary).not.toContain("/pull/");
  });

  it("an artifact named like Markdown shows as code in the summary and posts no live image; a planted marker comment is not taken over", async () => {
    const runId = nextRun++;
    const issue = gh.addIssue({ title: "Report here" });
    // Someone pastes our tracking marker into their own comment first.
    const probe = await gather(nextRun++, { "report-issue": String(issue.number) });
    expect(errors(probe), probe.log).toEqual([]);
    const ours = gh.issueComments(issue.number)[0]!;
    const planted = gh.addComment({ issue: issue.number, user: "mallory", body: `${ours.body.split("\n")[0]}\nplanted` });
    seed(runId, "agent-run-![x](https://evil.example/p.png)", { "result.json": good() });
    const step = await gather(runId, { "report-issue": String(issue.number) });
    expect(errors(step), step.log).toEqual([]);
    expect(step.summary).toContain("| ` agent-run-![x](https://evil.example/p.png) ` | ✅ success |");
    const comments = gh.issueComments(issue.number);
    expect(comments.find((c) => c.id === planted.id)!.body).toContain("planted");
    const mine = comments.filter((c) => c.user === "github-actions[bot]");
    expect(mine).toHaveLength(1);
    expect(mine[0]!.id).toBe(ours.id);
    // Inside a code span: GitHub neither renders nor fetches it.
    expect(mine[0]!.body).toContain("| ` agent-run-![x](https://evil.example/p.png) ` |");
  });

  it("with the plan's matrix, an item that left nothing shows as missing", async () => {
    const runId = nextRun++;
    seed(runId, `agent-run-${runId}-1-1`, { "result.json": good() });
    const matrix = JSON.stringify({ include: [{ item: `${REPO}#1`, key: "1" }, { item: `${REPO}#2`, key: "2" }] });
    const step = await gather(runId, { items: matrix });
    expect(errors(step), step.log).toEqual([]);
    expect(report(step).map((r) => [r["item"], r["conclusion"]])).toEqual([
      [`${REPO}#1`, "success"],
      [`${REPO}#2`, "missing"],
    ]);
    expect(step.summary).toContain(`| ${REPO}#2 | ❔ missing |`);
  });
});

describe("report-issue: new", () => {
  it("opens one report issue per workflow run and finds it again on a rerun", async () => {
    const runId = nextRun++;
    seed(runId, `agent-run-${runId}-1-1`, { "result.json": good() });
    const before = gh.repo().issues.size;
    const first = await gather(runId, { "report-issue": "new" });
    expect(errors(first), first.log).toEqual([]);
    const opened = [...gh.repo().issues.values()].filter((i) => i.title === `Agent Runner report: triage run ${runId}`);
    expect(opened).toHaveLength(1);
    expect(gh.repo().issues.size).toBe(before + 1);
    const rerun = await runStep("main", {
      workspace: ws,
      githubToken: TOKEN,
      inputs: { agent: "command", phase: "gather", "report-issue": "new" },
      env: {
        ...results.runtimeEnv({ runId, runAttempt: 2, repository: REPO, job: "gather", github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }),
        GITHUB_WORKFLOW: "triage",
        GITHUB_WORKFLOW_REF: `${REPO}/.github/workflows/triage.yml@refs/heads/main`,
      },
    });
    expect(errors(rerun), rerun.log).toEqual([]);
    expect(gh.repo().issues.size).toBe(before + 1);
    expect(gh.issueComments(opened[0]!.number)).toHaveLength(1);
    expect(gh.issueComments(opened[0]!.number)[0]!.body).toContain(`| ${REPO}#1 | ✅ success |`);
  });
});
