/**
 * `agent-runner show` and `agent-runner logs` (issue 16), through dist/cli.js:
 * three workflow runs of the action (a real Claude Code against the stub
 * model, and two `agent: command` runs) upload their artifacts to the fake
 * results service; then
 *  - `show` on the first run's artifact zip, downloaded through the REST API
 *    as a person would, prints its summary and renders transcript.html anew;
 *  - `logs` against the fake GitHub lists the runs with the same columns and
 *    totals, `--workflow` keeps one workflow's runs, `--json` is machine-readable.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_PATH } from "../agents/helpers.js";
import { agentScript, errors, makeRepo } from "../artifacts/helpers.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { runStep } from "../support/harness.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";
import { runCli } from "./helpers.js";

const REPO = "octo/repo";
const TOKEN = "ghs_cliLogsTestToken0123456789abcdefABCD";
const KEY = "sk-ant-test-key-cli-0123456789abcdef";

let results: FakeActionsResults;
let gh: FakeGitHub;
let stub: StubModel;
const ran: Record<number, { conclusion?: string; result: { usage: { costUsd?: number } } }> = {};

interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** dist/cli.js (of the action under test) with `args`, with only PATH, HOME and LANG and `env` (and the run's code cache). */
async function cli(args: string[], env: Record<string, string> = {}): Promise<CliOutcome> {
  const r = await runCli(args, { env: { PATH: AGENT_PATH, HOME: os.tmpdir(), LANG: "C.UTF-8", ...env } });
  return { code: r.code, stdout: r.stdout.toString("utf8"), stderr: r.stderr.toString("utf8") };
}

async function workflowRun(runId: number, inputs: Record<string, string>): Promise<void> {
  const ws = makeRepo({ "README.md": `# run ${runId}\n` });
  if (inputs.agent === "claude")
    stub.setScript([
      { tool: "Write", args: { file_path: path.join(ws, "notes.txt"), content: "from the cli test\n" } },
      { tool: "Bash", args: { command: "echo ok > bash.txt" } },
      { text: "Done." },
    ]);
  const main = await runStep("main", {
    workspace: ws,
    githubToken: TOKEN,
    inputs: { "agent-version": "preinstalled", sandbox: "none", ...inputs },
    env: { ...results.runtimeEnv({ runId, repository: REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }), PATH: AGENT_PATH },
    timeoutMs: 120_000,
  });
  if (!main.outputs["patch-path"]) throw new Error(`run ${runId} wrote no results (exit ${main.exitCode}):\n${main.log}\n${main.stderr}`);
  const dir = path.dirname(main.outputs["patch-path"]);
  ran[runId] = { ...(main.outputs.conclusion ? { conclusion: main.outputs.conclusion } : {}), result: JSON.parse(readFileSync(path.join(dir, "result.json"), "utf8")) };
  if (inputs.agent === "claude") expect(errors(main), main.log).toEqual([]);
}

beforeAll(async () => {
  results = await startFakeActionsResults({ repository: REPO });
  gh = await startFakeGitHub({ token: TOKEN, results, repo: { fullName: REPO } });
  stub = await startStubModel([]);
  await workflowRun(5001, { agent: "claude", model: "claude-sonnet-4-5", "base-url": stub.url, secrets: `ANTHROPIC_API_KEY=${KEY}`, prompt: "write notes" });
  await workflowRun(5002, { agent: "command", "agent-command": agentScript("echo broken > broken.txt\nexit 3"), prompt: "fail" });
  await workflowRun(5003, { agent: "command", "agent-command": agentScript("echo fine > fine.txt"), prompt: "pass" });
  gh.addWorkflowRun({ id: 5001, path: ".github/workflows/agent.yml" });
  gh.addWorkflowRun({ id: 5002, path: ".github/workflows/agent.yml", conclusion: "failure" });
  gh.addWorkflowRun({ id: 5003, path: ".github/workflows/nightly.yml" });
}, 300_000);

afterAll(async () => {
  await stub?.close();
  await gh?.close();
  await results?.close();
});

/** The run artifact as `GET …/actions/artifacts/{id}/zip` gives it (302 to storage, fetched without the token). */
async function downloadArtifactZip(name: string): Promise<string> {
  const auth = { authorization: `Bearer ${TOKEN}`, accept: "application/vnd.github+json" };
  const list = (await (await fetch(`${gh.url}/repos/${REPO}/actions/artifacts?name=${name}`, { headers: auth })).json()) as { artifacts: { id: number }[] };
  const redirect = await fetch(`${gh.url}/repos/${REPO}/actions/artifacts/${list.artifacts[0]!.id}/zip`, { headers: auth, redirect: "manual" });
  expect(redirect.status).toBe(302);
  const blob = await fetch(redirect.headers.get("location")!);
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "downloads-")), `${name}.zip`);
  writeFileSync(file, Buffer.from(await blob.arrayBuffer()));
  return file;
}

