/**
 * The one place agent processes are started. Each run's processes carry a
 * marker variable; at the end (normal exit, timeout or cancel) every process
 * still carrying it is killed — including detached, re-parented grandchildren
 * that left the process group.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { RUN_MARKER_VAR } from "./env.js";
import type { SpawnSpec } from "./types.js";

export interface RunProcessOptions {
  stdin?: string;
  timeoutMs: number;
  /** Value of RUN_MARKER_VAR in the child's env; leftovers carrying it are killed. */
  runId: string;
  /**
   * Each read of stdout, as the text of its complete lines (line ends kept,
   * CR LF and a lone CR made LF), before its lines go to `onStdoutLine`: one
   * call per pipe read, so a consumer can redact and write it in one go.
   */
  onStdoutBlock?: (text: string) => void;
  onStdoutLine: (line: string) => void;
  /**
   * Back-pressure: while the consumer's buffers are full, stop reading the
   * agent's stdout (the agent then blocks on its pipe) until they drain.
   */
  flowControl?: { full(): boolean; drained(): Promise<void> };
  onStderr: (chunk: string) => void;
  signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL. */
  graceMs?: number;
}

export interface ProcessOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
  /** Set when the process could not be started at all (ENOENT, EACCES). */
  spawnError?: string;
  /** Processes found and killed after the main process ended. */
  leftoversKilled: number;
}

export async function runProcessTree(spec: SpawnSpec, opts: RunProcessOptions): Promise<ProcessOutcome> {
  const started = Date.now();
  const child = spawn(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    // Own process group, so one signal reaches the whole tree.
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });

  let timedOut = false;
  let cancelled = false;
  let spawnError: string | undefined;
  const graceMs = opts.graceMs ?? 3000;

  const killTree = (why: "timeout" | "cancel") => {
    if (why === "timeout") timedOut = true;
    else cancelled = true;
    signalGroup(child.pid, "SIGTERM");
    setTimeout(() => {
      signalGroup(child.pid, "SIGKILL");
      killMarked(opts.runId);
    }, graceMs).unref();
  };
  const timer = setTimeout(() => killTree("timeout"), opts.timeoutMs);
  const onAbort = () => killTree("cancel");
  opts.signal?.addEventListener("abort", onAbort, { once: true });

  child.stdin.on("error", () => {
    /* the agent may exit without reading its stdin */
  });
  child.stdin.end(opts.stdin ?? "");

  const stdoutDone = new Promise<void>((resolve) => {
    const lines = new LineSplitter();
    let paused = false;
    const deliver = (block: string) => {
      if (!block) return;
      opts.onStdoutBlock?.(block);
      // The block ends with a line end: the last piece of the split is empty.
      const parts = block.split("\n");
      for (let i = 0; i < parts.length - 1; i++) opts.onStdoutLine(parts[i]!);
    };
    child.stdout.on("data", (chunk: Buffer) => {
      deliver(lines.push(chunk));
      if (!paused && opts.flowControl?.full()) {
        paused = true;
        child.stdout.pause();
        void opts.flowControl.drained().then(() => {
          paused = false;
          child.stdout.resume();
        });
      }
    });
    // The last line without its end, once the pipe has ended (not when it is torn down after the 2 s wait).
    child.stdout.on("end", () => deliver(lines.end()));
    child.stdout.on("close", resolve);
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", opts.onStderr);

  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("error", (e) => {
      spawnError = e.message;
      resolve({ code: null, signal: null });
    });
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(timer);
  opts.signal?.removeEventListener("abort", onAbort);

  // The main process is gone; whatever is left of its tree goes now.
  signalGroup(child.pid, "SIGKILL");
  const leftoversKilled = killMarked(opts.runId);
  // Output pipes close once every holder is dead; do not wait forever on them.
  await Promise.race([stdoutDone, delay(2000)]);
  child.stdout.destroy();
  child.stderr.destroy();

  return {
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    cancelled,
    durationMs: Date.now() - started,
    ...(spawnError ? { spawnError } : {}),
    leftoversKilled,
  };
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* group already gone */
  }
}

/** Kill every process whose environment carries the run marker; returns how many. */
export function killMarked(runId: string): number {
  const needle = Buffer.from(`${RUN_MARKER_VAR}=${runId}\0`);
  const killed = new Set<number>();
  // Loop: a process may fork while we kill its siblings. SIGKILL is not instant on a loaded machine: a
  // process found again is still on its way out, so the rounds also wait (bounded) until none is left.
  const deadline = performance.now() + KILL_WAIT_MS;
  for (;;) {
    const pids = findMarked(needle);
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
        killed.add(pid);
      } catch {
        /* exited meanwhile */
      }
    }
    if (!pids.length || performance.now() > deadline) break;
    sleepSync(KILL_POLL_MS);
  }
  return killed.size;
}

/** How long killMarked waits for killed processes to be gone, and how often it looks. */
const KILL_WAIT_MS = 5_000;
const KILL_POLL_MS = 20;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function findMarked(needle: Buffer): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return pids; // not Linux: the process group kill is all we have
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (environ.includes(needle)) pids.push(pid);
    } catch {
      /* exited, or not ours to read */
    }
  }
  return pids;
}

/**
 * Stdout bytes → complete lines, split as readline splits them (LF, CR LF or a
 * lone CR ends a line; a last line without an end still counts), but a whole
 * pipe read at a time: one decode and one search per read, not per line.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder("utf8");
  /** The current line's parts so far (no line end among them): joined once it ends, so a long line costs linear time. */
  private pending: string[] = [];
  /** The previous read ended with CR: an LF opening this one belongs to it. */
  private afterCr = false;

  /** The complete lines so far, each ending with LF ("" when none is complete yet). */
  push(chunk: Buffer): string {
    let text = this.decoder.write(chunk);
    if (this.afterCr && text.startsWith("\n")) text = text.slice(1);
    if (!text) return "";
    this.afterCr = text.endsWith("\r");
    // Only the new text is searched: an agent's endless line must not make every read rescan it.
    const cut = Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r"));
    if (cut === -1) {
      this.pending.push(text);
      return "";
    }
    const block = this.pending.join("") + text.slice(0, cut + 1);
    this.pending = cut + 1 < text.length ? [text.slice(cut + 1)] : [];
    return block.includes("\r") ? block.replace(/\r\n?/g, "\n") : block;
  }

  /** What is left at the end: a last line without its line end, given one. */
  end(): string {
    const rest = this.pending.join("") + this.decoder.end();
    this.pending = [];
    // No line end is ever left pending: the rest is one line.
    return rest ? `${rest}\n` : "";
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
