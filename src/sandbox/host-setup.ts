/**
 * On GitHub-hosted runners bubblewrap may be missing, and Ubuntu 24.04 blocks
 * unprivileged user namespaces through AppArmor. The runner user has
 * passwordless sudo there, so we fix both — and say so in the log — before
 * giving up on the sandbox. Never attempted anywhere else.
 */
import { execFile } from "node:child_process";
import type { Logger } from "../logger.js";

export type Exec = (file: string, args: string[]) => Promise<void>;

const execQuiet: Exec = (file, args) =>
  new Promise((resolve, reject) => execFile(file, args, { timeout: 180_000 }, (err) => (err ? reject(err) : resolve())));

/** The commands that make bwrap usable on a GitHub-hosted Ubuntu runner. */
const HOST_SETUP_STEPS: { why: string; file: string; args: string[] }[] = [
  { why: "install bubblewrap and socat", file: "sudo", args: ["-n", "apt-get", "install", "-y", "-qq", "bubblewrap", "socat"] },
  {
    why: "allow unprivileged user namespaces (Ubuntu 24.04 AppArmor restriction)",
    file: "sudo",
    args: ["-n", "sysctl", "-w", "kernel.apparmor_restrict_unprivileged_userns=0"],
  },
];

export async function setUpGitHubRunner(log: Logger, exec: Exec = execQuiet): Promise<void> {
  for (const step of HOST_SETUP_STEPS) {
    log.info(`Sandbox setup on this GitHub-hosted runner: ${step.why} (${step.file} ${step.args.join(" ")})`);
    await exec(step.file, step.args).catch((e: unknown) => log.warning(`Sandbox setup step failed (${step.why}): ${String(e)}`));
  }
}
