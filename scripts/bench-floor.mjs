// npm run bench:floor: the action's start-up cost against the least any step must pay.
// - `agent-runner --help` against a bare `node -e ''`;
// - the whole main step around `agent: command`, `agent-command: true` (sandbox none) on a repository
//   of 10,000 files, against the floor: Node's start plus two git snapshots with fresh indexes
//   (what the runner's baseline and end-of-run snapshots cost at the least).
// CPU is user + sys of the process and its children (robust on a busy machine); wall is elapsed.
// Medians of BENCH_RUNS (default 5). BENCH_DIST points at another build to compare (default dist/).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeRepo, median } from "./bench/common.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.resolve(process.env.BENCH_DIST ?? path.join(root, "dist"));
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

/** Runs a shell command under bash's `time`: wall and CPU (children included) in ms. */
function timed(command, { env = process.env, cwd = root } = {}) {
  const tf = path.join(os.tmpdir(), `bench-floor-${process.pid}`);
  const r = spawnSync("bash", ["-c", `TIMEFORMAT='%R %U %S'; { time { ${command} ; } ; } 2>"$BENCH_TF"`], { env: { ...env, BENCH_TF: tf }, cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${command} failed:\n${r.stdout}${r.stderr}`);
  const [real, user, sys] = readFileSync(tf, "utf8").trim().split("\n").pop().split(" ").map(Number);
  rmSync(tf, { force: true });
  return { wall: real * 1000, cpu: (user + sys) * 1000 };
}


export async function stepVersusFloor() {
  const repo = makeRepo(10_000, "bench-floor-repo-");
  const node = JSON.stringify(process.execPath);
  const rows = { "node -e ''": [], "agent-runner --help": [], "step: command true, 10,000 files": [], "floor: node + 2 fresh-index snapshots": [] };
  const [nodeRow, helpRow, stepRow, floorRow] = Object.values(rows);
  for (let i = 0; i < RUNS; i++) {
    nodeRow.push(timed(`${node} -e ''`));
    helpRow.push(timed(`${node} ${JSON.stringify(path.join(dist, "cli.js"))} --help >/dev/null`));
    const temp = mkdtempSync(path.join(os.tmpdir(), "bench-floor-runner-"));
    const files = Object.fromEntries(["GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"].map((k) => [k, path.join(temp, k)]));
    for (const f of Object.values(files)) writeFileSync(f, "");
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, GITHUB_WORKSPACE: repo, RUNNER_TEMP: temp, ...files, INPUT_AGENT: "command", "INPUT_AGENT-COMMAND": "true", INPUT_PROMPT: "bench", INPUT_SANDBOX: "none" };
    stepRow.push(timed(`${node} ${JSON.stringify(path.join(dist, "main.js"))} >/dev/null`, { env, cwd: repo }));
    const snapshot = (k) => `GIT_INDEX_FILE=${temp}/index-${k} git add -A && GIT_INDEX_FILE=${temp}/index-${k} git write-tree >/dev/null`;
    floorRow.push(timed(`${node} -e '' && ${snapshot(1)} && ${snapshot(2)}`, { cwd: repo }));
    rmSync(temp, { recursive: true, force: true });
  }
  rmSync(repo, { recursive: true, force: true });
  const table = Object.entries(rows).map(([name, runs]) => ({ case: name, "CPU ms": Math.round(median(runs.map((r) => r.cpu))), "wall ms": Math.round(median(runs.map((r) => r.wall))) }));
  console.log(`dist: ${dist}, median of ${RUNS}`);
  console.table(table);
  console.log(`step over floor: ${table[2]["CPU ms"] - table[3]["CPU ms"]} ms CPU, ${table[2]["wall ms"] - table[3]["wall ms"]} ms wall`);
}

if (import.meta.url === `file://${process.argv[1]}`) await stepVersusFloor();
