/**
 * `commit-method: api`: the commit the delivery repository prepared (its
 * tree already passed the patch rules against the parent) is recreated
 * through GitHub's Git Data API — blobs, one tree on the parent's tree, one
 * commit with no author, committer or signature — so that GitHub signs it
 * with the workflow token's identity. GitHub names objects as git does, so
 * the tree it builds must have exactly the id of the checked tree: anything
 * else is refused before a ref moves.
 */
import type { GitHubApi, GitTreeEntry } from "../github/api.js";
import type { DeliveryRepo } from "./deliver-git.js";
import { treeDiff } from "../git/tree-diff.js";
import { readBlobs } from "./patch-rules.js";

/** GitHub refuses larger blobs through the API (its documented limit is 100 MB; base64 and JSON add a third). */
export const MAX_API_BLOB_BYTES = 50 * 1024 * 1024;
/** Files and total bytes one API commit carries; larger changes go by git only when the workflow allows it. */
export const MAX_API_FILES = 3000;
export const MAX_API_BYTES = 200 * 1024 * 1024;
/** Blob uploads in flight: GitHub's secondary rate limits punish bursts of content-creating requests. */
const BLOB_PARALLELISM = 4;

interface Change {
  path: string;
  mode: GitTreeEntry["mode"];
  /** The blob's id in the delivery repository; null for a deletion. */
  blob: string | null;
}

export class ApiCommitTooLargeError extends Error {}

export interface ApiCommit {
  sha: string;
  verified: boolean;
  verificationReason: string;
}

/** The entries `tree` changes on top of `parent`'s tree (no renames: a rename is a deletion and an addition). */
async function changes(repo: DeliveryRepo, parentTree: string, tree: string): Promise<Change[]> {
  const out: Change[] = [];
  for (const { path: file, newMode, newSha, status } of (await treeDiff(repo.git, parentTree, tree)).changes) {
    if (status === "D") {
      out.push({ path: file, mode: "100644", blob: null });
      continue;
    }
    if (newMode !== "100644" && newMode !== "100755" && newMode !== "120000") throw new Error(`'${file}' has mode ${newMode}, which the API path does not write.`);
    out.push({ path: file, mode: newMode, blob: newSha });
  }
  return out;
}

/** Blob bytes read with one git call at most: bounds what is held in memory while uploading. */
const BATCH_BYTES = 32 * 1024 * 1024;

/** The blobs in groups of at most BATCH_BYTES (a larger blob is a group of its own), each read with one `cat-file --batch`. */
function batches(blobs: readonly string[], sizes: readonly number[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  blobs.forEach((sha, i) => {
    const size = sizes[i] ?? 0;
    if (current.length && bytes + size > BATCH_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(sha);
    bytes += size;
  });
  if (current.length) out.push(current);
  return out;
}

/** Every limit is checked before the first upload: a refused change leaves nothing on GitHub. Returns each blob's size. */
async function checkSizes(repo: DeliveryRepo, blobs: readonly string[]): Promise<number[]> {
  if (!blobs.length) return [];
  const out = await repo.git.exec(["cat-file", "--batch-check=%(objectsize)"], { input: blobs.join("\n") + "\n" });
  const sizes = out.stdout.split("\n").filter(Boolean).map(Number);
  const largest = sizes.reduce((a, b) => Math.max(a, b), 0);
  if (largest > MAX_API_BLOB_BYTES) throw new ApiCommitTooLargeError(`a file of ${largest} bytes is larger than the API takes (${MAX_API_BLOB_BYTES})`);
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total > MAX_API_BYTES) throw new ApiCommitTooLargeError(`the change holds more than ${MAX_API_BYTES} bytes`);
  return sizes;
}

/** Uploads each blob once, at most BLOB_PARALLELISM at a time; GitHub's id must match git's. */
async function uploadBlobs(api: GitHubApi, repo: DeliveryRepo, list: Change[], scratch: string): Promise<void> {
  const pending = [...new Set(list.map((c) => c.blob).filter((b): b is string => b !== null))];
  const sizes = await checkSizes(repo, pending);
  for (const batch of batches(pending, sizes)) {
    const contents = await readBlobs(repo.git, batch, scratch);
    const worker = async () => {
      for (let sha = batch.shift(); sha; sha = batch.shift()) {
        const bytes = contents.get(sha);
        if (!bytes) throw new Error(`blob ${sha} was not read`);
        const created = await api.createBlob(bytes);
        if (created !== sha) throw new Error(`GitHub stored blob ${created} for ${sha}: the content changed on the way.`);
      }
    };
    await Promise.all(Array.from({ length: BLOB_PARALLELISM }, worker));
  }
}

/**
 * The API commit of `tree` on `parent`. Throws ApiCommitTooLargeError
 * before any write when the change is over the API's limits (sizes read first).
 */
export async function createApiCommit(api: GitHubApi, repo: DeliveryRepo, p: { parent: string; tree: string; message: string; scratch: string }): Promise<ApiCommit> {
  const parentTree = await repo.treeOf(p.parent);
  const list = await changes(repo, parentTree, p.tree);
  if (list.length > MAX_API_FILES) throw new ApiCommitTooLargeError(`${list.length} files are more than one API commit carries (${MAX_API_FILES})`);
  await uploadBlobs(api, repo, list, p.scratch);
  const tree = await api.createTree(parentTree, list.map((c) => ({ path: c.path, mode: c.mode, sha: c.blob })));
  if (tree !== p.tree) throw new Error(`GitHub built tree ${tree}, not the checked tree ${p.tree}; nothing was pushed.`);
  const commit = await api.createCommit({ message: p.message, tree, parents: [p.parent] });
  const verification = await api.commitVerification(commit.sha);
  return { sha: commit.sha, verified: verification.verified, verificationReason: verification.reason };
}
