/**
 * On pull request events the workspace holds the PR's code, including any
 * agent configuration the PR adds or changes: MCP servers (commands that would
 * run), permission settings, hooks, instructions. Those files are replaced by
 * the base branch's version before the agent starts; the PR's copies are kept
 * aside as plain data. For fork PRs the instruction files (AGENTS.md,
 * CLAUDE.md, GEMINI.md, at any depth) are replaced too.
 *
 * The swap happens before the runner's baseline snapshot, so it is never part
 * of the collected patch (src/git/snapshot.ts leaves out every path that
 * differs from the base commit when the agent starts, and names it).
 */
import { createHash } from "node:crypto";
import { chmod, lstat, mkdir, readFile, readdir, readlink, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { repoRelative, type BaseCommitFiles } from "../config/input-files.js";
import type { Settings } from "../config/schema.js";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Git } from "../git/git.js";
import type { Logger } from "../logger.js";

/** Top-level entries (files or folders) agent CLIs read their project configuration from. */
const AGENT_CONFIG_ENTRIES = [".claude", ".mcp.json", "opencode.json", "opencode.jsonc", ".opencode", ".gemini", ".codex"];
/** Instruction files agents read from the repository, trusted only from the repository's own branches. */
const FORK_INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md"];

export interface GuardRequest {
  git: Git;
  /** Folder the agent works in (may be below the repository root). */
  workspace: string;
  baseSha: string;
  baseRef: string;
  isFork: boolean;
  /** Where the PR's copies go (readable by the agent, outside the workspace). */
  asideDir: string;
  /** Credentials for fetching the base commit when it is not in the clone. */
  authEnv: Record<string, string>;
  /**
   * The base commit as the trigger stage already resolved it (the settings came
   * from it): used as is, neither looked up nor fetched again, so the settings
   * and the agent config are the same commit's.
   */
  baseCommit?: string;
  /**
   * The repository's top folder as the trigger stage found it from the same folder
   * (BaseCommitFiles.root): used as is, not asked of git again. Passed only when no
   * pull request checkout ran since (trigger/stage.ts): a checkout could turn a folder
   * on the working-directory path into a link out of the workspace.
   */
  root?: string;
  /** Repository-relative files `agent-command` runs (agentCommandFilesOnBase): replaced like agent config. */
  commandFiles?: string[];
  log: Logger;
}

export interface GuardResult {
  /** Entries (repository-relative) that were replaced or removed. */
  replaced: string[];
  /** The base commit used, or undefined when it could not be fetched (entries were removed). */
  baseCommit?: string;
}

interface TreeEntry {
  mode: string;
  sha: string;
  path: string;
}

/** The entry to replace wholesale for a repository-relative path, or undefined when unprotected. */
export function protectedEntry(relPath: string, opts: { isFork: boolean; anchors: string[]; files?: string[] }): string | undefined {
  if (opts.files?.includes(relPath)) return relPath;
  for (const anchor of opts.anchors) {
    const prefix = anchor ? `${anchor}/` : "";
    if (prefix && !relPath.startsWith(prefix)) continue;
    const first = relPath.slice(prefix.length).split("/")[0]!;
    if (AGENT_CONFIG_ENTRIES.includes(first)) return prefix + first;
  }
  if (opts.isFork && FORK_INSTRUCTION_FILES.includes(path.posix.basename(relPath))) return relPath;
  return undefined;
}

export async function resolveBaseCommit(req: GuardRequest): Promise<string | undefined> {
  const { git } = req;
  const have = async (rev: string) => (await git.exec(["cat-file", "-e", `${rev}^{commit}`], { okCodes: [1, 128] })).exitCode === 0;
  if (await have(req.baseSha)) return req.baseSha;
  // A shallow PR checkout usually lacks the base. Try the clone's own credentials
  // first (actions/checkout persists them), then ours: both at once would send two
  // Authorization headers.
  const attempts: [string[], Record<string, string>][] = [
    [["fetch", "--no-tags", "--depth=1", "origin", req.baseSha], {}],
    [["fetch", "--no-tags", "--depth=1", "origin", req.baseSha], req.authEnv],
    [["fetch", "--no-tags", "--depth=1", "origin", `refs/heads/${req.baseRef}`], req.authEnv],
  ];
  for (const [args, env] of attempts) {
    const r = await git.exec(args, { env, okCodes: [1, 128] });
    if (r.exitCode !== 0) continue;
    if (await have(req.baseSha)) return req.baseSha;
    const fetched = (await git.exec(["rev-parse", "FETCH_HEAD"], { okCodes: [128] })).stdout.trim();
    if (fetched) return fetched;
  }
  return undefined;
}

