/** Sandbox backends by name, and the choice `auto` makes. One line per backend. */
import type { Logger } from "../logger.js";
import { ConfigurationError } from "../errors.js";
import { bwrapBackend } from "./bwrap.js";
import { dockerBackend } from "./docker.js";
import { setUpGitHubRunner } from "./host-setup.js";
import { noneSandbox } from "./none.js";
import type { SandboxBackend, SandboxName } from "./types.js";

const BACKENDS: Record<SandboxName, SandboxBackend> = {
  none: noneSandbox,
  bwrap: bwrapBackend,
  docker: dockerBackend,
};

export interface SandboxHost {
  /** A GitHub-hosted runner, where we may install bubblewrap and relax AppArmor with sudo. */
  githubHosted: boolean;
}

/** `auto` prefers bwrap and falls back to none with a visible warning. */
export async function chooseSandbox(choice: SandboxName | "auto", log: Logger, host: SandboxHost): Promise<SandboxBackend> {
  if (choice === "bwrap" || choice === "auto") {
    const first = await BACKENDS.bwrap.check();
    if (!first.ok && host.githubHosted) await setUpGitHubRunner(log);
  }
  if (choice !== "auto") {
    const backend = BACKENDS[choice];
    const check = await backend.check();
    if (!check.ok) throw new ConfigurationError(`Input 'sandbox': '${choice}' cannot run here: ${check.reason}`);
    return backend;
  }
  const check = await BACKENDS.bwrap.check();
  if (check.ok) return BACKENDS.bwrap;
  log.warning(`sandbox: auto could not use bwrap (${check.reason}); falling back to sandbox: none, which is NOT a security boundary.`);
  return noneSandbox;
}
