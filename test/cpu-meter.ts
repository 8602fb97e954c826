/**
 * Each test's and each test file's CPU time, for the timing report (test/timing-report.ts): on two cores a
 * run is CPU-bound, and five workers share them, so a file's wall time says little about what it costs.
 * What a worker spends (tests, fakes, stub models) and what every process it started and waited for
 * spent (action steps, agent CLIs, git, and what they started and waited for in turn): the kernel adds a
 * child's CPU to its parent's when the parent reaps it. Left out: a process that outlives the process
 * that started it (its CPU goes to whoever reaps it), and what runs after the meter's last hook (cleanup
 * functions a beforeAll returns, file-scoped fixtures' teardown). Tests of one file that run concurrently
 * overlap: each is charged with everything its worker spent while it ran.
 *
 * A setup file: vitest runs it again just before it loads each test file, one file at a time per worker,
 * so the count starts before the file's imports and top-level code. It rests on two of vitest's defaults
 * (vitest.config.ts keeps both): the forks pool, where a worker is a process of its own (a worker thread
 * gets no figure, since /proc/self would count every thread), and after-hooks that run last to first
 * (`sequence.hooks: "stack"`), so that the meter's, registered first, run after the file's own. A file
 * whose own after-hook throws stops the hooks before the meter's, and shows no figure.
 */
import { isMainThread } from "node:worker_threads";
import { afterAll, afterEach, beforeEach } from "vitest";
import { cpuWithReapedChildrenMs } from "./support/proc-cpu.js";

declare module "vitest" {
  interface TaskMeta {
    /** CPU time of the worker and its reaped children while the test or file ran, in ms. */
    cpuMs?: number;
  }
}

const cpuNow = (): number | undefined => (isMainThread ? cpuWithReapedChildrenMs() : undefined);
const spentSince = (start: number | undefined): number | undefined => {
  const now = cpuNow();
  return start === undefined || now === undefined ? undefined : now - start;
};

const fileStart = cpuNow();
const testStarts = new WeakMap<object, number>();

// vitest passes the file as an afterAll hook's second argument, and takes the first only as a
// destructuring pattern (of the fixtures it wants; none here).
afterAll(({}, file) => {
  const cpuMs = spentSince(fileStart);
  if (cpuMs !== undefined) file.meta.cpuMs = cpuMs;
});
beforeEach(({ task }) => {
  const start = cpuNow();
  if (start !== undefined) testStarts.set(task, start);
});
afterEach(({ task }) => {
  const cpuMs = spentSince(testStarts.get(task));
  if (cpuMs !== undefined) task.meta.cpuMs = cpuMs;
});
