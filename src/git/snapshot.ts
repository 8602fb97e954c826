/**
 * Snapshots of the working tree as git tree objects, made in the host's
 * private repository (host-repo.ts) with a private index file for each
 * snapshot: the workspace's own index, refs and config are never used.
 * The patch is the diff between the tree at start and the tree at the end,
 * so it covers new, deleted, renamed, binary and mode-changed files and
 * whatever commits the agent made itself.
 */
import { copyFile, rm } from "node:fs/promises";
import path from "node:path";
import { agentCommits } from "./agent-head.js";
import type { HostRepo } from "./host-repo.js";
import { unskipPresentFiles, type SparseEntries } from "./sparse.js";

export interface Baseline {
  /** HEAD when the run started. */
  commit: string;
  /** Tree of the working directory when the run started (= HEAD's tree when clean). */
  tree: string;
  /** True when the workspace had uncommitted changes at start (excluded from the patch). */
  dirty: boolean;
  /** Files a sparse checkout left out (sparse.ts), less those in the work tree anyway at start. */
  leftOut: Set<string>;
}

export interface Collected {
  patchPath: string;
  changedFiles: string[];
  /** Commits the agent made itself (base..HEAD), oldest first. */
  agentCommits: string[];
  endTree: string;
  /** Files the sparse checkout left out that the patch changes or deletes: the agent never saw them. */
  changedOutsideSparse?: string[];
}

/** Write the working tree (tracked + untracked, .gitignore respected) as a tree object, in the private repository. */
async function snapshotTree(repo: HostRepo, scratchDir: string, label: string): Promise<{ tree: string; sparse: SparseEntries }> {
  const index = path.join(scratchDir, `index-${label}`);
  // Start from the index as it was before the agent ran, so unchanged files are not re-hashed
  // (and nothing the agent wrote into its own index is read).
  await copyFile(repo.baseIndex, index).catch(() => undefined);
  const env = { GIT_INDEX_FILE: index };
  // Sparse checkouts: a file written where the checkout left one out counts, as it does for git.
  const sparse = await unskipPresentFiles(repo.git, repo.workspace.workTree, index);
  await repo.git.exec(["add", "-A", "--", repo.workspace.pathspec], { env });
  const tree = await repo.git.text(["write-tree"], { env });
  await rm(index, { force: true });
  return { tree, sparse };
}

export async function takeBaseline(repo: HostRepo, scratchDir: string): Promise<Baseline> {
  const commit = repo.workspace.head;
  // Also proves the private repository holds the commit.
  const headTree = await repo.git.text(["rev-parse", "--verify", "-q", `${commit}^{tree}`]);
  const { tree, sparse } = await snapshotTree(repo, scratchDir, "start");
  const present = new Set(sparse.present);
  return { commit, tree, dirty: tree !== headTree, leftOut: new Set(sparse.leftOut.filter((f) => !present.has(f))) };
}

export async function collectChanges(repo: HostRepo, base: Baseline, scratchDir: string, patchPath: string): Promise<Collected> {
  const { tree: endTree } = await snapshotTree(repo, scratchDir, "end");
  await repo.git.exec(["diff", "--binary", "--full-index", "-M", "--no-color", "--no-ext-diff", "--no-textconv", base.tree, endTree], {
    stdoutFile: patchPath,
  });
  const names = await repo.git.exec(["diff", "--name-only", "--no-renames", "--no-ext-diff", "--no-textconv", "-z", base.tree, endTree]);
  const changedFiles = names.stdout.split("\0").filter(Boolean);
  const unseen = changedFiles.filter((f) => base.leftOut.has(f));
  return { patchPath, changedFiles, agentCommits: await agentCommits(repo, base.commit), endTree, ...(unseen.length ? { changedOutsideSparse: unseen } : {}) };
}
