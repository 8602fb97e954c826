/**
 * Each test's and each test file's CPU time, for the timing report (test/timing-report.ts): on two cores a
 * run is CPU-bound, and five workers share them, so a file's wall time says little about what it costs.
 * What a worker spends (tests, fakes, stub models) and what every process it started and waited for
 * spent (action steps, agent CLIs, git, and what they started and waited for in turn): the kernel adds a
 * child's CPU to its parent's when the parent reaps it. A process that outlives its parent, and one that
 * runs while a test of another file is counted in the same worker, are the limits of the count; tests of
 * one file that run concurrently share theirs.
 *
 * A setup file, run before every test file in every worker (vitest.config.ts): the hooks wrap the file's
 * own (after-hooks run last to first), so a file's count holds its set-up and its teardown.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { cpuWithReapedChildrenMs } from "./support/proc-cpu.js";

declare module "vitest" {
  interface TaskMeta {
    /** CPU time of the worker and its reaped children while the test or file ran, in ms. */
    cpuMs?: number;
  }
}

let fileStart: number | undefined;
let testStart: number | undefined;
const spentSince = (start: number | undefined): number | undefined => {
  const now = cpuWithReapedChildrenMs();
  return start === undefined || now === undefined ? undefined : now - start;
};

beforeAll(() => {
  fileStart = cpuWithReapedChildrenMs();
});
// vitest hands the file to an all-hook second; the first argument must be a destructuring pattern.
afterAll(({}, file) => {
  const cpuMs = spentSince(fileStart);
  if (cpuMs !== undefined) file.meta.cpuMs = cpuMs;
});
beforeEach(() => {
  testStart = cpuWithReapedChildrenMs();
});
afterEach(({ task }) => {
  const cpuMs = spentSince(testStart);
  if (cpuMs !== undefined) task.meta.cpuMs = cpuMs;
});
