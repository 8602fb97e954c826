/**
 * Runs a short command of the tests' own (git, for the fixtures and the fake GitHub) from a small helper
 * process instead of from the vitest worker: see spawn-server.ts for why a fork from a worker costs more.
 * One helper per worker, started on first use. The command gets the caller's arguments, folder,
 * environment and input as given, and its standard input is closed after the input (or at once); only
 * the process that forks is another.
 *
 * Only a command that ran and exited non-zero is a CommandFailed; a command that could not start rejects
 * with its errno, and a failure of the helper itself is a SpawnHelperError. Code that reads a failed git
 * command as an answer ("no such ref") takes only the first as one (answerIfCommandSaidNo).
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Socket } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "spawn-server.ts");

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
}

/** The helper could not run or answer: not a command's own failure. */
export class SpawnHelperError extends Error {
  override name = "SpawnHelperError";
}

export const isSpawnHelperFailure = (e: unknown): e is SpawnHelperError => e instanceof SpawnHelperError;

/** A command that ran to its end and exited non-zero. `code` as execFile's errors have it. */
export class CommandFailed extends Error {
  override name = "CommandFailed";
  constructor(
    message: string,
    readonly code: number,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/**
 * Nothing for a command that exited 0. Else throws: a CommandFailed when it exited non-zero (git's "no"),
 * a plain Error when a signal ended it. The message is `message`, then stderr (or the exit).
 */
export function throwUnlessExitedZero(r: Ran, message: string): void {
  if (r.code === 0) return;
  const stderr = r.stderr.toString("utf8");
  if (r.code === null) throw new Error(`${message}: killed by ${r.signal}: ${stderr.trim()}`);
  throw new CommandFailed(`${message}: ${stderr.trim() || `exit ${r.code}`}`, r.code, r.stdout.toString("utf8"), stderr);
}

/** `answer` when the command ran and said no (a non-zero exit); any other failure is thrown on. */
export function answerIfCommandSaidNo<T>(e: unknown, answer: T): T {
  if (e instanceof CommandFailed) return answer;
  throw e;
}

/** One line of JSON that readline gives back whole (the same as spawn-server.ts's). */
const toJsonLine = (value: unknown): string => JSON.stringify(value).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`) + "\n";

interface Reply {
  id: number;
  code?: number | null;
  signal?: NodeJS.Signals | null;
  stdout?: string;
  stderr?: string;
  error?: string;
  errno?: string;
}

interface Waiting {
  resolve: (r: Ran) => void;
  reject: (e: Error) => void;
}

interface Helper {
  child: ChildProcessByStdio<Writable, Readable, null>;
  pending: Map<number, Waiting>;
  nextId: number;
}

let helper: Helper | undefined;

function start(): Helper {
  // A small young generation keeps the helper's own memory, and so each of its forks, small.
  const child = spawn(process.execPath, ["--max-semi-space-size=1", SERVER], { stdio: ["pipe", "pipe", "inherit"] });
  const h: Helper = { child, pending: new Map(), nextId: 1 };
  const gone = (why: string) => {
    if (helper === h) helper = undefined;
    for (const { reject } of h.pending.values()) reject(new SpawnHelperError(`the spawn helper ${why} with commands under way`));
    h.pending.clear();
  };
  child.on("error", (e) => gone(`failed (${e.message})`));
  // Without pipes (EMFILE and the like) there is no helper: the error above follows on the next tick.
  if (!child.stdout || !child.stdin) throw new SpawnHelperError("the spawn helper could not be started with its pipes");
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", (line) => settle(h, line, gone));
  // A write to a helper that has gone: its close rejects what was under way.
  child.stdin.on("error", () => {});
  // close, not exit: the replies it wrote before it ended are read first.
  child.on("close", (code, signal) => gone(`ended (${signal ?? code})`));
  idle(h);
  return h;
}

function settle(h: Helper, line: string, gone: (why: string) => void): void {
  let r: Reply | undefined;
  try {
    r = JSON.parse(line) as Reply;
  } catch {
    r = undefined;
  }
  const waiting = typeof r?.id === "number" ? h.pending.get(r.id) : undefined;
  if (!r || !waiting) {
    h.child.kill();
    gone(`wrote a line that answers no request (${line.slice(0, 200)})`);
    return;
  }
  h.pending.delete(r.id);
  if (h.pending.size === 0) idle(h);
  if (r.error !== undefined) waiting.reject(Object.assign(new Error(r.error), { code: r.errno }));
  else waiting.resolve({ code: r.code ?? null, signal: r.signal ?? null, stdout: Buffer.from(r.stdout ?? "", "base64"), stderr: Buffer.from(r.stderr ?? "", "base64") });
}

/** An idle helper does not keep the worker alive; one with commands under way does. */
function idle(h: Helper): void {
  h.child.unref();
  for (const pipe of pipes(h)) pipe.unref();
}

function busy(h: Helper): void {
  h.child.ref();
  for (const pipe of pipes(h)) pipe.ref();
}

/** A child's pipes are sockets, which a process may hold without being kept alive by them. */
function pipes(h: Helper): Socket[] {
  return [h.child.stdout as Socket, h.child.stdin as Socket];
}

/** The helper's process id, when one is running (for its own tests). */
export const spawnHelperPid = (): number | undefined => helper?.child.pid;

/**
 * Runs `file` with `args` to its end from the helper: its exit code or signal, and everything it wrote.
 * Rejects with the error of a command that could not start (ENOENT…), or a SpawnHelperError.
 */
export function runFromHelper(file: string, args: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string | Buffer }): Promise<Ran> {
  let h: Helper;
  try {
    h = helper ??= start();
  } catch (e) {
    return Promise.reject(isSpawnHelperFailure(e) ? e : new SpawnHelperError(`the spawn helper could not be started: ${e instanceof Error ? e.message : String(e)}`));
  }
  const id = h.nextId++;
  const request = {
    id,
    file,
    args,
    cwd: opts.cwd,
    env: opts.env,
    input: opts.input === undefined ? undefined : Buffer.from(opts.input).toString("base64"),
  };
  return new Promise<Ran>((resolve, reject) => {
    h.pending.set(id, { resolve, reject });
    busy(h);
    h.child.stdin.write(toJsonLine(request));
  });
}

/**
 * promisify(execFile) run from the helper: stdout and stderr as text, the caller's folder and environment
 * unless given, and execFile's limit on what a command may write (1 MiB unless given).
 */
export async function execFileFromHelper(
  file: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; maxBuffer?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  const r = await runFromHelper(file, args, { cwd: opts.cwd ?? process.cwd(), env: opts.env ?? process.env });
  const stdout = r.stdout.toString("utf8");
  const stderr = r.stderr.toString("utf8");
  const command = [file, ...args].join(" ");
  const maxBuffer = opts.maxBuffer ?? 1024 * 1024;
  if (r.stdout.length > maxBuffer || r.stderr.length > maxBuffer) throw Object.assign(new Error(`Command failed: ${command}: output over maxBuffer (${maxBuffer} bytes)`), { stdout, stderr });
  throwUnlessExitedZero(r, `Command failed: ${command}`);
  return { stdout, stderr };
}
