/**
 * A vitest reporter that leaves the run's timings behind: every file's and
 * every test's duration and CPU time (test/cpu-meter.ts) in
 * `test-results/timing.json`, and tables of the 15 slowest tests and files and
 * the 15 files that cost the most CPU at the end of the output. A slow suite
 * then says which test got slow, and a change's cost to the suite can be
 * compared run against run: by CPU, since a run on two cores is CPU-bound and
 * a file's wall time depends on what ran beside it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { TaskMeta } from "vitest";
import type { Reporter, TestModule } from "vitest/node";

const SHOWN = 15;
export const TIMING_FILE = path.join("test-results", "timing.json");
/** Every file's last known duration, over runs of part of the suite too: what test/sequencer.ts orders by. */
export const DURATIONS_FILE = path.join("test-results", "durations.json");

interface FileTiming {
  file: string;
  /** Collect (imports) plus every test and hook, as vitest measures the module. */
  ms: number;
  /** The worker's CPU and that of the processes it started while the file ran (test/cpu-meter.ts); absent off Linux. */
  cpuMs?: number;
  cpuClock?: "cgroup" | "proc";
  tests: number;
}

interface TestTiming {
  file: string;
  name: string;
  ms: number;
  cpuMs?: number;
  state: string;
}

function mergedDurations(latest: FileTiming[]): { file: string; ms: number }[] {
  const known = new Map<string, number>();
  try {
    if (existsSync(DURATIONS_FILE)) for (const f of (JSON.parse(readFileSync(DURATIONS_FILE, "utf8")) as { files: FileTiming[] }).files) known.set(f.file, f.ms);
  } catch {
    // A half-written file: start again from this run.
  }
  for (const f of latest) known.set(f.file, f.ms);
  return [...known].map(([file, ms]) => ({ file, ms })).sort((a, b) => b.ms - a.ms);
}

const cpuOf = (meta: TaskMeta): { cpuMs?: number } => (meta.cpuMs === undefined ? {} : { cpuMs: Math.round(meta.cpuMs) });
const clockOf = (meta: TaskMeta): { cpuClock?: "cgroup" | "proc" } => (meta.cpuClock === undefined ? {} : { cpuClock: meta.cpuClock });

/** What the CPU figures count, for the table's heading: a file measured from /proc lacks its sandboxed processes. */
function cpuClockSaid(clocks: ReadonlySet<string>): string {
  if (clocks.size === 0) return "no CPU figures on this machine";
  if (!clocks.has("proc")) return "CPU from each worker's control group";
  const which = clocks.has("cgroup") ? "some files' CPU" : "CPU";
  return `${which} from /proc, which leaves out processes in a bwrap sandbox (no control group could be made: see test/cpu-cgroup.ts)`;
}

export default class TimingReport implements Reporter {
  private startedAt = Date.now();

  onTestRunStart(): void {
    this.startedAt = Date.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const files: FileTiming[] = [];
    const tests: TestTiming[] = [];
    for (const mod of testModules) {
      const file = path.relative(process.cwd(), mod.moduleId);
      const diagnostic = mod.diagnostic();
      let count = 0;
      for (const test of mod.children.allTests()) {
        const d = test.diagnostic();
        if (!d) continue;
        count++;
        tests.push({ file, name: test.fullName, ms: Math.round(d.duration), ...cpuOf(test.meta()), state: test.result().state });
      }
      files.push({ file, ms: Math.round(diagnostic.collectDuration + diagnostic.duration), ...cpuOf(mod.meta()), ...clockOf(mod.meta()), tests: count });
    }
    files.sort((a, b) => b.ms - a.ms);
    tests.sort((a, b) => b.ms - a.ms);
    const wallMs = Date.now() - this.startedAt;
    const filesCpuMs = files.reduce((sum, f) => sum + (f.cpuMs ?? 0), 0);
    const cpuClocks = new Set(files.flatMap((f) => (f.cpuClock ? [f.cpuClock] : [])));
    mkdirSync(path.dirname(TIMING_FILE), { recursive: true });
    writeFileSync(TIMING_FILE, JSON.stringify({ wallMs, filesCpuMs, cpuClocks: [...cpuClocks], files, tests }, null, 1) + "\n");
    writeFileSync(DURATIONS_FILE, JSON.stringify({ files: mergedDurations(files) }, null, 1) + "\n");

    const seconds = (ms: number | undefined) => (ms === undefined ? "-" : (ms / 1000).toFixed(1)).padStart(6);
    const row = (t: { ms: number; cpuMs?: number }) => `  ${seconds(t.ms)} s ${seconds(t.cpuMs)} s`;
    const lines = [
      "",
      `Timing (wall ${(wallMs / 1000).toFixed(0)} s, CPU of the test files ${(filesCpuMs / 1000).toFixed(0)} s; all timings in ${TIMING_FILE}):`,
      `  ${cpuClockSaid(cpuClocks)}`,
      `      wall    CPU   slowest files:`,
      ...files.slice(0, SHOWN).map((f) => `${row(f)}  ${f.file} (${f.tests} tests)`),
      `      wall    CPU   files that cost the most CPU:`,
      ...[...files].sort((a, b) => (b.cpuMs ?? 0) - (a.cpuMs ?? 0)).slice(0, SHOWN).map((f) => `${row(f)}  ${f.file} (${f.tests} tests)`),
      `      wall    CPU   slowest tests:`,
      ...tests.slice(0, SHOWN).map((t) => `${row(t)}  ${t.file} › ${t.name}`),
      "",
    ];
    process.stdout.write(lines.join("\n"));
  }
}
