/**
 * CPU time by control group, for test/cpu-meter.ts: what every process in a group spent, whether or not
 * anyone reaps it. /proc's count (proc-cpu.ts) only adds a child's CPU to the parent that reaps it, and
 * bubblewrap with `--unshare-pid` never reaps the sandbox's init (its outer process exits once the init
 * has sent the exit code): every sandboxed agent run would cost nothing there.
 *
 * A group is used only where it counts without sharing anything out: cgroup v2 when the group the
 * process is in hands no cpu, cpuset or io controller down to its children (a child group would get a
 * share of the CPU or disk of its own, and five workers would then be scheduled as five equals, however
 * many processes each runs), else a v1 hierarchy that holds cpuacct alone. Making groups needs root.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import path from "node:path";

/** The run's group, made by test/cpu-cgroup.ts and named to the workers in this variable. */
export const RUN_CGROUP_ENV = "AGENT_RUNNER_TEST_CPU_CGROUP";
export const RUN_CGROUP_PREFIX = "agent-runner-tests-";

/** Controllers that divide a resource among sibling groups: a group of our own would change the run. */
const SHARING = new Set(["cpu", "cpuset", "io"]);

export interface Hierarchy {
  /** v2: cpu.stat's usage_usec; v1 cpuacct: cpuacct.usage in ns. */
  version: 1 | 2;
  /** This process's group, as a folder. */
  dir: string;
}

interface Mount {
  point: string;
  fsType: string;
  options: string[];
}

/** The cgroup mounts of proc_pid_mountinfo(5): mount point (field 5), type and super options after " - ". */
export function cgroupMounts(mountinfo: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [before, after] = line.split(" - ");
    if (!before || !after) continue;
    const [fsType = "", , superOptions = ""] = after.split(" ");
    const point = before.split(" ")[4];
    if (point && (fsType === "cgroup" || fsType === "cgroup2")) mounts.push({ point: point.replace(/\\040/g, " "), fsType, options: superOptions.split(",") });
  }
  return mounts;
}

/**
 * Where this process's CPU can be counted by group without changing how it is scheduled, or undefined.
 * `procCgroup` is /proc/self/cgroup ("id:controllers:path" lines; v2's is "0::path").
 */
export function countingHierarchy(procCgroup: string, mountinfo: string, read = (file: string) => readFileSync(file, "utf8")): Hierarchy | undefined {
  const groups = procCgroup
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [, controllers = "", ...rest] = line.split(":");
      return { controllers: controllers.split(",").filter(Boolean), path: rest.join(":") };
    });
  const mounts = cgroupMounts(mountinfo);
  const v2 = groups.find((g) => g.controllers.length === 0);
  const v2Mount = mounts.find((m) => m.fsType === "cgroup2");
  if (v2 && v2Mount) {
    const dir = path.resolve(v2Mount.point, `.${v2.path}`);
    try {
      const handedDown = read(path.join(dir, "cgroup.subtree_control")).split(/\s+/).filter(Boolean);
      if (!handedDown.some((c) => SHARING.has(c))) return { version: 2, dir };
    } catch {
      // Not this process's group as seen here (another cgroup namespace): try v1.
    }
  }
  const v1 = groups.find((g) => g.controllers.length === 1 && g.controllers[0] === "cpuacct");
  const v1Mount = mounts.find((m) => m.fsType === "cgroup" && m.options.includes("cpuacct") && !m.options.includes("cpu"));
  return v1 && v1Mount ? { version: 1, dir: path.resolve(v1Mount.point, `.${v1.path}`) } : undefined;
}

/** This process's countingHierarchy, read from /proc; undefined off Linux, when not root, or where none counts. */
export function ownCountingHierarchy(): Hierarchy | undefined {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return undefined;
  try {
    return countingHierarchy(readFileSync("/proc/self/cgroup", "utf8"), readFileSync("/proc/self/mountinfo", "utf8"));
  } catch {
    return undefined;
  }
}

/** CPU time of every process that is or was in the group while it existed, in ms; undefined if unreadable. */
export function groupCpuMs(group: Hierarchy, read = (file: string) => readFileSync(file, "utf8")): number | undefined {
  try {
    if (group.version === 2) {
      const usec = /^usage_usec (\d+)$/m.exec(read(path.join(group.dir, "cpu.stat")))?.[1];
      return usec === undefined ? undefined : Number(usec) / 1000;
    }
    const ns = Number(read(path.join(group.dir, "cpuacct.usage")).trim());
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/** Makes a group under `parent` (an existing one is kept). */
export function makeGroup(parent: Hierarchy, name: string): Hierarchy {
  const dir = path.join(parent.dir, name);
  mkdirSync(dir, { recursive: true });
  return { version: parent.version, dir };
}

/** Moves the process `pid`, all its threads, into `group`: the processes it starts from then on start there. */
export function moveInto(group: Hierarchy, pid: number): void {
  appendFileSync(path.join(group.dir, "cgroup.procs"), `${pid}\n`);
}

/**
 * Removes `dir`'s empty groups whose name starts with `prefix`, and their empty child groups. A group
 * with a process in it refuses (EBUSY) and stays: never a file removed, only kernel groups that are empty.
 */
export function removeEmptyGroups(dir: string, prefix: string): void {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name.startsWith(prefix))
      .map((e) => e.name);
  } catch {
    return;
  }
  for (const name of names) {
    removeEmptyGroups(path.join(dir, name), "");
    try {
      rmdirSync(path.join(dir, name));
    } catch {
      // Still in use (a run that has not ended, or a process left behind): the next run tries again.
    }
  }
}
