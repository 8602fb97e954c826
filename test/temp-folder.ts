/**
 * One temporary folder per test run (vitest.config.ts runs this as globalSetup): TMPDIR names it for
 * the test workers and the processes they start, so the thousands of workspaces, runner temp folders
 * and fixtures a run makes land there, not beside everything else in the system's temp folder. The
 * next run starts from an empty folder of its own, and a system temp folder that grows run after run
 * no longer slows the steps that list a workspace's parents (the sandbox's credential-file scan).
 * Removed when the run ends, in the background: deleting a run's worth of small files takes seconds
 * (on the tmpfs scripts/test-run.mjs mounts for the run, the mount takes them with it).
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export default function runTempFolder(): () => void {
  // vitest runs the global setup for the root and for each project (vitest.config.ts): one folder per run.
  if (process.env.AGENT_RUNNER_TEST_TMP_OF === String(process.pid)) return () => {};
  // Short: unix socket paths made under it must stay within 108 bytes.
  const dir = mkdtempSync(path.join(os.tmpdir(), "art-"));
  process.env.TMPDIR = dir;
  process.env.AGENT_RUNNER_TEST_TMP_OF = String(process.pid);
  // V8's code cache for the run's Node processes: the workers, and the steps and CLI runs the harness
  // starts (test/support/harness.ts runCompileCache). The same dist/ files are then compiled once per run,
  // not once per step; each entry is checked against a hash of its file's contents, and the folder goes with the run's.
  process.env.NODE_COMPILE_CACHE = path.join(dir, "node-compile-cache");
  return () => {
    // On the run's own tmpfs (scripts/test-run.mjs) the files go with the mount, all at once.
    const tmpfs = process.env.AGENT_RUNNER_TEST_TMPFS;
    if (tmpfs && path.dirname(dir) === tmpfs) return;
    spawn("rm", ["-rf", dir], { detached: true, stdio: "ignore" }).unref();
  };
}
