/**
 * A tree's file contents as bytes, for host-side checks that must see what a
 * commit will hold rather than the patch's encoding of it (a binary patch is
 * zlib-compressed base85: a secret in it is invisible in the patch text).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { Git } from "./git.js";
import { treeDiff } from "./tree-diff.js";

/** Paths git takes as binary between two trees (numstat's `-\t-`), renames and copies not paired. */
export async function binaryChanges(git: Git, fromTree: string, toTree: string): Promise<string[]> {
  return (await treeDiff(git, fromTree, toTree)).binary;
}

/**
 * The bytes of `file` in `tree`, through a file (stdout read as text would
 * mangle them); at most `maxBytes` of them. Undefined when the tree has no
 * such blob (a deleted file).
 */
export async function readBlob(git: Git, tree: string, file: string, scratchDir: string, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean } | undefined> {
  const spec = `${tree}:${file}`;
  const size = await git.exec(["cat-file", "-s", spec], { okCodes: [1, 128] });
  if (size.exitCode !== 0) return undefined;
  const total = Number(size.stdout.trim());
  const dir = await mkdtemp(path.join(scratchDir, "blob-"));
  try {
    const out = path.join(dir, "blob");
    await git.exec(["cat-file", "blob", spec], { stdoutFile: out });
    const bytes = await readFile(out);
    return { bytes: bytes.length > maxBytes ? bytes.subarray(0, maxBytes) : bytes, truncated: total > maxBytes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