async function baseEntries(git: Git, commit: string): Promise<TreeEntry[]> {
  const out = await git.exec(["ls-tree", "-r", "-z", "--full-tree", commit]);
  return out.stdout
    .split("\0")
    .filter(Boolean)
    .flatMap((line) => {
      const m = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(line);
      return m && m[2] === "blob" ? [{ mode: m[1]!, sha: m[3]!, path: m[4]! }] : [];
    });
}

/** Every file below `rel` in the working tree, without following symlinks. */
async function workingFiles(root: string, rel: string): Promise<{ path: string; kind: "file" | "symlink" | "exec" }[]> {
  const full = path.join(root, rel);
  const st = await lstat(full).catch(() => undefined);
  if (!st) return [];
  if (st.isSymbolicLink()) return [{ path: rel, kind: "symlink" }];
  if (st.isFile()) return [{ path: rel, kind: st.mode & 0o111 ? "exec" : "file" }];
  if (!st.isDirectory()) return [];
  const out: { path: string; kind: "file" | "symlink" | "exec" }[] = [];
  for (const name of await readdir(full)) out.push(...(await workingFiles(root, path.posix.join(rel, name))));
  return out;
}

function gitBlobSha(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

/** Whether the working tree's version of an entry equals the base commit's. */
async function sameAsBase(root: string, entry: string, base: TreeEntry[]): Promise<boolean> {
  const mine = await workingFiles(root, entry);
  if (mine.length !== base.length) return false;
  const byPath = new Map(base.map((b) => [b.path, b]));
  for (const f of mine) {
    const b = byPath.get(f.path);
    if (!b) return false;
    const full = path.join(root, f.path);
    if (f.kind === "symlink") {
      if (b.mode !== "120000" || gitBlobSha(Buffer.from(await readlink(full))) !== b.sha) return false;
    } else {
      if (b.mode !== (f.kind === "exec" ? "100755" : "100644")) return false;
      if (gitBlobSha(await readFile(full)) !== b.sha) return false;
    }
  }
  return true;
}

/** True when a parent folder of `rel` (inside root) is a symlink: writing there could leave the workspace. */
async function hasSymlinkParent(root: string, rel: string): Promise<boolean> {
  const parts = rel.split("/").slice(0, -1);
  let cur = root;
  for (const p of parts) {
    cur = path.join(cur, p);
    const st = await lstat(cur).catch(() => undefined);
    if (!st) return false;
    if (st.isSymbolicLink() || !st.isDirectory()) return true;
  }
  return false;
}

async function keepAside(root: string, entry: string, asideDir: string): Promise<void> {
  for (const f of await workingFiles(root, entry)) {
    const dest = path.join(asideDir, f.path);
    await mkdir(path.dirname(dest), { recursive: true });
    const src = path.join(root, f.path);
    // A symlink is recorded, never recreated: following it could expose files outside the workspace.
    if (f.kind === "symlink") await writeFile(`${dest}.symlink.txt`, `symlink to: ${await readlink(src)}\n`);
    else await writeFile(dest, await readFile(src));
  }
}

async function restoreFromBase(git: Git, root: string, files: TreeEntry[], log: Logger): Promise<void> {
  for (const f of files) {
    if (await hasSymlinkParent(root, f.path)) {
      log.warning(`Not restoring ${f.path} from the base branch: a parent folder in the pull request is a symlink.`);
      continue;
    }
    const dest = path.join(root, f.path);
    await mkdir(path.dirname(dest), { recursive: true });
    if (f.mode === "120000") await symlink((await git.exec(["cat-file", "blob", f.sha])).stdout, dest);
    else {
      // Straight to the file: byte-exact, binary included.
      await git.exec(["cat-file", "blob", f.sha], { stdoutFile: dest });
      if (f.mode === "100755") await chmod(dest, 0o755);
    }
  }
}

async function topFolder(git: Git): Promise<string | undefined> {
  const top = await git.exec(["rev-parse", "--show-toplevel"], { okCodes: [128] });
  return top.exitCode === 0 ? top.stdout.trim() : undefined;
}

export async function guardAgentConfig(req: GuardRequest): Promise<GuardResult> {
  const { git, log } = req;
  const root = req.root ?? (await topFolder(git));
  // Not a repository: the runner reports that clearly when it takes its baseline.
  if (root === undefined) return { replaced: [] };
  const relWorkspace = path.relative(root, req.workspace).split(path.sep).join("/");
  const anchors = [...new Set(["", relWorkspace.startsWith("..") ? "" : relWorkspace])];
  const opts = { isFork: req.isFork, anchors, files: req.commandFiles ?? [] };

  // Entries present in the working tree.
  const present = new Set<string>();
  for (const anchor of anchors)
    for (const name of AGENT_CONFIG_ENTRIES) {
      const rel = anchor ? `${anchor}/${name}` : name;
      if (await lstat(path.join(root, rel)).catch(() => undefined)) present.add(rel);
    }
  for (const file of opts.files) {
    // Only a file (or a link) stands for itself; never a whole folder named on the command line.
    const st = await lstat(path.join(root, file)).catch(() => undefined);
    if (st && (st.isFile() || st.isSymbolicLink())) present.add(file);
  }
  if (req.isFork) {
    const listed = await git.exec(["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name"], { okCodes: [128] });
    for (const p of listed.stdout.split("\0").filter(Boolean)) {
      const e = protectedEntry(p, opts);
      if (e && (await lstat(path.join(root, e)).catch(() => undefined))) present.add(e);
    }
  }

  const baseCommit = req.baseCommit ?? (await resolveBaseCommit(req));
  const byEntry = new Map<string, TreeEntry[]>();
  if (baseCommit) {
    for (const b of await baseEntries(git, baseCommit)) {
      const e = protectedEntry(b.path, opts);
      if (!e) continue;
      if (!byEntry.has(e)) byEntry.set(e, []);
      byEntry.get(e)!.push(b);
    }
  } else {
    log.warning(`Could not fetch the base commit ${req.baseSha} (${req.baseRef}); removing the pull request's agent configuration instead of replacing it.`);
  }

  const replaced: string[] = [];
  for (const entry of [...new Set([...present, ...byEntry.keys()])].sort()) {
    const base = byEntry.get(entry) ?? [];
    try {
      if (await sameAsBase(root, entry, base)) continue;
      if (present.has(entry)) await keepAside(root, entry, req.asideDir);
      await rm(path.join(root, entry), { recursive: true, force: true });
      await restoreFromBase(git, root, base, log);
      replaced.push(entry);
    } catch (e) {
      // Fail closed: whatever happened, the PR's version must not stay in place.
      await rm(path.join(root, entry), { recursive: true, force: true }).catch(() => undefined);
      log.warning(`Removed ${entry} (could not restore the base branch's version: ${errorMessage(e)}).`);
      replaced.push(entry);
    }
  }
  if (replaced.length)
    log.info(
      `Agent configuration from the pull request replaced by the base branch's version: ${replaced.join(", ")}. The pull request's copies are in ${req.asideDir}.`,
    );
  return { replaced, ...(baseCommit ? { baseCommit } : {}) };
}

/** The config file's text on the base commit (for settings on PR events), or undefined when absent there. */
export async function fileAtCommit(git: Git, commit: string, repoRelPath: string): Promise<string | undefined> {
  const r = await git.exec(["cat-file", "blob", `${commit}:${repoRelPath}`], { okCodes: [128] });
  return r.exitCode === 0 ? r.stdout : undefined;
}

async function fileOnCommit(git: Git, commit: string, rel: string): Promise<boolean> {
  const r = await git.exec(["cat-file", "-t", `${commit}:${rel}`], { okCodes: [128] });
  return r.exitCode === 0 && r.stdout.trim() === "blob";
}

async function trackedInCheckout(git: Git, rel: string): Promise<boolean> {
  const r = await git.exec(["ls-files", "-z", "--full-name", "--", `:(top,literal)${rel}`], { okCodes: [128] });
  return r.exitCode === 0 && r.stdout.split("\0").includes(rel);
}

/**
 * On pull request events: the repository files `agent-command` runs, the
 * program when it is a path and arguments naming a file (`bash agent.sh`).
 * One on the base commit is swapped for the base's version before the agent
 * starts, like agent config, so the PR's edit never runs. One the PR adds is
 * refused: there is no base version to run. Untracked files (an earlier step
 * built them) are the workflow's own and stay.
 */
export async function agentCommandFilesOnBase(settings: Settings, base: BaseCommitFiles): Promise<string[]> {
  const words = settings.agent.backend === "command" ? (settings.agent.command ?? []) : [];
  const files: string[] = [];
  for (const [i, word] of words.entries()) {
    if (!word || (i === 0 ? !word.includes("/") : word.startsWith("-"))) continue;
    const rel = repoRelative(base.root, path.resolve(settings.workspace, word));
    if (!rel) continue;
    if (await fileOnCommit(base.git, base.commit, rel)) files.push(rel);
    else if (await trackedInCheckout(base.git, rel))
      throw new ConfigurationError(
        `Input 'agent-command': '${word}' is a file the pull request adds (it is not on ${base.describe}). On pull request events the repository files agent-command runs are taken from the base branch, so the pull request's version never runs; commit the file to the base branch first, or run a program from outside the repository.`,
      );
  }
  return [...new Set(files)];
}
