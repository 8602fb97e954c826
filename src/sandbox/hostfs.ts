/**
 * Host filesystem facts shared by the bwrap and docker backends: the
 * layout's writable folders, which host paths hold runner secrets (to hide),
 * credential-free copies of every git config the agent could read through
 * the workspace, and small path helpers.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConfigurationError } from "../errors.js";
import type { Logger } from "../logger.js";
import { GHA_CREDS_FILE } from "../shared/cloud.js";
import { isSameOrUnder, isStrictlyUnder, realOrResolved } from "../shared/paths.js";
import type { DotGitWalk, SandboxHost, SandboxLayout } from "./types.js";
import { byCodeUnits } from "../shared/plain-format.js";

export { isSameOrUnder, isStrictlyUnder, realOrResolved };

function existsDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function existsFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Creates the layout's own folders; returns the real workspace and every read-write path (workspace first, unless read-only). */
export function writablePaths(layout: SandboxLayout): { workspace: string; writable: string[] } {
  const workspace = realOrResolved(layout.workspace);
  if (!existsDir(workspace)) throw new ConfigurationError(`working-directory: '${layout.workspace}' is not a folder`);
  const own = [layout.home, layout.tmp, layout.outputsDir];
  for (const p of own) fs.mkdirSync(p, { recursive: true });
  return { workspace, writable: [...(layout.workspaceReadOnly ? [] : [workspace]), ...own.map(realOrResolved)] };
}

/**
 * Find an executable on `searchPath` (or the absolute path given), as the
 * runner's own shell would; the system folders only when the PATH is empty.
 * (Not always: then a runner whose PATH lacks bwrap would still "have" it,
 * and the GitHub-hosted setup could not tell what is missing.)
 */
export function which(name: string, searchPath: string): string | undefined {
  const dirs = searchPath.split(":").filter(Boolean);
  const candidates = name.includes("/") ? [name] : (dirs.length ? dirs : ["/usr/bin", "/bin", "/usr/sbin"]).map((d) => path.join(d, name));
  for (const c of candidates) {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      if (fs.statSync(c).isFile()) return c;
    } catch {
      // next
    }
  }
  return undefined;
}

/**
 * Host directories whose content the agent must not see: each is replaced by
 * an empty read-only tmpfs inside the sandbox (paths the layout needs are
 * bound back on top). Sorted shortest first; a folder inside another one is
 * listed too (it must be hidden again when a bound path exposes it).
 *
 * - the runner's HOME and every home (`/home`, `/root`): `.git-credentials`,
 *   `.docker/config.json`, `.ssh`, cloud CLI credentials, the hosted runner's
 *   own install with its `.credentials` files;
 * - `$RUNNER_TEMP`: actions/checkout's credential config, `_runner_file_commands`,
 *   job scripts;
 * - the runner's `_work` folder (parent of `$RUNNER_WORKSPACE`): other actions'
 *   checkouts and files; and a self-hosted runner's root when it sits next to
 *   it (it holds `.credentials` and `.credentials_rsaparams`);
 * - `/tmp`, `/var/tmp`: other processes' files and sockets (X11, ssh-agent);
 * - `/run` (and `/var/run` when it is a directory): the Docker socket (root on
 *   the runner), systemd and user runtime dirs, container secrets;
 * - `/var/lib/docker`, `/var/lib/containerd`: readable image and container data.
 */
export function hiddenHostDirs(host: Pick<SandboxHost, "home" | "runnerTemp" | "runnerWorkspace">): string[] {
  const out = new Set<string>();
  const add = (p: string | undefined) => {
    if (!p) return;
    const r = realOrResolved(p);
    if (r !== "/" && existsDir(r)) out.add(r);
  };
  add(host.home);
  add(os.homedir());
  add("/root");
  add("/home");
  add(host.runnerTemp);
  if (host.runnerWorkspace) {
    const work = path.dirname(realOrResolved(host.runnerWorkspace));
    // Only when it looks like the runner's `_work` folder: never `/` or `/home`.
    if (path.basename(work) === "_work" || existsDir(path.join(work, "_actions")) || existsDir(path.join(work, "_temp"))) {
      add(work);
      const root = path.dirname(work);
      if (existsFile(path.join(root, ".runner")) || existsFile(path.join(root, ".credentials"))) add(root);
    }
  }
  add("/tmp");
  add("/var/tmp");
  add("/run");
  try {
    if (!fs.lstatSync("/var/run").isSymbolicLink()) add("/var/run");
  } catch {
    // absent
  }
  add("/var/lib/docker");
  add("/var/lib/containerd");
  return [...out].sort((a, b) => a.length - b.length || byCodeUnits(a, b));
}

