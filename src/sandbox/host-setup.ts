/**
 * On GitHub-hosted runners bubblewrap may be missing, and Ubuntu 24.04 blocks
 * unprivileged user namespaces through AppArmor. The runner user has
 * passwordless sudo there, so we fix both before giving up on the sandbox.
 * Never attempted anywhere else.
 *
 * Now that `sandbox: auto` fails closed, this setup must hold on its own:
 *
 * 1. install only the tools that are missing from the runner's PATH;
 * 2. when `apt-get install` fails (runner images ship stale package lists,
 *    and then the install 404s), run `apt-get update` and retry once — even
 *    when the update itself exits non-zero, because one broken third-party
 *    list makes it fail while Ubuntu's own lists were refreshed;
 * 3. relax the AppArmor restriction only when bwrap is there but cannot create
 *    a namespace and the restriction is switched on;
 * 4. verify with the bwrap backend's own check (the namespace it creates is the
 *    one the agent gets).
 *
 * Every step is logged with its duration; the outcome lists each step and its
 * result, so one error can say exactly what was tried.
 */
import { execFile } from "node:child_process";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import { which } from "./hostfs.js";
import type { SandboxHost } from "./types.js";

export interface ExecResult {
  ok: boolean;
  /** Last lines of stderr (or stdout) or the spawn error: why it failed, or what it printed. */
  output: string;
  exitCode: number | null;
}
export type Exec = (file: string, args: string[], timeoutMs: number) => Promise<ExecResult>;

export type BwrapCheck = () => Promise<{ ok: true } | { ok: false; reason: string }>;

export interface SetupOptions {
  log: Logger;
  /** Where bwrap, socat, sudo and sysctl are looked up (the runner's PATH). */
  host: Pick<SandboxHost, "path">;
  /** The bwrap backend's check: can it create the agent's namespace? */
  verify: BwrapCheck;
  exec?: Exec;
}

export interface SetupOutcome {
  ok: boolean;
  /** One line per step: the command, its result and how long it took. */
  steps: string[];
  /** When not ok: the bwrap backend's last reason. */
  reason?: string;
}

/** Tools the sandbox needs → the Debian/Ubuntu package that provides each. */
const PACKAGES: { tool: string; pkg: string }[] = [
  { tool: "bwrap", pkg: "bubblewrap" },
  { tool: "socat", pkg: "socat" },
];
const USERNS_SYSCTL = "kernel.apparmor_restrict_unprivileged_userns";
const APT_TIMEOUT_MS = 180_000;
const SYSCTL_TIMEOUT_MS = 10_000;

function tail(text: string): string {
  return text.trim().split("\n").slice(-2).join(" ").slice(0, 300);
}

function execWith(searchPath: string): Exec {
  // Only PATH: the action's own environment (tokens) never reaches sudo or apt.
  return (file, args, timeoutMs) =>
    new Promise((resolve) => {
      execFile(file, args, { timeout: timeoutMs, env: { PATH: searchPath, LANG: "C" } }, (err, stdout, stderr) => {
        if (!err) return resolve({ ok: true, output: tail(stdout), exitCode: 0 });
        const code = typeof err.code === "number" ? err.code : null;
        resolve({ ok: false, output: tail(stderr || stdout) || errorMessage(err), exitCode: code });
      });
    });
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

class Setup {
  readonly steps: string[] = [];
  private readonly exec: Exec;
  constructor(private readonly opts: SetupOptions) {
    this.exec = opts.exec ?? execWith(opts.host.path);
  }

  find(tool: string): string | undefined {
    return which(tool, this.opts.host.path);
  }

  /** Runs one command, logs it with its duration, records the line for the final report. */
  async step(why: string, file: string, args: string[], timeoutMs: number): Promise<ExecResult> {
    const started = Date.now();
    const r = await this.exec(file, args, timeoutMs);
    const result = r.ok ? "ok" : `failed (exit ${r.exitCode ?? "signal/timeout"}${r.output ? `: ${r.output}` : ""})`;
    const line = `${why}: \`${[file, ...args].join(" ")}\` → ${result} in ${seconds(Date.now() - started)}`;
    this.steps.push(line);
    if (r.ok) this.opts.log.info(`Sandbox setup on this GitHub-hosted runner: ${line}`);
    else this.opts.log.warning(`Sandbox setup on this GitHub-hosted runner: ${line}`);
    return r;
  }

  note(line: string): void {
    this.steps.push(line);
    this.opts.log.info(`Sandbox setup on this GitHub-hosted runner: ${line}`);
  }

  async verify(): Promise<{ ok: true } | { ok: false; reason: string }> {
    const started = Date.now();
    const r = await this.opts.verify();
    this.note(`verify that bwrap can create a namespace → ${r.ok ? "ok" : `no: ${r.reason}`} in ${seconds(Date.now() - started)}`);
    return r;
  }

  /** `apt-get install` of what is missing; on failure `apt-get update` and one retry. */
  async installMissing(): Promise<void> {
    const missing = PACKAGES.filter((p) => !this.find(p.tool));
    if (!missing.length) return this.note(`bwrap and socat are on PATH: nothing to install`);
    const pkgs = missing.map((p) => p.pkg);
    const install = ["-n", "apt-get", "install", "-y", "-qq", "--no-install-recommends", ...pkgs];
    const what = `install ${pkgs.join(" ")}`;
    if ((await this.step(what, "sudo", install, APT_TIMEOUT_MS)).ok) return;
    await this.step("refresh the package lists", "sudo", ["-n", "apt-get", "update", "-qq"], APT_TIMEOUT_MS);
    await this.step(`${what} (retry after apt-get update)`, "sudo", install, APT_TIMEOUT_MS);
  }

  /** Relax AppArmor's user-namespace restriction, only when it is switched on. */
  async relaxAppArmorIfOn(): Promise<boolean> {
    const sysctl = this.find("sysctl") ?? "sysctl";
    const current = await this.step("read the AppArmor user-namespace restriction", sysctl, ["-n", USERNS_SYSCTL], SYSCTL_TIMEOUT_MS);
    if (!current.ok || current.output.trim() !== "1") {
      this.note(`the AppArmor restriction is not switched on (${current.ok ? `value ${current.output.trim() || "empty"}` : "not present"}): left alone`);
      return false;
    }
    const set = await this.step("allow unprivileged user namespaces", "sudo", ["-n", "sysctl", "-w", `${USERNS_SYSCTL}=0`], SYSCTL_TIMEOUT_MS);
    return set.ok;
  }
}

export async function setUpGitHubRunner(opts: SetupOptions): Promise<SetupOutcome> {
  const setup = new Setup(opts);
  await setup.installMissing();
  if (!setup.find("bwrap")) {
    setup.note("bwrap is still not on PATH");
    return { ok: false, steps: setup.steps, reason: "bubblewrap (bwrap) is not installed" };
  }
  let check = await setup.verify();
  if (!check.ok && (await setup.relaxAppArmorIfOn())) check = await setup.verify();
  return check.ok ? { ok: true, steps: setup.steps } : { ok: false, steps: setup.steps, reason: check.reason };
}
