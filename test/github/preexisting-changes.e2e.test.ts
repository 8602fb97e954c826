/**
 * Issue #20, changes an earlier workflow step made: before the action's step,
 * the workspace holds an untracked `context.md` and a modified `notes.md`
 * (and an untracked file whose name is Markdown). The agent edits both, plus
 * a source file, and adds a file of its own. The rule: the delivered patch is
 * made against the base commit and always applies to it; paths already
 * changed before the agent started are left out, whether or not the agent
 * touched them, and named in a warning, the job summary, the comment and the
 * `excluded-files` output. Checked for every delivery through dist/main.js
 * (comment, commit, pull request, run job → publish job) and for the local
 * CLI through dist/cli.js.
 */
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURE_REPO } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { cloneRepo, createRepo, git, revParse } from "../support/git-fixtures.js";
import { ACTION_ROOT, type StepResult } from "../support/harness.js";
import { scenario, type Scenario } from "./scenario.js";
import { closeAfterEach } from "../support/close-after-each.js";

let s: Scenario | undefined;
let results: FakeActionsResults | undefined;
closeAfterEach(() => s, () => results);

const WEIRD = "we`ird *bold* <b>.md";
const FILES = { "README.md": "# Demo\n\nTeh demo project.\n", "notes.md": "base notes\n", "src/app.js": "console.log('hello');\n" };
/** The earlier step: a new file, a changed tracked file, a new file named like Markdown. */
function earlierStep(workspace: string): void {
  writeFileSync(path.join(workspace, "context.md"), "context from an earlier step\n");
  writeFileSync(path.join(workspace, "notes.md"), "notes changed by an earlier step\n");
  writeFileSync(path.join(workspace, WEIRD), "also from the earlier step\n");
}
const AGENT = [
  'echo "agent line" >> context.md',
  'echo "agent notes" >> notes.md',
  "echo \"console.log('agent');\" >> src/app.js",
  "echo 'agent only' > NEW.md",
  "echo 'Edited the context and the app.'",
].join("\n");

const EXCLUDED = ["context.md", "notes.md", WEIRD];
const CHANGED = ["NEW.md", "src/app.js"];
const APP_AFTER = "console.log('hello');\nconsole.log('agent');\n";

/** `git apply` the patch onto a clean checkout of `base`: it must apply, and give the agent's own changes only. */
async function expectAppliesToBase(origin: string, base: string, patch: Buffer): Promise<void> {
  const clean = await cloneRepo(origin);
  await git(clean, ["checkout", "-q", "--detach", base]);
  const patchFile = path.join(mkdtempSync(path.join(os.tmpdir(), "patch-")), "patch.diff");
  writeFileSync(patchFile, patch);
  await git(clean, ["apply", "--binary", patchFile]);
  expect(readFileSync(path.join(clean, "src/app.js"), "utf8")).toBe(APP_AFTER);
  expect(readFileSync(path.join(clean, "NEW.md"), "utf8")).toBe("agent only\n");
  expect(readFileSync(path.join(clean, "notes.md"), "utf8")).toBe("base notes\n");
  expect(existsSync(path.join(clean, "context.md"))).toBe(false);
  expect(existsSync(path.join(clean, WEIRD))).toBe(false);
}

/** What a delivered commit holds: the agent's own changes on top of `parent`, nothing of the earlier step. */
function expectDeliveredTree(origin: string, commit: string, parent: string): void {
  const changed = execFileSync("git", ["diff", "--name-only", "-z", parent, commit], { cwd: origin, encoding: "utf8" }).split("\0").filter(Boolean);
  expect(changed).toEqual(CHANGED);
  expect(execFileSync("git", ["show", `${commit}:src/app.js`], { cwd: origin, encoding: "utf8" })).toBe(APP_AFTER);
}

/** The warning, the summary and the output name every excluded path; the summary escapes them as code. */
function expectNamed(r: StepResult): void {
  expect(JSON.parse(r.outputs["excluded-files"]!)).toEqual(EXCLUDED);
  expect(JSON.parse(r.outputs["changed-files"]!)).toEqual(CHANGED);
  const warning = r.rawStdout.split("\n").find((l) => l.startsWith("::warning::Left out of the patch"));
  expect(warning).toBe(`::warning::Left out of the patch: context.md (the agent changed it too), notes.md (the agent changed it too), ${WEIRD}. ` +
    "These paths were already changed relative to the base commit before the agent started (by an earlier step of the job, or the base branch's " +
    "agent configuration put back on a pull request); the patch is made against the base commit and never carries them.");
  expect(r.summary).toContain("### Left out of the patch (3)");
  expect(r.summary).toContain("- ` context.md `\n- ` notes.md `\n- `` we`ird *bold* <b>.md ``");
  expect(r.rawStdout).not.toContain("::error::");
}

function expectComment(body: string): void {
  expect(body).toContain("<summary>Left out of the patch (3)</summary>");
  expect(body).toContain("- ` context.md `\n- ` notes.md `\n- `` we`ird *bold* <b>.md ``");
}

function artifactPatch(r: FakeActionsResults, runId: number): Buffer {
  const [artifact] = r.artifacts({ runId }).filter((a) => a.name.startsWith("agent-run-"));
  return r.readArtifactFile(artifact!.id, "patch.diff");
}

const bot = (sc: Scenario, n: number) => sc.gh.issueComments(n).filter((c) => c.user === "github-actions[bot]");

