// npm run bench: the action's own overhead around a trivial agent
// (`agent: command` running `true`) on repositories of 1,000, 10,000 and
// 100,000 files (BENCH_SIZES to change): step start → agent spawn, agent exit →
// step end, peak RSS of the action's process, and dist size. Later sections add
// per-backend and sandbox numbers. BENCH_SECTIONS picks sections
// (default "floor,overhead,trace,gateway,agents,attempts,secrets,review,ledger").
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeRepo, median } from "./bench/common.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** Runs for the largest repositories, where one run takes seconds. */
const RUNS_LARGE = Number(process.env.BENCH_RUNS_LARGE ?? 3);
const SIZES = (process.env.BENCH_SIZES ?? "1000,10000,100000").split(",").map(Number).filter((n) => n > 0);
const SECTIONS = new Set((process.env.BENCH_SECTIONS ?? "floor,overhead,trace,gateway,agents,attempts,secrets,review,ledger").split(",").map((x) => x.trim()));


/** Runs dist/main.js as the runner would and reports timings from result.json. */
async function runAction(workspace, inputs, { keepLog = true } = {}) {
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
  // A huge run's live log is drained, not kept: the bench must not hold it in memory.
  child.stdout.on("data", (d) => (out = keepLog ? out + d : (out + d).slice(-4000)));
  child.stderr.on("data", (d) => (out = keepLog ? out + d : (out + d).slice(-4000)));
  const code = await new Promise((r) => child.on("close", r));
  const ended = Date.now();
  const outputs = readFileSync(files.GITHUB_OUTPUT, "utf8");
  const patchPath = /patch-path<<(\S+)\n(.*)\n/.exec(outputs)?.[2];
  if (code !== 0 || !patchPath) throw new Error(`bench run failed (${code}):\n${out}`);
  const result = JSON.parse(readFileSync(path.join(path.dirname(patchPath), "result.json"), "utf8"));
  const { spawnedAt, exitedAt } = result.metadata.timings;
  return {
    resultsDir: path.dirname(patchPath),
    startToSpawn: spawnedAt - started,
    exitToEnd: ended - exitedAt,
    total: ended - started,
    rssMb: Number(readFileSync(rssFile, "utf8")) / 1024,
  };
}

const dirSize = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .reduce((n, d) => n + statSync(path.join(d.parentPath, d.name)).size, 0);

// --- The whole step against the floor any step pays (Node's start + two fresh-index snapshots of a 10,000-file tree).
if (SECTIONS.has("floor")) {
  console.log("\n## Step against the floor (10,000 files; CPU and wall)");
  await (await import("./bench-floor.mjs")).stepVersusFloor();
}

if (SECTIONS.has("overhead")) {
  const rows = [];
  for (const size of SIZES) {
    const made = Date.now();
    const repo = makeRepo(size);
    const runsPerCase = size >= 100_000 ? Math.min(RUNS, RUNS_LARGE) : RUNS;
    console.log(`repository of ${size.toLocaleString("en-US")} files made in ${((Date.now() - made) / 1000).toFixed(1)} s; ${runsPerCase} runs per sandbox`);
    for (const sandbox of ["none", "bwrap"]) {
      const runs = [];
      for (let i = 0; i < runsPerCase; i++) runs.push(await runAction(repo, { agent: "command", "agent-command": "true", prompt: "bench", sandbox }));
      for (const r of runs) rmSync(r.resultsDir, { recursive: true, force: true });
      rows.push({
        files: size.toLocaleString("en-US"),
        sandbox,
        runs: runsPerCase,
        "start→spawn ms": median(runs.map((r) => r.startToSpawn)),
        "exit→end ms": median(runs.map((r) => r.exitToEnd)),
        "total ms": median(runs.map((r) => r.total)),
        "peak RSS MB": median(runs.map((r) => r.rssMb)).toFixed(1),
      });
      console.log(JSON.stringify({ ...rows.at(-1), each: runs.map((r) => `${r.startToSpawn}/${r.exitToEnd} ms ${r.rssMb.toFixed(0)} MB`) }));
    }
    rmSync(repo, { recursive: true, force: true });
  }
  console.log(`Agent Runner overhead around \`agent: command\` running 'true' (medians, node ${process.version})`);
  console.table(rows);
  console.log(`dist size: ${(dirSize(path.join(root, "dist")) / 1024 / 1024).toFixed(2)} MB`);
}

