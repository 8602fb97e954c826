/**
 * A control group for the run (vitest.config.ts runs this as globalSetup), in which each test worker makes
 * one of its own (test/cpu-meter.ts): the timing report's CPU column then counts every process a worker's
 * tests started, sandboxed ones included (test/support/cgroup-cpu.ts says why /proc alone can't). Where
 * no group can count without changing how the run is scheduled, or groups can't be made (not root), no
 * variable is set and the meter counts from /proc, as the report then says.
 *
 * Empty groups of earlier runs (a run killed before its teardown) are removed first; the run's own go
 * at its end, once its workers have ended (a group that still holds a process stays until the next run).
 */
import { readFileSync } from "node:fs";
import { countingHierarchy, makeGroup, removeEmptyGroups, RUN_CGROUP_ENV, RUN_CGROUP_PREFIX } from "./support/cgroup-cpu.js";

export default function runCpuCgroup(): () => void {
  // vitest runs the global setup for the root and for each project (vitest.config.ts): one group per run.
  if (process.env.AGENT_RUNNER_TEST_CPU_CGROUP_OF === String(process.pid)) return () => {};
  process.env.AGENT_RUNNER_TEST_CPU_CGROUP_OF = String(process.pid);
  if (process.platform !== "linux" || process.getuid?.() !== 0) return () => {};
  let parent;
  try {
    parent = countingHierarchy(readFileSync("/proc/self/cgroup", "utf8"), readFileSync("/proc/self/mountinfo", "utf8"));
  } catch {
    return () => {};
  }
  if (!parent) return () => {};
  removeEmptyGroups(parent.dir, RUN_CGROUP_PREFIX);
  let run;
  try {
    // The main process itself stays where it is: only the workers move, each into a group of its own.
    run = makeGroup(parent, `${RUN_CGROUP_PREFIX}${process.pid}`);
  } catch {
    return () => {};
  }
  process.env[RUN_CGROUP_ENV] = JSON.stringify(run);
  return () => removeEmptyGroups(parent.dir, `${RUN_CGROUP_PREFIX}${process.pid}`);
}
