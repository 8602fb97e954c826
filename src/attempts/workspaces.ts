/**
 * One workspace per attempt: a copy of the whole checkout (work tree, `.git`,
 * untracked and ignored files such as an installed node_modules), made by the
 * host before any agent starts, so every attempt starts from the same state
 * and none sees another. The copies live in the run's temp folder, which every
 * sandbox hides; each attempt's sandbox binds only its own copy back. The
 * original workspace is left as it was: the base the patches are made against.
 */
import { execFile } from "node:child_process";
import { cp, mkdir } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { ConfigurationError } from "../errors.js";
import { Git } from "../git/git.js";
import type { TouchedWorkspaces } from "../git/touched.js";

const run = promisify(execFile);

export interface WorkspaceCopy {
  /** The copy's working directory (the same place in the copied checkout as `working-directory` in the original). */
  workspace: string;
  /** The copied checkout's top level. */
  workTree: string;
}

/**
 * The checkout holding `workspace`, asked while it is still trusted. A
 * checkout an earlier agent of this job ran in is refused: its `.git` could
 * hold config that host git would follow in every copy.
 */
export async function checkoutOf(workspace: string, gitEnv: Record<string, string>, touched: TouchedWorkspaces): Promise<{ workTree: string; pathspec: string }> {
  if (await touched.lookup(workspace))
    throw new ConfigurationError(
      "Input 'attempts': an agent already ran in this repository earlier in this job, so it cannot be copied for more attempts safely; run this step in a job of its own (a fresh checkout), or set attempts: 1.",
    );
  const r = await new Git(workspace, gitEnv).exec(["rev-parse", "--path-format=absolute", "--show-toplevel"], { okCodes: [128] });
  const workTree = r.stdout.trim();
  if (r.exitCode !== 0 || !workTree)
    throw new ConfigurationError(`Input 'working-directory': '${workspace}' is not a git repository. Check out the repository first (actions/checkout) or run 'git init' and commit.`);
  return { workTree, pathspec: path.relative(workTree, path.resolve(workspace)) };
}

/**
 * Copies the checkout to `dest` (a new folder), keeping modes, links (never
 * followed) and times. `cp -a` on Linux (with copy-on-write clones where the
 * file system has them); Node's copy elsewhere.
 */
export async function copyCheckout(source: { workTree: string; pathspec: string }, dest: string): Promise<WorkspaceCopy> {
  const workTree = path.join(dest, path.basename(source.workTree));
  await mkdir(dest, { recursive: true });
  if (process.platform === "linux") await run("cp", ["-a", "--reflink=auto", "--", source.workTree, workTree], { maxBuffer: 1024 * 1024 });
  else await cp(source.workTree, workTree, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, errorOnExist: true, force: false });
  return { workTree, workspace: path.join(workTree, source.pathspec) };
}
