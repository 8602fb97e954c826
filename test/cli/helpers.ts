/** What the CLI tests through dist/cli.js in real processes share. */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AGENT_PATH } from "../agents/helpers.js";
import { REPO_ROOT } from "../support/harness.js";

export const CLI = path.join(REPO_ROOT, "dist/cli.js");
export const SLOW = 120_000;

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The TMPDIR the run had (a fresh one, or `env.TMPDIR`): the invocation's temp folder lives (and must die) there. */
  tmp: string;
}

/** dist/cli.js with `args`, in `cwd`, with only PATH, HOME, a TMPDIR of its own and `env`. */
export async function cli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  const tmp = env["TMPDIR"] ?? mkdtempSync(path.join(os.tmpdir(), "cli-tmp-"));
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { PATH: AGENT_PATH, HOME: mkdtempSync(path.join(os.tmpdir(), "cli-home-")), LANG: "C.UTF-8", TMPDIR: tmp, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 100_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  return { code, stdout, stderr, tmp };
}

/** The results folder a run printed (`results: <dir>`). */
export const resultsDir = (r: Ran) => /^results: (.+)$/m.exec(r.stdout)?.[1];
