/**
 * The host's own repository for the workspace: the one door through which
 * host-side git reads what the agent left behind.
 *
 * Why this is sound. The agent can write the whole workspace, `.git`
 * included, so after it starts the workspace's repository is hostile input:
 * its `config`, `config.worktree`, `commondir`, `info/attributes`,
 * `objects/info/alternates`, hooks, even `.git` itself (a gitfile or a
 * symlink to anywhere), and a new `.git` in a subfolder that repository
 * discovery would find first. Any of those can make a git process on the
 * host run a program (filters, textconv, fsmonitor, hooks, pager, askpass,
 * sshCommand) or read files the agent chose. So, before the agent starts,
 * while the workspace is still what the workflow checked out:
 *
 * - we make a private bare repository under the run's temp folder (hidden
 *   from the sandbox) with our own config only, and hard-link (or copy) the
 *   workspace's object files and index into it;
 * - every later git call runs with `GIT_DIR` = that private repository (no
 *   discovery), `cwd` inside it, system and global config off, HOME pointed
 *   at an empty folder, and the work tree named with `GIT_WORK_TREE`.
 *
 * What git then takes from the workspace is file content only: `git add`
 * hashes files and stores symlinks as links without following them; the
 * work tree's `.gitattributes` is read, but with no config no attribute can
 * name a program (filter, diff and merge drivers all need config). A nested
 * `.git` makes `git add` record a gitlink, which the patch checks refuse.
 * The agent's own commits are found through agent-head.ts, which reads HEAD
 * as data and copies only object files into the private repository.
 */
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { ConfigurationError } from "../errors.js";
import { isSameOrUnder } from "../shared/paths.js";
import { importObjects, readAgentHead } from "./agent-head.js";
import { copyIndex, linkOrCopy } from "./files.js";
import { initBare } from "./bare.js";
import { Git } from "./git.js";
import type { TouchedRepo } from "./touched.js";

/** Settings that change how files hash, copied from the workspace's config while it is still trusted. */
const HASHING_SETTINGS: Record<string, RegExp> = {
  "core.autocrlf": /^(true|false|input)$/i,
  "core.eol": /^(lf|crlf|native)$/i,
  "core.filemode": /^(true|false)$/i,
  "core.symlinks": /^(true|false)$/i,
  "core.ignorecase": /^(true|false)$/i,
  "core.precomposeunicode": /^(true|false)$/i,
};

/** `-c` settings on every call: nothing that could run a program or reach a remote. */
const ISOLATION_CONFIG = [
  "core.attributesFile=/dev/null",
  "core.excludesFile=/dev/null",
  "core.untrackedCache=false",
  "core.splitIndex=false",
  // The index's stat data is trusted only with ctime compared (the agent can set mtime, not ctime): see files.ts copyIndex.
  "core.trustctime=true",
  "core.checkStat=default",
  "core.pager=cat",
  "core.askPass=",
  "core.sshCommand=false",
  "protocol.allow=never",
  "submodule.recurse=false",
  "gc.auto=0",
  "maintenance.auto=false",
].flatMap((c) => ["-c", c]);

/** The runner variables kept for host git: finding the binary and the locale. */
const KEPT_ENV = /^(PATH|LANG|LC_\w+|TZ)$/;

export interface WorkspaceRepo {
  /** The repository's top level (the work tree the private repository reads). */
  workTree: string;
  /** The working directory relative to the work tree ("." at the top): what a snapshot covers. */
  pathspec: string;
  /** The workspace's own git dir and common dir, resolved before the agent started (agent-head.ts reads them as data). */
  gitDir: string;
  commonDir: string;
  /** HEAD's commit when the run started. */
  head: string;
}

export class HostRepo {
  private constructor(
    /** Private repository with the workspace as its work tree. */
    readonly git: Git,
    /** The private repository's folder. */
    readonly dir: string,
    readonly workspace: WorkspaceRepo,
    /**
     * The same private repository with an empty folder as its work tree (HostRepo.reopen's): for questions
     * about objects only. No file of the workspace is read, and its answers by object ids are the patch check's too.
     */
    readonly objects: Git,
  ) {}

  /** The index copied from the workspace before the agent started: every snapshot starts from it. */
  get baseIndex(): string {
    return path.join(this.dir, "index.base");
  }

