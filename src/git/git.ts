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
  /**
   * The answer depends only on the objects the arguments name by full id (objects never
   * change): the same call on the same repository in this process is answered from the
   * first one's result. Ignored unless every argument after the subcommand is an option or a
   * full object id (optionally `^{tree}`), so a ref, whose target can move, is always asked.
   */
  byObjectIds?: boolean;
}

export interface GitResult {
  stdout: string;
  exitCode: number;
  /** Tail of stderr (e.g. why a push allowed by okCodes was rejected). */
  stderr: string;
}

const STDERR_TAIL = 2000;
const HARDENING = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.ext.allow=never"];

/** A full object id (SHA-1 or SHA-256), or its tree. */
const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})(?:\^\{tree\})?$/;
/**
 * Answers of `byObjectIds` calls, by repository and command. A spawn costs more than the
 * work of most of these calls, and one step asks the same (e.g. `diff-tree` of the checked
 * trees in the patch check, then in threat detection); bounded, oldest dropped first.
 */
const answers = new Map<string, Promise<GitResult>>();
const MAX_ANSWERS = 64;

function cacheKey(git: Git, args: string[], opts: GitExecOptions): string | undefined {
  if (!opts.byObjectIds || opts.input !== undefined || opts.stdoutFile !== undefined) return undefined;
  if (!args.slice(1).every((a) => a.startsWith("-") || OBJECT_ID.test(a))) return undefined;
  return JSON.stringify([git.cwd, git.identity, args, opts.env ?? {}, opts.okCodes ?? []]);
}

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

  /** The environment and `-c` settings, for telling repositories apart in the answers of byObjectIds calls. */
  get identity(): string {
    return JSON.stringify([this.baseEnv, this.configArgs]);
  }

  exec(args: string[], opts: GitExecOptions = {}): Promise<GitResult> {
    const key = cacheKey(this, args, opts);
    if (key === undefined) return this.spawn(args, opts);
    const known = answers.get(key);
    if (known) return known;
    const asked = this.spawn(args, opts);
    answers.set(key, asked);
    const oldest = answers.keys().next();
    if (answers.size > MAX_ANSWERS && !oldest.done) answers.delete(oldest.value);
    // A failure, or an exit code okCodes let through (an object missing), is no lasting answer: one may be fetched later.
    const forget = () => answers.delete(key);
    asked.then((r) => r.exitCode !== 0 && forget(), forget);
    return asked;
  }

  private spawn(args: string[], opts: GitExecOptions): Promise<GitResult> {
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
