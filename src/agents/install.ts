/**
 * Finds the agent's executable: the command's own program, a preinstalled CLI
 * on PATH, or (for npm backends) a pinned version in the tool cache.
 */
import { accessSync, constants, realpathSync } from "node:fs";
import path from "node:path";
import { ConfigurationError } from "../errors.js";
import type { Agent } from "../config/schema.js";
import type { AgentBackend, InstalledAgent } from "./types.js";

export interface InstallContext {
  /** PATH to search for preinstalled CLIs and commands. */
  searchPath: string;
  cwd: string;
}

export function findOnPath(bin: string, searchPath: string, cwd: string): string | undefined {
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
  if (backend.name === "command") {
    const program = agent.command?.[0] ?? "";
    const found = findOnPath(program, ctx.searchPath, ctx.cwd);
    if (!found) throw new ConfigurationError(`Input 'agent-command': program '${program}' was not found on PATH or is not executable.`);
    return { binPath: found, version: "n/a", readOnlyPaths: [path.dirname(realpathSync(found))] };
  }
  const pkg = backend.npmPackage;
  if (!pkg) throw new ConfigurationError(`Input 'agent': backend '${backend.name}' has no installer.`);
  const found = findOnPath(pkg.bin, ctx.searchPath, ctx.cwd);
  if (agent.version === "preinstalled" || found) {
    if (!found)
      throw new ConfigurationError(`Input 'agent-version': 'preinstalled' but '${pkg.bin}' is not on PATH. Install ${pkg.name} in an earlier step, or leave agent-version empty.`);
    return { binPath: found, version: agent.version ?? "preinstalled", readOnlyPaths: [path.dirname(path.dirname(realpathSync(found)))] };
  }
  throw new ConfigurationError(`Input 'agent-version': installing ${pkg.name} is not supported yet; install it in an earlier step and set agent-version: preinstalled.`);
}
