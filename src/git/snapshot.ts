/**
 * Snapshots of the working tree as git tree objects, without touching the
 * user's index or refs: a private index file is used for each snapshot.
 * The patch is the diff between the tree at start and the tree at the end,
 * so it covers new, deleted, renamed, binary and mode-changed files and
 * whatever commits the agent made itself.
 */
import { copyFile, rm } from "node:fs/promises";
import path from "node:path";
import { ConfigurationError } from "../errors.js";
import type { Git } from "./git.js";

export interface Baseline {
  /** HEAD when the run started. */
  commit: string;
  /** Tree of the working directory when the run started (= HEAD's tree when clean). */
  tree: string;
  /** True when the workspace had uncommitted changes at start (excluded from the patch). */
  dirty: boolean;
}

export interface Collected {
  patchPath: string;
  changedFiles: string[];
  /** Commits the agent made itself (base..HEAD), oldest first. */
  agentCommits: string[];
  endTree: string;
}

async function ensureRepository(git: Git): Promise<void> {
  const inside = await git.exec(["rev-parse", "--is-inside-work-tree"], { okCodes: [128] });
  if (inside.exitCode !== 0 || inside.stdout.trim() !== "true")
    throw new ConfigurationError(
      `Input 'working-directory': '${git.cwd}' is not a git repository. Check out the repository first (actions/checkout) or run 'git init' and commit.`,
    );
  const head = await git.exec(["rev-parse", "--verify", "-q", "HEAD"], { okCodes: [1] });
  if (head.exitCode !== 0)
    throw new ConfigurationError(`Input 'working-directory': the repository at '${git.cwd}' has no commit yet; commit once so changes can be measured against it.`);
}

/** Write the working tree (tracked + untracked, .gitignore respected) as a tree object. */
async function snapshotTree(git: Git, scratchDir: string, label: string): Promise<string> {
  const index = path.join(scratchDir, `index-${label}`);
  const realIndex = path.resolve(git.cwd, await git.text(["rev-parse", "--git-path", "index"]));
  // Start from the real index so unchanged files are not re-hashed.
  await copyFile(realIndex, index).catch(() => undefined);
  const env = { GIT_INDEX_FILE: index };
  await git.exec(["add", "-A", "--", "."], { env });
  const tree = await git.text(["write-tree"], { env });
  await rm(index, { force: true });
  return tree;
}

export async function takeBaseline(git: Git, scratchDir: string): Promise<Baseline> {
  await ensureRepository(git);
  const commit = await git.text(["rev-parse", "HEAD"]);
  const headTree = await git.text(["rev-parse", "HEAD^{tree}"]);
  const tree = await snapshotTree(git, scratchDir, "start");
  return { commit, tree, dirty: tree !== headTree };
}

export async function collectChanges(git: Git, base: Baseline, scratchDir: string, patchPath: string): Promise<Collected> {
  const endTree = await snapshotTree(git, scratchDir, "end");
  await git.exec(["diff", "--binary", "--full-index", "-M", "--no-color", "--no-ext-diff", base.tree, endTree], {
    stdoutFile: patchPath,
  });
  const names = await git.exec(["diff", "--name-only", "--no-renames", "-z", base.tree, endTree]);
  const changedFiles = names.stdout.split("\0").filter(Boolean);
  const log = await git.exec(["rev-list", "--reverse", `${base.commit}..HEAD`], { okCodes: [128] });
  const agentCommits = log.exitCode === 0 ? log.stdout.split("\n").filter(Boolean) : [];
  return { patchPath, changedFiles, agentCommits, endTree };
}
