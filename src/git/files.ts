/** Small file-system helpers for reading agent-written repository state without following it. */
import { copyFile, link, lstat, rm, stat, utimes } from "node:fs/promises";

/** A hard link where the file system allows one (cheap: object files are never rewritten), else a copy. */
export async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "EXDEV" && code !== "EPERM") throw e;
    await copyFile(from, to);
  }
}

/** lstat that says whether `p` is a real directory (not a link to one). */
export async function isRealDirectory(p: string): Promise<boolean> {
  try {
    return (await lstat(p)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Copy a git index and keep git's racy-entry guard. Git trusts an entry's
 * stat data only when the file's mtime is older than the index file's own
 * mtime; a same-size write within the second the entry was recorded is
 * otherwise invisible. A plain copy stamps the index "now", so such a write
 * (an agent's, right after checkout) would be missed; the copy gets the
 * source's mtime rounded down to the second, so those entries stay racy and
 * git compares their content.
 */
export async function copyIndex(from: string, to: string): Promise<void> {
  await copyFile(from, to);
  try {
    const whole = Math.floor((await stat(from)).mtimeMs / 1000);
    await utimes(to, whole, whole);
  } catch (e) {
    // A copy stamped "now" would hide such writes: no copy, and git hashes every file.
    await rm(to, { force: true });
    throw e;
  }
}
