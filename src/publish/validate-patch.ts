/**
 * Checks a patch before anything is delivered from it. In `phase: publish`
 * the patch comes from an artifact written by a job that ran untrusted agent
 * code with a read-only token: it is data to verify, not a change to trust.
 *
 * Refused: a patch over the size limit; one whose paths are not plain
 * repository paths (checked on the patch's own names, before git applies it);
 * one that does not apply cleanly to the recorded base commit; and whatever
 * the tree rules refuse in the result (patch-rules.ts: submodules,
 * `.gitmodules`, `.gitattributes` drivers, symlinks, workflows and actions).
 * Delivery checks the tree it commits with the same rules again.
 *
 * The patch is applied to a private index built from the base commit: the
 * workspace, its index and its refs are never touched.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import path from "node:path";
import { ConfigurationError, errorMessage, ExecError } from "../errors.js";
import { binaryChanges } from "../git/blobs.js";
import type { Git, GitResult } from "../git/git.js";
import { checkTree, describeProblems, pathProblem } from "./patch-rules.js";


/** Default limit on patch.diff: far above any reviewable change, far below what strains a runner. */
const MAX_PATCH_BYTES = 50 * 1024 * 1024;

export interface PatchPolicy {
  allowWorkflowChanges: boolean;
  maxBytes?: number;
}

export interface ValidatedPatch {
  /** Paths the patch changes (renames: both sides), in git's order. */
  changedFiles: string[];
  bytes: number;
  /** The tree the patch makes (its objects stay in the repository) and its binary files, for threat detection. */
  postImage?: PostImage;
}

export interface PostImage {
  /** The tree of the base commit the patch was applied to. */
  baseTree: string;
  tree: string;
  binaryFiles: string[];
}

/**
 * A patch that is not delivered: refused for what it contains, or made
 * against a commit the workspace lacks. One clear message naming each problem.
 */
export class PatchRefusedError extends ConfigurationError {
  override name = "PatchRefusedError";
  constructor(
    message: string,
    /** The paths the patch names, once git could read it (empty before that). */
    readonly namedFiles: string[] = [],
    /** The tree it makes, when it applied (threat detection names the protected paths of a refused patch too). */
    readonly postImage?: PostImage,
  ) {
    super(message);
  }
}

function refusal(source: string, problems: string[]): string {
  return problems.length === 1
    ? `The patch from ${source} was refused: ${problems[0]}`
    : `The patch from ${source} was refused:\n${problems.map((p) => `  - ${p}`).join("\n")}`;
}

/**
 * Paths named by the patch, from git's own parser. A rename or copy is named by its target only
 * (`numstat_patch_list` prints one name); its source is in the tree diff (checkTree, `--no-renames`).
 */
async function patchPaths(git: Git, patchPath: string): Promise<string[]> {
  return parseNumstat((await git.exec(["apply", "--numstat", "-z", "--binary", patchPath])).stdout);
}

/** The paths of `git apply --numstat -z`'s records, "added\tdeleted\tpath\0" each. */
function parseNumstat(stdout: string): string[] {
  const paths: string[] = [];
  for (const f of stdout.split("\0")) {
    const m = /^(?:-|\d+)\t(?:-|\d+)\t(.+)$/s.exec(f);
    if (m) paths.push(m[1]!);
  }
  return paths;
}

const APPLY = ["apply", "--cached", "--binary", "--whitespace=nowarn"];

/**
 * The private index at `commit`, then the patch applied to it by a `git apply` that also prints its
 * numstat (`--apply`): the paths come with the apply, in one process. Exit code 1 or 128: nothing applied.
 */
async function applyNamingPaths(git: Git, commit: string, patchPath: string, env: Record<string, string>): Promise<GitResult> {
  await git.exec(["read-tree", commit], { env });
  return git.exec([...APPLY, "--apply", "--numstat", "-z", patchPath], { env, okCodes: [1, 128] });
}

