/**
 * Where the run's temporary files went (scripts/test-run.mjs, test/temp-folder.ts): when the run was
 * put on a tmpfs, the folder every test writes in is that tmpfs, and the mount is the run's own.
 */
import { readFileSync, statfsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

/** statfs(2)'s f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;
const tmpfs = process.env.AGENT_RUNNER_TEST_TMPFS;

describe("the run's temporary folder", () => {
  it("is the run's own folder, inside the folder test-run chose", () => {
    const dir = os.tmpdir();
    expect(path.basename(dir)).toMatch(/^art-/);
    if (tmpfs) expect(path.dirname(dir)).toBe(tmpfs);
  });

  it.runIf(tmpfs !== undefined)("is on the tmpfs test-run mounted, which only this run's mount namespace has", () => {
    expect(statfsSync(os.tmpdir()).type).toBe(TMPFS_MAGIC);
    const mine = readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((l) => l.split(" ")[4] === tmpfs);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toContain(" - tmpfs agent-runner-tests ");
    // The mount is private to the run: the first process's namespace (the machine's) does not have it.
    let init = "";
    try {
      init = readFileSync("/proc/1/mountinfo", "utf8");
    } catch {
      return; // No /proc/1 to read here: nothing to compare with.
    }
    expect(init.split("\n").some((l) => l.split(" ")[4] === tmpfs)).toBe(false);
  });
});
