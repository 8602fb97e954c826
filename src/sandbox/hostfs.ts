/**
 * Host filesystem facts shared by the bwrap and docker backends: the
 * layout's writable folders, which host paths hold runner secrets (to hide),
 * a credential-free copy of the workspace's git config, and small path helpers.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConfigurationError } from "../errors.js";
import type { SandboxHost, SandboxLayout } from "./types.js";

/** `child` is `dir` or inside it (both absolute, normalised). */
export function isSameOrUnder(child: string, dir: string): boolean {
  if (dir === "/") return true;
  return child === dir || child.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

/** `child` is strictly inside `dir`. */
export function isStrictlyUnder(child: string, dir: string): boolean {
  return child !== dir && isSameOrUnder(child, dir);
}

/** realpath when the path exists, else the resolved absolute path. */
export function realOrResolved(p: string): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync(abs);
  } catch {
    return abs;
  }
}

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

/** Creates the layout's own folders; returns the real workspace and every read-write path (workspace first). */
export function writablePaths(layout: SandboxLayout): { workspace: string; writable: string[] } {
  const workspace = realOrResolved(layout.workspace);
  if (!existsDir(workspace)) throw new ConfigurationError(`working-directory: '${layout.workspace}' is not a folder`);
  const own = [layout.home, layout.tmp, layout.outputsDir];
  for (const p of own) fs.mkdirSync(p, { recursive: true });
  return { workspace, writable: [workspace, ...own.map(realOrResolved)] };
}

/** Find an executable on `searchPath` (or the absolute path given); the system folders are searched last. */
export function which(name: string, searchPath: string): string | undefined {
  const candidates = name.includes("/") ? [name] : [...searchPath.split(":").filter(Boolean), "/usr/bin", "/bin", "/usr/sbin"].map((d) => path.join(d, name));
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
  return [...out].sort((a, b) => a.length - b.length || a.localeCompare(b));
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
 * The git config files of a workspace: `.git/config`, or for a `.git` file
 * (worktree, submodule) the gitdir's config and its common dir's config.
 */
export function gitConfigFiles(workspace: string): string[] {
  const dotGit = path.join(workspace, ".git");
  let gitDir: string | undefined;
  if (existsDir(dotGit)) gitDir = dotGit;
  else if (existsFile(dotGit)) {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, "utf8"));
    if (m) gitDir = path.resolve(workspace, m[1]!);
  }
  if (!gitDir) return [];
  const files = [path.join(gitDir, "config")];
  const commonFile = path.join(gitDir, "commondir");
  if (existsFile(commonFile)) {
    files.push(path.join(path.resolve(gitDir, fs.readFileSync(commonFile, "utf8").trim()), "config"));
  }
  return [...new Set(files.map(realOrResolved))].filter(existsFile);
}

const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/\s@"'\\]+@/gi;
const DROPPED_SECTIONS = new Set(["credential", "include", "includeif"]);
const HTTP_SECRET_KEYS = new Set(["extraheader", "cookiefile", "proxyauthmethod"]);

/**
 * A copy of a git config without credentials: no `http.*.extraheader`
 * (actions/checkout's `AUTHORIZATION: basic …`), no `credential.*` helpers,
 * no `include`/`includeIf` (checkout ≥ v5 keeps its token in an included file
 * under RUNNER_TEMP), and no `user:password@` in any URL, section name
 * included (`url."https://x-access-token:…@github.com/".insteadOf`).
 * Everything else (remotes, branches, core settings) is kept verbatim.
 */
export function sanitizeGitConfig(text: string): string {
  // Join continuation lines (a value ending with a backslash) into logical lines.
  const physical = text.split(/\r?\n/);
  const logical: string[] = [];
  for (let i = 0; i < physical.length; i++) {
    let line = physical[i]!;
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < physical.length) {
      line = line.slice(0, -1) + physical[++i]!;
    }
    logical.push(line);
  }
  const out: string[] = [];
  let section = "";
  for (const original of logical) {
    let line = original;
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
 * Read-only overlays for the workspace's git config: each config file (that
 * `include` accepts) replaced by a credential-free copy written into
 * `privateDir` with `fileMode`, and its hooks folder made read-only: hooks
 * would run on the host the next time the runner uses git here.
 */
export function gitConfigOverlays(
  workspace: string,
  privateDir: string,
  fileMode: number,
  include: (config: string) => boolean = () => true,
): { src: string; dest: string }[] {
  const overlays: { src: string; dest: string }[] = [];
  gitConfigFiles(workspace).forEach((cfg, i) => {
    if (!include(cfg)) return;
    const copy = path.join(privateDir, `gitconfig-${i}`);
    fs.writeFileSync(copy, sanitizeGitConfig(fs.readFileSync(cfg, "utf8")), { mode: fileMode });
    overlays.push({ src: copy, dest: cfg });
    const hooks = path.join(path.dirname(cfg), "hooks");
    fs.mkdirSync(hooks, { recursive: true });
    overlays.push({ src: hooks, dest: hooks });
  });
  return overlays;
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
