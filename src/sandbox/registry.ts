/** Sandbox backends by name, and the choice `auto` makes. One line per backend. */
import type { Logger } from "../logger.js";
import { ConfigurationError } from "../errors.js";
import { noneSandbox } from "./none.js";
import type { SandboxBackend, SandboxName } from "./types.js";

const BACKENDS: Partial<Record<SandboxName, SandboxBackend>> = {
  none: noneSandbox,
};

/** `auto` prefers bwrap and falls back to none with a visible warning. */
export async function chooseSandbox(choice: SandboxName | "auto", log: Logger): Promise<SandboxBackend> {
  if (choice !== "auto") {
    const backend = BACKENDS[choice];
    if (!backend) throw new ConfigurationError(`Input 'sandbox': '${choice}' is not supported yet; use sandbox: none.`);
    const check = await backend.check();
    if (!check.ok) throw new ConfigurationError(`Input 'sandbox': '${choice}' cannot run here: ${check.reason}`);
    return backend;
  }
  const bwrap = BACKENDS.bwrap;
  if (bwrap) {
    const check = await bwrap.check();
    if (check.ok) return bwrap;
    log.warning(`sandbox: auto could not use bwrap (${check.reason}); falling back to sandbox: none, which is NOT a security boundary.`);
  } else {
    log.warning("sandbox: auto has no isolating sandbox in this build; falling back to sandbox: none, which is NOT a security boundary.");
  }
  return noneSandbox;
}