/** Host files masked with /dev/null (readable secrets when the runner runs as root). */
export function hiddenHostFiles(): string[] {
  const files = ["/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/shadow-", "/etc/gshadow-"];
  try {
    for (const f of fs.readdirSync("/etc/ssh")) {
      if (/^ssh_host_.*_key$/.test(f)) files.push(path.join("/etc/ssh", f));
    }
  } catch {
    // no ssh
  }
  return files.filter(existsFile);
}

/**
 * How far the search for git repositories under the workspace goes. Nested
 * checkouts sit near the top; a dependency tree (node_modules, vendor) can
 * hold hundreds of thousands of folders, and the search runs before every
 * agent start. When a limit stops it, a warning says so.
 */
export interface GitScanLimits {
  maxDepth: number;
  maxDirs: number;
}
export const GIT_SCAN_LIMITS: GitScanLimits = { maxDepth: 8, maxDirs: 10_000 };
/** Nesting of submodules-of-submodules, includes and gitfile chains followed. */
const MAX_GIT_LINKS = 10;

export interface WorkspaceGitScan {
  /** Every git config file found (real paths, existing files). */
  configs: string[];
  /** `hooks` of each repository's own (common) git dir under the workspace. */
  hookDirs: string[];
  /** Set when a limit stopped the walk: what was not looked at (`count`: folders left unvisited). */
  stopped?: { limit: "depth" | "count"; detail: string };
}

function readHead(file: string, max = 64 * 1024): string {
  const fd = fs.openSync(file, "r");
  try {
    const buf = Buffer.alloc(max);
    return buf.subarray(0, fs.readSync(fd, buf, 0, max, 0)).toString("utf8");
  } finally {
    fs.closeSync(fd);
  }
}