describe("changes an earlier step made are left out of the patch", () => {
  it("deliver: comment", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    s = await scenario({ fixture: "issue_comment.issue", files: FILES, agent: AGENT, beforeStep: earlierStep });
    const base = (await revParse(s.repo.origin, "refs/heads/main"))!;
    const r = await s.run({ deliver: "comment" }, results.runtimeEnv({ runId: 5201, github: s.gh, repository: FIXTURE_REPO }));
    expect(r.exitCode, r.log).toBe(0);
    expectNamed(r);
    await expectAppliesToBase(s.repo.origin, base, artifactPatch(results, 5201));
    const [c] = bot(s, 7);
    expectComment(c!.body);
    expect(c!.body).toContain("+console.log('agent');");
    expect(c!.body).not.toContain("+context from an earlier step");
  });

  it("deliver: commit on a same-repo PR", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    s = await scenario({ fixture: "issue_comment.pr", files: FILES, agent: AGENT, beforeStep: earlierStep });
    const head = (await revParse(s.repo.origin, "refs/heads/feature/greeting"))!;
    const r = await s.run({}, results.runtimeEnv({ runId: 5202, github: s.gh, repository: FIXTURE_REPO }));
    expect(r.exitCode, r.log).toBe(0);
    expectNamed(r);
    expect(r.outputs.branch).toBe("feature/greeting");
    expectDeliveredTree(s.repo.origin, r.outputs["commit-sha"]!, head);
    await expectAppliesToBase(s.repo.origin, head, artifactPatch(results, 5202));
    expectComment(bot(s, 12)[0]!.body);
  });

  it("deliver: pull request", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    s = await scenario({ fixture: "issue_comment.issue", files: FILES, agent: AGENT, beforeStep: earlierStep });
    const base = (await revParse(s.repo.origin, "refs/heads/main"))!;
    const r = await s.run({}, results.runtimeEnv({ runId: 5203, github: s.gh, repository: FIXTURE_REPO }));
    expect(r.exitCode, r.log).toBe(0);
    expectNamed(r);
    expect(s.gh.pulls()).toHaveLength(1);
    expectDeliveredTree(s.repo.origin, r.outputs["commit-sha"]!, base);
    await expectAppliesToBase(s.repo.origin, base, artifactPatch(results, 5203));
    expectComment(bot(s, 7)[0]!.body);
  });

  it("two jobs: the run job leaves them out, the publish job names them from the artifact (summary, comment, output) and opens the pull request", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    const r0 = results;
    s = await scenario({ fixture: "issue_comment.issue", files: FILES, agent: AGENT, beforeStep: earlierStep });
    const sc = s;
    const base = (await revParse(s.repo.origin, "refs/heads/main"))!;
    const env = (job: string) => r0.runtimeEnv({ runId: 5204, job, github: sc.gh, repository: FIXTURE_REPO });
    const run = await s.run({ phase: "run" }, env("agent"));
    expect(run.exitCode, run.log).toBe(0);
    expectNamed(run);
    const publish = await s.run({ phase: "publish", "agent-command": "" }, env("publish"));
    expect(publish.exitCode, publish.log).toBe(0);
    expect(publish.rawStdout).not.toContain("::error::");
    expect(JSON.parse(publish.outputs["excluded-files"]!)).toEqual(EXCLUDED);
    expect(JSON.parse(publish.outputs["changed-files"]!)).toEqual(CHANGED);
    expect(publish.summary).toContain("### Left out of the patch (3)");
    expectDeliveredTree(s.repo.origin, publish.outputs["commit-sha"]!, base);
    await expectAppliesToBase(s.repo.origin, base, readFileSync(publish.outputs["patch-path"]!));
    expectComment(bot(s, 7)[0]!.body);
  });

  it("the local CLI: dist/cli.js run leaves them out too, names them, and its patch applies to the base", async () => {
    const repo = await createRepo({ files: FILES });
    try {
      const base = (await repo.git(["rev-parse", "HEAD"])).trim();
      earlierStep(repo.dir);
      const script = path.join(mkdtempSync(path.join(os.tmpdir(), "agent-")), "agent.sh");
      writeFileSync(script, `#!/bin/bash\nset -e\ncat > /dev/null\n${AGENT}\n`, { mode: 0o755 });
      const resultsDir = path.join(mkdtempSync(path.join(os.tmpdir(), "cli-results-")), "results");
      const args = ["run", "--agent", "command", "--agent-command", script, "--prompt", "Edit", "--sandbox", "none", "--results-dir", resultsDir];
      const out = await cli(args, repo.dir);
      expect(out.code, out.stdout + out.stderr).toBe(0);
      expect(out.stderr).toContain(`Left out of the patch: context.md (the agent changed it too), notes.md (the agent changed it too), ${WEIRD}.`);
      expect(out.stdout).toContain("changed files: NEW.md, src/app.js");
      const outputs = JSON.parse(readFileSync(path.join(resultsDir, "outputs.json"), "utf8")) as Record<string, string>;
      expect(JSON.parse(outputs["excluded-files"]!)).toEqual(EXCLUDED);
      expect(readFileSync(path.join(resultsDir, "summary.md"), "utf8")).toContain("### Left out of the patch (3)");
      await expectAppliesToBase(repo.origin, base, readFileSync(path.join(resultsDir, "patch.diff")));
      // The workspace itself is left as the agent left it.
      expect(readFileSync(path.join(repo.dir, "context.md"), "utf8")).toBe("context from an earlier step\nagent line\n");
    } finally {
      await repo.cleanup();
    }
  });
});

function cli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [path.join(ACTION_ROOT, "dist/cli.js"), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: os.tmpdir(), LANG: "C.UTF-8" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}
