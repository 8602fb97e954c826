/**
 * Where the run's temporary files went (scripts/test-run.mjs, test/temp-folder.ts): every test writes in
 * a folder of the run's own; when test-run put the run on a tmpfs, that folder is on it, and the mount
 * lives in a mount namespace only this run has.
 */
import { readFileSync, readlinkSync, statfsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

/** statfs(2)'s f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;
const tmpfs = process.env.AGENT_RUNNER_TEST_TMPFS;
const runPid = process.env.AGENT_RUNNER_TEST_RUN_PID;

/** The mount points a process's namespace has (field 5 of mountinfo). */
const mountPoints = (pid: string) =>
  readFileSync(`/proc/${pid}/mountinfo`, "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4]);

describe("the run's temporary folder", () => {
  it("is a folder of the run's own, made by test/temp-folder.ts inside the folder test-run chose", () => {
    const dir = os.tmpdir();
    expect(path.basename(dir)).toMatch(/^art-(?!mem-)/);
    if (tmpfs) expect(path.dirname(dir)).toBe(tmpfs);
  });

  it("is on the tmpfs test-run mounted, in a mount namespace the machine does not share", (ctx) => {
    if (!tmpfs || !runPid) return ctx.skip("the run's temporary files are on disk here: test-run's line before vitest's output says why");
    expect(statfsSync(os.tmpdir()).type).toBe(TMPFS_MAGIC);
    const mine = readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .filter((l) => l.split(" ")[4] === tmpfs);
    expect(mine).toHaveLength(1);
    // mountinfo: field 6 holds the mount's own options; after " - " come the type, the source and the tmpfs's options.
    const [own, tail] = mine[0]!.split(" - ");
    expect(own!.split(" ")[5]!.split(",")).toEqual(expect.arrayContaining(["rw", "nosuid", "nodev"]));
    expect(tail).toMatch(new RegExp(`^tmpfs agent-runner-tests rw,(.*,)?size=${Number(process.env.AGENT_RUNNER_TEST_TMPFS_GIB) * 1024 * 1024}k(,|$)`));
    // test-run itself stayed in the namespace it started in, which neither has the mount nor is this one.
    expect(readlinkSync(`/proc/${runPid}/ns/mnt`)).not.toBe(readlinkSync("/proc/self/ns/mnt"));
    expect(mountPoints(runPid)).not.toContain(tmpfs);
    expect(mountPoints("self")).toContain(tmpfs);
  });
});
