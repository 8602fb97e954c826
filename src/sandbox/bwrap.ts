/**
 * The bubblewrap sandbox. The agent's process tree gets:
 *
 * - the host filesystem read-only (`--ro-bind / /`), with the places where
 *   runner secrets live replaced by empty read-only tmpfs (hostfs.ts lists
 *   them: every home, RUNNER_TEMP, the runner's _work folder, /tmp, /var/tmp,
 *   /run with the Docker socket, …) and shadow/sudoers/ssh host keys masked;
 * - the layout bound back on top: workspace, HOME, TMPDIR and the outputs
 *   folder read-write, `readOnlyPaths` (the CLI, node) read-only;
 * - every git config it could read through the workspace (the repository's,
 *   submodules', worktrees', nested checkouts', what they include, and the
 *   system config) replaced by a credential-free read-only copy, each
 *   repository's hooks folder read-only, and the start refused when a
 *   credential would still show (hostfs.ts maskGitCredentials);
 * - every cloud credentials file it could see (google-github-actions/auth's
 *   `gha-creds-*.json` in the workspace, the files GOOGLE_APPLICATION_CREDENTIALS,
 *   AWS_WEB_IDENTITY_TOKEN_FILE, … name) shown as an empty read-only file;
 * - its own user namespace mapped to one uid (1000 when the runner is root,
 *   else the runner's uid), no capabilities, further user namespaces
 *   disabled where bwrap supports it: `mount`, `sudo`, `su` fail;
 * - its own PID namespace and /proc (no `/proc/<host pid>/environ`), IPC,
 *   UTS and cgroup namespaces, a new session (no TIOCSTI), and
 *   `--die-with-parent`; everything it leaves behind dies with it;
 * - the network of network.ts: `none` and `model-only`/`allowlist` get a
 *   network namespace with only `lo` (the latter two with socat bridges to
 *   the gateway and the filtering proxy), `open` shares the host's.
 *
 * The environment is exactly `cmd.env`: it reaches bwrap as bwrap's own
 * environment (never `--setenv`, so no value is ever in argv) and bwrap
 * passes it on; the PWD that bwrap (and the bridge's shell) add is removed
 * with `env -u` unless cmd.env has its own. With the network bridge, the
 * POSIX shell that starts socat drops variables whose names are not shell
 * identifiers (a warning names them).
 */
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import {
  hiddenHostDirs,
  hiddenHostFiles,
  isSameOrUnder,
  isStrictlyUnder,
  makePrivateDir,
  maskCloudCredentialFiles,
  maskGitCredentials,
  passwdFiles,
  realOrResolved,
  systemGitConfigs,
  which,
  writablePaths,
} from "./hostfs.js";
import { INSIDE_BRIDGE_DIR, reachableUrl, setUpNetwork, type Forward, type NetworkPlan } from "./network.js";
import type { PreparedSandbox, SandboxBackend, SandboxHost, SandboxRequest, SpawnSpec } from "./types.js";
import { byCodeUnits } from "../shared/plain-format.js";

const BWRAP_INSTALL_HINT = "Install it with `sudo apt-get install -y bubblewrap`.";
const USERNS_HINT =
  "On Ubuntu 24.04 runners AppArmor restricts unprivileged user namespaces: run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` in a step before this one (or choose `sandbox: docker` or `sandbox: none`).";
const SOCAT_INSTALL_HINT = "Install it with `sudo apt-get install -y socat`, or use `network: none` or `network: open`.";

/** uid the agent runs as inside: the runner's own, or 1000 when the runner is root. */
function sandboxIds(hostUid: number, hostGid: number): { uid: number; gid: number } {
  return hostUid === 0 ? { uid: 1000, gid: 1000 } : { uid: hostUid, gid: hostGid };
}

export interface BwrapOptions {
  /** Where bwrap and socat are found, and which host folders hold runner secrets. */
  host: Pick<SandboxHost, "path" | "home" | "runnerTemp" | "runnerWorkspace">;
  /** bwrap binary (default: found on the host's PATH). */
  bwrapPath?: string;
  /** Folder for the bridge sockets and private copies (default os.tmpdir()). */
  privateBase?: string;
}

/** One mount, applied in order: later (deeper) mounts win over earlier ones. */
export type Mount =
  | { op: "hide"; dest: string }
  | { op: "ro"; src: string; dest: string }
  | { op: "rw"; src: string; dest: string };

/** Everything buildBwrapArgs needs: plain data, so the argv is unit-testable. */
export interface BwrapPlan {
  uid: number;
  gid: number;
  isolatedNetwork: boolean;
  disableUserns: boolean;
  /** In application order (see orderMounts). */
  mounts: Mount[];
  /** Host bridge folder mounted at INSIDE_BRIDGE_DIR. */
  bridgeDir?: string;
}

