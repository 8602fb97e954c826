/**
 * No isolation: the agent runs on the runner as the runner's user, with only
 * an isolated HOME and an allowlisted environment. Not a security boundary.
 */
import type { PreparedSandbox, SandboxBackend, SandboxRequest } from "./types.js";

export const noneSandbox: SandboxBackend = {
  name: "none",
  check: async () => ({ ok: true }),
  prepare: async (req: SandboxRequest): Promise<PreparedSandbox> => {
    req.log.warning(
      "sandbox: none is not a security boundary: the agent can read and write anything the runner's user can, and reach the network. Use sandbox: bwrap (or auto) for untrusted tasks.",
    );
    if (req.network.mode !== "open")
      req.log.warning(`network: ${req.network.mode} is not enforced without a sandbox.`);
    return {
      name: "none",
      wrap: (cmd) => cmd,
      reachable: (url) => url,
      env: () => ({}),
      blockedAttempts: () => [],
      cleanup: async () => {},
    };
  },
};
