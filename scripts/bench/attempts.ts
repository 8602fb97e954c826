/**
 * `attempts: 3` against `attempts: 1` (issue #26): a command agent that
 * sleeps 2 s, run through dist/main.js, wall time of the whole step. Attempts
 * run min(N, cores) at a time; the same run pinned to one core (taskset, so
 * Node sees one core) runs them one after another, which is the other choice
 * the issue asked to measure. Sandbox none and bwrap: bwrap adds the copy of
 * the checkout and a sandbox per attempt.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "../../test/support/harness.js";
import { makeWorkspace } from "../../test/agents/helpers.js";

const RUNS = Number(process.env.BENCH_ATTEMPTS_RUNS ?? 3);
const pinnable = existsSync("/usr/bin/taskset") || existsSync("/bin/taskset");

interface Timed {
  totalMs: number;
  attempts: number;
}

/** One action step; `pin`: on one core (taskset -c 0). */
async function step(workspace: string, inputs: Record<string, string>, pin: boolean): Promise<Timed> {
  const temp = mkdtempSync(path.join(os.tmpdir(), "bench-attempts-"));
  const files = Object.fromEntries(["GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"].map((k) => [k, path.join(temp, k)]));
  for (const f of Object.values(files)) writeFileSync(f, "");
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? temp,
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: temp,
    ...files,
    ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
  };
  const main = path.join(REPO_ROOT, "dist/main.js");
  const [file, args] = pin ? ["taskset", ["-c", "0", process.execPath, main]] : [process.execPath, [main]];
  const started = Date.now();
  const child = spawn(file, args, { cwd: workspace, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-8000)));
  child.stderr.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-8000)));
  const code = await new Promise<number | null>((r) => child.on("close", r));
  const totalMs = Date.now() - started;
  const outputs = readFileSync(files.GITHUB_OUTPUT!, "utf8");
  const attempts = /attempts<<(\S+)\n(.*)\n/.exec(outputs)?.[2];
  rmSync(temp, { recursive: true, force: true });
  if (code !== 0) throw new Error(`bench run failed (${code}):\n${out}`);
  return { totalMs, attempts: attempts ? (JSON.parse(attempts) as unknown[]).length || 1 : 1 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const rows: Record<string, string | number>[] = [];
const workspace = makeWorkspace(Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`src/f${i}.txt`, `file ${i}\n`])));
const cases: { label: string; attempts: string; pin: boolean }[] = [
  { label: "attempts: 1", attempts: "1", pin: false },
  { label: `attempts: 3, ${Math.min(3, os.availableParallelism())} at a time (min(N, cores))`, attempts: "3", pin: false },
  ...(pinnable ? [{ label: "attempts: 3, one after another (pinned to one core)", attempts: "3", pin: true }] : []),
];
for (const sandbox of ["none", "bwrap"]) {
  for (const c of cases) {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await step(
        workspace,
        { agent: "command", "agent-command": "bash -c 'sleep 2; echo $AGENT_RUNNER_ATTEMPT > out.txt'", prompt: "bench", sandbox, attempts: c.attempts, "upload-artifacts": "false", comment: "none", "timeout-minutes": "5" },
        c.pin,
      );
      times.push(r.totalMs);
    }
    rows.push({ sandbox, case: c.label, runs: RUNS, "wall s (median)": (median(times) / 1000).toFixed(2), each: times.map((t) => (t / 1000).toFixed(2)).join(" ") });
    console.log(JSON.stringify(rows.at(-1)));
  }
}
rmSync(workspace, { recursive: true, force: true });
console.log(`attempts: 3 vs attempts: 1, command agent sleeping 2 s (whole step, node ${process.version}, ${os.availableParallelism()} cores)`);
console.table(rows);