  /** The private objects folder (agent-head.ts copies the agent's new objects into it). */
  get objectsDir(): string {
    return path.join(this.dir, "objects");
  }

  /**
   * Before the agent starts: checks that `cwd` is a repository with a commit,
   * and builds the private repository at `dir` (which must be outside the
   * sandbox's view). `prior`: an agent of this job already ran in this
   * repository (touched.ts), so nothing of it is trusted any more.
   */
  static async create(opts: { cwd: string; dir: string; env: Record<string, string>; prior?: TouchedRepo }): Promise<HostRepo> {
    const trusted = opts.prior ? undefined : new Git(opts.cwd, opts.env);
    // Both questions to the trusted repository at once; the settings' error, if any, counts only once
    // the repository is known to be one.
    const settings = trusted ? hashingSettings(trusted) : undefined;
    settings?.catch(() => {});
    const workspace = trusted ? await describeRepository(trusted) : await describeTouched(opts.cwd, opts.prior!);
    await rm(opts.dir, { recursive: true, force: true });
    await mkdir(path.join(opts.dir, "home"), { recursive: true });
    await initBare(opts.dir, settings ? await settings : "");
    const git = new Git(opts.dir, isolatedEnv(opts.env, opts.dir, workspace.workTree), ISOLATION_CONFIG);
    const repo = new HostRepo(git, opts.dir, workspace, HostRepo.reopen(opts.dir, opts.env));
    if (trusted) await repo.copyFromWorkspace();
    else await repo.copyFromTouched();
    return repo;
  }

  /**
   * The private repository made by `create`, for checks that need no work
   * tree (patch validation after the agent ran): the work tree is an empty folder.
   */
  static reopen(dir: string, env: Record<string, string>): Git {
    return new Git(dir, isolatedEnv(env, dir, path.join(dir, "home")), ISOLATION_CONFIG);
  }

  /** Objects, shallow boundary, excludes and index of the workspace's repository, taken while it is trusted. */
  private async copyFromWorkspace(): Promise<void> {
    const { commonDir, gitDir } = this.workspace;
    await rm(this.objectsDir, { recursive: true, force: true });
    const sourceObjects = path.join(commonDir, "objects");
    await linkTree(sourceObjects, this.objectsDir);
    await this.copyAlternates(sourceObjects);
    await mkdir(path.join(this.dir, "info"), { recursive: true });
    await linkOrCopy(path.join(commonDir, "shallow"), path.join(this.dir, "shallow")).catch(ignoreMissing);
    await copyFile(path.join(commonDir, "info", "exclude"), path.join(this.dir, "info", "exclude")).catch(ignoreMissing);
    await copyIndex(path.join(gitDir, "index"), this.baseIndex).catch(ignoreMissing);
  }

  /**
   * The same from a repository an earlier agent could have rewritten: object
   * files only (agent-head.ts's door), the index made from HEAD's tree (no
   * stat cache: every file is hashed once), no settings taken over.
   */
  private async copyFromTouched(): Promise<void> {
    const objects = path.join(this.workspace.commonDir, "objects");
    if (!(await importObjects(objects, this.objectsDir)))
      throw new ConfigurationError(`Input 'working-directory': the objects of '${this.workspace.workTree}' cannot be read safely after an earlier agent step; run this step in a job of its own.`);
    await this.git.exec(["read-tree", this.workspace.head], { env: { GIT_INDEX_FILE: this.baseIndex } });
  }

  /**
   * A checkout made with `--reference` borrows objects from other stores.
   * Stores outside the work tree are kept as alternates (the agent cannot
   * write them); one inside it is copied now, since the agent could rewrite it.
   */
  private async copyAlternates(sourceObjects: string): Promise<void> {
    const file = path.join(this.objectsDir, "info", "alternates");
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text === undefined) return;
    await rm(file);
    const kept: string[] = [];
    for (const line of text.split("\n").map((l) => l.trim())) {
      if (!line || line.startsWith("#")) continue;
      const store = path.resolve(sourceObjects, line);
      if (isSameOrUnder(store, this.workspace.workTree)) await linkTree(store, this.objectsDir);
      else kept.push(store);
    }
    if (kept.length) await writeFile(file, kept.join("\n") + "\n");
  }
}

/** Where the run keeps its private repository (hidden from the sandbox with the rest of the run's temp folder). */
export function hostRepoDir(runDir: string): string {
  return path.join(runDir, "host-git");
}

