/** Sandbox backends by name, and the choice `auto` makes. One line per backend. */
import type { Logger } from "../logger.js";
import { ConfigurationError } from "../errors.js";
import { createBwrapBackend } from "./bwrap.js";
import { createDockerBackend } from "./docker.js";
import { setUpGitHubRunner } from "./host-setup.js";
import { noneSandbox } from "./none.js";
import type { SandboxBackend, SandboxHost, SandboxName } from "./types.js";

const BACKENDS: Record<SandboxName, (host: SandboxHost) => SandboxBackend> = {
  none: () => noneSandbox,
  bwrap: (host) => createBwrapBackend({ host }),
  docker: (host) => createDockerBackend({ host }),
};

/** `auto` prefers bwrap and falls back to none with a visible warning. */
export async function chooseSandbox(choice: SandboxName | "auto", log: Logger, host: SandboxHost): Promise<SandboxBackend> {
  const bwrap = BACKENDS.bwrap(host);
  if ((choice === "bwrap" || choice === "auto") && host.githubHosted && !(await bwrap.check()).ok) await setUpGitHubRunner(log);
  if (choice !== "auto") {
    const backend = BACKENDS[choice](host);
    const check = await backend.check();
    if (!check.ok) throw new ConfigurationError(`Input 'sandbox': '${choice}' cannot run here: ${check.reason}`);
    return backend;
  }
  const check = await bwrap.check();
  if (check.ok) return bwrap;
  log.warning(`sandbox: auto could not use bwrap (${check.reason}); falling back to sandbox: none, which is NOT a security boundary.`);
  return noneSandbox;
}
