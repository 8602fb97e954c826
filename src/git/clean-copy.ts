/**
 * What `verify-command` runs on: a clean copy made by the host, never the
 * agent's workspace as the agent left it.
 *
 * - Before the agent starts, the work tree's git-ignored files (installed
 *   dependencies such as node_modules, build caches) are copied into a folder
 *   of the run's temp space, which every sandbox hides. A real copy
 *   (`cp -a --reflink=auto`: copy-on-write clones where the file system has
 *   them, else bytes), never hard links: a link would share the file with the
 *   workspace, and the agent could change the snapshot through it.
 * - For each check, a fresh folder gets that snapshot, then the tree the
 *   patch makes (snapshot.ts `treeForCheck`), checked out by the host's
 *   private repository (host-repo.ts): no setting and no filter of the
 *   agent's repository applies, and nothing the agent did outside the patch
 *   (an ignored file changed, a shim in node_modules/.bin, its HOME) is there.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { HostRepo } from "./host-repo.js";

const run = promisify(execFile);

/** Paths per `cp` call: far below the argument-size limit even for long paths. */
const CP_BATCH = 500;

export interface IgnoredSnapshot {
  /** The folder holding the copies, at the same relative paths as in the work tree. */
  dir: string;
  /** Entries copied (a folder git lists whole, such as node_modules/, counts once). */
  entries: number;
  durationMs: number;
}

/**
 * Copy the work tree's ignored files into `dir` (which must be outside every
 * sandbox's view). `skip`: entries never copied (credentials files).
 * Ignored means by the repository's .gitignore files and info/exclude; a
 * runner's global excludes are not read (host-repo.ts), so files only they
 * ignore are untracked and travel in the start tree instead.
 */
export async function snapshotIgnored(repo: HostRepo, dir: string, skip: (rel: string) => boolean): Promise<IgnoredSnapshot> {
  const started = Date.now();
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  // The index as it was before the agent ran says what is tracked; `--directory` lists an ignored folder once.
  const listed = await repo.git.exec(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], { env: { GIT_INDEX_FILE: repo.baseIndex } });
  const entries = listed.stdout
    .split("\0")
    .map((e) => e.replace(/\/+$/, ""))
    .filter((e) => e && !skip(e));
  await copyEntries(repo.workspace.workTree, entries, dir);
  return { dir, entries: entries.length, durationMs: Date.now() - started };
}

/** Copies `entries` (relative to `from`) to the same places under `to`; links are copied as links. */
async function copyEntries(from: string, entries: string[], to: string): Promise<void> {
  if (process.platform === "linux") {
    for (let i = 0; i < entries.length; i += CP_BATCH)
      await run("cp", ["-a", "--reflink=auto", "--parents", "-t", to, "--", ...entries.slice(i, i + CP_BATCH)], { cwd: from, maxBuffer: 1024 * 1024 });
    return;
  }
  for (const e of entries) {
    await mkdir(path.dirname(path.join(to, e)), { recursive: true });
    await cp(path.join(from, e), path.join(to, e), { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  }
}

/**
 * Fill the empty folder `dest` with the ignored-files snapshot, then `tree`
 * checked out over it (the patch wins where both have a path). `scratchDir`:
 * the host's private scratch space, for the index.
 */
export async function materialiseCheckCopy(repo: HostRepo, opts: { tree: string; ignored: IgnoredSnapshot | undefined; dest: string; scratchDir: string }): Promise<void> {
  await mkdir(opts.dest, { recursive: true });
  if (opts.ignored && (await readdir(opts.ignored.dir)).length) {
    if (process.platform === "linux") await run("cp", ["-a", "--reflink=auto", "-T", "--", opts.ignored.dir, opts.dest], { maxBuffer: 1024 * 1024 });
    else await cp(opts.ignored.dir, opts.dest, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  }
  const env = { GIT_INDEX_FILE: path.join(opts.scratchDir, "index-check-copy"), GIT_WORK_TREE: opts.dest };
  try {
    // Read and checked out by one process (as `read-tree` then `checkout-index -a -f` would): --reset, so
    // a path the snapshot also has (an ignored file the patch now tracks) takes the patch's content.
    await repo.git.exec(["read-tree", "--reset", "-u", opts.tree], { env });
  } finally {
    await rm(env.GIT_INDEX_FILE, { force: true });
  }
}