/** The tree of `commit`, fetched from origin if the repository lacks it; undefined when it is no commit here or there. */
async function ensureCommitTree(git: Git, commit: string): Promise<string | undefined> {
  // One process proves it is a commit and names its tree.
  const treeOf = async () => {
    const r = await git.exec(["rev-parse", "--verify", "-q", `${commit}^{commit}^{tree}`], { okCodes: [1, 128] });
    return r.exitCode === 0 ? r.stdout.trim() : undefined;
  };
  const known = await treeOf();
  if (known) return known;
  // A shallow checkout may lack it; one commit from origin is enough.
  await git.exec(["fetch", "--no-tags", "--depth=1", "origin", commit], { okCodes: [1, 128] }).catch(() => undefined);
  return treeOf();
}

/**
 * Validate `patchPath` against `baseCommit` in the repository `git` points at.
 * `source` names where the patch came from, for the error message.
 */
export async function validatePatch(
  git: Git,
  patchPath: string,
  baseCommit: string,
  policy: PatchPolicy,
  opts: {
    source: string;
    scratchDir: string;
    /**
     * The base commit's tree as this process already read it from the same repository (phase all: the
     * runner's baseline, which also proved the commit is there): not asked of git again.
     */
    baseTree?: string;
  },
): Promise<ValidatedPatch> {
  let named: string[] = [];
  const refuse = (problems: string[]) => new PatchRefusedError(refusal(opts.source, problems), named);
  const bytes = (await stat(patchPath)).size;
  if (bytes === 0) return { changedFiles: [], bytes };
  const max = policy.maxBytes ?? MAX_PATCH_BYTES;
  const size = (n: number) => (n >= 1048576 ? `${(n / 1048576).toFixed(1)} MB` : `${n} bytes`);
  if (bytes > max) throw refuse([`it is ${size(bytes)}, over the ${size(max)} limit.`]);

  const tmp = await mkdtemp(path.join(opts.scratchDir, "validate-"));
  const env = { GIT_INDEX_FILE: path.join(tmp, "index") };
  const notApplying = (e: unknown) => refuse([`it does not apply cleanly to the base commit ${baseCommit.slice(0, 12)} (${errorMessage(e).split("\n").pop()?.trim()}).`]);
  try {
    // The base commit known to be here (phase all): one `git apply` names the patch's paths and applies it to the
    // private index. The names are still checked before anything is used; a patch that does not apply is read again for them.
    const applied = opts.baseTree ? await applyNamingPaths(git, baseCommit, patchPath, env) : undefined;
    try {
      named = applied?.exitCode === 0 ? parseNumstat(applied.stdout) : await patchPaths(git, patchPath);
    } catch (e) {
      throw refuse([`git cannot read it as a patch (${errorMessage(e).split("\n")[0]}).`]);
    }
    // The names alone, before git applies anything: a patch naming .git/ paths is refused even when it would not apply.
    const problems = named.map(pathProblem).filter((p): p is string => p !== undefined);
    if (problems.length) throw refuse([...new Set(problems)]);

    const baseTree = opts.baseTree ?? (await ensureCommitTree(git, baseCommit));
    if (!baseTree)
      throw new PatchRefusedError(
        `The patch from ${opts.source} was made against commit ${baseCommit}, which is not in the workspace. ` +
          `Check out the same commit in the publish job (actions/checkout runs at the workflow's commit by default; use 'fetch-depth: 0' if it moved).`,
        named,
      );

    if (applied && applied.exitCode !== 0) throw notApplying(new ExecError(`git ${APPLY.join(" ")} ${patchPath}`, applied.exitCode, applied.stderr));
    if (!applied) {
      await git.exec(["read-tree", baseCommit], { env });
      try {
        await git.exec([...APPLY, patchPath], { env });
      } catch (e) {
        throw notApplying(e);
      }
    }
    const tree = await git.text(["write-tree"], { env });
    const checked = await checkTree(git, baseTree, tree, policy, tmp);
    const binaryFiles = await binaryChanges(git, baseTree, tree);
    const postImage = { baseTree, tree, binaryFiles };
    // git's order (as collectChanges reports it, a rename's source included), then any name only the patch header gave.
    const changedFiles = [...new Set([...checked.changedFiles, ...named])];
    if (checked.problems.length) throw new PatchRefusedError(refusal(opts.source, describeProblems(checked.problems)), changedFiles, postImage);
    return { changedFiles, bytes, postImage };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
