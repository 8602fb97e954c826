/**
 * Sandbox backends by name, and the choice `auto` makes.
 *
 * `auto` fails closed: bwrap (after the GitHub-hosted setup), else docker
 * (when a `docker-image` is set), else the step fails with one error that
 * says what was tried and why each failed. It never runs the agent
 * unsandboxed: `sandbox: none` is only ever the workflow's explicit choice.
 */
import type { Logger } from "../logger.js";
import { ConfigurationError } from "../errors.js";
import { createBwrapBackend } from "./bwrap.js";
import { createDockerBackend } from "./docker.js";
import { setUpGitHubRunner } from "./host-setup.js";
import { which } from "./hostfs.js";
import { noneSandbox } from "./none.js";
import type { SandboxBackend, SandboxHost, SandboxName } from "./types.js";

export interface ChooseOptions {
  /** Input `docker-image`: `auto` can use docker only with an image to run. */
  dockerImage?: string;
}

type Attempt = { ok: true; backend: SandboxBackend } | { ok: false; tried: string };

const OPT_OUT = "`sandbox: none` is the explicit opt-out (no isolation: not a security boundary).";

/** bwrap, preceded on GitHub-hosted runners by the setup when bwrap (or socat) is not ready. */
async function tryBwrap(host: SandboxHost, log: Logger): Promise<Attempt> {
  const bwrap = createBwrapBackend({ host });
  const check = await bwrap.check();
  const socatMissing = !which("socat", host.path);
  if (!host.githubHosted) return check.ok ? { ok: true, backend: bwrap } : { ok: false, tried: `bwrap: ${check.reason}` };
  if (check.ok && !socatMissing) return { ok: true, backend: bwrap };
  const setup = await setUpGitHubRunner({ log, host, verify: () => bwrap.check() });
  if (setup.ok) return { ok: true, backend: bwrap };
  return {
    ok: false,
    tried: [`bwrap: ${setup.reason ?? "not usable"}. The GitHub-hosted runner setup tried:`, ...setup.steps.map((s) => `      ${s}`)].join("\n"),
  };
}

async function tryDocker(host: SandboxHost): Promise<Attempt> {
  const docker = createDockerBackend({ host });
  const check = await docker.check();
  return check.ok ? { ok: true, backend: docker } : { ok: false, tried: `docker: ${check.reason}` };
}

export async function chooseSandbox(
  choice: SandboxName | "auto",
  log: Logger,
  host: SandboxHost,
  opts: ChooseOptions = {},
): Promise<SandboxBackend> {
  if (choice === "none") return noneSandbox;
  if (choice === "docker") {
    const docker = await tryDocker(host);
    if (docker.ok) return docker.backend;
    throw new ConfigurationError(`Input 'sandbox': 'docker' cannot run here: ${docker.tried.replace(/^docker: /, "")}`);
  }
  const bwrap = await tryBwrap(host, log);
  if (bwrap.ok) return bwrap.backend;
  if (choice === "bwrap") throw new ConfigurationError(`Input 'sandbox': 'bwrap' cannot run here: ${bwrap.tried.replace(/^bwrap: /, "")}\n${OPT_OUT}`);
  const docker: Attempt = opts.dockerImage
    ? await tryDocker(host)
    : { ok: false, tried: "docker: not tried, because `docker-image` is not set (auto uses docker only with an image to run)." };
  if (docker.ok) {
    log.info(`sandbox: auto uses docker (image ${opts.dockerImage}) because bwrap cannot run here.`);
    return docker.backend;
  }
  throw new ConfigurationError(
    [
      "Input 'sandbox': 'auto' found no sandbox that works on this runner, and it does not run the agent unsandboxed. Tried:",
      `  - ${bwrap.tried}`,
      `  - ${docker.tried}`,
      `Make bwrap or docker work (see docs/troubleshooting.md). ${OPT_OUT}`,
    ].join("\n"),
  );
}
