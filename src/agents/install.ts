/**
 * Finds or installs the agent's executable: the command's own program, a
 * preinstalled CLI on PATH (`agent-version: preinstalled`), or an npm
 * version (the pinned default when empty) installed once into the runner's
 * tool cache:
 *
 *   <tool cache>/agent-runner/<npm package>/<version>/node_modules/.bin/<bin>
 *   <tool cache>/agent-runner/<npm package>/<version>.complete   (marker, as @actions/tool-cache does)
 *
 * Across runs the folder travels through the Actions cache (keyed on
 * backend, package, version, OS and CPU) when that service is available.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, realpathSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Agent } from "../config/schema.js";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import { safeOutputsServerFiles, safeOutputTools } from "./common.js";
import type { AgentBackend, InstalledAgent, NpmPackage } from "./types.js";

/** Restores and saves an install folder across runs (the Actions cache on a runner). */
export interface InstallCache {
  /** True when the folder was restored. */
  restore(dir: string, key: string): Promise<boolean>;
  save(dir: string, key: string): Promise<void>;
}

export interface InstallContext {
  /** PATH to search for preinstalled CLIs, commands and npm. */
  searchPath: string;
  cwd: string;
  /** The runner's tool cache (RUNNER_TOOL_CACHE); default ~/.cache/agent-runner/tools. */
  toolCache?: string;
  /** Environment for npm (PATH is always searchPath). */
  env?: Record<string, string>;
  /** Cross-run cache; omitted when no cache service is configured. */
  cache?: InstallCache;
  log?: Logger;
  /** npm gets this long before it is killed. */
  npmTimeoutMs?: number;
}

