/**
 * Issue #26, `attempts: N`, through dist/main.js:
 *  - three command-agent attempts that differ (per-attempt env, random
 *    content) under a verify-command: a passing attempt is delivered (the
 *    pull request's branch holds it), `attempts` lists three with one
 *    chosen, the artifact holds every attempt's patch and trace, and the
 *    comment shows the table;
 *  - the same with pass or fail decided by $RANDOM: whatever the dice say,
 *    a passing attempt wins when there is one, and a run where none passed
 *    commits nothing;
 *  - one budget: claude with max-model-requests 2 and three attempts, each
 *    of which would need two model requests: no more than two reach the stub;
 *  - phase run then phase publish: the attempts travel in the artifact;
 *  - a job killed outright: the post step stops every attempt's leftovers;
 *  - in bwrap, each attempt sees only its own copy of the checkout;
 *  - select: judge with claude: the judge (scripted through the stub) picks
 *    attempt 2 out of three passing ones, and attempt 2's patch is delivered;
 *    a judge answering out of shape falls back to select: verify.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { FIXTURE_REPO } from "../support/events.js";
import { listBranches, readBranchFile } from "../support/git-fixtures.js";
import { runStep } from "../support/harness.js";
import { shellStep } from "../support/stub-model-tools.js";
import { startStubModel, type RecordedRequest, type StubModel, type StubStep } from "../support/stub-model.js";
import { AGENT_PATH, makeWorkspace, runAgentAction } from "../agents/helpers.js";
import { scenario, type Scenario } from "../github/scenario.js";
import { agentScript, cloneRepo, errors, makeRepo, REPOSITORY, RUN_ID, runJob } from "../artifacts/helpers.js";
import { closeAfterEach } from "../support/close-after-each.js";

const SLOW = 240_000;

interface AttemptRow {
  attempt: number;
  conclusion: string;
  verified: "passed" | "failed" | "not-run";
  changedLines: number;
  changedFiles: number;
  exitCode: number | null;
  chosen: boolean;
}

const attemptsOf = (outputs: Record<string, string>) => JSON.parse(outputs.attempts ?? "[]") as AttemptRow[];

let s: Scenario | undefined;
let results: FakeActionsResults | undefined;
closeAfterEach(() => s, () => results);

describe("attempts with a command agent and a verify-command", () => {
  it("attempts: 3: the passing attempt with the fewest changed lines is delivered; three entries, one chosen; every patch and trace in the artifact; the table in the comment", { timeout: SLOW }, async () => {
    // Attempt 1 fails the check; 2 and 3 pass, 3 with fewer changed lines. Random content: the attempts are not copies of each other.
    const agent = [
      'case "$AGENT_RUNNER_ATTEMPT" in',
      '  1) printf "fail\\nnoise %s\\n" "$RANDOM" > result.txt ;;',
      '  2) printf "pass\\nextra %s\\nmore\\n" "$RANDOM" > result.txt ;;',
      "  3) echo pass > result.txt ;;",
      "esac",
      'echo "attempt $AGENT_RUNNER_ATTEMPT wrote result.txt"',
    ].join("\n");
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    s = await scenario({ fixture: "issue_comment.issue", agent });
    const runtime = results.runtimeEnv({ runId: 4242, github: s.gh, repository: FIXTURE_REPO });
    const r = await s.run({ attempts: "3", "verify-command": "grep -qx pass result.txt", "max-fix-rounds": "0", deliver: "pull-request" }, runtime);
    expect(r.exitCode, r.log + r.stderr).toBe(0);
    expect(s.agentRuns()).toBe(3);

    const rows = attemptsOf(r.outputs);
    expect(rows.map((a) => [a.attempt, a.verified, a.chosen])).toEqual([
      [1, "failed", false],
      [2, "passed", false],
      [3, "passed", true],
    ]);
    expect(rows.map((a) => a.changedLines)).toEqual([2, 3, 1]);
    expect(rows.every((a) => a.exitCode === 0 && a.changedFiles === 1)).toBe(true);
    expect(r.outputs.verified).toBe("passed");

    // Delivered: attempt 3's change on the pull request's branch.
    expect(r.outputs.branch).toBeTruthy();
    expect(await readBranchFile(s.repo.origin, r.outputs.branch!, "result.txt")).toBe("pass\n");
    expect(s.gh.pulls()).toHaveLength(1);
    // The workspace the workflow checked out was left alone: the attempts ran in copies.
    expect(() => readFileSync(path.join(s!.repo.dir, "result.txt"))).toThrow();

    // The artifact: every attempt's patch and trace, the chosen one also as the run's.
    const files = results.artifactFiles(results.artifacts()[0]!.id);
    for (const n of [1, 2, 3]) expect(files).toEqual(expect.arrayContaining([`attempt-${n}/patch.diff`, `attempt-${n}/trace.jsonl`, `attempt-${n}/result.json`]));
    expect(files).toEqual(expect.arrayContaining(["patch.diff", "result.json", "trace.jsonl"]));
    const artifactPatch = (name: string) => results!.readArtifactFile(results!.artifacts()[0]!.id, name).toString("utf8");
    expect(artifactPatch("attempt-1/patch.diff")).toContain("+fail");
    expect(artifactPatch("attempt-2/patch.diff")).toContain("+extra ");
    expect(artifactPatch("patch.diff")).toBe(artifactPatch("attempt-3/patch.diff"));
    // No agent-written outputs of an attempt that was not chosen.
    expect(files.filter((f) => /^attempt-\d\/outputs\//.test(f))).toEqual([]);

    // The comment and the job summary show the table.
    const comment = s.gh.issueComments(7).filter((c) => c.user === "github-actions[bot]").at(-1)!.body;
    expect(comment).toContain("#### Attempts");
    expect(comment).toMatch(/\| 3 \| success \| ✅ passed \| 1 \| 1 \| 0 \| [\d.]+ s \| \*\*chosen\*\* \|/);
    expect(comment).toMatch(/\| 1 \| failure \| ❌ failed \| 2 \|/);
    expect(r.summary).toContain("### Attempts");
  });

  it("pass or fail by $RANDOM: a passing attempt is delivered when there is one; none passing commits nothing", { timeout: SLOW }, async () => {
    const agent = 'if (( RANDOM % 2 )); then echo pass > result.txt; else echo fail > result.txt; fi\necho "attempt $AGENT_RUNNER_ATTEMPT"';
    s = await scenario({ fixture: "issue_comment.issue", agent });
    const before = await listBranches(s.repo.origin);
    const r = await s.run({ attempts: "3", "verify-command": "grep -qx pass result.txt", "max-fix-rounds": "0", deliver: "pull-request" });
    const rows = attemptsOf(r.outputs);
    expect(rows).toHaveLength(3);
    expect(rows.filter((a) => a.chosen)).toHaveLength(1);
    const chosen = rows.find((a) => a.chosen)!;
    if (rows.some((a) => a.verified === "passed")) {
      expect(chosen.verified).toBe("passed");
      expect(r.exitCode, r.log).toBe(0);
      expect(await readBranchFile(s.repo.origin, r.outputs.branch!, "result.txt")).toBe("pass\n");
    } else {
      expect(chosen.verified).toBe("failed");
      expect(r.outputs.verified).toBe("failed");
      expect(r.exitCode).toBe(1);
      expect(await listBranches(s.repo.origin)).toEqual(before);
    }
    console.info(`[attempts] $RANDOM outcome: ${rows.map((a) => `${a.attempt}:${a.verified}${a.chosen ? "*" : ""}`).join(" ")}`);
  });
});

describe("attempts across two jobs", () => {
  it("phase run with attempts: 2, then phase publish: the publish job reads the attempts from the artifact (output and table)", { timeout: SLOW }, async () => {
    results = await startFakeActionsResults({ repository: REPOSITORY });
    const origin = makeRepo({ "README.md": "# r\n" });
    const agent = agentScript('for i in $(seq "$AGENT_RUNNER_ATTEMPT"); do echo "line $i" >> out.txt; done\necho "attempt $AGENT_RUNNER_ATTEMPT"');
    const run = await runJob({
      results,
      workspace: cloneRepo(origin),
      runtime: { runId: RUN_ID + 26, job: "agent" },
      inputs: { agent: "command", "agent-command": agent, prompt: "p", sandbox: "none", phase: "run", attempts: "2" },
    });
    expect(errors(run), run.log + run.stderr).toEqual([]);
    const publish = await runJob({
      results,
      workspace: cloneRepo(origin),
      runtime: { runId: RUN_ID + 26, job: "publish" },
      inputs: { agent: "command", "agent-command": "false", phase: "publish" },
    });
    expect(errors(publish), publish.log + publish.stderr).toEqual([]);
    expect(attemptsOf(publish.outputs)).toEqual(attemptsOf(run.outputs));
    expect(attemptsOf(publish.outputs).map((a) => [a.attempt, a.changedLines, a.chosen])).toEqual([
      [1, 1, true],
      [2, 2, false],
    ]);
    expect(readFileSync(publish.outputs["patch-path"]!, "utf8")).toContain("+line 1");
    expect(readFileSync(publish.outputs["patch-path"]!, "utf8")).not.toContain("+line 2");
    expect(publish.summary).toContain("### Attempts");
  });
});

describe("attempts and a job killed outright", () => {
  it("the post step stops what every attempt left behind", { timeout: SLOW }, async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const marker = `attempt-sleeper-${process.pid}-${Date.now()}`;
    // Each attempt leaves a detached sleeper; attempt 1 says so once attempt 2 has had time to start too.
    const agent = agentScript(
      [
        `setsid bash -c "exec -a ${marker}-$AGENT_RUNNER_ATTEMPT sleep 1000" </dev/null >/dev/null 2>&1 &`,
        'if [ "$AGENT_RUNNER_ATTEMPT" = 1 ]; then sleep 3; echo all-attempts-started; fi',
        "sleep 1000",
      ].join("\n"),
    );
    const sleepers = () => execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).split("\n").filter((l) => l.startsWith(marker));
    const main = await runStep("main", {
      workspace: ws,
      inputs: { agent: "command", "agent-command": agent, prompt: "hang", sandbox: "none", attempts: "2" },
      interrupt: { when: "all-attempts-started", signal: "SIGKILL" },
      timeoutMs: 60_000,
    });
    expect(main.exitCode).toBeNull();
    expect(main.state["agent-run-id"]!.split(" ")).toHaveLength(3);
    expect(sleepers().sort()).toEqual([`${marker}-1 1000`, `${marker}-2 1000`]);
    const post = await runStep("post", { workspace: ws, inputs: { agent: "command", "agent-command": agent, prompt: "hang", sandbox: "none", attempts: "2" }, runnerTemp: main.runnerTemp, state: main.state });
    expect(post.exitCode).toBe(0);
    expect(post.log).toMatch(/Stopped \d+ agent process\(es\) the main step left behind/);
    expect(sleepers()).toEqual([]);
  });
});

describe("attempts in bwrap", () => {
  it("each attempt sees only its own copy: not the other attempts, not the workspace the workflow checked out", { timeout: SLOW }, async () => {
    const ws = makeWorkspace({ "README.md": "original\n" });
    // From its copy (…/attempts/attempt-<n>/workspace/<repo>), the agent lists the attempts folder and tries the original.
    const agent = `bash -c 'ls ../../.. > seen.txt; if cat "$ORIG/README.md" > /dev/null 2>&1; then echo original-visible >> seen.txt; fi'`;
    const r = await runAgentAction({ workspace: ws, timeoutMs: SLOW, inputs: { agent: "command", "agent-command": agent, prompt: "look around", sandbox: "bwrap", attempts: "3", env: `ORIG=${ws}` } });
    expect(r.main.exitCode, r.main.log).toBe(0);
    const dir = path.dirname(r.main.outputs["patch-path"]!);
    for (const n of [1, 2, 3]) {
      const patch = readFileSync(path.join(dir, `attempt-${n}`, "patch.diff"), "utf8");
      const seen = patch.split("\n").filter((l) => l.startsWith("+") && !l.startsWith("+++")).map((l) => l.slice(1));
      expect(seen).toEqual([`attempt-${n}`]);
    }
    // The original was never written.
    expect(() => readFileSync(path.join(ws, "seen.txt"))).toThrow();
  });
});

const CLAUDE = (stub: StubModel) => ({
  agent: "claude",
  model: "claude-sonnet-4-5",
  "base-url": stub.url,
  secrets: "ANTHROPIC_API_KEY=sk-ant-test-key-attempts-0123456789",
});

/** Billed model requests at the stub (token counts, model lists and probes not included). */
const billed = (stub: StubModel, from: number) => stub.requests.slice(from).filter((r) => r.method === "POST" && !/count_tokens|:countTokens/.test(r.path)).length;

