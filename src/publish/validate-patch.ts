/**
 * Checks a patch before anything is delivered from it. In `phase: publish`
 * the patch comes from an artifact written by a job that ran untrusted agent
 * code with a read-only token: it is data to verify, not a change to trust.
 *
 * Refused: a patch over the size limit; one that does not apply cleanly to
 * the recorded base commit; any path that is absolute, climbs out with `..`,
 * or enters a `.git` folder; a symlink (new or changed, directly or through a
 * chain of links) that leads outside the repository or into `.git`; files
 * under `.github/workflows/` unless `allow-workflow-changes` is true.
 *
 * The patch is applied to a private index built from the base commit: the
 * workspace, its index and its refs are never touched.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import path from "node:path";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Git } from "../git/git.js";

/** Default limit on patch.diff: far above any reviewable change, far below what strains a runner. */
const MAX_PATCH_BYTES = 50 * 1024 * 1024;

const SYMLINK_MODE = "120000";
/** Link hops followed before a chain counts as a loop (the kernel's limit is 40). */
const MAX_LINK_HOPS = 40;

export interface PatchPolicy {
  allowWorkflowChanges: boolean;
  maxBytes?: number;
}

export interface ValidatedPatch {
  /** Paths the patch changes (renames: both sides), in git's order. */
  changedFiles: string[];
  bytes: number;
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
  ) {
    super(message);
  }
}

function refusal(source: string, problems: string[]): string {
  return problems.length === 1
    ? `The patch from ${source} was refused: ${problems[0]}`
    : `The patch from ${source} was refused:\n${problems.map((p) => `  - ${p}`).join("\n")}`;
}

/** A path problem, or undefined when the path is an ordinary repository path. */
export function pathProblem(p: string): string | undefined {
  if (p === "" || p.includes("\0")) return `'${p}' is not a valid path`;
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return `'${p}' is an absolute path`;
  const parts = p.split(/[/\\]/);
  if (parts.some((c) => c === "..")) return `'${p}' climbs out of the repository with '..'`;
  // Case-insensitive: on macOS and Windows checkouts `.GIT` is the same folder.
  if (parts.some((c) => c.toLowerCase() === ".git" || /^\.git[. ]+$/i.test(c) || /^git~\d+$/i.test(c)))
    return `'${p}' is inside a .git folder (hooks and config there would run code)`;
  return undefined;
}

function isWorkflowFile(p: string): boolean {
  return p.toLowerCase().startsWith(".github/workflows/");
}

/**
 * Where a symlink leads, following other links of the same tree: "escapes"
 * when it leaves the repository (or goes absolute), "git" when it enters
 * `.git`, "loop" for an endless chain, "ok" otherwise.
 */
export function symlinkVerdict(linkPath: string, links: ReadonlyMap<string, string>): "ok" | "escapes" | "git" | "loop" {
  const resolved = linkPath.split("/").slice(0, -1);
  let queue = (links.get(linkPath) ?? "").split("/");
  if ((links.get(linkPath) ?? "").startsWith("/")) return "escapes";
  let hops = 0;
  while (queue.length) {
    const comp = queue.shift()!;
    if (comp === "" || comp === ".") continue;
    if (comp === "..") {
      if (!resolved.length) return "escapes";
      resolved.pop();
      continue;
    }
    resolved.push(comp);
    if (comp.toLowerCase() === ".git") return "git";
    const target = links.get(resolved.join("/"));
    if (target !== undefined) {
      if (++hops > MAX_LINK_HOPS) return "loop";
      if (target.startsWith("/")) return "escapes";
      resolved.pop();
      queue = [...target.split("/"), ...queue];
    }
  }
  return "ok";
}

/** Paths named by the patch (both sides of renames and copies), from git's own parser. */
async function patchPaths(git: Git, patchPath: string): Promise<string[]> {
  const out = await git.exec(["apply", "--numstat", "-z", "--binary", patchPath]);
  // Records: "added\tdeleted\tpath\0" or, for renames/copies, "added\tdeleted\t\0from\0to\0".
  const fields = out.stdout.split("\0");
  const paths: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f) continue;
    const m = /^(?:-|\d+)\t(?:-|\d+)\t(.*)$/s.exec(f);
    if (!m) continue;
    if (m[1]) paths.push(m[1]);
    else {
      paths.push(fields[i + 1] ?? "", fields[i + 2] ?? "");
      i += 2;
    }
  }
  return paths.filter(Boolean);
}

