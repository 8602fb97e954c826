/** Small file-system helpers for reading agent-written repository state without following it. */
import { copyFile, link, lstat } from "node:fs/promises";

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
