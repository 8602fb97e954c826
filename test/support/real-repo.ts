/**
 * A real-sized repository for tests: git/git as of a pinned commit, put into
 * a bare `origin` of our own and checked out depth-1 the way actions/checkout
 * does by default (init, fetch --depth=1 of one commit, checkout -B).
 *
 * Where the files come from (`source` says which one a run used):
 * - `git/git@<PINNED_COMMIT>`: when a mirror of git/git holding that commit is
 *   on this machine (AGENT_RUNNER_GIT_MIRROR, default /work/.mirror/git+git/repo),
 *   its tree is exported with `git archive`. Nothing of git/git (GPL-2) is
 *   committed to this repository, and nothing is downloaded.
 * - `synthetic git/git twin`: everywhere else (CI's fresh clone). A generated
 *   tree with the features that matter to the pipeline, at the same scale:
 *   4,847 files in git/git's folders, a `.gitattributes` with the same kinds
 *   of rules (`*.bat text eol=crlf`, `*.sh text eol=lf`, …), ~1,300
 *   executable scripts, PNG test data, a `RelNotes` symlink, and the paths the
 *   tests edit (git.c, README.md, compat/vcbuild/*.bat, …).
 * The suite never skips: the same assertions run on either source.
 * AGENT_RUNNER_REAL_REPO=synthetic forces the twin (to check what CI runs).
 *
 *   const real = await createRealRepo({ extra: { "notes.txt": "a\r\nb\r\n" } });
 *   const ws = await checkoutDepth1(real, { sparse: ["Documentation"] });
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { git, writeFiles, type FileTree } from "./git-fixtures.js";

export const PINNED_COMMIT = "1a3e64c6c4a623626ff0687008732a8e007e2a1c";
export const PINNED_FILE_COUNT = 4847;
const DEFAULT_MIRROR = "/work/.mirror/git+git/repo";

export interface RealRepo {
  root: string;
  /** Bare origin; `main` is the commit a checkout gets. */
  origin: string;
  /** `git/git@<sha>` or `synthetic git/git twin`. */
  source: string;
  /** The commit on main (the snapshot plus the test's extra files). */
  head: string;
  cleanup(): Promise<void>;
}

const run = promisify(execFile);

async function mirrorHasCommit(mirror: string): Promise<boolean> {
  if (process.env["AGENT_RUNNER_REAL_REPO"] === "synthetic" || !existsSync(mirror)) return false;
  return run("git", ["--git-dir", mirror, "cat-file", "-e", `${PINNED_COMMIT}^{commit}`]).then(
    () => true,
    () => false,
  );
}

/** Export the pinned commit's tree into `dir` (symlinks and exec bits kept; eol attributes applied as a checkout would). */
async function exportMirror(mirror: string, dir: string): Promise<void> {
  await run("sh", ["-c", 'git --git-dir="$1" archive --format=tar "$2" | tar -x -C "$3"', "sh", mirror, PINNED_COMMIT, dir], { maxBuffer: 1 << 20 });
}

/** A deterministic generator (xorshift), so every machine builds the same twin. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const TWIN_ATTRIBUTES = [
  "* whitespace=trail,space",
  "*.[ch] whitespace=indent,trail,space,incomplete diff=cpp",
  "*.sh whitespace=indent,trail,space,incomplete text eol=lf",
  "*.perl text eol=lf diff=perl",
  "*.py text eol=lf diff=python",
  "*.bat text eol=crlf",
  "/Documentation/**/*.adoc text eol=lf whitespace=trail,space,incomplete",
  "/t/t????-*.sh conflict-marker-size=32",
  "",
].join("\n");

/** Folders of the twin and how many files each holds (git/git's top-level split at the pinned commit). */
const TWIN_LAYOUT: Array<[folder: string, count: number, ext: string]> = [
  ["t", 1290, ".sh"],
  ["t/data", 1422, ".txt"],
  ["Documentation", 975, ".adoc"],
  ["builtin", 130, ".c"],
  ["compat", 104, ".c"],
  ["contrib", 89, ".el"],
  ["", 530, ".c"],
  ["po", 26, ".po"],
  ["perl", 31, ".pm"],
  ["tools", 43, ".py"],
  ["reftable", 41, ".h"],
  ["xdiff", 15, ".c"],
  ["mergetools", 24, ".sh"],
  ["templates", 21, ".sample"],
  ["ci", 20, ".sh"],
  ["trace2", 22, ".c"],
  ["gitweb", 18, ".perl"],
  ["odb", 14, ".c"],
  ["oss-fuzz", 12, ".c"],
  ["refs", 9, ".h"],
];

function twinText(rand: () => number, name: string, eol: string): string {
  const lines = [`/* ${name}: generated stand-in for a git/git file */`];
  const n = 10 + Math.floor(rand() * 60);
  for (let i = 0; i < n; i++) lines.push(`line ${i} of ${name}: ${Math.floor(rand() * 1e9).toString(36)} ${"x".repeat(Math.floor(rand() * 30))}`);
  return lines.join(eol) + eol;
}

