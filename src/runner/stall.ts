/**
 * The stall watchdog (`stall-minutes`): an agent that makes no model request,
 * writes no output and changes no file for that long is stopped, with its work
 * kept as a checkpoint (conclusion `incomplete`), instead of hanging until
 * `timeout-minutes` or the job's own limit.
 *
 * Three signs of life, each cheap to read:
 *   - output: the runner calls `touch()` for every stdout or stderr chunk;
 *   - model traffic: the gateway's counters (requests, bytes in, bytes out, which
 *     grow while a response streams, refusals) compared with the last look;
 *   - files: a bounded walk of the workspace (at most SCAN_LIMIT entries, symlinks
 *     not followed), its newest mtime and entry count compared with the last look.
 *     A change past the first SCAN_LIMIT entries is missed; the other two signs
 *     usually move with it. A scan under way when the watch stops ends after the
 *     file-system call under way, closing its handle: the step goes on (and ends)
 *     without a walk of the workspace behind it.
 * The check runs every `periodMs` (a quarter of the limit, at most 10 s), so a
 * stall is seen within `stall-minutes` plus one period plus one scan.
 */
import { lstat, opendir, stat } from "node:fs/promises";
import path from "node:path";

/** Entries one scan of the workspace looks at, at most. */
export const SCAN_LIMIT = 20_000;
/** The longest time between two checks. */
export const MAX_PERIOD_MS = 10_000;

export interface StallWatchOptions {
  stallMs: number;
  workspace: string;
  /** A fingerprint of the model gateway's counters: a change is a sign of life. */
  modelActivity?: () => string;
  /** Called once, when the agent has been idle for `stallMs`. */
  onStall: (idleMs: number) => void;
  now?: () => number;
}

export interface StallWatch {
  /** The agent wrote output. */
  touch(): void;
  stop(): void;
  readonly stalled: boolean;
}

export function checkPeriodMs(stallMs: number): number {
  return Math.max(100, Math.min(MAX_PERIOD_MS, Math.floor(stallMs / 4)));
}

/** Directory entries read from the kernel at a time: a huge directory is never loaded whole. */
const DIR_BUFFER = 64;

/**
 * Newest mtime and number of entries of the first SCAN_LIMIT entries under `root` (breadth first, no
 * symlinks followed); undefined when `signal` aborted the scan before its end.
 */
export async function workspaceFingerprint(root: string, limit = SCAN_LIMIT, signal?: AbortSignal): Promise<string | undefined> {
  let newest = 0;
  let count = 0;
  const queue = [root];
  while (queue.length && count < limit) {
    if (signal?.aborted) return undefined;
    const dir = queue.shift()!;
    // The root is the runner's own path (it may be a link, as /tmp is on macOS). Below it, a path that is no
    // longer a directory when its turn comes is skipped. That narrows, not closes, an agent's swap for a link:
    // opendir follows links, and so does the lookup of a queued path's parents.
    const st = await (dir === root ? stat : lstat)(dir).catch(() => undefined);
    if (!st?.isDirectory() || signal?.aborted) continue;
    newest = Math.max(newest, st.mtimeMs);
    // opendir streams the entries, so a directory of millions costs no more than `limit` of them.
    const handle = await opendir(dir, { bufferSize: DIR_BUFFER }).catch(() => undefined);
    if (!handle) continue;
    try {
      while (count < limit && !signal?.aborted) {
        const e = await handle.read();
        if (!e || signal?.aborted) break;
        count++;
        const full = path.join(dir, e.name);
        if (e.isDirectory()) queue.push(full);
        else {
          const f = await lstat(full).catch(() => undefined);
          if (f) newest = Math.max(newest, f.mtimeMs);
        }
      }
    } catch {
      // A directory removed while it is read: what was seen counts.
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
  return signal?.aborted ? undefined : `${count}:${newest}`;
}

export function watchForStall(o: StallWatchOptions): StallWatch {
  const now = o.now ?? Date.now;
  let lastActive = now();
  let model = o.modelActivity?.();
  let files: string | undefined;
  let stalled = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const scans = new AbortController();
  const check = async () => {
    if (stopped) return;
    const m = o.modelActivity?.();
    const f = await workspaceFingerprint(o.workspace, SCAN_LIMIT, scans.signal);
    if (stopped || f === undefined) return;
    if (m !== model || (files !== undefined && f !== files)) lastActive = now();
    model = m;
    files = f;
    const idle = now() - lastActive;
    if (idle >= o.stallMs) {
      stalled = true;
      stopped = true;
      o.onStall(idle);
      return;
    }
    timer = setTimeout(() => void check(), checkPeriodMs(o.stallMs));
    timer.unref();
  };
  // The first scan is the reference the next ones compare with.
  void check();
  return {
    touch: () => {
      lastActive = now();
    },
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      scans.abort();
    },
    get stalled() {
      return stalled;
    },
  };
}
