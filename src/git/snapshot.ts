/**
 * Snapshots of the working tree as git tree objects, made in the host's
 * private repository (host-repo.ts) with a private index file for each
 * snapshot: the workspace's own index, refs and config are never used.
 * The patch is the diff between the base commit's tree and the tree at the
 * end, so it covers new, deleted, renamed, binary and mode-changed files and
 * whatever commits the agent made itself, and it always applies to the base
 * commit. Paths that already differed from the base commit before the agent
 * started (an earlier workflow step wrote them) are left out of it, whatever
 * the agent did to them: they are not the agent's work, and a patch that
 * carried them would not apply to the base commit.
 */
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { agentCommits } from "./agent-head.js";
import { copyIndex } from "./files.js";
import { GHA_CREDS_PATHSPEC } from "../shared/cloud.js";
import type { HostRepo } from "./host-repo.js";
import { unskipPresentFiles, type SparseEntries } from "./sparse.js";
import { treeDiff } from "./tree-diff.js";

/** A path that differed from the base commit before the agent started, with what the base commit and the start had there. */
interface Preexisting {
  path: string;
  /** Mode and blob in the base commit; mode "000000" when the base commit has no such path. */
  baseMode: string;
  baseBlob: string;
  /** Mode and blob in the work tree when the run started; mode "000000" when there was none. */
  startMode: string;
  startBlob: string;
}

export interface Baseline {
  /** HEAD when the run started: the commit the patch is made against. */
  commit: string;
  /** The base commit's tree. */
  commitTree: string;
  /** Tree of the working directory when the run started (= commitTree when clean). */
  tree: string;
  /** Paths changed or created relative to the base commit before the agent started: never in the patch. */
  preexisting: Preexisting[];
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
  /** Paths left out of the patch (Baseline.preexisting), in git's order. */
  excludedFiles: string[];
  /** The excluded paths the agent changed too (its changes there are not delivered). */
  excludedTouched: string[];
}

/**
 * Write the working tree (tracked + untracked, .gitignore respected) as a tree
 * object, in the private repository; cloud credentials files (`gha-creds-*.json`)
 * are left as the index had them.
 */
async function snapshotTree(repo: HostRepo, scratchDir: string, label: string): Promise<{ tree: string; sparse: SparseEntries }> {
  const index = path.join(scratchDir, `index-${label}`);
  // Start from the index as it was before the agent ran, so unchanged files are not re-hashed
  // (and nothing the agent wrote into its own index is read).
  await copyIndex(repo.baseIndex, index).catch(() => undefined);
  const env = { GIT_INDEX_FILE: index };
  // Sparse checkouts: a file written where the checkout left one out counts, as it does for git.
  const sparse = await unskipPresentFiles(repo.git, repo.workspace.workTree, index);
  // google-github-actions/auth's credentials file is never hashed into a tree: never in a patch, whoever wrote it.
  // Pathspec magic is off in the private repository (GIT_LITERAL_PATHSPECS); here it is on for our
  // exclusion, and the workspace's own path is marked literal.
  await repo.git.exec(["add", "-A", "--", `:(literal)${repo.workspace.pathspec}`, GHA_CREDS_PATHSPEC], { env: { ...env, GIT_LITERAL_PATHSPECS: "0" } });
  const tree = await repo.git.text(["write-tree"], { env });
  await rm(index, { force: true });
  return { tree, sparse };
}

const DIFF = ["--no-renames", "--no-ext-diff", "--no-textconv", "-z"];

/**
 * Paths whose entries differ between two trees (no renames: both sides of a move count), in git's order.
 * Asked of the repository without a work tree, as the patch check asks it: the check of the same two
 * trees then needs no process of its own (git/tree-diff.ts, byObjectIds).
 */
async function changedPaths(repo: HostRepo, from: string, to: string): Promise<string[]> {
  if (from === to) return [];
  return (await treeDiff(repo.objects, from, to)).changes.map((c) => c.path);
}

/** What differs between the base commit's tree and the workspace at start, with the base commit's side of each path. */
async function preexistingChanges(repo: HostRepo, commitTree: string, tree: string): Promise<Preexisting[]> {
  if (commitTree === tree) return [];
  // -z raw records: ":<mode> <mode> <blob> <blob> <status>\0<path>\0".
  const fields = (await repo.git.exec(["diff", "--raw", "--no-abbrev", ...DIFF, commitTree, tree])).stdout.split("\0");
  const out: Preexisting[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [baseMode, startMode, baseBlob, startBlob] = fields[i]!.replace(/^:/, "").split(" ");
    if (baseMode && baseBlob && startMode && startBlob) out.push({ path: fields[i + 1]!, baseMode, baseBlob, startMode, startBlob });
  }
  return out;
}

