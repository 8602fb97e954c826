/**
 * A vitest reporter that leaves the run's timings behind: every file's and
 * every test's duration in `test-results/timing.json`, and a table of the 15
 * slowest tests and files at the end of the output. A slow suite then says
 * which test got slow, and a change's cost to the suite can be compared run
 * against run.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

const SHOWN = 15;
export const TIMING_FILE = path.join("test-results", "timing.json");

interface FileTiming {
  file: string;
  /** Collect (imports) plus every test and hook, as vitest measures the module. */
  ms: number;
  tests: number;
}

interface TestTiming {
  file: string;
  name: string;
  ms: number;
  state: string;
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
        tests.push({ file, name: test.fullName, ms: Math.round(d.duration), state: test.result().state });
      }
      files.push({ file, ms: Math.round(diagnostic.collectDuration + diagnostic.duration), tests: count });
    }
    files.sort((a, b) => b.ms - a.ms);
    tests.sort((a, b) => b.ms - a.ms);
    const wallMs = Date.now() - this.startedAt;
    mkdirSync(path.dirname(TIMING_FILE), { recursive: true });
    writeFileSync(TIMING_FILE, JSON.stringify({ wallMs, files, tests }, null, 1) + "\n");

    const seconds = (ms: number) => (ms / 1000).toFixed(1).padStart(6);
    const lines = [
      "",
      `Timing (wall ${(wallMs / 1000).toFixed(0)} s; all timings in ${TIMING_FILE}):`,
      `  slowest files:`,
      ...files.slice(0, SHOWN).map((f) => `  ${seconds(f.ms)} s  ${f.file} (${f.tests} tests)`),
      `  slowest tests:`,
      ...tests.slice(0, SHOWN).map((t) => `  ${seconds(t.ms)} s  ${t.file} › ${t.name}`),
      "",
    ];
    process.stdout.write(lines.join("\n"));
  }
}
