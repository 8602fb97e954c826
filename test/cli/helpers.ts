/** What the CLI tests through dist/cli.js in real processes share. */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AGENT_PATH } from "../agents/helpers.js";
import { ACTION_ROOT, runCompileCache } from "../support/harness.js";

/** dist/cli.js of the action under test: under vitest the snapshot test/dist-snapshot.ts took (a rebuild mid-run does not reach it). */
export const CLI = path.join(ACTION_ROOT, "dist/cli.js");
export const SLOW = 120_000;

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The TMPDIR the run had (a fresh one, or `env.TMPDIR`): the invocation's temp folder lives (and must die) there. */
  tmp: string;
}

/** What a process of dist/cli.js left: its exit code and its bytes on stdout and stderr. */
export interface RawRan {
  code: number | null;
  stdout: Buffer;
  stderr: Buffer;
}

/** CLI with `args` and exactly `env` (plus the run's code cache, runCompileCache), in `cwd`; killed after 100 s. */
export async function runCli(args: string[], opts: { env: Record<string, string>; cwd?: string }): Promise<RawRan> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd, env: { ...runCompileCache(), ...opts.env }, stdio: ["ignore", "pipe", "pipe"] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (d: Buffer) => out.push(d));
  child.stderr.on("data", (d: Buffer) => err.push(d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 100_000);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  return { code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
}

/** dist/cli.js with `args`, in `cwd`, with only PATH, HOME, a TMPDIR of its own and `env` (and the run's code cache). */
export async function cli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  const tmp = env["TMPDIR"] ?? mkdtempSync(path.join(os.tmpdir(), "cli-tmp-"));
  const r = await runCli(args, { cwd, env: { PATH: AGENT_PATH, HOME: mkdtempSync(path.join(os.tmpdir(), "cli-home-")), LANG: "C.UTF-8", TMPDIR: tmp, ...env } });
  return { code: r.code, stdout: r.stdout.toString("utf8"), stderr: r.stderr.toString("utf8"), tmp };
}

/** The results folder a run printed (`results: <dir>`). */
export const resultsDir = (r: Ran) => /^results: (.+)$/m.exec(r.stdout)?.[1];
