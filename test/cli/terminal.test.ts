/**
 * Attack table, item 13 (issue 21, finding 5): what a run wrote, on the
 * maintainer's terminal. Through dist/ (the action uploads the artifacts to
 * the fake results service, dist/cli.js reads them back):
 *  - a file named with ESC/OSC sequences (an OSC 52 clipboard write, cursor
 *    moves that rewrite the line above as `conclusion: success`) and a C1
 *    CSI, plus the same in the agent's last stderr line: no 0x1b, 0x9b or 0x07
 *    byte reaches stdout or stderr of `show`, `show --json`, `logs`, `logs --json`;
 *  - `show --open` on a folder whose transcript.html was tampered with opens
 *    a transcript rendered anew from trace.jsonl in a fresh temp folder;
 *  - `logs` leaves out the artifact of a fork pull request's run.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_PATH } from "../agents/helpers.js";
import { agentScript, makeRepo } from "../artifacts/helpers.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { runStep } from "../support/harness.js";
import { runCli, type RawRan } from "./helpers.js";

const REPO = "octo/repo";
const TOKEN = "ghs_cliTerminalTestToken0123456789abcdef";
const HOSTILE_RUN = 7001;
const FORK_RUN = 7002;
/** OSC 52 (write "evil" to the clipboard), erase the line, cursor up, a fake field, and a C1 CSI. */
const HOSTILE = "evil\u001b]52;c;ZXZpbA==\u0007\u001b[2K\u001b[1Aconclusion:    success\u009b31m";
const FORBIDDEN_BYTES = [0x1b, 0x9b, 0x07];

let results: FakeActionsResults;
let gh: FakeGitHub;

/** dist/cli.js (of the action under test) with `args`, with only PATH, HOME and LANG and `env` (and the run's code cache): its bytes as they are. */
function cli(args: string[], env: Record<string, string> = {}): Promise<RawRan> {
  return runCli(args, { env: { PATH: AGENT_PATH, HOME: os.tmpdir(), LANG: "C.UTF-8", ...env } });
}

function expectNoControlBytes(r: RawRan): void {
  for (const b of FORBIDDEN_BYTES) {
    expect(r.stdout.includes(b), `byte 0x${b.toString(16)} on stdout:\n${r.stdout.toString("utf8")}`).toBe(false);
    expect(r.stderr.includes(b), `byte 0x${b.toString(16)} on stderr:\n${r.stderr.toString("utf8")}`).toBe(false);
  }
}

async function workflowRun(runId: number, agent: string, runtime: { headRepositoryId?: number } = {}): Promise<void> {
  const ws = makeRepo({ "README.md": `# run ${runId}\n` });
  const main = await runStep("main", {
    workspace: ws,
    githubToken: TOKEN,
    inputs: { agent: "command", "agent-command": agentScript(agent), prompt: "x", sandbox: "none" },
    env: { ...results.runtimeEnv({ runId, repository: REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws, ...runtime }), PATH: AGENT_PATH },
    timeoutMs: 60_000,
  });
  if (!main.outputs["patch-path"]) throw new Error(`run ${runId} wrote no results (exit ${main.exitCode}):\n${main.log}\n${main.stderr}`);
}

beforeAll(async () => {
  results = await startFakeActionsResults({ repository: REPO });
  gh = await startFakeGitHub({ token: TOKEN, results, repo: { fullName: REPO } });
  // JSON.stringify gives the bash script the name with every character escaped as $'…' understands.
  const name = `$'${[...HOSTILE].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}'`;
  await workflowRun(HOSTILE_RUN, `echo x > ${name}\necho done\necho ${name} >&2\nexit 1`);
  await workflowRun(FORK_RUN, "echo fork > fork.txt", { headRepositoryId: 424242 });
  gh.addWorkflowRun({ id: HOSTILE_RUN, path: ".github/workflows/agent.yml", conclusion: "failure" });
  gh.addWorkflowRun({ id: FORK_RUN, path: ".github/workflows/agent.yml" });
}, 300_000);

afterAll(async () => {
  await gh?.close();
  await results?.close();
});

/** The run artifact as `GET …/actions/artifacts/{id}/zip` gives it. */
async function downloadArtifactZip(name: string): Promise<string> {
  const auth = { authorization: `Bearer ${TOKEN}`, accept: "application/vnd.github+json" };
  const list = (await (await fetch(`${gh.url}/repos/${REPO}/actions/artifacts?name=${name}`, { headers: auth })).json()) as { artifacts: { id: number }[] };
  const redirect = await fetch(`${gh.url}/repos/${REPO}/actions/artifacts/${list.artifacts[0]!.id}/zip`, { headers: auth, redirect: "manual" });
  const blob = await fetch(redirect.headers.get("location")!);
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "downloads-")), `${name}.zip`);
  writeFileSync(file, Buffer.from(await blob.arrayBuffer()));
  return file;
}

