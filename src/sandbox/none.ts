/**
 * No isolation: the agent runs on the runner as the runner's user, with only
 * an isolated HOME and an allowlisted environment. Not a security boundary.
 */
import { cloudCredentialFiles, exposedGitCredentials } from "./hostfs.js";
import type { PreparedSandbox, SandboxBackend, SandboxRequest } from "./types.js";

export const noneSandbox: SandboxBackend = {
  name: "none",
  check: async () => ({ ok: true }),
  prepare: async (req: SandboxRequest): Promise<PreparedSandbox> => {
    req.log.warning(
      "sandbox: none is not a security boundary: the agent can read and write anything the runner's user can, and reach the network. Use sandbox: bwrap (or auto) for untrusted tasks.",
    );
    // Warned, not refused: without a sandbox the agent can read far more than
    // these files (the runner's RUNNER_TEMP, the action's own /proc/<pid>/environ),
    // so refusing here would promise a protection `none` cannot give, and
    // `none` is the workflow's explicit choice.
    for (const { file, found } of exposedGitCredentials(req.layout.workspace, req.workspaceWalk))
      req.log.warning(`sandbox: none: the agent can read ${found.join(", ")} in ${file}. Check out with \`persist-credentials: false\`, or use a sandbox.`);
    for (const file of cloudCredentialFiles(req.layout.workspace, req.credentialFiles ?? []))
      req.log.warning(`sandbox: none: the agent can read the cloud credentials file ${file}. Use a sandbox, which hides it.`);
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
