/**
 * The Docker sandbox: the agent runs in a throw-away container of the
 * `docker-image`, as the runner's uid:gid, with no capabilities, no new
 * privileges, a read-only root filesystem, and only the layout mounted (at
 * the same paths as on the host, so paths in prompts, traces and patches
 * agree).
 *
 * Environment: every variable is passed as `--env NAME` (name only); the
 * Docker CLI takes the value from its own environment, which is the spawned
 * SpawnSpec's env. So no value is ever in argv, and none is written to disk
 * either (an `--env-file` would put the secrets on disk for the length of
 * the run). Docker adds HOSTNAME (and PATH/HOME when they are not given).
 *
 * Network:
 *   none        `--network none`.
 *   model-only, allowlist
 *               `--network none` plus the same unix-socket bridge as bwrap
 *               (network.ts): the bridge folder is mounted at
 *               /run/agent-runner and a small node launcher in it listens on
 *               127.0.0.1:<gateway port> (and the proxy port) inside the
 *               container, then starts the agent. The image needs `node` on
 *               PATH (every supported agent CLI needs it anyway).
 *               Not `--add-host host.docker.internal:host-gateway`: the
 *               gateway listens on the host's loopback only, and a bridge
 *               network would give the container the whole internet.
 *   open        `--network host`: the host's network, gateway at the same URL.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import { isSameOrUnder, makePrivateDir, maskCloudCredentialFiles, maskGitCredentials, realOrResolved, which, writablePaths } from "./hostfs.js";
import { INSIDE_BRIDGE_DIR, reachableUrl, setUpNetwork, type NetworkPlan } from "./network.js";
import type { PreparedSandbox, SandboxBackend, SandboxHost, SandboxRequest, SpawnSpec } from "./types.js";

const DOCKER_HINT = "Start the Docker daemon (or install Docker), or use `sandbox: bwrap`.";

/** Node launcher run inside the container when the network is bridged. */
export const BRIDGE_LAUNCHER = `// Agent Runner: TCP 127.0.0.1:<port> -> unix socket bridges, then the agent.
import net from "node:net";
import os from "node:os";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";
const dir = path.dirname(fileURLToPath(import.meta.url));
const sep = process.argv.indexOf("--", 2);
const specs = process.argv.slice(2, sep);
const [file, ...args] = process.argv.slice(sep + 1);
await Promise.all(specs.map((spec) => new Promise((resolve, reject) => {
  const [port, sock] = spec.split("=");
  const server = net.createServer((c) => {
    const u = net.connect(path.join(dir, sock));
    c.on("error", () => u.destroy()); u.on("error", () => c.destroy());
    c.pipe(u).pipe(c);
  });
  server.on("error", reject);
  server.listen(Number(port), "127.0.0.1", resolve);
  server.unref();
})));
const child = spawn(file, args, { stdio: "inherit" });
for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(s, () => child.kill(s));
child.on("error", (e) => { console.error("agent-runner: " + e.message); process.exit(127); });
child.on("exit", (code, sig) => process.exit(code ?? 128 + (os.constants.signals[sig] ?? 0)));
`;