const OP_ORDER = { hide: 0, ro: 1, rw: 2 } as const;

/**
 * Order mounts parents first, so that the most specific path wins: a
 * writable workspace inside a hidden folder is bound after the folder's
 * tmpfs, a hidden folder inside the workspace is laid after the workspace.
 * At the same path a bind replaces a hide.
 */
export function orderMounts(mounts: Mount[]): Mount[] {
  const bound = new Set(mounts.filter((m) => m.op !== "hide").map((m) => m.dest));
  const seen = new Set<string>();
  const kept = mounts.filter((m) => {
    if (m.op === "hide" && bound.has(m.dest)) return false;
    const key = `${m.op}:${m.dest}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const depth = (p: string) => (p === "/" ? 0 : p.split("/").length - 1);
  return kept.sort((a, b) => depth(a.dest) - depth(b.dest) || OP_ORDER[a.op] - OP_ORDER[b.op] || byCodeUnits(a.dest, b.dest));
}

/** The bwrap options (everything before the command), in mount order. */
export function buildBwrapArgs(plan: BwrapPlan, cwd: string): string[] {
  const a: string[] = [
    "--unshare-user",
    "--uid",
    String(plan.uid),
    "--gid",
    String(plan.gid),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
  ];
  if (plan.isolatedNetwork) a.push("--unshare-net");
  if (plan.disableUserns) a.push("--disable-userns");
  a.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  a.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc");
  for (const m of plan.mounts) {
    if (m.op === "hide") a.push("--tmpfs", m.dest);
    else a.push(m.op === "ro" ? "--ro-bind" : "--bind", m.src, m.dest);
  }
  if (plan.bridgeDir) a.push("--ro-bind", plan.bridgeDir, INSIDE_BRIDGE_DIR);
  // Mount points exist now; the hiding tmpfs become read-only (binds inside
  // them keep their own flags).
  for (const m of plan.mounts) if (m.op === "hide") a.push("--remount-ro", m.dest);
  a.push("--chdir", cwd);
  return a;
}

const NAME_OK = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The POSIX shell prologue run inside the sandbox when the network is bridged:
 * start one socat per forward (127.0.0.1:port → unix socket), wait until they
 * listen, then exec the agent through `env -u` so that the variables the
 * shell adds (PWD, OLDPWD) are removed again. No value is in it: only ports,
 * fixed paths and variable names.
 */
export function bridgeScript(forwards: Forward[], tools: { socat: string; sleep: string; env: string }, unset: string[]): string {
  const lines: string[] = [];
  for (const f of forwards) {
    lines.push(
      `${tools.socat} TCP4-LISTEN:${f.port},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${INSIDE_BRIDGE_DIR}/${f.socket} </dev/null >/dev/null 2>&1 &`,
    );
  }
  const hex = forwards.map((f) => `0100007F:${f.port.toString(16).toUpperCase().padStart(4, "0")}`);
  lines.push(
    "i=0",
    "while :; do",
    "  n=0",
    "  while read -r _ l _ s _; do",
    '    [ "$s" = 0A ] || continue',
    `    case "$l" in ${hex.join("|")}) n=$((n+1));; esac`,
    "  done < /proc/net/tcp",
    `  [ "$n" -ge ${forwards.length} ] && break`,
    "  i=$((i+1))",
    '  if [ "$i" -ge 1000 ]; then echo "agent-runner: the sandbox network bridge (socat) did not start" >&2; exit 125; fi',
    `  ${tools.sleep} 0.005`,
    "done",
    `exec ${tools.env}${unset.map((n) => ` -u ${n}`).join("")} -- "$@"`,
  );
  return lines.join("\n");
}

let featureCache: Map<string, Promise<{ disableUserns: boolean }>> | undefined;
function bwrapFeatures(bwrap: string): Promise<{ disableUserns: boolean }> {
  featureCache ??= new Map();
  let p = featureCache.get(bwrap);
  if (!p) {
    p = new Promise((resolve) => {
      execFile(bwrap, ["--help"], { timeout: 5000 }, (_err, stdout, stderr) => {
        resolve({ disableUserns: `${stdout}${stderr}`.includes("--disable-userns") });
      });
    });
    featureCache.set(bwrap, p);
  }
  return p;
}

function run(file: string, args: string[], timeoutMs: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe"], env: {}, timeout: timeoutMs });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString();
    });
    child.on("error", (e) => resolve({ code: null, stderr: errorMessage(e) }));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

class BwrapBackend implements SandboxBackend {
  readonly name = "bwrap" as const;
  constructor(private readonly opts: BwrapOptions) {}

  private find(name: string): string | undefined {
    return which(name, this.opts.host.path);
  }

  private bwrapPath(): string | undefined {
    return this.find(this.opts.bwrapPath ?? "bwrap");
  }

  async check(): Promise<{ ok: true } | { ok: false; reason: string }> {
    const bwrap = this.bwrapPath();
    if (!bwrap) return { ok: false, reason: `bubblewrap (bwrap) is not installed. ${BWRAP_INSTALL_HINT}` };
    const { disableUserns } = await bwrapFeatures(bwrap);
    const ids = sandboxIds(process.getuid?.() ?? 1000, process.getgid?.() ?? 1000);
    // Real paths: a PATH folder may sit under a folder the sandbox hides (/tmp, a home).
    const trueBin = realOrResolved(this.find("true") ?? "/bin/true");
    const args = [
      "--unshare-all",
      "--unshare-user",
      "--uid",
      String(ids.uid),
      "--gid",
      String(ids.gid),
      ...(disableUserns ? ["--disable-userns"] : []),
      "--cap-drop",
      "ALL",
      "--die-with-parent",
      "--new-session",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/tmp",
      "--",
      trueBin,
    ];
    const r = await run(bwrap, args, 10_000);
    if (r.code === 0) return { ok: true };
    const detail = r.stderr.trim().split("\n").slice(-3).join(" ") || `exit code ${r.code ?? "(killed)"}`;
    return { ok: false, reason: `bubblewrap cannot create a sandbox here (${detail}). ${USERNS_HINT}` };
  }

  async prepare(req: SandboxRequest): Promise<PreparedSandbox> {
    const bwrap = this.bwrapPath();
    if (!bwrap) throw new ConfigurationError(`sandbox: bwrap needs bubblewrap, which is not installed. ${BWRAP_INSTALL_HINT}`);
    const { layout, log } = req;
    const { workspace, writable } = writablePaths(layout);

    const features = await bwrapFeatures(bwrap);
    const net = await setUpNetwork({ network: req.network, gateway: req.gateway, log, baseDir: this.opts.privateBase });
    let privateDir: string | undefined;
    try {
      let tools: { socat: string; sleep: string; env: string } | undefined;
      if (net.forwards.length) {
        const socat = this.find("socat");
        if (!socat) throw new ConfigurationError(`network: ${req.network.mode} needs socat on the runner, which is not installed. ${SOCAT_INSTALL_HINT}`);
        tools = { socat: realOrResolved(socat), sleep: realOrResolved(this.find("sleep") ?? "/bin/sleep"), env: realOrResolved(this.find("env") ?? "/usr/bin/env") };
      }

      const hiddenDirs = hiddenHostDirs(this.opts.host);
      const underHidden = (p: string) => hiddenDirs.some((h) => isStrictlyUnder(p, h));

      // Read-only paths: only those inside a hidden folder need binding back;
      // one that would re-expose a hidden folder whole is refused.
      const readOnly = new Set<string>();
      const extraRo = tools ? [tools.socat, tools.sleep, tools.env].map(realOrResolved) : [];
      for (const raw of [...layout.readOnlyPaths, ...extraRo]) {
        const p = realOrResolved(raw);
        if (!fs.existsSync(p)) {
          log.debug(`sandbox: read-only path ${p} does not exist; skipped`);
          continue;
        }
        const exposed = hiddenDirs.find((h) => isSameOrUnder(h, p));
        if (exposed) {
          log.warning(`sandbox: read-only path ${p} would expose ${exposed}, which holds runner secrets; it is not mounted`);
          continue;
        }
        if (underHidden(p) && !writable.some((w) => isSameOrUnder(p, w))) readOnly.add(p);
      }
      if (req.network.mode === "open") {
        // DNS: /etc/resolv.conf often points into /run (systemd-resolved).
        const resolv = realOrResolved("/etc/resolv.conf");
        if (resolv !== "/etc/resolv.conf" && underHidden(resolv) && fs.existsSync(resolv)) readOnly.add(resolv);
      }

      privateDir = makePrivateDir("agent-runner-sbx-", this.opts.privateBase);
      const overlays: Mount[] = [];
      const bound = [...writable, ...readOnly];
      const visible = (p: string) => !underHidden(p) || bound.some((w) => isSameOrUnder(p, w));
      const masks = maskGitCredentials({ workspace, privateDir, fileMode: 0o600, visible, log, extraConfigs: systemGitConfigs(), ...(req.workspaceWalk ? { walk: req.workspaceWalk } : {}) });
      for (const o of masks) overlays.push({ op: "ro", ...o });
      const cloudMasks = maskCloudCredentialFiles({ workspace, named: req.credentialFiles ?? [], privateDir, fileMode: 0o600, visible, log });
      for (const o of cloudMasks) overlays.push({ op: "ro", ...o });
      const ids = sandboxIds(process.getuid?.() ?? 1000, process.getgid?.() ?? 1000);
      const pw = passwdFiles(ids.uid, ids.gid, realOrResolved(layout.home));
      fs.writeFileSync(path.join(privateDir, "passwd"), pw.passwd, { mode: 0o644 });
      fs.writeFileSync(path.join(privateDir, "group"), pw.group, { mode: 0o644 });
      overlays.push({ op: "ro", src: path.join(privateDir, "passwd"), dest: "/etc/passwd" });
      overlays.push({ op: "ro", src: path.join(privateDir, "group"), dest: "/etc/group" });

      // A hidden folder inside another needs its own tmpfs only when a bound
      // path would show it.
      const hides = hiddenDirs.filter((h) => !underHidden(h) || bound.some((b) => isStrictlyUnder(h, b)));
      const mounts = orderMounts([
        ...hides.map((d): Mount => ({ op: "hide", dest: d })),
        ...hiddenHostFiles().map((f): Mount => ({ op: "ro", src: "/dev/null", dest: f })),
        ...[...readOnly].map((p): Mount => ({ op: "ro", src: p, dest: p })),
        ...writable.map((p): Mount => ({ op: "rw", src: p, dest: p })),
        ...overlays,
      ]);
      const plan: BwrapPlan = {
        ...ids,
        isolatedNetwork: net.isolated,
        disableUserns: features.disableUserns,
        mounts,
        bridgeDir: net.bridgeDir,
      };
      log.debug(
        `sandbox: bwrap, network ${req.network.mode}, uid ${plan.uid}, hidden ${hiddenDirs.join(" ")}, writable ${writable.join(" ")}`,
      );
      return new PreparedBwrap(bwrap, plan, net, tools, privateDir, log, realOrResolved(this.find("env") ?? "/usr/bin/env"));
    } catch (e) {
      await net.close();
      if (privateDir) fs.rmSync(privateDir, { recursive: true, force: true });
      throw e;
    }
  }
}

class PreparedBwrap implements PreparedSandbox {
  readonly name = "bwrap" as const;
  constructor(
    private readonly bwrap: string,
    readonly plan: BwrapPlan,
    private readonly net: NetworkPlan,
    private readonly tools: { socat: string; sleep: string; env: string } | undefined,
    private readonly privateDir: string,
    private readonly log: Logger,
    private readonly envBin: string,
  ) {}

  wrap(cmd: SpawnSpec): SpawnSpec {
    const cwd = realOrResolved(cmd.cwd);
    const args = buildBwrapArgs(this.plan, cwd);
    args.push("--");
    if (this.tools && this.net.forwards.length) {
      const dropped = Object.keys(cmd.env).filter((n) => !NAME_OK.test(n));
      if (dropped.length) {
        this.log.warning(`sandbox: environment variables with names that are not shell identifiers are not passed to the agent: ${dropped.join(", ")}`);
      }
      const unset = ["PWD", "OLDPWD"].filter((n) => !(n in cmd.env));
      args.push("/bin/sh", "-c", bridgeScript(this.net.forwards, this.tools, unset), "agent-runner-sandbox", cmd.file, ...cmd.args);
    } else if (!("PWD" in cmd.env)) {
      // bwrap sets PWD after --chdir; take it out again.
      args.push(this.envBin, "-u", "PWD", "--", cmd.file, ...cmd.args);
    } else {
      args.push(cmd.file, ...cmd.args);
    }
    return { file: this.bwrap, args, cwd: cmd.cwd, env: { ...cmd.env } };
  }

  reachable(url: string): string {
    return this.net.mode === "none" ? url : reachableUrl(url, this.net);
  }

  /** Variables the runner merges into the agent's env (proxy settings for allowlist/model-only). */
  env(): Record<string, string> {
    return { ...this.net.env };
  }

  blockedAttempts(): { host: string; detail?: string }[] {
    return this.net.blockedAttempts();
  }

  async cleanup(): Promise<void> {
    await this.net.close();
    fs.rmSync(this.privateDir, { recursive: true, force: true });
  }
}

export function createBwrapBackend(opts: BwrapOptions): SandboxBackend {
  return new BwrapBackend(opts);
}
