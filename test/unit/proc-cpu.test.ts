/** The CPU count the timing report's CPU column rests on (test/support/proc-cpu.ts). */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cpuWithReapedChildrenMs } from "../support/proc-cpu.js";

/** A /proc/<pid>/stat line with the given command name and utime, stime, cutime, cstime (in 1/100 s). */
function statFile(comm: string, [utime, stime, cutime, cstime]: number[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "proc-cpu-"));
  const fields = ["S", "1", "2", "2", "0", "-1", "4194560", "100", "0", "0", "0", utime, stime, cutime, cstime, "20", "0", "1", "0", "300"];
  writeFileSync(path.join(dir, "stat"), `4242 (${comm}) ${fields.join(" ")}\n`);
  return path.join(dir, "stat");
}

describe("CPU time from /proc/<pid>/stat", () => {
  it("adds the process's own and its reaped children's user and system time, in ms", () => {
    expect(cpuWithReapedChildrenMs(statFile("node", [120, 30, 400, 50]))).toBe(6000);
  });

  it("reads the fields after the last ')', whatever the command name holds", () => {
    expect(cpuWithReapedChildrenMs(statFile("a) (b) 1 2 3", [1, 2, 3, 4]))).toBe(100);
  });

  it("has no answer for a missing or cut-off file", () => {
    expect(cpuWithReapedChildrenMs(path.join(os.tmpdir(), "no-such-dir-proc-cpu", "stat"))).toBeUndefined();
    const dir = mkdtempSync(path.join(os.tmpdir(), "proc-cpu-"));
    writeFileSync(path.join(dir, "stat"), "4242 (node) S 1 2");
    expect(cpuWithReapedChildrenMs(path.join(dir, "stat"))).toBeUndefined();
  });

  it("counts a child's CPU once the child has been reaped", (ctx) => {
    if (process.platform !== "linux") ctx.skip("/proc/self/stat is Linux's");
    const before = cpuWithReapedChildrenMs();
    expect(before, "/proc/self/stat gave no CPU time").toBeDefined();
    // The child spins until it has used 300 ms of CPU itself, however loaded the machine is (asking the
    // kernel only now and then: each question costs system time of its own).
    const spin = spawnSync(process.execPath, ["-e", "let x = 0; while (process.cpuUsage().user < 300_000) for (let i = 0; i < 1e6; i++) x += i;"]);
    expect(spin.status).toBe(0);
    expect(cpuWithReapedChildrenMs()! - before!).toBeGreaterThanOrEqual(280);
  });
});