/** One `--mount` value; fields holding a comma or quote are CSV-quoted (Docker parses --mount as CSV). */
export function mountArg(source: string, target: string, readonly: boolean): string {
  const q = (f: string) => (/[",\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f);
  return ["type=bind", q(`source=${source}`), q(`target=${target}`), ...(readonly ? ["readonly"] : [])].join(",");
}

export interface DockerRunPlan {
  image: string;
  name: string;
  uid: number;
  gid: number;
  network: "none" | "host";
  /** [host path, container path, read-only]. */
  mounts: [string, string, boolean][];
  envNames: string[];
  cwd: string;
  command: string[];
}

/** The exact `docker run` argv (without the leading `docker`). */
export function buildDockerRunArgs(p: DockerRunPlan): string[] {
  const a = [
    "run",
    "--rm",
    "--interactive",
    "--init",
    "--name",
    p.name,
    "--user",
    `${p.uid}:${p.gid}`,
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--read-only",
    "--network",
    p.network,
  ];
  for (const n of p.envNames) a.push("--env", n);
  for (const [src, dst, ro] of p.mounts) a.push("--mount", mountArg(src, dst, ro));
  a.push("--workdir", p.cwd, "--", p.image, ...p.command);
  return a;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

function dockerInfo(docker: string): Promise<{ ok: boolean; detail: string }> {
  return new Promise((resolve) => {
    execFile(docker, ["info", "--format", "{{.ServerVersion}}"], { timeout: 20_000 }, (err, stdout, stderr) => {
      if (!err) resolve({ ok: true, detail: stdout.trim() });
      else resolve({ ok: false, detail: (stderr || errorMessage(err)).trim().split("\n").slice(-2).join(" ") });
    });
  });
}

export interface DockerOptions {
  /** Where the docker CLI is found, and what it needs to reach its daemon. */
  host: Pick<SandboxHost, "path" | "home" | "dockerEnv">;
  /** docker binary (default: found on the host's PATH). */
  dockerPath?: string;
  /** Folder for the bridge sockets and private copies (default os.tmpdir()). */
  privateBase?: string;
}

class DockerBackend implements SandboxBackend {
  readonly name = "docker" as const;
  constructor(private readonly opts: DockerOptions) {}

  private docker(): string | undefined {
    return this.opts.dockerPath ?? which("docker", this.opts.host.path);
  }

  async check(): Promise<{ ok: true } | { ok: false; reason: string }> {
    const docker = this.docker();
    if (!docker) return { ok: false, reason: `the docker CLI is not installed. ${DOCKER_HINT}` };
    const info = await dockerInfo(docker);
    if (!info.ok) return { ok: false, reason: `\`docker info\` failed (${info.detail}). ${DOCKER_HINT}` };
    return { ok: true };
  }

  async prepare(req: SandboxRequest): Promise<PreparedSandbox> {
    const docker = this.docker();
    if (!docker) throw new ConfigurationError(`sandbox: docker: the docker CLI is not installed. ${DOCKER_HINT}`);
    if (!req.dockerImage) throw new ConfigurationError("docker-image: required with sandbox: docker (an image with the agent's runtime, e.g. node:24-bookworm)");
    const { layout, log } = req;
    const { workspace, writable } = writablePaths(layout);

    const net = await setUpNetwork({ network: req.network, gateway: req.gateway, log, baseDir: this.opts.privateBase });
    let privateDir: string | undefined;
    try {
      privateDir = makePrivateDir("agent-runner-docker-", this.opts.privateBase);
      const mounts: [string, string, boolean][] = [];
      for (const w of new Set(writable)) mounts.push([w, w, false]);
      for (const raw of layout.readOnlyPaths) {
        const p = realOrResolved(raw);
        if (fs.existsSync(p) && !writable.some((w) => p === w)) mounts.push([p, p, true]);
      }
      // The container sees only what is mounted; the copies are readable by
      // any uid (Docker may map the container's user to another host uid).
      const mounted = mounts.map(([, dest]) => dest);
      const visible = (p: string) => mounted.some((m) => isSameOrUnder(p, m));
      for (const o of maskGitCredentials({ workspace, privateDir, fileMode: 0o644, visible, log, ...(req.workspaceWalk ? { walk: req.workspaceWalk } : {}) })) mounts.push([o.src, o.dest, true]);
      for (const o of maskCloudCredentialFiles({ workspace, named: req.credentialFiles ?? [], privateDir, fileMode: 0o644, visible, log })) mounts.push([o.src, o.dest, true]);
      if (net.bridgeDir) {
        fs.writeFileSync(path.join(net.bridgeDir, "bridge.mjs"), BRIDGE_LAUNCHER, { mode: 0o644 });
        mounts.push([net.bridgeDir, INSIDE_BRIDGE_DIR, true]);
      }
      // The agent gets its own HOME: the CLI must still find the runner's Docker config.
      const clientEnv: Record<string, string> = { ...this.opts.host.dockerEnv };
      clientEnv.DOCKER_CONFIG ??= path.join(this.opts.host.home ?? "/root", ".docker");
      log.debug(`sandbox: docker image ${req.dockerImage}, network ${req.network.mode}`);
      return new PreparedDocker(docker, req.dockerImage, mounts, net, clientEnv, privateDir, log, this.opts.host.path);
    } catch (e) {
      await net.close();
      if (privateDir) fs.rmSync(privateDir, { recursive: true, force: true });
      throw e;
    }
  }
}

class PreparedDocker implements PreparedSandbox {
  readonly name = "docker" as const;
  private readonly containers: string[] = [];
  constructor(
    private readonly docker: string,
    private readonly image: string,
    private readonly mounts: [string, string, boolean][],
    private readonly net: NetworkPlan,
    private readonly clientEnv: Record<string, string>,
    private readonly privateDir: string,
    private readonly log: Logger,
    private readonly searchPath: string,
  ) {}

  wrap(cmd: SpawnSpec): SpawnSpec {
    const bad = Object.keys(cmd.env).filter((n) => !ENV_NAME.test(n));
    if (bad.length) throw new ConfigurationError(`env: ${bad.map((n) => `'${n}'`).join(", ")} cannot be passed into a container (not a valid variable name)`);
    const clash = Object.keys(this.clientEnv).filter((n) => n in cmd.env);
    if (clash.length) this.log.warning(`sandbox: docker: ${clash.join(", ")} from the agent's env also steer the Docker CLI`);
    const name = `agent-runner-${randomBytes(6).toString("hex")}`;
    this.containers.push(name);
    const command = this.net.bridgeDir
      ? ["node", `${INSIDE_BRIDGE_DIR}/bridge.mjs`, ...this.net.forwards.map((f) => `${f.port}=${f.socket}`), "--", cmd.file, ...cmd.args]
      : [cmd.file, ...cmd.args];
    const args = buildDockerRunArgs({
      image: this.image,
      name,
      uid: process.getuid?.() ?? 1000,
      gid: process.getgid?.() ?? 1000,
      network: this.net.isolated ? "none" : "host",
      mounts: this.mounts,
      envNames: Object.keys(cmd.env),
      cwd: realOrResolved(cmd.cwd),
      command,
    });
    return { file: this.docker, args, cwd: cmd.cwd, env: { ...this.clientEnv, ...cmd.env } };
  }

  env(): Record<string, string> {
    return { ...this.net.env };
  }

  reachable(url: string): string {
    return this.net.mode === "none" ? url : reachableUrl(url, this.net);
  }

  blockedAttempts(): { host: string; detail?: string }[] {
    return this.net.blockedAttempts();
  }

  async cleanup(): Promise<void> {
    // Killing the docker CLI does not stop its container: remove them by name,
    // with the same client settings the containers were started with.
    await Promise.all(
      this.containers.map(
        (name) =>
          new Promise<void>((resolve) => {
            execFile(this.docker, ["rm", "--force", name], { timeout: 30_000, env: { PATH: this.searchPath, ...this.clientEnv } }, () => resolve());
          }),
      ),
    );
    await this.net.close();
    fs.rmSync(this.privateDir, { recursive: true, force: true });
  }
}

export function createDockerBackend(opts: DockerOptions): SandboxBackend {
  return new DockerBackend(opts);
}