export async function takeBaseline(repo: HostRepo, scratchDir: string): Promise<Baseline> {
  const commit = repo.workspace.head;
  // Also proves the private repository holds the commit. Asked while the snapshot is made.
  const [commitTree, { tree, sparse }] = await Promise.all([
    repo.git.text(["rev-parse", "--verify", "-q", `${commit}^{tree}`]),
    snapshotTree(repo, scratchDir, "start"),
  ]);
  const present = new Set(sparse.present);
  const leftOut = new Set(sparse.leftOut.filter((f) => !present.has(f)));
  return { commit, commitTree, tree, preexisting: await preexistingChanges(repo, commitTree, tree), leftOut };
}

/**
 * `tree` with every pre-existing path put back as `side` had it: the base
 * commit (what is delivered) or the work tree at start (what the check runs
 * on: the job's own preparation, not the agent's); removed where that side had none.
 */
async function withoutPreexisting(repo: HostRepo, base: Baseline, tree: string, scratchDir: string, side: "base" | "start" = "base"): Promise<string> {
  if (!base.preexisting.length) return tree;
  const env = { GIT_INDEX_FILE: path.join(scratchDir, `index-tree-${side}`) };
  const entries = base.preexisting.map((p) => (side === "base" ? { path: p.path, mode: p.baseMode, blob: p.baseBlob } : { path: p.path, mode: p.startMode, blob: p.startBlob }));
  try {
    await repo.git.exec(["read-tree", tree], { env });
    // Removals first, so a file the base commit has where a folder was made can come back.
    const sorted = entries.sort((a, b) => Number(b.mode === "000000") - Number(a.mode === "000000"));
    const info = sorted.map((p) => `${p.mode} ${p.blob}\t${p.path}\0`).join("");
    await repo.git.exec(["update-index", "--add", "--replace", "-z", "--index-info"], { env, input: info });
    return await repo.git.text(["write-tree"], { env });
  } finally {
    await rm(env.GIT_INDEX_FILE, { force: true });
  }
}

/**
 * The tree `verify-command` runs on, made now from the work tree: what the
 * patch would deliver (the base commit with the agent's changes), with the
 * paths an earlier step had changed as they were when the run started
 * (`preexisting: "start"`), or as the base commit has them (`"base"`: an
 * earlier agent of the job may have written them, and the patch never carries them).
 * `delivered` is that patch's own post-image, for the log.
 */
export async function treeForCheck(
  repo: HostRepo,
  base: Baseline,
  scratchDir: string,
  preexisting: "base" | "start" = "start",
): Promise<{ tree: string; delivered: string; changedFiles: string[] }> {
  const { tree: endTree } = await snapshotTree(repo, scratchDir, "check");
  const delivered = await withoutPreexisting(repo, base, endTree, scratchDir);
  const [tree, changedFiles] = await Promise.all([
    preexisting === "base" ? delivered : withoutPreexisting(repo, base, delivered, scratchDir, "start"),
    changedPaths(repo, base.commitTree, delivered),
  ]);
  return { tree, delivered, changedFiles };
}

export async function collectChanges(repo: HostRepo, base: Baseline, scratchDir: string, patchPath: string): Promise<Collected> {
  const { tree: endTree } = await snapshotTree(repo, scratchDir, "end");
  const delivered = await withoutPreexisting(repo, base, endTree, scratchDir);
  const excludedFiles = base.preexisting.map((p) => p.path);
  const touched = new Set(excludedFiles.length ? await changedPaths(repo, base.tree, endTree) : []);
  const excludedTouched = excludedFiles.filter((f) => touched.has(f));
  // The same tree: an empty patch, without asking git twice for the difference of nothing.
  if (delivered === base.commitTree) {
    await writeFile(patchPath, "");
    return { patchPath, changedFiles: [], agentCommits: await agentCommits(repo, base.commit), endTree, excludedFiles, excludedTouched };
  }
  const [, changedFiles] = await Promise.all([
    repo.git.exec(["diff", "--binary", "--full-index", "-M", "--no-color", "--no-ext-diff", "--no-textconv", base.commitTree, delivered], { stdoutFile: patchPath }),
    changedPaths(repo, base.commitTree, delivered),
  ]);
  const unseen = changedFiles.filter((f) => base.leftOut.has(f));
  return {
    patchPath,
    changedFiles,
    ...(unseen.length ? { changedOutsideSparse: unseen } : {}),
    agentCommits: await agentCommits(repo, base.commit),
    endTree,
    excludedFiles,
    excludedTouched,
  };
}
