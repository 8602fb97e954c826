/**
 * A control group for the run (vitest.config.ts runs this as globalSetup), in which each test worker makes
 * one of its own (test/cpu-meter.ts): the timing report's CPU column then counts every process a worker's
 * tests started, sandboxed ones included (test/support/cgroup-cpu.ts says why /proc alone can't). Where
 * no group can count without changing how the run is scheduled, or groups can't be made (not root), no
 * variable is set and the meter counts from /proc, as the report then says.
 *
 * Empty groups of earlier runs are removed first. The run's own are removed at its end where they are
 * empty; vitest tears global setups down before it stops the workers, so they often still hold one and
 * go at the next run's start instead (only groups are removed, and only empty ones).
 */
import { randomUUID } from "node:crypto";
import { type Hierarchy, makeGroup, ownCountingHierarchy, removeEmptyGroups, RUN_CGROUP_ENV, RUN_CGROUP_PREFIX } from "./support/cgroup-cpu.js";

export default function runCpuCgroup(): () => void {
  // vitest runs the global setup for the root and for each project (vitest.config.ts): one group per run.
  if (process.env.AGENT_RUNNER_TEST_CPU_CGROUP_OF === String(process.pid)) return () => {};
  process.env.AGENT_RUNNER_TEST_CPU_CGROUP_OF = String(process.pid);
  // One set by hand or by an outer run names no group of this run's.
  delete process.env[RUN_CGROUP_ENV];
  const parent = ownCountingHierarchy();
  if (!parent) return () => {};
  removeEmptyGroups(parent.dir, RUN_CGROUP_PREFIX);
  let run: Hierarchy;
  // Unique among runs that share the parent group (containers of other pid namespaces have the same pids).
  const name = `${RUN_CGROUP_PREFIX}${process.pid}-${randomUUID().slice(0, 8)}`;
  try {
    // The main process itself stays where it is: only the workers move, each into a group of its own.
    run = makeGroup(parent, name);
  } catch {
    return () => {};
  }
  process.env[RUN_CGROUP_ENV] = JSON.stringify(run);
  return () => removeEmptyGroups(parent.dir, name);
}