function findOnPath(bin: string, searchPath: string, cwd: string): string | undefined {
  if (bin.includes("/")) {
    const full = path.resolve(cwd, bin);
    return isExecutable(full) ? full : undefined;
  }
  for (const dir of searchPath.split(":").filter(Boolean)) {
    const full = path.join(dir, bin);
    if (isExecutable(full)) return full;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function installAgent(backend: AgentBackend, agent: Agent, ctx: InstallContext): Promise<InstalledAgent> {
  const installed = await installAgentCli(backend, agent, ctx);
  // The safe-outputs MCP server runs inside the sandbox: the action's node and the server's one file must be readable there.
  if (backend.name === "command" || !safeOutputTools(agent).length) return installed;
  const { node, script } = safeOutputsServerFiles();
  return { ...installed, readOnlyPaths: [...installed.readOnlyPaths, realpathSync(node), realpathSync(script)] };
}

async function installAgentCli(backend: AgentBackend, agent: Agent, ctx: InstallContext): Promise<InstalledAgent> {
  const started = Date.now();
  if (backend.name === "command") {
    const program = agent.command?.[0] ?? "";
    const found = findOnPath(program, ctx.searchPath, ctx.cwd);
    if (!found) throw new ConfigurationError(`Input 'agent-command': program '${program}' was not found on PATH or is not executable.`);
    return { binPath: found, version: "n/a", readOnlyPaths: [path.dirname(realpathSync(found))] };
  }
  const pkg = backend.npmPackage;
  if (!pkg) throw new ConfigurationError(`Input 'agent': backend '${backend.name}' has no installer.`);
  if (agent.version === "preinstalled") {
    const found = findOnPath(pkg.bin, ctx.searchPath, ctx.cwd);
    if (!found)
      throw new ConfigurationError(`Input 'agent-version': 'preinstalled' but '${pkg.bin}' is not on PATH. Install ${pkg.name} in an earlier step, or leave agent-version empty.`);
    ctx.log?.info(`Agent CLI: using the preinstalled ${pkg.bin} at ${found}.`);
    return {
      binPath: found,
      version: "preinstalled",
      readOnlyPaths: [installRoot(realpathSync(found))],
      install: { source: "path", durationMs: Date.now() - started },
    };
  }
  return installFromNpm(backend.name, pkg, agent.version || pkg.defaultVersion, ctx);
}

/**
 * What the sandbox must let the CLI read: the whole node_modules it lives in
 * (launchers like codex.js load a platform package next to their own), else
 * the folder above its bin/.
 */
function installRoot(realBin: string): string {
  const i = realBin.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  return i >= 0 ? realBin.slice(0, i + `${path.sep}node_modules`.length) : path.dirname(path.dirname(realBin));
}

/** npm versions and dist-tags; nothing that could read as an option or a path. */
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;
/** Only an exact version names the same files forever; a tag (`latest`) is installed afresh. */
const EXACT = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;

async function installFromNpm(backendName: string, pkg: NpmPackage, version: string, ctx: InstallContext): Promise<InstalledAgent> {
  if (!VERSION.test(version))
    throw new ConfigurationError(`Input 'agent-version': '${version}' is not an npm version (e.g. ${pkg.defaultVersion}), a dist-tag, or 'preinstalled'.`);
  const started = Date.now();
  const root = path.join(ctx.toolCache ?? path.join(os.homedir(), ".cache", "agent-runner", "tools"), "agent-runner", pkg.name);
  const exact = EXACT.test(version);
  const dir = path.join(root, exact ? version : `${version}-${Date.now()}-${randomBytes(3).toString("hex")}`);
  const marker = `${dir}.complete`;
  const binPath = path.join(dir, "node_modules", ".bin", pkg.bin);
  const done = async (source: "tool-cache" | "actions-cache" | "npm"): Promise<InstalledAgent> => {
    const durationMs = Date.now() - started;
    const actual = (await installedVersion(dir, pkg.name)) ?? version;
    const how = source === "tool-cache" ? "found in the tool cache" : source === "actions-cache" ? "restored from the Actions cache" : "installed with npm";
    ctx.log?.info(`Agent CLI ${pkg.name}@${actual} ${how} in ${(durationMs / 1000).toFixed(1)} s (${dir}).`);
    return { binPath, version: actual, readOnlyPaths: [dir], install: { source, durationMs } };
  };

  if (exact && existsSync(marker) && isExecutable(binPath)) return done("tool-cache");

  const cacheKey = `agent-runner-${backendName}-${pkg.name}-${version}-${process.platform}-${process.arch}`;
  if (exact && ctx.cache) {
    const restored = await ctx.cache.restore(dir, cacheKey).catch((e: unknown) => {
      ctx.log?.warning(`Restoring ${pkg.name}@${version} from the Actions cache failed (installing with npm instead): ${errorMessage(e)}`);
      return false;
    });
    if (restored && isExecutable(binPath)) {
      await writeFile(marker, "");
      return done("actions-cache");
    }
  }

  await npmInstallInto(dir, `${pkg.name}@${version}`, ctx);
  if (!isExecutable(binPath))
    throw new ConfigurationError(`Input 'agent-version': npm installed ${pkg.name}@${version} but it has no '${pkg.bin}' program (looked for ${binPath}).`);
  if (exact) {
    await writeFile(marker, "");
    if (ctx.cache)
      // Saving is a courtesy to the next run: a full or read-only cache must not fail this one.
      await ctx.cache.save(dir, cacheKey).catch((e: unknown) => ctx.log?.debug(`Saving ${pkg.name}@${version} to the Actions cache skipped: ${errorMessage(e)}`));
  }
  return done("npm");
}

/**
 * `npm install --prefix` into a fresh folder next to `dir` (with the runner's
 * global and user npm config still in effect), then one rename:
 * a half-finished install is never mistaken for a complete one, and two runs
 * installing at once both end up with a whole folder.
 */
async function npmInstallInto(dir: string, spec: string, ctx: InstallContext): Promise<void> {
  const npm = findOnPath("npm", ctx.searchPath, ctx.cwd);
  if (!npm) throw new ConfigurationError(`Input 'agent-version': npm is not on PATH, so ${spec} cannot be installed. Set up Node.js first, or use agent-version: preinstalled.`);
  const staging = `${dir}.partial-${process.pid}-${randomBytes(4).toString("hex")}`;
  await mkdir(staging, { recursive: true });
  try {
    // A package.json of our own keeps npm from walking up to some parent project.
    await writeFile(path.join(staging, "package.json"), JSON.stringify({ name: "agent-runner-tool", private: true }) + "\n");
    const env = await withMachineGlobalConfig(npm, { ...(ctx.env ?? {}), PATH: ctx.searchPath }, staging, ctx.log);
    const args = ["install", "--prefix", staging, "--no-audit", "--no-fund", "--no-update-notifier", "--no-package-lock", "--loglevel=error", spec];
    const { code, output } = await run(npm, args, env, staging, ctx.npmTimeoutMs ?? 10 * 60_000);
    if (code !== 0)
      throw new ConfigurationError(`Input 'agent-version': 'npm install ${spec}' failed (${code === null ? "timed out" : `exit code ${code}`}): ${tail(output)}`);
    // Another run finished the same install meanwhile: keep theirs.
    if (existsSync(`${dir}.complete`)) return;
    // Leftovers of an install that died half-way.
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir).catch(async (e: unknown) => {
      // Another run finished the same install first: use theirs.
      if (!existsSync(`${dir}.complete`)) throw e;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * npm reads its global npmrc from `<prefix>/etc/npmrc`, so `--prefix <staging>`
 * would make it look in the staging folder and drop the runner's own global
 * config: the registry mirror, `cafile` for a TLS-inspecting proxy, auth.
 * Asking npm where that file is (without `--prefix`) and naming it keeps it;
 * the user npmrc (HOME, npm_config_userconfig) is not tied to the prefix.
 */
async function withMachineGlobalConfig(npm: string, env: Record<string, string>, cwd: string, log: Logger | undefined): Promise<Record<string, string>> {
  // Set by the runner already: npm uses it whatever the prefix.
  if (Object.keys(env).some((k) => k.toLowerCase() === "npm_config_globalconfig")) return env;
  const { code, stdout, output } = await run(npm, ["config", "get", "globalconfig"], env, cwd, 60_000);
  const file = stdout.trim().split("\n").at(-1)?.trim() ?? "";
  if (code !== 0 || !path.isAbsolute(file)) {
    log?.debug(`Could not ask npm for its global npmrc (${code === null ? "timed out" : `exit code ${code}`}: ${tail(output)}); installing without it.`);
    return env;
  }
  return { ...env, npm_config_globalconfig: file };
}

function run(file: string, args: string[], env: Record<string, string>, cwd: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let stdout = "";
    const keep = (d: Buffer) => (output = (output + d.toString("utf8")).slice(-8000));
    child.stdout.on("data", (d: Buffer) => {
      stdout = (stdout + d.toString("utf8")).slice(-8000);
      keep(d);
    });
    child.stderr.on("data", keep);
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, output: e.message });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, output });
    });
  });
}