/** The synthetic twin: 4,847 entries (files and one symlink) with git/git's features. */
async function writeTwin(dir: string): Promise<void> {
  const rand = random(4847);
  const files: FileTree = {
    ".gitattributes": TWIN_ATTRIBUTES,
    "README.md": twinText(rand, "README.md", "\n"),
    "git.c": twinText(rand, "git.c", "\n"),
    "Documentation/SubmittingPatches": twinText(rand, "SubmittingPatches", "\n"),
    "Documentation/RelNotes/2.52.0.adoc": twinText(rand, "2.52.0.adoc", "\n"),
    "contrib/completion/git-completion.bash": twinText(rand, "git-completion.bash", "\n"),
    "t/test-binary-1.png": Buffer.from(Array.from({ length: 1500 }, (_, i) => (i < 8 ? [137, 80, 78, 71, 13, 10, 26, 10][i]! : Math.floor(rand() * 256)))),
  };
  for (const bat of ["find_vs_env", "vcpkg_copy_dlls", "vcpkg_install"]) files[`compat/vcbuild/${bat}.bat`] = twinText(rand, `${bat}.bat`, "\r\n");
  const executables: string[] = [];
  for (const [folder, count, ext] of TWIN_LAYOUT) {
    for (let i = 0; i < count; i++) {
      const name = `${folder ? `${folder}/` : ""}${folder === "t" ? `t${String(i).padStart(4, "0")}-generated` : `file-${i}`}${ext}`;
      files[name] = twinText(rand, name, "\n");
      if (ext === ".sh") executables.push(name);
    }
  }
  await writeFiles(dir, files);
  for (const f of executables) await chmod(join(dir, f), 0o755);
  await symlink("Documentation/RelNotes/2.52.0.adoc", join(dir, "RelNotes"));
}

/** git/git at the pinned commit (or its twin) committed to a new bare origin, with `extra` files in a second commit. */
export async function createRealRepo(opts: { extra?: FileTree; prepare?: (dir: string) => Promise<void>; mirror?: string } = {}): Promise<RealRepo> {
  const mirror = opts.mirror ?? process.env["AGENT_RUNNER_GIT_MIRROR"] ?? DEFAULT_MIRROR;
  const root = await mkdtemp(join(tmpdir(), "agent-runner-real-"));
  const work = join(root, "build");
  const origin = join(root, "origin.git");
  await mkdir(work);
  const real = await mirrorHasCommit(mirror);
  if (real) await exportMirror(mirror, work);
  else await writeTwin(work);
  const source = real ? `git/git@${PINNED_COMMIT.slice(0, 12)}` : "synthetic git/git twin";
  await git(work, ["init", "-q", "-b", "main"]);
  // -f: git/git's .gitignore names some files it tracks.
  await git(work, ["add", "-A", "-f"]);
  await git(work, ["commit", "-q", "-m", `Snapshot of ${source}`]);
  await writeFiles(work, opts.extra ?? {});
  await opts.prepare?.(work);
  await git(work, ["add", "-A", "-f"]);
  await git(work, ["commit", "-q", "--allow-empty", "-m", "Test fixtures on top of the snapshot"]);
  await git(root, ["init", "-q", "--bare", "-b", "main", origin]);
  await git(work, ["push", "-q", origin, "main"]);
  const head = (await git(work, ["rev-parse", "HEAD"])).trim();
  await rm(work, { recursive: true, force: true });
  return { root, origin, source, head, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/**
 * A depth-1 checkout of `main` as actions/checkout makes it (fetch-depth 1,
 * no tags, `origin` remote, branch `main`); `sparse`: cone-mode folders, set
 * before the checkout as actions/checkout's `sparse-checkout` input does.
 */
export async function checkoutDepth1(repo: RealRepo, opts: { sparse?: string[]; dir?: string } = {}): Promise<string> {
  const dir = opts.dir ?? join(await mkdtemp(join(tmpdir(), "agent-runner-checkout-")), "work");
  await mkdir(dir, { recursive: true });
  await git(dir, ["init", "-q"]);
  await git(dir, ["remote", "add", "origin", repo.origin]);
  await git(dir, ["-c", "protocol.version=2", "fetch", "--no-tags", "--prune", "--no-recurse-submodules", "--depth=1", "origin", `+${repo.head}:refs/remotes/origin/main`]);
  if (opts.sparse) await git(dir, ["sparse-checkout", "set", "--cone", ...opts.sparse]);
  await git(dir, ["checkout", "-q", "--force", "-B", "main", "refs/remotes/origin/main"]);
  return dir;
}

/** Remove a checkout made by checkoutDepth1 (its temp parent too). */
export async function removeCheckout(dir: string): Promise<void> {
  await rm(dirname(dir), { recursive: true, force: true });
}
