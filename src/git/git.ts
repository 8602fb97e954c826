/**
 * git behind one small interface with one exec path. Errors carry the
 * command, exit code and the tail of stderr.
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { ExecError } from "../errors.js";

export interface GitExecOptions {
  env?: Record<string, string>;
  input?: string;
  /** Write stdout to this file instead of returning it (patches can be large). */
  stdoutFile?: string;
  /** Exit codes that are not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: number[];
}

export interface GitResult {
  stdout: string;
  exitCode: number;
  /** Tail of stderr (e.g. why a push allowed by okCodes was rejected). */
  stderr: string;
}

const STDERR_TAIL = 2000;
const HARDENING = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.ext.allow=never"];

export class Git {
  constructor(
    readonly cwd: string,
    /**
     * The whole environment of every git call: the runner's git variables
     * (HostContext.gitEnv), plus credentials where a caller needs them (never on argv).
     */
    private readonly baseEnv: Record<string, string>,
    /** `-c` settings put before every command (the host repository's isolation, src/git/host-repo.ts). */
    private readonly configArgs: string[] = [],
  ) {}

  exec(args: string[], opts: GitExecOptions = {}): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      // The agent could have planted hooks or an fsmonitor command in the repository;
      // host-side git must never run them.
      const argv = [...HARDENING, ...this.configArgs, ...args];
      const options = { cwd: this.cwd, env: { ...this.baseEnv, ...opts.env, GIT_TERMINAL_PROMPT: "0" } };
      // No input: stdin is /dev/null, one pipe (and its socket) fewer per call.
      const child =
        opts.input === undefined
          ? spawn("git", argv, { ...options, stdio: ["ignore", "pipe", "pipe"] })
          : spawn("git", argv, { ...options, stdio: ["pipe", "pipe", "pipe"] });
      const out: Buffer[] = [];
      let stderr = "";
      // A file's stream must be flushed before the result counts as written.
      const flushed = new Promise<void>((done) => {
        if (!opts.stdoutFile) return done();
        const file = createWriteStream(opts.stdoutFile);
        file.on("finish", done);
        file.on("error", () => done());
        child.stdout.pipe(file);
      });
      if (!opts.stdoutFile) child.stdout.on("data", (d: Buffer) => out.push(d));
      child.stderr.on("data", (d: Buffer) => {
        stderr = (stderr + d.toString()).slice(-STDERR_TAIL);
      });
      child.on("error", (e) => reject(new ExecError(`git ${args.join(" ")}`, null, e.message)));
      child.on("close", async (code) => {
        await flushed;
        const exitCode = code ?? -1;
        if (exitCode === 0 || opts.okCodes?.includes(exitCode))
          resolve({ stdout: Buffer.concat(out).toString("utf8"), exitCode, stderr });
        else reject(new ExecError(`git ${args.join(" ")}`, code, stderr));
      });
      if (child.stdin) {
        child.stdin.on("error", () => {});
        child.stdin.end(opts.input);
      }
    });
  }

  async text(args: string[], opts: GitExecOptions = {}): Promise<string> {
    return (await this.exec(args, opts)).stdout.trim();
  }
}