describe("agent-runner show", () => {
  it("prints the run's summary from its artifact zip and renders transcript.html anew", async () => {
    expect(ran[5001]?.conclusion).toBe("success");
    const zip = await downloadArtifactZip("agent-run-5001-1");
    const out = path.join(mkdtempSync(path.join(os.tmpdir(), "show-")), "run");
    const r = await cli(["show", zip, "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const cost = ran[5001]!.result.usage.costUsd;
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toEqual([
      "conclusion:    success",
      expect.stringMatching(/^agent: {9}claude \S+$/),
      "model:         claude-sonnet-4-5",
      expect.stringMatching(/^started: {7}\d{4}-\d\d-\d\dT/),
      expect.stringMatching(/^duration: {6}\d+(\.\d)? m?s$/),
      expect.stringMatching(/^tokens: {8}\d+ in · 60 out · 120 cached$/),
      cost === undefined ? "cost:          unknown" : expect.stringMatching(/^cost: {10}\$\d/),
      "tools:         2 (Bash 1, Write 1)",
      "changed files: 2: bash.txt, notes.txt",
      expect.stringMatching(/^delivery: {6}not recorded/),
      expect.stringMatching(/^transcript: {4}\/.*\/agent-runner-transcript-[^/]+\/transcript\.html$/),
      `results:       ${out}`,
    ]);
    // Rendered anew from trace.jsonl into a fresh folder (the artifact's own transcript.html is never shown).
    const transcript = lines.at(-2)!.replace(/^transcript: +/, "");
    expect(existsSync(transcript)).toBe(true);
    expect(readFileSync(transcript, "utf8")).toContain('data-kind="changes"');

    const json = await cli(["show", out, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ conclusion: "success", agent: "claude", tools: 2, toolNames: { Write: 1, Bash: 1 }, changedFiles: ["bash.txt", "notes.txt"] });
  });

  it("says what is wrong with a path that is not a run", async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), "not-a-run-"));
    const r = await cli(["show", empty]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("has no result.json: give a run's results folder or its artifact zip");
    const usage = await cli(["show"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("Use: agent-runner show --help");
  });

  it("--help in the style of the CLI", async () => {
    const r = await cli(["show", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: agent-runner show <artifact\.zip \| results folder> \[options\]/);
    expect(r.stdout).toContain("--open");
    const top = await cli(["--help"]);
    expect(top.stdout).toContain("  show   Print a past run's summary");
    expect(top.stdout).toContain("  logs   List a repository's recent runs");
  });
});

describe("agent-runner logs", () => {
  const env = () => ({ GH_TOKEN: TOKEN, GITHUB_API_URL: gh.url });

  it("lists the runs' artifacts with the same columns and totals", async () => {
    const r = await cli(["logs", "--repo", REPO], env());
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^RUN +STARTED +CONCLUSION +AGENT +MODEL +DURATION +COST +TOOLS +FILES +DELIVERY$/);
    const rows = lines.slice(1, 4).map((l) => l.split(/ {2,}/));
    expect(rows.map((c) => [c[0], c[2], c[3], c[4], c[7], c[8]])).toEqual([
      ["5003-1", "success", "command", "default", "0", "1"],
      ["5002-1", "failure", "command", "default", "0", "1"],
      ["5001-1", "success", "claude", "claude-sonnet-4-5", "2", "2"],
    ]);
    expect(lines[4]).toBe("");
    expect(lines[5]).toMatch(/^runs: 3 {2}success rate: 67% \(2\/3\) {2}cost: /);
    expect(gh.unhandled).toEqual([]);
  });

  it("--workflow keeps that workflow's runs; --limit and --json", async () => {
    const r = await cli(["logs", "--repo", REPO, "--workflow", "agent.yml", "--json"], env());
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { runs: { run: string; conclusion: string }[]; totals: { runs: number; succeeded: number; successRate: number } };
    expect(doc.runs.map((x) => [x.run, x.conclusion])).toEqual([
      ["5002-1", "failure"],
      ["5001-1", "success"],
    ]);
    expect(doc.totals).toMatchObject({ runs: 2, succeeded: 1, successRate: 0.5 });

    const one = await cli(["logs", "--repo", REPO, "--limit", "1"], env());
    expect(one.stdout.trimEnd().split("\n").filter((l) => /^\d+-\d+ /.test(l))).toHaveLength(1);
    expect(gh.requestsTo("GET /repos/octo/repo/actions/workflows/agent.yml/runs")).toHaveLength(1);
    expect(gh.unhandled).toEqual([]);
  });

  it("needs a token and a repository, and says so", async () => {
    const noToken = await cli(["logs", "--repo", REPO], { GITHUB_API_URL: gh.url });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain("set GH_TOKEN");
    const badRepo = await cli(["logs", "--repo", "nope"], env());
    expect(badRepo.code).toBe(2);
    expect(badRepo.stderr).toContain("--repo: give the repository as owner/name");
    const wrong = await cli(["logs", "--repo", REPO], { GH_TOKEN: "ghs_wrong000000000000000000000000000000", GITHUB_API_URL: gh.url });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/listing the artifacts of octo\/repo failed: HTTP 401/);
    const help = await cli(["logs", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agent-runner logs --repo <owner\/name> \[--workflow <file>\] \[--limit <n>\] \[--json\]/);
  });
});