function dirEntries(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function dirNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function isFileOrLink(p: string): boolean {
  try {
    const st = fs.lstatSync(p);
    return st.isFile() || st.isSymbolicLink();
  } catch {
    return false;
  }
}

/** `include.path` / `includeIf.*.path` values of a config, resolved as git does. */
function includedPaths(file: string, text: string): string[] {
  const out: string[] = [];
  let section = "";
  for (const line of text.split(/\r?\n/)) {
    const header = /^\s*\[\s*([A-Za-z0-9.-]+)/.exec(line);
    if (header) section = header[1]!.split(".")[0]!.toLowerCase();
    const m = /(?:^|\]|\s)path\s*=\s*("?)(.*?)\1\s*$/i.exec(line);
    if (!m || (section !== "include" && section !== "includeif")) continue;
    const value = m[2]!.trim();
    if (!value) continue;
    out.push(value.startsWith("~/") ? path.join(os.homedir(), value.slice(2)) : path.resolve(path.dirname(file), value));
  }
  return out;
}

/** Collects the git dirs and config files a workspace's repositories are made of. */
class GitScanner {
  private readonly gitDirs = new Set<string>();
  readonly configs = new Set<string>();
  readonly hookDirs = new Set<string>();

  /** A `.git` entry: a folder, or a gitfile (`gitdir: …`) of a worktree, submodule or `--separate-git-dir`. */
  addDotGit(dotGit: string): void {
    const real = realOrResolved(dotGit);
    if (existsDir(real)) return this.addGitDir(real, 0);
    if (!existsFile(real)) return;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readHead(real, 4096));
    if (m) this.addGitDir(path.resolve(path.dirname(dotGit), m[1]!), 0);
  }

  addGitDir(dir: string, depth: number): void {
    const real = realOrResolved(dir);
    if (depth > MAX_GIT_LINKS || this.gitDirs.has(real) || !existsDir(real)) return;
    this.gitDirs.add(real);
    this.addConfig(path.join(real, "config"), 0);
    this.addConfig(path.join(real, "config.worktree"), 0);
    const commonFile = path.join(real, "commondir");
    if (existsFile(commonFile)) this.addGitDir(path.resolve(real, readHead(commonFile, 4096).trim()), depth + 1);
    else this.hookDirs.add(path.join(real, "hooks"));
    this.addModules(path.join(real, "modules"), depth + 1, 0);
    for (const e of dirEntries(path.join(real, "worktrees"))) if (e.isDirectory()) this.addGitDir(path.join(real, "worktrees", e.name), depth + 1);
  }

  /** Submodule git dirs: `modules/<name>`, where a name may hold slashes. */
  private addModules(dir: string, depth: number, nameDepth: number): void {
    if (nameDepth > MAX_GIT_LINKS) return;
    for (const e of dirEntries(dir)) {
      if (!e.isDirectory()) continue;
      const sub = path.join(dir, e.name);
      if (existsFile(path.join(sub, "HEAD"))) this.addGitDir(sub, depth);
      else this.addModules(sub, depth, nameDepth + 1);
    }
  }

  addConfig(file: string, depth: number): void {
    const real = realOrResolved(file);
    if (depth > MAX_GIT_LINKS || this.configs.has(real) || !existsFile(real)) return;
    this.configs.add(real);
    let text = "";
    try {
      text = readHead(real);
    } catch {
      return;
    }
    for (const inc of includedPaths(real, text)) this.addConfig(inc, depth + 1);
  }
}

/**
 * The bounded walk, breadth first, symlinks not followed: yields each folder to list and takes its
 * entries back, so one walk serves a synchronous and an asynchronous reader.
 */
function* dotGitWalk(root: string, limits: GitScanLimits): Generator<string, DotGitWalk, fs.Dirent[]> {
  const dotGits: string[] = [];
  let stopped: WorkspaceGitScan["stopped"];
  const queue: { dir: string; depth: number }[] = [{ dir: root, depth: 0 }];
  let visited = 0;
  while (queue.length) {
    const { dir, depth } = queue.shift()!;
    if (++visited > limits.maxDirs) {
      stopped = { limit: "count", detail: `stopped after ${limits.maxDirs} folders` };
      break;
    }
    for (const e of yield dir) {
      // Paths only for what is kept: a workspace of many files costs a name comparison per file.
      if (e.name === ".git") dotGits.push(path.join(dir, e.name));
      else if (e.isDirectory()) {
        if (depth + 1 <= limits.maxDepth) queue.push({ dir: path.join(dir, e.name), depth: depth + 1 });
        else stopped ??= { limit: "depth", detail: `did not look deeper than ${limits.maxDepth} folders` };
      }
    }
  }
  return { root, dotGits, ...(stopped ? { stopped } : {}) };
}

/**
 * The walk of scanWorkspaceGit without blocking: the runner makes it while git hashes the workspace
 * for the baseline (both only read), and hands it to the sandbox, which would otherwise walk again.
 */
export async function walkWorkspaceForGit(workspace: string, limits: GitScanLimits = GIT_SCAN_LIMITS): Promise<DotGitWalk> {
  const walk = dotGitWalk(realOrResolved(workspace), limits);
  for (let step = walk.next(); ; ) {
    if (step.done) return step.value;
    const entries = await fs.promises.readdir(step.value, { withFileTypes: true }).catch(() => []);
    step = walk.next(entries);
  }
}

function walkWorkspaceSync(root: string, limits: GitScanLimits): DotGitWalk {
  const walk = dotGitWalk(root, limits);
  for (let step = walk.next(); ; step = walk.next(dirEntries(step.value))) if (step.done) return step.value;
}

/**
 * Every git config the agent could read through the workspace: the
 * repository's (also when the workspace is a subfolder of it), each
 * submodule's (`.git/modules/**`), each linked worktree's `config.worktree`,
 * nested checkouts found by a bounded walk (`sub/.git`, folder or gitfile,
 * wherever the gitfile points), the files they include, and `extraConfigs`
 * (the system config). Symlinks are not followed while walking. `walk`: that
 * walk, made earlier for this workspace (walkWorkspaceForGit).
 */
export function scanWorkspaceGit(workspace: string, opts: { extraConfigs?: string[]; limits?: GitScanLimits; walk?: DotGitWalk } = {}): WorkspaceGitScan {
  const scan = new GitScanner();
  const root = realOrResolved(workspace);
  for (let d = path.dirname(root); ; d = path.dirname(d)) {
    scan.addDotGit(path.join(d, ".git"));
    if (d === path.dirname(d)) break;
  }
  const walk = opts.walk?.root === root ? opts.walk : walkWorkspaceSync(root, opts.limits ?? GIT_SCAN_LIMITS);
  for (const dotGit of walk.dotGits) scan.addDotGit(dotGit);
  for (const c of opts.extraConfigs ?? []) scan.addConfig(c, 0);
  return { configs: [...scan.configs], hookDirs: [...scan.hookDirs].filter((h) => isStrictlyUnder(h, root)), ...(walk.stopped ? { stopped: walk.stopped } : {}) };
}

/** The workspace's git config files (see scanWorkspaceGit). */
export function gitConfigFiles(workspace: string): string[] {
  return scanWorkspaceGit(workspace).configs;
}

/** Git's system config, which the agent can read under bwrap (the host's /etc is visible read-only). */
export function systemGitConfigs(): string[] {
  return ["/etc/gitconfig", "/usr/local/etc/gitconfig"].filter(existsFile);
}

const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/\s@"'\\]+@/gi;
const DROPPED_SECTIONS = new Set(["credential", "include", "includeif"]);
const HTTP_SECRET_KEYS = new Set(["extraheader", "cookiefile", "proxyauthmethod"]);
const AUTH_HEADER = /\bauthorization\s*:\s*\S/i;
const GITHUB_TOKEN = /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/;
/** userinfo that holds a secret: `user:password`, a token as the user name, x-access-token. */
const SECRET_USERINFO = /[a-z][a-z0-9+.-]*:\/\/([^/\s@"'\\]+)@/gi;

/** Config lines with continuations (a value ending with a backslash) joined. */
function logicalLines(text: string): string[] {
  const physical = text.split(/\r?\n/);
  const logical: string[] = [];
  for (let i = 0; i < physical.length; i++) {
    let line = physical[i]!;
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < physical.length) {
      line = line.slice(0, -1) + physical[++i]!;
    }
    logical.push(line);
  }
  return logical;
}

const isComment = (line: string) => /^\s*[#;]/.test(line);

/**
 * A copy of a git config without credentials: no `http.*.extraheader`
 * (actions/checkout's `AUTHORIZATION: basic …`), no `credential.*` helpers,
 * no `include`/`includeIf` (checkout ≥ v5 keeps its token in an included file
 * under RUNNER_TEMP), no `user:password@` in any URL, section name included
 * (`url."https://x-access-token:…@github.com/".insteadOf`), and no comment
 * that holds an Authorization header or a GitHub token. Everything else
 * (remotes, branches, core settings) is kept verbatim; a token under some
 * other key is left for gitCredentialFindings to refuse, since removing a
 * setting we do not know could change what it means.
 */
export function sanitizeGitConfig(text: string): string {
  const out: string[] = [];
  let section = "";
  for (const original of logicalLines(text)) {
    let line = original;
    if (isComment(line)) {
      out.push(AUTH_HEADER.test(line) || GITHUB_TOKEN.test(line) ? "# comment removed by Agent Runner (it held a credential)" : line.replace(USERINFO, "$1"));
      continue;
    }
    const header = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (header) {
      section = header[1]!.split(".")[0]!.toLowerCase();
      const rest = line.slice(header[0].length);
      if (DROPPED_SECTIONS.has(section)) {
        out.push(`# [${header[1]}${header[2] !== undefined ? ' "…"' : ""}] removed by Agent Runner`);
        continue;
      }
      out.push(header[0].replace(USERINFO, "$1"));
      line = rest;
      if (!line.trim()) continue;
    }
    if (DROPPED_SECTIONS.has(section)) continue;
    const key = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(=|$)/.exec(line)?.[1]?.toLowerCase();
    if (section === "http" && key && HTTP_SECRET_KEYS.has(key)) {
      out.push(`\t# ${key} removed by Agent Runner`);
      continue;
    }
    out.push(line.replace(USERINFO, "$1"));
  }
  return out.join("\n");
}

/**
 * What in a git config would hand the agent a credential, checked
 * independently of sanitizeGitConfig (on what the agent is shown): an
 * `extraheader`, an `Authorization:` header anywhere, a URL whose userinfo
 * holds a password or a token, a GitHub token. Never the secret itself.
 */
export function gitCredentialFindings(text: string): string[] {
  const found = new Set<string>();
  let section = "";
  for (const line of logicalLines(text)) {
    const header = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (header) section = header[1]!.split(".")[0]!.toLowerCase();
    const body = header ? line.slice(header[0].length) : line;
    if (!isComment(line) && section === "http" && /^\s*extraheader\s*(=|$)/i.test(body)) found.add("an `http.*.extraheader`");
    if (AUTH_HEADER.test(line)) found.add("an `Authorization:` header");
    for (const m of line.matchAll(SECRET_USERINFO)) {
      const info = m[1]!;
      if (info.includes(":") || GITHUB_TOKEN.test(info) || /^x-access-token$/i.test(info) || info.length >= 20)
        found.add("a URL carrying credentials (`https://user:…@host`)");
    }
    if (GITHUB_TOKEN.test(line)) found.add("a GitHub token");
  }
  return [...found];
}

export interface GitMaskOptions {
  workspace: string;
  /** Where the credential-free copies are written. */
  privateDir: string;
  fileMode: number;
  /** Whether the agent can read a host path at all (configs it cannot see need no copy). */
  visible: (p: string) => boolean;
  log: Logger;
  /** More configs the agent can read (the system config under bwrap). */
  extraConfigs?: string[];
  /** The workspace's walk, made before the agent started (SandboxRequest.workspaceWalk). */
  walk?: DotGitWalk;
}

/**
 * Read-only overlays that hide every credential in the git configs the agent
 * could read: each visible config (scanWorkspaceGit) replaced by a
 * credential-free copy written into `privateDir`, and each repository's hooks
 * folder under the workspace made read-only (hooks would otherwise be
 * planted for the next git that runs there). A mount, never an edit: the
 * host's files keep what they hold.
 *
 * Then refuses to start (ConfigurationError) when a credential would still be
 * visible in what the agent is shown.
 */
export function maskGitCredentials(o: GitMaskOptions): { src: string; dest: string }[] {
  const scan = scanWorkspaceGit(o.workspace, { extraConfigs: o.extraConfigs ?? [], ...(o.walk ? { walk: o.walk } : {}) });
  // Depth is routine (dependency trees); running out of the folder budget is not.
  if (scan.stopped) {
    const msg = `sandbox: the search for nested git checkouts under the workspace ${scan.stopped.detail}; git configs beyond that are not masked.`;
    if (scan.stopped.limit === "count") o.log.warning(msg);
    else o.log.info(msg);
  }
  const overlays: { src: string; dest: string }[] = [];
  const shown: { file: string; text: string }[] = [];
  scan.configs.forEach((cfg, i) => {
    if (!o.visible(cfg)) return;
    let text = "";
    try {
      text = sanitizeGitConfig(fs.readFileSync(cfg, "utf8"));
    } catch {
      // Unreadable for us: the agent gets an empty file in its place.
    }
    const copy = path.join(o.privateDir, `gitconfig-${i}`);
    fs.writeFileSync(copy, text, { mode: o.fileMode });
    overlays.push({ src: copy, dest: cfg });
    shown.push({ file: cfg, text });
  });
  for (const hooks of scan.hookDirs) {
    fs.mkdirSync(hooks, { recursive: true });
    overlays.push({ src: hooks, dest: hooks });
  }
  refuseVisibleCredentials(shown);
  o.log.debug(`sandbox: ${shown.length} git config(s) shown to the agent without credentials`);
  return overlays;
}

/** ConfigurationError naming each file whose shown content still holds a credential. */
export function refuseVisibleCredentials(shown: { file: string; text: string }[]): void {
  const problems = shown.flatMap(({ file, text }) => {
    const found = gitCredentialFindings(text);
    return found.length
      ? [
          `Input 'sandbox': the agent would see ${found.join(", ")} in ${file}, which Agent Runner cannot remove without changing what that setting means. ` +
            "Remove it before this step (for actions/checkout: `persist-credentials: false`); the agent was not started.",
        ]
      : [];
  });
  if (problems.length) throw new ConfigurationError(problems);
}

/** For `sandbox: none`: the git configs under the workspace whose credentials the agent can read as they are. */
export function exposedGitCredentials(workspace: string, walk?: DotGitWalk): { file: string; found: string[] }[] {
  return scanWorkspaceGit(workspace, { extraConfigs: systemGitConfigs(), ...(walk ? { walk } : {}) }).configs.flatMap((file) => {
    try {
      const found = gitCredentialFindings(fs.readFileSync(file, "utf8"));
      return found.length ? [{ file, found }] : [];
    } catch {
      return [];
    }
  });
}

/**
 * Cloud credentials files the agent could see: google-github-actions/auth's
 * `gha-creds-*.json`, which it writes into GITHUB_WORKSPACE (the workspace or
 * one of its parents) and which holds the URL and bearer of the job's OIDC
 * token request, and the files the runner's environment names (`named`:
 * GOOGLE_APPLICATION_CREDENTIALS, AWS_WEB_IDENTITY_TOKEN_FILE, …). Real
 * paths of existing files; symlinked names are followed to what they show.
 */
export function cloudCredentialFiles(workspace: string, named: readonly string[] = []): string[] {
  const found = new Set<string>();
  const root = realOrResolved(workspace);
  for (let d = root; ; d = path.dirname(d)) {
    // Names first (no Dirent per entry: a parent such as /tmp can hold thousands), then the few that match.
    for (const name of dirNames(d)) if (GHA_CREDS_FILE.test(name) && isFileOrLink(path.join(d, name))) found.add(path.join(d, name));
    if (d === path.dirname(d)) break;
  }
  for (const f of named) found.add(path.resolve(f));
  const out = new Set<string>();
  for (const f of found) {
    // Both the name the agent could open and what it leads to are covered.
    if (existsFile(f)) {
      out.add(path.resolve(f));
      out.add(realOrResolved(f));
    }
  }
  return [...out].filter(existsFile).sort();
}

/**
 * Read-only overlays that show the agent an empty file in place of each
 * cloud credentials file it could see (cloudCredentialFiles). A mount, never
 * an edit: the host's file stays as the auth action wrote it, for the
 * gateway and the steps after this one.
 */
export function maskCloudCredentialFiles(o: {
  workspace: string;
  named?: readonly string[];
  privateDir: string;
  fileMode: number;
  visible: (p: string) => boolean;
  log: Logger;
}): { src: string; dest: string }[] {
  const files = cloudCredentialFiles(o.workspace, o.named).filter(o.visible);
  if (!files.length) return [];
  const empty = path.join(o.privateDir, "cloud-credentials-hidden");
  fs.writeFileSync(empty, "", { mode: o.fileMode });
  o.log.debug(`sandbox: ${files.length} cloud credentials file(s) hidden from the agent`);
  return files.map((dest) => ({ src: empty, dest }));
}

/** A private (0700) directory for files the sandbox binds read-only. */
export function makePrivateDir(prefix: string, base = os.tmpdir()): string {
  const dir = fs.mkdtempSync(path.join(base, prefix));
  fs.chmodSync(dir, 0o700);
  return dir;
}

/**
 * /etc/passwd and /etc/group for the sandbox: the host's, with one entry for
 * the sandbox user whose home is the agent's HOME (so tools that read the
 * passwd database, like os.userInfo() or ssh, agree with $HOME).
 */
export function passwdFiles(uid: number, gid: number, home: string): { passwd: string; group: string } {
  const read = (f: string) => {
    try {
      return fs.readFileSync(f, "utf8").split("\n").filter(Boolean);
    } catch {
      return [];
    }
  };
  const passwd = read("/etc/passwd").filter((l) => {
    const f = l.split(":");
    return f[0] !== "agent" && f[2] !== String(uid);
  });
  passwd.push(`agent:x:${uid}:${gid}:Agent Runner sandbox:${home}:/bin/sh`);
  const group = read("/etc/group").filter((l) => {
    const f = l.split(":");
    return f[0] !== "agent" && f[2] !== String(gid);
  });
  group.push(`agent:x:${gid}:`);
  return { passwd: passwd.join("\n") + "\n", group: group.join("\n") + "\n" };
}
