/** The control groups the timing report's CPU column counts in (test/support/cgroup-cpu.ts). */
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { countingHierarchy, groupCpuMs, type Hierarchy, makeGroup, moveInto, ownCountingHierarchy, removeEmptyGroups } from "../support/cgroup-cpu.js";

/** mountinfo lines as a machine with both cgroup versions mounts them (this one, and Ubuntu 20.04's default). */
const HYBRID_MOUNTS = [
  "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
  "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct",
  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
].join("\n");
const HYBRID_GROUPS = "4:memory:/job\n2:cpuacct:/\n1:cpu:/\n0::/\n";
/** A systemd machine on cgroup v2 alone (GitHub's Ubuntu runners), and one on v1 with cpu and cpuacct together. */
const V2_MOUNTS = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate";
const V2_GROUPS = "0::/system.slice/runner.service\n";
const JOINT_V1_MOUNTS = "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct";
const JOINT_V1_GROUPS = "3:cpu,cpuacct:/job\n";

/** A group of the test's own inside this worker's, or a skip where none can be made (not root, read-only, no v2/cpuacct). */
function testGroup(ctx: { skip: (note: string) => never }, name: string): Hierarchy {
  const parent = ownCountingHierarchy();
  try {
    if (parent) return makeGroup(parent, `${name}-${process.pid}-${randomUUID().slice(0, 8)}`);
  } catch {
    // EROFS, EACCES, EAGAIN (cgroup.max.descendants): as test/cpu-cgroup.ts does, no group here.
  }
  return ctx.skip("needs root and a control group that only counts (see test/cpu-cgroup.ts)");
}

/**
 * Removes a test's group once its last process has left: bwrap's outer process ends before the sandbox's
 * init has, so the group may still hold it for a moment. One left behind goes with the run's groups.
 */
async function removeGroup(group: Hierarchy): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      rmdirSync(group.dir);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const handsDown = (controllers: string) => (file: string) => {
  if (file.endsWith("cgroup.subtree_control")) return `${controllers}\n`;
  throw new Error(`unexpected read of ${file}`);
};

describe("the hierarchy a group counts in", () => {
  it("takes cgroup v2 where the process's group hands no sharing controller down", () => {
    expect(countingHierarchy(HYBRID_GROUPS, HYBRID_MOUNTS, handsDown(""))).toEqual({ version: 2, dir: "/sys/fs/cgroup/unified" });
    expect(countingHierarchy(V2_GROUPS, V2_MOUNTS, handsDown("memory pids"))).toEqual({ version: 2, dir: "/sys/fs/cgroup/system.slice/runner.service" });
  });

  it("refuses v2 where a group of our own would get a CPU, cpuset or io share, and falls back to a cpuacct-only v1", () => {
    for (const shared of ["cpu", "cpuset memory", "io pids"]) {
      expect(countingHierarchy(V2_GROUPS, V2_MOUNTS, handsDown(shared))).toBeUndefined();
      expect(countingHierarchy(HYBRID_GROUPS, HYBRID_MOUNTS, handsDown(shared))).toEqual({ version: 1, dir: "/sys/fs/cgroup/cpuacct" });
    }
  });

  it("refuses a v1 hierarchy that holds cpu with cpuacct (a group there is scheduled as one)", () => {
    expect(countingHierarchy(JOINT_V1_GROUPS, JOINT_V1_MOUNTS, handsDown(""))).toBeUndefined();
  });

  it("has no answer where the group's folder can't be read (another cgroup namespace) and no v1 cpuacct exists", () => {
    const unreadable = () => {
      throw new Error("ENOENT");
    };
    expect(countingHierarchy(V2_GROUPS, V2_MOUNTS, unreadable)).toBeUndefined();
    expect(countingHierarchy("", "", handsDown(""))).toBeUndefined();
  });
});

describe("a group's CPU", () => {
  it("reads v2's usage_usec and v1's cpuacct.usage (ns), in ms", () => {
    const v2 = (file: string) => (file === "/g/cpu.stat" ? "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n" : "");
    expect(groupCpuMs({ version: 2, dir: "/g" }, v2)).toBeCloseTo(1234.567);
    expect(groupCpuMs({ version: 1, dir: "/g" }, () => "2500000000\n")).toBe(2500);
    expect(
      groupCpuMs({ version: 1, dir: "/g" }, () => {
        throw new Error("EACCES");
      }),
    ).toBeUndefined();
  });

  it("removes the empty groups it is asked to, never one with something in it", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "cgroup-cpu-"));
    mkdirSync(path.join(dir, "agent-runner-tests-1", "worker-2"), { recursive: true });
    mkdirSync(path.join(dir, "agent-runner-tests-3"));
    writeFileSync(path.join(dir, "agent-runner-tests-3", "in-use"), "");
    mkdirSync(path.join(dir, "someone-else"));
    removeEmptyGroups(dir, "agent-runner-tests-");
    expect(existsSync(path.join(dir, "agent-runner-tests-1"))).toBe(false);
    expect(existsSync(path.join(dir, "agent-runner-tests-3", "in-use"))).toBe(true);
    expect(existsSync(path.join(dir, "someone-else"))).toBe(true);
  });

  // Why the report counts by group: a process in a bwrap sandbox with a pid namespace of its own is never
  // reaped by anyone who started it (bwrap 0.11 here), so /proc adds nothing for it; the group counts it.
  it("counts a process inside bwrap's pid namespace, which /proc's reaped-children count misses", async (ctx) => {
    const group = testGroup(ctx, "agent-runner-tests-unit");
    try {
      const spin = "while (process.cpuUsage().user < 300000) for (let i = 0; i < 1e6; i++);";
      const bwrap = ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "--", process.execPath, "-e", spin];
      // The shell joins the group, then becomes bwrap: everything bwrap starts starts in the group.
      const r = spawnSync("sh", ["-c", 'echo $$ >> "$0/cgroup.procs" && exec "$@"', group.dir, ...bwrap], { encoding: "utf8", timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(groupCpuMs(group)).toBeGreaterThanOrEqual(280);
    } finally {
      await removeGroup(group);
    }
  });

  it("moves a running process into a group, which then counts what it spends", async (ctx) => {
    const group = testGroup(ctx, "agent-runner-tests-unit-move");
    // Waits for a line on stdin (sent once it has been moved), then spins 200 ms in a child of its own.
    const spinInChild = `require("child_process").spawnSync(process.execPath, ["-e", "while (process.cpuUsage().user < 200000) for (let i = 0; i < 1e6; i++);"])`;
    const child = spawn(process.execPath, ["-e", `process.stdin.once("data", () => { ${spinInChild}; process.exit(0); })`], { stdio: ["pipe", "ignore", "inherit"] });
    try {
      const exited = once(child, "exit");
      moveInto(group, child.pid!);
      expect(readFileSync(path.join(group.dir, "cgroup.procs"), "utf8").split("\n")).toContain(String(child.pid));
      child.stdin.end("go\n");
      expect((await exited)[0]).toBe(0);
      expect(groupCpuMs(group)).toBeGreaterThanOrEqual(180);
    } finally {
      child.kill("SIGKILL");
      await removeGroup(group);
    }
  });
});
