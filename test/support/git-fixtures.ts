/**
 * Git fixtures for tests: a temp work tree with an initial commit, a bare
 * `origin` it is pushed to, extra branches, and readers for what ended up in
 * the bare origin (files and log of a branch). Uses the git CLI, isolated from
 * the user's and system's git config.
 *
 *   const repo = await createRepo({ files: { "README.md": "# demo\n" } });
 *   ... code under test commits and pushes to repo.origin ...
 *   expect(await readBranchFiles(repo.origin, "agent/fix")).toMatchObject({ "a.txt": "x\n" });
 *   await repo.cleanup();
 */
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { answerIfCommandSaidNo, isSpawnHelperFailure, runFromHelper, throwUnlessExitedZero } from "./spawn-helper.js";

export interface GitAuthor {
  name: string;
  email: string;
}

export const DEFAULT_AUTHOR: GitAuthor = { name: "Test Author", email: "author@example.com" };

/** Environment that keeps git away from the user's/system's config and prompts. */
export function gitEnv(author: GitAuthor = DEFAULT_AUTHOR, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: process.env["HOME"] ?? tmpdir(),
    LANG: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: author.name,
    GIT_COMMITTER_EMAIL: author.email,
    ...extra,
  };
}

/** What git() takes of a command's output, as its execFile did. */
const MAX_OUTPUT = 64 * 1024 * 1024;

/** Run git (from the worker's spawn helper); resolves stdout, rejects with stderr in the message. */
export async function git(cwd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; author?: GitAuthor; input?: string } = {}): Promise<string> {
  const failed = (why: string) => new Error(`git ${args.join(" ")} (in ${cwd}) failed: ${why}`);
  const r = await runFromHelper(
    "git",
    ["-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false", ...args],
    { cwd, env: { ...gitEnv(opts.author), ...opts.env }, input: opts.input },
  ).catch((e: unknown) => {
    throw isSpawnHelperFailure(e) ? e : failed(e instanceof Error ? e.message : String(e));
  });
  throwUnlessExitedZero(r, `git ${args.join(" ")} (in ${cwd}) failed`);
  if (r.stdout.length > MAX_OUTPUT) throw failed(`more than ${MAX_OUTPUT} bytes of output`);
  return r.stdout.toString("utf8");
}

export type FileTree = Record<string, string | Buffer | null>;

/** Write files (null deletes) under `dir`, creating folders. */
export async function writeFiles(dir: string, files: FileTree): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    if (content === null) await rm(full, { force: true, recursive: true });
    else {
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, content);
    }
  }
}

export interface GitRepoFixture {
  /** Parent temp folder holding `work/` and `origin.git/`. */
  root: string;
  /** The work tree (a clone of origin with `origin` configured, default branch checked out). */
  dir: string;
  /** The bare origin (path usable as a git remote URL). */
  origin: string;
  defaultBranch: string;
  author: GitAuthor;
  /** SHA of the initial commit. */
  initialSha: string;
  /** Run git in the work tree. */
  git(args: string[], opts?: { env?: NodeJS.ProcessEnv; author?: GitAuthor }): Promise<string>;
  /** Write files (null deletes), commit them; optionally on another branch and pushed. Returns the new sha. */
  commit(files: FileTree, message: string, opts?: { branch?: string; push?: boolean; author?: GitAuthor }): Promise<string>;
  cleanup(): Promise<void>;
}

export interface CreateRepoOptions {
  /** Initial files; default a README plus `fileCount` generated files. */
  files?: FileTree;
  /** Generate `src/file-<i>.txt` files (default 0 when `files` is given, else 3). */
  fileCount?: number;
  author?: GitAuthor;
  defaultBranch?: string;
  message?: string;
  /** Extra branches pushed to origin: name → files changed on top of the initial commit. */
  branches?: Record<string, FileTree>;
  /** Make a bare origin and push (default true). */
  withOrigin?: boolean;
  /** Parent folder (default os.tmpdir()). */
  tmp?: string;
}

/**
 * Repositories already built in this process, by what they were built from: a
 * test file's scenarios mostly ask for the same few, and a copy costs no git process
 * (building one costs ~10). Each is made once, in a folder removed when the process exits.
 */
const templates = new Map<string, Promise<{ root: string; initialSha: string }>>();
let templateDir: string | undefined;

function templateKey(opts: CreateRepoOptions): string {
  const files = (tree: FileTree | undefined) =>
    tree && Object.entries(tree).map(([p, c]) => [p, c === null ? null : Buffer.isBuffer(c) ? `b64:${c.toString("base64")}` : `txt:${c}`]);
  return JSON.stringify([
    files(opts.files),
    opts.fileCount,
    opts.author,
    opts.defaultBranch,
    opts.message,
    opts.branches && Object.entries(opts.branches).map(([b, t]) => [b, files(t)]),
    opts.withOrigin,
  ]);
}