/** All symlinks of the tree in an index: path → target. */
async function symlinksOf(git: Git, env: Record<string, string>): Promise<Map<string, string>> {
  const listing = await git.exec(["ls-files", "-s", "-z"], { env });
  const entries: { path: string; sha: string }[] = [];
  for (const rec of listing.stdout.split("\0")) {
    const m = /^(\d{6}) ([0-9a-f]+) \d\t(.*)$/s.exec(rec);
    if (m && m[1] === SYMLINK_MODE) entries.push({ sha: m[2]!, path: m[3]! });
  }
  const links = new Map<string, string>();
  if (!entries.length) return links;
  // One cat-file for all targets; symlink blobs are short paths.
  const batch = await git.exec(["cat-file", "--batch"], { input: entries.map((e) => e.sha).join("\n") + "\n" });
  let rest = Buffer.from(batch.stdout, "utf8");
  for (const e of entries) {
    const nl = rest.indexOf(0x0a);
    const header = rest.subarray(0, nl).toString("utf8").split(" ");
    const size = Number(header[2]);
    // Output is read as UTF-8: a target that is not would shift every later record.
    if (header[0] !== e.sha || !Number.isFinite(size)) throw new Error(`cannot read the target of symlink '${e.path}'`);
    links.set(e.path, rest.subarray(nl + 1, nl + 1 + size).toString("utf8"));
    rest = rest.subarray(nl + 1 + size + 1);
  }
  return links;
}

async function ensureCommit(git: Git, commit: string): Promise<boolean> {
  const has = async () => (await git.exec(["cat-file", "-e", `${commit}^{commit}`], { okCodes: [1, 128] })).exitCode === 0;
  if (await has()) return true;
  // A shallow checkout may lack it; one commit from origin is enough.
  await git.exec(["fetch", "--no-tags", "--depth=1", "origin", commit], { okCodes: [1, 128] }).catch(() => undefined);
  return has();
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
  opts: { source: string; scratchDir: string },
): Promise<ValidatedPatch> {
  let named: string[] = [];
  const refuse = (problems: string[]) => new PatchRefusedError(refusal(opts.source, problems), named);
  const bytes = (await stat(patchPath)).size;
  if (bytes === 0) return { changedFiles: [], bytes };
  const max = policy.maxBytes ?? MAX_PATCH_BYTES;
  const size = (n: number) => (n >= 1048576 ? `${(n / 1048576).toFixed(1)} MB` : `${n} bytes`);
  if (bytes > max) throw refuse([`it is ${size(bytes)}, over the ${size(max)} limit.`]);

  try {
    named = await patchPaths(git, patchPath);
  } catch (e) {
    throw refuse([`git cannot read it as a patch (${errorMessage(e).split("\n")[0]}).`]);
  }
  const problems = named.map(pathProblem).filter((p): p is string => p !== undefined);
  if (problems.length) throw refuse([...new Set(problems)]);
  const workflows = named.filter(isWorkflowFile);
  if (workflows.length && !policy.allowWorkflowChanges)
    throw refuse([
      `it changes workflow files (${[...new Set(workflows)].join(", ")}); set 'allow-workflow-changes: true' to deliver changes to .github/workflows/.`,
    ]);

  if (!(await ensureCommit(git, baseCommit)))
    throw new PatchRefusedError(
      `The patch from ${opts.source} was made against commit ${baseCommit}, which is not in the workspace. ` +
        `Check out the same commit in the publish job (actions/checkout runs at the workflow's commit by default; use 'fetch-depth: 0' if it moved).`,
      named,
    );

  const tmp = await mkdtemp(path.join(opts.scratchDir, "validate-"));
  const env = { GIT_INDEX_FILE: path.join(tmp, "index") };
  try {
    const baseLinks = await (async () => {
      await git.exec(["read-tree", baseCommit], { env });
      return symlinksOf(git, env);
    })();
    try {
      await git.exec(["apply", "--cached", "--binary", "--whitespace=nowarn", patchPath], { env });
    } catch (e) {
      throw refuse([`it does not apply cleanly to the base commit ${baseCommit.slice(0, 12)} (${errorMessage(e).split("\n").pop()?.trim()}).`]);
    }
    const changed = await git.exec(["diff-index", "--cached", "--name-only", "--no-renames", "-z", baseCommit], { env });
    const changedFiles = changed.stdout.split("\0").filter(Boolean);
    const after = changedFiles.map(pathProblem).filter((p): p is string => p !== undefined);
    if (after.length) throw refuse([...new Set(after)]);

    // Every symlink of the result that leads somewhere it did not lead before.
    const links = await symlinksOf(git, env);
    const linkProblems: string[] = [];
    for (const [p, target] of links) {
      const verdict = symlinkVerdict(p, links);
      if (verdict === "ok") continue;
      if (baseLinks.get(p) === target && symlinkVerdict(p, baseLinks) === verdict) continue;
      linkProblems.push(
        verdict === "git"
          ? `symlink '${p}' → '${target}' points into .git`
          : verdict === "loop"
            ? `symlink '${p}' → '${target}' is part of an endless chain of links`
            : `symlink '${p}' → '${target}' points outside the repository`,
      );
    }
    if (linkProblems.length) throw refuse(linkProblems);
    // git's order (as collectChanges reports it), then any name only the patch header gave.
    return { changedFiles: [...new Set([...changedFiles, ...named])], bytes };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
