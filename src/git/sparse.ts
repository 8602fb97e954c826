/**
 * Sparse checkouts (`git sparse-checkout`, cone or not, sparse index or not).
 *
 * The index of a sparse checkout marks the files outside the cone
 * "skip-worktree": absent from the work tree, yet still part of HEAD. A
 * snapshot starts from that index, so `git add -A` keeps those files (the
 * patch never deletes what was not checked out) and ignores their absence.
 *
 * It would also ignore a file the agent wrote at such a path, and drop the
 * agent's change without a word. git itself, in a sparse checkout, clears the
 * skip-worktree bit of a file that is present in the work tree, so that
 * `git add` sees it; the private repository (host-repo.ts) has no sparse
 * settings, so this module does the same before each snapshot. A path is
 * "present" only when every folder on the way is a real folder: a link the
 * agent made in place of a folder is never followed (git would read the file
 * as deleted through it).
 */
import { lstat, open } from "node:fs/promises";
import path from "node:path";
import type { Git } from "./git.js";

export interface SparseEntries {
  /** Index entries the checkout left out (skip-worktree). */
  leftOut: string[];
  /** Those of them found in the work tree, now counted again. */
  present: string[];
}

/** Clear the skip-worktree bit of every entry of the index at `indexFile` whose file is in the work tree. */
export async function unskipPresentFiles(git: Git, workTree: string, indexFile: string): Promise<SparseEntries> {
  const env = { GIT_INDEX_FILE: indexFile };
  if (!(await mayHoldSkipWorktree(indexFile))) return { leftOut: [], present: [] };
  // `-t` tags skip-worktree entries "S"; a sparse index is expanded by git on reading (no sparse settings here).
  const listed = await git.exec(["ls-files", "-t", "-z"], { env });
  const skipped = listed.stdout
    .split("\0")
    .filter((rec) => rec.startsWith("S "))
    .map((rec) => rec.slice(2));
  if (!skipped.length) return { leftOut: [], present: [] };
  const dirs = new Map<string, Promise<boolean>>();
  const present: string[] = [];
  for (const file of skipped) if (await isPresent(workTree, file, dirs)) present.push(file);
  if (present.length) await git.exec(["update-index", "--no-skip-worktree", "-z", "--stdin"], { env, input: present.map((p) => `${p}\0`).join("") });
  return { leftOut: skipped, present };
}

/**
 * False when the index cannot mark any entry skip-worktree: that bit lives in an entry's extended
 * flags, which index format 2 has no room for (git writes 3 or 4 when an entry needs them), and a
 * missing index has no entries. Saves a git process per snapshot in the usual, non-sparse checkout.
 */
async function mayHoldSkipWorktree(indexFile: string): Promise<boolean> {
  const head = Buffer.alloc(8);
  let read = 0;
  try {
    const file = await open(indexFile, "r");
    try {
      ({ bytesRead: read } = await file.read(head, 0, 8, 0));
    } finally {
      await file.close();
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
  // "DIRC", then the version as a 32-bit big-endian number; anything else is left to git to judge.
  return !(read === 8 && head.toString("latin1", 0, 4) === "DIRC" && head.readUInt32BE(4) === 2);
}

/** True when `file` exists in the work tree (as a file or a link) below real folders only. */
async function isPresent(workTree: string, file: string, dirs: Map<string, Promise<boolean>>): Promise<boolean> {
  const parts = file.split("/");
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    let real = dirs.get(dir);
    if (!real) {
      real = lstat(path.join(workTree, dir)).then(
        (s) => s.isDirectory(),
        () => false,
      );
      dirs.set(dir, real);
    }
    if (!(await real)) return false;
  }
  const stat = await lstat(path.join(workTree, file)).catch(() => undefined);
  return stat !== undefined && (stat.isFile() || stat.isSymbolicLink());
}
