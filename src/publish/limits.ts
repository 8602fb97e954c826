/**
 * Size and count limits on what the agent leaves behind and what we unpack.
 * The agent is hostile: its outputs/ folder and anything made by a job that
 * ran it (a run artifact, saved session state) could be built to fill the
 * runner's disk or take hours to walk. The numbers are documented in the
 * README; the error messages name them.
 */
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { describeBytes, GiB } from "../shared/bytes.js";
import { groupDigits } from "../shared/plain-format.js";

export interface TreeLimits {
  /** Files and folders, counted together. */
  maxEntries: number;
  /** Sum of the regular files' sizes, in bytes. */
  maxTotalBytes: number;
}


/** An artifact we unzip (run artifact, session state): 2 GiB unpacked, 10,000 entries. */
export const ARTIFACT_LIMITS: TreeLimits = { maxEntries: 10_000, maxTotalBytes: 2 * GiB };

/** The agent's outputs/ folder, uploaded with the run: 1 GiB, 5,000 entries (it shares the artifact's limits with the trace and patch). */
export const OUTPUTS_LIMITS: TreeLimits = { maxEntries: 5_000, maxTotalBytes: 1 * GiB };

export { describeBytes };

export function describeLimits(l: TreeLimits): string {
  return `${describeBytes(l.maxTotalBytes)} / ${groupDigits(l.maxEntries)} entries`;
}

/**
 * Why the folder `root` is over `limits`, or undefined when it is within
 * them. The walk never follows a symlink and stops at the first limit
 * crossed, so a folder of a million files costs no more than the limit.
 * Sizes are what lstat reports (a sparse file counts at its full size).
 */
export async function treeOverLimits(root: string, limits: TreeLimits): Promise<string | undefined> {
  // A root that is not a folder (missing, or a symlink) holds nothing: symlinks are never followed.
  const st = await lstat(root).catch(() => undefined);
  if (!st?.isDirectory()) return undefined;
  let entries = 0;
  let bytes = 0;
  const pending = [root];
  while (pending.length) {
    const dir = pending.pop()!;
    const names = await readdir(dir, { withFileTypes: true });
    for (const d of names) {
      if (++entries > limits.maxEntries) return `it holds more than ${groupDigits(limits.maxEntries)} files and folders`;
      const full = path.join(dir, d.name);
      if (d.isDirectory()) pending.push(full);
      else if (d.isFile()) {
        bytes += (await lstat(full)).size;
        if (bytes > limits.maxTotalBytes) return `its files add up to more than ${describeBytes(limits.maxTotalBytes)}`;
      }
    }
  }
  return undefined;
}