function templateRoot(): string {
  if (!templateDir) {
    const made = mkdtempSync(join(tmpdir(), "agent-runner-git-templates-"));
    templateDir = made;
    process.on("exit", () => rmSync(made, { recursive: true, force: true }));
  }
  return mkdtempSync(join(templateDir, "t-"));
}

export async function createRepo(opts: CreateRepoOptions = {}): Promise<GitRepoFixture> {
  const key = templateKey(opts);
  let template = templates.get(key);
  if (!template) {
    template = buildRepo({ ...opts, tmp: templateRoot() }).then((f) => ({ root: f.root, initialSha: f.initialSha }));
    templates.set(key, template);
    template.catch(() => templates.delete(key));
  }
  const { root: from, initialSha } = await template;
  const root = await mkdtemp(join(opts.tmp ?? tmpdir(), "agent-runner-git-"));
  cpSync(from, root, { recursive: true, preserveTimestamps: true });
  // The work tree's remote names the template's origin: point it at this copy's.
  const config = join(root, "work", ".git", "config");
  writeFileSync(config, readFileSync(config, "utf8").split(join(from, "origin.git")).join(join(root, "origin.git")));
  return repoFixture(root, opts, initialSha);
}

/** Build a repository with git (createRepo copies what this made). */
async function buildRepo(opts: CreateRepoOptions): Promise<GitRepoFixture> {
  const author = opts.author ?? DEFAULT_AUTHOR;
  const defaultBranch = opts.defaultBranch ?? "main";
  const root = await mkdtemp(join(opts.tmp ?? tmpdir(), "agent-runner-git-"));
  const dir = join(root, "work");
  const origin = join(root, "origin.git");
  await mkdir(dir);
  const files: FileTree = { ...(opts.files ?? { "README.md": "# Test repository\n" }) };
  const count = opts.fileCount ?? (opts.files ? 0 : 3);
  for (let i = 1; i <= count; i++) files[`src/file-${i}.txt`] = `line 1 of file ${i}\nline 2 of file ${i}\n`;
  await git(dir, ["init", "-q", "-b", defaultBranch]);
  await git(dir, ["config", "user.name", author.name]);
  await git(dir, ["config", "user.email", author.email]);
  await writeFiles(dir, files);
  await git(dir, ["add", "-A"]);
  await git(dir, ["commit", "-q", "--allow-empty", "-m", opts.message ?? "Initial commit"], { author });
  const initialSha = (await git(dir, ["rev-parse", "HEAD"])).trim();
  const fixture = repoFixture(root, opts, initialSha);
  if (opts.withOrigin !== false) {
    await git(root, ["init", "-q", "--bare", "-b", defaultBranch, origin]);
    await git(dir, ["remote", "add", "origin", origin]);
    await git(dir, ["push", "-q", "-u", "origin", defaultBranch]);
  }
  for (const [branch, tree] of Object.entries(opts.branches ?? {})) {
    await fixture.commit(tree, `Changes on ${branch}`, { branch, push: opts.withOrigin !== false });
  }
  return fixture;
}