function tail(output: string): string {
  const lines = output.split("\n").map((l) => l.trim()).filter(Boolean);
  return lines.slice(-6).join(" | ").slice(-1200) || "no output";
}

async function installedVersion(dir: string, name: string): Promise<string | undefined> {
  try {
    const pkg = JSON.parse(await readFile(path.join(dir, "node_modules", name, "package.json"), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}

/** Install settings from the host: the tool cache, npm's environment, the Actions cache when configured. */
export function hostInstallOptions(host: { toolCache?: string; installEnv?: Record<string, string>; actionsCache?: boolean }): Pick<InstallContext, "toolCache" | "env" | "cache"> {
  return {
    ...(host.toolCache ? { toolCache: host.toolCache } : {}),
    ...(host.installEnv ? { env: host.installEnv } : {}),
    ...(host.actionsCache ? { cache: actionsInstallCache() } : {}),
  };
}

/** The Actions cache, loaded only when a run uses it (it is a large module). */
function actionsInstallCache(): InstallCache {
  return {
    async restore(dir, key) {
      const cache = await import("@actions/cache");
      return (await cache.restoreCache([dir], key)) !== undefined;
    },
    async save(dir, key) {
      const cache = await import("@actions/cache");
      await cache.saveCache([dir], key);
    },
  };
}
