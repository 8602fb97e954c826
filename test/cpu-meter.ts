/**
 * Each test's and each test file's CPU time, for the timing report (test/timing-report.ts): on two cores a
 * run is CPU-bound, and five workers share them, so a file's wall time says little about what it costs.
 * What a worker spends (tests, fakes, stub models) and what every process it starts spends (action steps,
 * agent CLIs in and out of the sandbox, git), from one of two clocks:
 * - a control group of the worker's own, where the run made one (test/cpu-cgroup.ts): every process the
 *   worker starts is in it, and the group counts their CPU as they run. A process left running by an
 *   earlier test is charged to whichever test runs while it does.
 * - else /proc: the worker's own CPU and what it reaped. The kernel adds a child's CPU to its parent's when
 *   the parent reaps it, so a process that outlives the one that started it, and everything inside a
 *   bubblewrap sandbox (bwrap never reaps the sandbox's init), is left out.
 * Either way, what runs after the meter's last hook (cleanup functions a beforeAll returns, file-scoped
 * fixtures' teardown) is left out, and tests of one file that run concurrently overlap: each is charged
 * with everything its worker spent while it ran.
 *
 * A setup file: vitest runs it again just before it loads each test file, one file at a time per worker,
 * so the count starts before the file's imports and top-level code. It rests on two of vitest's defaults
 * (vitest.config.ts keeps both): the forks pool, where a worker is a process of its own (a worker thread
 * gets no figure, since /proc/self and a group would count every thread), and after-hooks that run last
 * to first (`sequence.hooks: "stack"`), so that the meter's, registered first, run after the file's own.
 * A file whose own after-hook throws stops the hooks before the meter's, and shows no figure.
 */
import { isMainThread } from "node:worker_threads";
import { afterAll, afterEach, beforeEach } from "vitest";
import { groupCpuMs, type Hierarchy, makeGroup, moveInto, RUN_CGROUP_ENV } from "./support/cgroup-cpu.js";
import { cpuWithReapedChildrenMs } from "./support/proc-cpu.js";

declare module "vitest" {
  interface TaskMeta {
    /** CPU time of the worker and the processes it started while the test or file ran, in ms. */
    cpuMs?: number;
    /** Where cpuMs comes from: the worker's control group, or /proc (which misses sandboxed processes). */
    cpuClock?: "cgroup" | "proc";
  }
}

/** The worker's group, made once per worker process (this file runs again before every test file). */
const WORKER_GROUP = Symbol.for("agent-runner.cpu-meter.group");
type WithGroup = typeof globalThis & { [WORKER_GROUP]?: Hierarchy | null };

function workerGroup(): Hierarchy | undefined {
  const g = globalThis as WithGroup;
  if (g[WORKER_GROUP] === undefined) g[WORKER_GROUP] = joinWorkerGroup() ?? null;
  return g[WORKER_GROUP] ?? undefined;
}

function joinWorkerGroup(): Hierarchy | undefined {
  const run = process.env[RUN_CGROUP_ENV];
  if (!run || !isMainThread) return undefined;
  try {
    const group = makeGroup(JSON.parse(run) as Hierarchy, `worker-${process.pid}`);
    moveInto(group, process.pid);
    return groupCpuMs(group) === undefined ? undefined : group;
  } catch {
    return undefined;
  }
}

/** Which clock the figures come from, for the report: "cgroup", "proc", or none (a worker thread). */
const clock: "cgroup" | "proc" | undefined = !isMainThread ? undefined : workerGroup() ? "cgroup" : "proc";
const cpuNow = (): number | undefined => {
  const group = workerGroup();
  if (group) return groupCpuMs(group);
  return isMainThread ? cpuWithReapedChildrenMs() : undefined;
};
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
  if (cpuMs !== undefined && clock) Object.assign(file.meta, { cpuMs, cpuClock: clock });
});
beforeEach(({ task }) => {
  const start = cpuNow();
  if (start !== undefined) testStarts.set(task, start);
});
afterEach(({ task }) => {
  const cpuMs = spentSince(testStarts.get(task));
  if (cpuMs !== undefined) task.meta.cpuMs = cpuMs;
});