const JUDGE_MARK = "You are judging independent attempts";

describe("attempts with claude against the stub", () => {
  let stub: StubModel;
  beforeAll(async () => {
    stub = await startStubModel([]);
  });
  afterAll(async () => {
    await stub?.close();
  });

  /** Each attempt: a shell call that writes hello.txt with its attempt number, then a final answer; the judge answers `judge`. */
  const script = (judge: string) => (req: RecordedRequest): StubStep => {
    const conversation = stub.conversation(req);
    const userText = conversation.filter((c) => c.role === "user" && c.type === "text").map((c) => (c as { text: string }).text).join("\n");
    if (userText.includes(JUDGE_MARK)) return { text: judge };
    if (!conversation.some((c) => c.type === "tool_result")) return shellStep("claude", 'echo "attempt $AGENT_RUNNER_ATTEMPT" > hello.txt');
    return { text: "wrote hello.txt" };
  };

  it("one budget: max-model-requests 2 over three attempts of two requests each: at most two reach the stub", { timeout: SLOW }, async () => {
    stub.setScript(script("{}"));
    const from = stub.requests.length;
    const r = await runAgentAction({ workspace: makeWorkspace(), stub, timeoutMs: SLOW, inputs: { ...CLAUDE(stub), prompt: "Write hello.txt", attempts: "3", "max-model-requests": "2" } });
    const reached = billed(stub, from);
    console.info(`[attempts] one budget: ${reached} billed request(s) at the stub over 3 attempts; gateway ${JSON.stringify(r.result.metadata.gateway)}`);
    expect(reached).toBeLessThanOrEqual(2);
    expect(reached).toBeGreaterThanOrEqual(1);
    expect(r.main.outputs["budget-exceeded"]).toBe("true");
    expect(JSON.parse(r.main.outputs.usage!).requests).toBe(reached);
    const rows = attemptsOf(r.main.outputs);
    expect(rows).toHaveLength(3);
    expect(rows.filter((a) => a.chosen)).toHaveLength(1);
    // One gateway's record of every forwarded request, whichever attempt made it.
    expect((r.result.metadata.modelRequests as unknown[]).length).toBe(reached);
  });

  it("select: judge: the judge picks attempt 2 of three passing ones, and attempt 2 is delivered (its pull request)", { timeout: SLOW }, async () => {
    stub.setScript(script('Having read the three patches:\n{"best": 2, "reasons": ["attempt 2 names itself clearly"]}'));
    const from = stub.requests.length;
    s = await scenario({ fixture: "issue_comment.issue" });
    const r = await s.run(
      {
        ...CLAUDE(stub),
        "agent-version": "preinstalled",
        "agent-command": "",
        prompt: "Write hello.txt",
        attempts: "3",
        select: "judge",
        "verify-command": "test -f hello.txt",
        "max-fix-rounds": "0",
        deliver: "pull-request",
      },
      { PATH: AGENT_PATH },
    );
    expect(r.exitCode, r.log + r.stderr).toBe(0);
    const rows = attemptsOf(r.outputs);
    expect(rows.map((a) => [a.verified, a.chosen])).toEqual([
      ["passed", false],
      ["passed", true],
      ["passed", false],
    ]);
    // Delivered: attempt 2's file on the pull request's branch.
    expect(await readBranchFile(s.repo.origin, r.outputs.branch!, "hello.txt")).toBe("attempt 2\n");
    expect(s.gh.pulls()).toHaveLength(1);
    const dir = path.dirname(r.outputs["patch-path"]!);
    const result = JSON.parse(readFileSync(path.join(dir, "result.json"), "utf8")) as { attemptSelection?: unknown };
    expect(result.attemptSelection).toEqual({ select: "judge", reasons: ["attempt 2 names itself clearly"] });
    // The judge saw the task and all three patches, and its trace is kept.
    const judged = stub.requests.slice(from).find((q) => q.kind === "model" && JSON.stringify(q.body).includes(JUDGE_MARK))!;
    const asked = JSON.stringify(judged.body);
    for (const n of [1, 2, 3]) expect(asked).toContain(`+attempt ${n}`);
    // On a comment trigger the task is the comment's request, with the thread framed as untrusted data.
    expect(asked).toContain("## The task\\n\\nplease fix the typo in the README");
    expect(readFileSync(path.join(dir, "judge", "trace.jsonl"), "utf8")).toContain("best");
    expect(r.summary).toContain("Chosen by the judge agent");
    // The judge's reasons reach the comment as code (agent text through the Markdown door).
    const comment = s.gh.issueComments(7).filter((c) => c.user === "github-actions[bot]").at(-1)!.body;
    expect(comment).toContain("attempt 2 names itself clearly");
  });

  it("select: judge answering out of shape falls back to select: verify with a warning", { timeout: SLOW }, async () => {
    stub.setScript(script('{"best": 7}'));
    const r = await runAgentAction({
      workspace: makeWorkspace(),
      stub,
      timeoutMs: SLOW,
      inputs: { ...CLAUDE(stub), prompt: "Write hello.txt", attempts: "2", select: "judge", "verify-command": "test -f hello.txt", "max-fix-rounds": "0" },
    });
    expect(r.main.exitCode, r.main.log).toBe(0);
    expect(r.main.rawStdout).toMatch(/::warning::select: judge fell back to select: verify: the judge's answer is out of shape: best must be one of the attempts offered \(1, 2\)/);
    expect(r.result.attemptSelection?.fallback).toMatch(/out of shape/);
    // select: verify among equals: the lowest attempt number.
    expect(attemptsOf(r.main.outputs).map((a) => a.chosen)).toEqual([true, false]);
  });
});