// --- Tracing a huge event stream in bounded memory (issue #6): an agent prints
// BENCH_TRACE_MB (default 300) MB of output lines; the action traces them
// (raw/stdout.jsonl, trace.jsonl), renders transcript.md/.html from trace.jsonl
// and writes result.json. Peak RSS of the action process must stay under 200 MB.
const TRACE_MB = Number(process.env.BENCH_TRACE_MB ?? 300);
if (TRACE_MB > 0 && SECTIONS.has("trace")) {
  const genDir = mkdtempSync(path.join(os.tmpdir(), "bench-trace-"));
  const gen = path.join(genDir, "gen.mjs");
  // 1 KiB lines shaped like a CLI's JSON events, written with back-pressure.
  writeFileSync(
    gen,
    `const total = ${TRACE_MB} * 1024 * 1024; const pad = "x".repeat(900); let n = 0, bytes = 0;
function pump() {
  while (bytes < total) {
    const line = JSON.stringify({ type: "assistant", seq: n++, text: "step " + n + " " + pad }).padEnd(1023, " ") + "\\n";
    bytes += line.length;
    if (!process.stdout.write(line)) return process.stdout.once("drain", pump);
  }
}
pump();\n`,
  );
  const traceRepo = makeRepo(10);
  const r = await runAction(traceRepo, { agent: "command", "agent-command": `${process.execPath} ${gen}`, prompt: "bench", sandbox: "none", "timeout-minutes": "30" }, { keepLog: false });
  const size = (f) => statSync(path.join(r.resultsDir, f)).size / 1024 / 1024;
  const traceRows = [
    {
      case: `${TRACE_MB} MB event stream, command agent, sandbox none`,
      "agent wall s": ((r.total - r.startToSpawn - r.exitToEnd) / 1000).toFixed(1),
      // The stream traced while the agent ran (the goal: at least 50 MB/s), and over the whole step (transcripts included).
      "MB/s": (TRACE_MB / ((r.total - r.startToSpawn - r.exitToEnd) / 1000)).toFixed(1),
      "total s": (r.total / 1000).toFixed(1),
      "step MB/s": (TRACE_MB / (r.total / 1000)).toFixed(1),
      "peak RSS MB": r.rssMb.toFixed(1),
      "stdout.jsonl MB": size("raw/stdout.jsonl").toFixed(0),
      "trace.jsonl MB": size("trace.jsonl").toFixed(0),
      "transcript.html MB": size("transcript.html").toFixed(1),
    },
  ];
  console.log(`Tracing a large event stream (peak RSS limit 200 MB)`);
  console.table(traceRows);
  if (r.rssMb >= 200) {
    console.error(`FAIL: peak RSS ${r.rssMb.toFixed(1)} MB is not under 200 MB`);
    process.exitCode = 1;
  }
  rmSync(genDir, { recursive: true, force: true });
  rmSync(r.resultsDir, { recursive: true, force: true });
}

// --- The model gateway's added latency per streamed response, usage metering on (issue #12).
await import("./ts-hooks.mjs");
if (SECTIONS.has("gateway")) await import("./bench/gateway.ts");

// --- Per-backend: each real CLI against the stub model (issue #3), none vs bwrap.
if (SECTIONS.has("agents")) await import("./bench/agents.ts");

// --- attempts: 3 against attempts: 1, a command agent sleeping 2 s (issue #26).
if (SECTIONS.has("attempts")) await import("./bench/attempts.ts");

// --- The secret scanner's MB/s on a 50 MB patch (issue #32).
if (SECTIONS.has("secrets")) await import("./bench/secret-scan.ts");
if (SECTIONS.has("review")) await import("./bench/review.ts");

// --- The budget ledger's added latency per run: a reservation and a settlement (issue #37).
if (SECTIONS.has("ledger")) await import("./bench/ledger.ts");