function isolatedEnv(base: Record<string, string>, dir: string, workTree: string): Record<string, string> {
  const kept = Object.fromEntries(Object.entries(base).filter(([k]) => KEPT_ENV.test(k)));
  return {
    ...kept,
    HOME: path.join(dir, "home"),
    XDG_CONFIG_HOME: path.join(dir, "home"),
    GIT_DIR: dir,
    GIT_WORK_TREE: workTree,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_SYSTEM: "/dev/null",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_LITERAL_PATHSPECS: "1",
  };
}

/** Where the workspace's repository is and what HEAD is, asked while it is still trusted (one git call when all is well). */
async function describeRepository(git: Git): Promise<WorkspaceRepo> {
  const where = await git.exec(
    ["rev-parse", "--path-format=absolute", "--is-inside-work-tree", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", "--verify", "-q", "HEAD"],
    { okCodes: [1, 128] },
  );
  const [inside, workTree, gitDir, commonDir, head] = where.stdout.split("\n");
  if (inside !== "true" || !workTree || !gitDir || !commonDir)
    throw new ConfigurationError(
      `Input 'working-directory': '${git.cwd}' is not a git repository. Check out the repository first (actions/checkout) or run 'git init' and commit.`,
    );
  if (where.exitCode !== 0 || !head)
    throw new ConfigurationError(`Input 'working-directory': the repository at '${git.cwd}' has no commit yet; commit once so changes can be measured against it.`);
  return { workTree, gitDir, commonDir, head, pathspec: path.relative(workTree, path.resolve(git.cwd)) || "." };
}

/** Where a repository an earlier agent step touched is: the paths recorded before that agent started, HEAD read as data. */
async function describeTouched(cwd: string, prior: TouchedRepo): Promise<WorkspaceRepo> {
  const head = await readAgentHead(prior.gitDir, prior.commonDir);
  if (!head)
    throw new ConfigurationError(
      `Input 'working-directory': an earlier agent step of this job left '${prior.workTree}' with a HEAD that cannot be read safely; run this step in a job of its own (a fresh checkout).`,
    );
  return { ...prior, head, pathspec: path.relative(prior.workTree, path.resolve(cwd)) || "." };
}

/** The HASHING_SETTINGS the workspace sets, as config lines (values checked, so nothing else can be smuggled in). */
async function hashingSettings(git: Git): Promise<string> {
  const names = Object.keys(HASHING_SETTINGS).map((k) => k.replace(".", "\\."));
  const out = await git.exec(["config", "--get-regexp", `^(${names.join("|")})$`], { okCodes: [1] });
  const lines = out.stdout.split("\n").flatMap((line) => {
    const [key, value] = line.split(" ");
    const valid = key ? HASHING_SETTINGS[key.toLowerCase()] : undefined;
    return valid && value && valid.test(value) ? [`\t${key!.split(".")[1]} = ${value}`] : [];
  });
  return lines.length ? `[core]\n${lines.join("\n")}\n` : "";
}

function ignoreMissing(e: unknown): void {
  if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
}

/** Temporary files of a concurrent `git gc` may vanish; a store merged into another may repeat a file. */
function ignoreMissingOrPresent(e: unknown): void {
  if ((e as NodeJS.ErrnoException).code !== "EEXIST") ignoreMissing(e);
}

/** Links made at once: enough to keep the thread pool busy, few enough that 100,000 loose objects stay cheap in memory. */
const LINKS_IN_FLIGHT = 64;

/**
 * Mirror a folder of regular files by links, merging into `to` (before the
 * agent starts; symlinks are skipped). Folders one after another, files in
 * batches: a store of loose objects can hold hundreds of thousands.
 */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  const entries = await readdir(from, { withFileTypes: true }).catch((e: unknown) => (ignoreMissing(e), []));
  const files = entries.filter((e) => e.isFile());
  for (let i = 0; i < files.length; i += LINKS_IN_FLIGHT)
    await Promise.all(files.slice(i, i + LINKS_IN_FLIGHT).map((e) => linkOrCopy(path.join(from, e.name), path.join(to, e.name)).catch(ignoreMissingOrPresent)));
  for (const e of entries) if (e.isDirectory()) await linkTree(path.join(from, e.name), path.join(to, e.name));
}
