// npm run bench: the action's own overhead around a trivial agent, on a
// repository of 10,000 files: process start → agent spawn, agent exit →
// process end, peak RSS, and dist size. Later sections add per-backend and
// sandbox numbers when those suites register here.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

function makeRepo(fileCount) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-repo-"));
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: dir });
  for (let i = 0; i < fileCount; i++) {
    const sub = path.join(dir, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(sub);
    writeFileSync(path.join(sub, `f${i}.txt`), `file ${i}\n`);
  }
  execFileSync("git", ["add", "-A"], { cwd: dir });
  execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"], { cwd: dir });
  return dir;
}

/** Runs dist/main.js as the runner would and reports timings from result.json. */
async function runAction(workspace, inputs) {
  const temp = mkdtempSync(path.join(os.tmpdir(), "bench-runner-"));
  const files = Object.fromEntries(["GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"].map((k) => [k, path.join(temp, k)]));
  for (const f of Object.values(files)) writeFileSync(f, "");
  const rssFile = path.join(temp, "rss");
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: temp,
    ...files,
    ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
  };
  const preload = `data:text/javascript,process.on("exit",()=>require("fs").writeFileSync(${JSON.stringify(rssFile)},String(process.resourceUsage().maxRSS)))`.replace("require(\"fs\")", "process.getBuiltinModule(\"fs\")");
  const started = Date.now();
  const child = spawn(process.execPath, ["--import", preload, path.join(root, "dist/main.js")], { cwd: workspace, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const code = await new Promise((r) => child.on("close", r));
  const ended = Date.now();
  const outputs = readFileSync(files.GITHUB_OUTPUT, "utf8");
  const patchPath = /patch-path<<(\S+)\n(.*)\n/.exec(outputs)?.[2];
  if (code !== 0 || !patchPath) throw new Error(`bench run failed (${code}):\n${out}`);
  const result = JSON.parse(readFileSync(path.join(path.dirname(patchPath), "result.json"), "utf8"));
  const { spawnedAt, exitedAt } = result.metadata.timings;
  return {
    startToSpawn: spawnedAt - started,
    exitToEnd: ended - exitedAt,
    total: ended - started,
    rssMb: Number(readFileSync(rssFile, "utf8")) / 1024,
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dirSize = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .reduce((n, d) => n + statSync(path.join(d.parentPath, d.name)).size, 0);

const repo = makeRepo(10_000);
const rows = [];
for (const sandbox of ["none"]) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await runAction(repo, { agent: "command", "agent-command": "true", prompt: "bench", sandbox }));
  rows.push({
    case: `command 'true', 10,000 files, sandbox ${sandbox}`,
    "start→spawn ms": median(runs.map((r) => r.startToSpawn)),
    "exit→end ms": median(runs.map((r) => r.exitToEnd)),
    "total ms": median(runs.map((r) => r.total)),
    "peak RSS MB": median(runs.map((r) => r.rssMb)).toFixed(1),
  });
}
console.log(`Agent Runner overhead (median of ${RUNS} runs, node ${process.version})`);
console.table(rows);
console.log(`dist size: ${(dirSize(path.join(root, "dist")) / 1024 / 1024).toFixed(2)} MB`);