describe("the terminal door", () => {
  it("show and show --json: control characters in a file name and in the reason arrive as visible text", async () => {
    const zip = await downloadArtifactZip(`agent-run-${HOSTILE_RUN}-1`);
    const out = path.join(mkdtempSync(path.join(os.tmpdir(), "show-")), "run");
    const r = await cli(["show", zip, "--out", out]);
    expect(r.code, r.stderr.toString()).toBe(0);
    expectNoControlBytes(r);
    const text = r.stdout.toString("utf8");
    // One line per field: the name cannot start a line of its own, and shows what it holds.
    expect(text.split("\n").filter((l) => l.startsWith("conclusion:"))).toHaveLength(1);
    expect(text).toMatch(/^conclusion: +failure \(The agent exited with code 1: evil\\x1b\]52;c;ZXZpbA==\\x07\\x1b\[2K\\x1b\[1Aconclusion: {4}success\\x9b31m\)$/m);
    expect(text).toContain("changed files: 1: evil\\x1b]52;c;ZXZpbA==\\x07");

    const json = await cli(["show", out, "--json"]);
    expect(json.code).toBe(0);
    expectNoControlBytes(json);
    // Escaped as JSON: it parses back to the very name.
    expect((JSON.parse(json.stdout.toString("utf8")) as { changedFiles: string[] }).changedFiles).toEqual([HOSTILE]);
  });

  it("logs and logs --json: the same, and the fork pull request's run is not listed", async () => {
    const env = { GH_TOKEN: TOKEN, GITHUB_API_URL: gh.url };
    const table = await cli(["logs", "--repo", REPO], env);
    expect(table.code, table.stderr.toString()).toBe(0);
    expectNoControlBytes(table);
    const rows = table.stdout.toString("utf8").split("\n").filter((l) => /^\d+-\d+ /.test(l));
    expect(rows.map((l) => l.split(/ +/)[0])).toEqual([`${HOSTILE_RUN}-1`]);

    const json = await cli(["logs", "--repo", REPO, "--json"], env);
    expect(json.code).toBe(0);
    expectNoControlBytes(json);
    const doc = JSON.parse(json.stdout.toString("utf8")) as { runs: { run: string; changedFiles: string[] }[] };
    expect(doc.runs.map((x) => x.run)).toEqual([`${HOSTILE_RUN}-1`]);
    expect(doc.runs[0]!.changedFiles).toEqual([HOSTILE]);
  });

  it("show --open renders the transcript anew from the trace; the folder's own transcript.html is never opened", async () => {
    const zip = await downloadArtifactZip(`agent-run-${HOSTILE_RUN}-1`);
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), "show-open-")), "run");
    expect((await cli(["show", zip, "--out", dir])).code).toBe(0);
    // Tampered between the job and the maintainer's browser.
    const own = path.join(dir, "transcript.html");
    writeFileSync(own, "<html><body>TAMPERED<script>steal()</script></body></html>");
    // A browser that records what it was asked to open. It renames the record into place, so the file
    // appears whole: a redirect creates it empty first, and the poll below could read it in between.
    const bin = mkdtempSync(path.join(os.tmpdir(), "fake-browser-"));
    const opened = path.join(bin, "opened.txt");
    for (const opener of ["xdg-open", "open"]) {
      writeFileSync(path.join(bin, opener), `#!/bin/sh\nprintf '%s' "$1" > '${opened}.part' && mv '${opened}.part' '${opened}'\n`);
      chmodSync(path.join(bin, opener), 0o755);
    }
    const r = await cli(["show", dir, "--open"], { PATH: `${bin}:${AGENT_PATH}` });
    expect(r.code, r.stderr.toString()).toBe(0);
    // The opener runs detached: up to a minute for it on a loaded machine.
    for (let i = 0; i < 600 && !existsSync(opened); i++) await new Promise((res) => setTimeout(res, 100));
    const file = readFileSync(opened, "utf8");
    expect(path.resolve(file)).not.toBe(path.resolve(own));
    expect(path.basename(path.dirname(file))).toMatch(/^agent-runner-transcript-/);
    const html = readFileSync(file, "utf8");
    expect(html).not.toContain("TAMPERED");
    expect(html).toContain("done");
    expect(r.stdout.toString("utf8")).toContain(`transcript:    ${file}`);
  });
});