function repoFixture(root: string, opts: CreateRepoOptions, initialSha: string): GitRepoFixture {
  const author = opts.author ?? DEFAULT_AUTHOR;
  const defaultBranch = opts.defaultBranch ?? "main";
  const dir = join(root, "work");
  const origin = join(root, "origin.git");
  return {
    root,
    dir,
    origin,
    defaultBranch,
    author,
    initialSha,
    git: (args, o) => git(dir, args, { ...(o?.env ? { env: o.env } : {}), author: o?.author ?? author }),
    async commit(tree, message, o = {}) {
      const a = o.author ?? author;
      const current = (await git(dir, ["rev-parse", "--abbrev-ref", "HEAD"])).trim();
      if (o.branch && o.branch !== current) {
        const exists = await git(dir, ["rev-parse", "--verify", "--quiet", `refs/heads/${o.branch}`]).then(() => true, (e: unknown) => answerIfCommandSaidNo(e, false));
        await git(dir, exists ? ["checkout", "-q", o.branch] : ["checkout", "-q", "-b", o.branch]);
      }
      await writeFiles(dir, tree);
      await git(dir, ["add", "-A"]);
      await git(dir, ["commit", "-q", "--allow-empty", "-m", message], { author: a });
      const sha = (await git(dir, ["rev-parse", "HEAD"])).trim();
      if (o.push && opts.withOrigin !== false) await git(dir, ["push", "-q", "origin", `HEAD:refs/heads/${o.branch ?? current}`]);
      if (o.branch && o.branch !== current) await git(dir, ["checkout", "-q", current]);
      return sha;
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** Clone a (bare) repository into a new temp folder (or `dir`). */
export async function cloneRepo(origin: string, opts: { dir?: string; branch?: string; author?: GitAuthor } = {}): Promise<string> {
  const dir = opts.dir ?? join(await mkdtemp(join(tmpdir(), "agent-runner-clone-")), "work");
  const a = opts.author ?? DEFAULT_AUTHOR;
  // The identity goes into the clone's config with the clone itself: one git process, not three.
  await git(dirname(dir), ["clone", "-q", "-c", `user.name=${a.name}`, "-c", `user.email=${a.email}`, ...(opts.branch ? ["-b", opts.branch] : []), origin, dir]);
  return dir;
}

/** Branch names in a repository (local heads; for a bare origin, what was pushed). */
export async function listBranches(repoDir: string): Promise<string[]> {
  const out = await git(repoDir, ["for-each-ref", "--format=%(refname:short)", "refs/heads/"]);
  return out.split("\n").filter(Boolean).sort();
}

export async function branchExists(repoDir: string, branch: string): Promise<boolean> {
  return git(repoDir, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`]).then(
    () => true,
    (e: unknown) => answerIfCommandSaidNo(e, false),
  );
}

/** SHA a ref points to, or null. */
export async function revParse(repoDir: string, ref: string): Promise<string | null> {
  return git(repoDir, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]).then(
    (s) => s.trim() || null,
    (e: unknown) => answerIfCommandSaidNo(e, null),
  );
}

/** All files of a branch (text, utf8) → content. Works on bare repositories. */
export async function readBranchFiles(repoDir: string, branch: string): Promise<Record<string, string>> {
  const list = await git(repoDir, ["ls-tree", "-r", "-z", "--name-only", `refs/heads/${branch}`]);
  const out: Record<string, string> = {};
  for (const path of list.split("\0").filter(Boolean)) out[path] = await readBranchFile(repoDir, branch, path);
  return out;
}

/** One file of a branch (utf8); throws when the file is absent. */
export async function readBranchFile(repoDir: string, branch: string, path: string): Promise<string> {
  return git(repoDir, ["show", `refs/heads/${branch}:${path}`]);
}

export interface GitLogEntry {
  sha: string;
  parents: string[];
  subject: string;
  body: string;
  authorName: string;
  authorEmail: string;
  committerName: string;
  committerEmail: string;
  date: string;
  /** Files changed by this commit (name-status letters: A, M, D, …). */
  files: Array<{ status: string; path: string }>;
}

/** Log of a branch, newest first (default: all commits). */
export async function readBranchLog(repoDir: string, branch: string, opts: { max?: number; since?: string } = {}): Promise<GitLogEntry[]> {
  const SEP = "\x1e";
  const FS = "\x1f";
  const range = opts.since ? `${opts.since}..refs/heads/${branch}` : `refs/heads/${branch}`;
  const out = await git(repoDir, [
    "log",
    ...(opts.max ? [`-n${opts.max}`] : []),
    `--format=${SEP}%H${FS}%P${FS}%an${FS}%ae${FS}%cn${FS}%ce${FS}%aI${FS}%s${FS}%b${FS}`,
    "--name-status",
    "--no-renames",
    range,
  ]);
  return out
    .split(SEP)
    .filter((c) => c.trim())
    .map((chunk) => {
      const parts = chunk.split(FS);
      const [sha, parents, an, ae, cn, ce, date, subject, body, rest] = parts as [string, string, string, string, string, string, string, string, string, string];
      const files = (rest ?? "")
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean)
        .map((l) => {
          const [status, ...p] = l.split("\t");
          return { status: status!, path: p.join("\t") };
        });
      return {
        sha,
        parents: parents.split(" ").filter(Boolean),
        subject,
        body: body.trim(),
        authorName: an,
        authorEmail: ae,
        committerName: cn,
        committerEmail: ce,
        date,
        files,
      };
    });
}

/** `git diff a..b` (or a...b with `threeDot`) as text. */
export async function diffRefs(repoDir: string, from: string, to: string, opts: { threeDot?: boolean } = {}): Promise<string> {
  return git(repoDir, ["diff", "--no-color", opts.threeDot ? `${from}...${to}` : `${from}..${to}`]);
}

/** A `git` on PATH that logs each call's arguments before running the real one: what a piece of code asked git. */
export function gitCallLog(): { env: Record<string, string>; calls: () => string[] } {
  const shim = mkdtempSync(join(tmpdir(), "git-shim-"));
  const log = join(shim, "calls.log");
  writeFileSync(log, "");
  writeFileSync(join(shim, "git"), `#!/bin/sh\nprintf '%s\\n' "$*" >> ${JSON.stringify(log)}\nexec /usr/bin/git "$@"\n`);
  chmodSync(join(shim, "git"), 0o755);
  return {
    env: { PATH: `${shim}:/usr/bin:/bin`, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    calls: () => readFileSync(log, "utf8").split("\n").filter(Boolean),
  };
}
