import type { Logger } from "../logger.js";

export type SandboxName = "none" | "bwrap" | "docker";
export type NetworkMode = "none" | "model-only" | "allowlist" | "open";

export interface NetworkPolicy {
  mode: NetworkMode;
  /** Extra hosts for `allowlist` (`*.example.com` wildcards, IPs, `localhost`). */
  allowedDomains: string[];
}

/** Host paths the agent may use. Everything else is the sandbox backend's business. */
export interface SandboxLayout {
  /** The repository, read-write (read-only with workspaceReadOnly). */
  workspace: string;
  /** A reviewing agent's workspace (threat detection's data): mounted read-only, never bound writable. */
  workspaceReadOnly?: boolean;
  /** The agent's isolated HOME, read-write, fresh per run. */
  home: string;
  /** The agent's TMPDIR, read-write, fresh per run. */
  tmp: string;
  /** AGENT_OUTPUT_DIR: files here are uploaded under outputs/. */
  outputsDir: string;
  /** Folders the agent must be able to read and execute (the CLI install, node). */
  readOnlyPaths: string[];
}

/** A process to start: exactly what is spawned on the host after wrapping. */
export interface SpawnSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** A host-side endpoint (model gateway) the agent must reach whatever the network policy. */
export interface HostEndpoint {
  host: string;
  port: number;
}

export type { SandboxHost } from "../shared/host.js";

/** The `.git` entries (folders or gitfiles) a bounded walk of a workspace found, and whether a limit stopped it (hostfs.ts). */
export interface DotGitWalk {
  /** The workspace's real path: a walk is good for this workspace only. */
  root: string;
  dotGits: string[];
  /** Set when a limit stopped the walk: what was not looked at (`count`: folders left unvisited). */
  stopped?: { limit: "depth" | "count"; detail: string };
}

export interface SandboxRequest {
  layout: SandboxLayout;
  network: NetworkPolicy;
  /** The model gateway on the host's loopback, when one runs. */
  gateway?: HostEndpoint;
  /** Cloud credentials files the runner's environment names (SandboxHost.credentialFiles): hidden like the workspace's gha-creds files. */
  credentialFiles?: string[];
  /** Image for the docker backend (input `docker-image`); other backends ignore it. */
  dockerImage?: string;
  /** The workspace's nested checkouts, found before the agent started (hostfs.ts walkWorkspaceForGit); walked here when absent. */
  workspaceWalk?: DotGitWalk;
  log: Logger;
}

export interface PreparedSandbox {
  readonly name: SandboxName;
  /** Turn the agent's command into what is spawned on the host. */
  wrap(cmd: SpawnSpec): SpawnSpec;
  /** Variables the sandbox needs the agent to have (proxy settings); merged into the agent's env. */
  env(): Record<string, string>;
  /** How a host URL (e.g. the gateway) is addressed from inside the sandbox. */
  reachable(url: string): string;
  /** Network attempts the sandbox blocked, collected so far. */
  blockedAttempts(): { host: string; detail?: string }[];
  cleanup(): Promise<void>;
}

export interface SandboxBackend {
  readonly name: SandboxName;
  /** Whether this backend can run here; `reason` says why not and how to fix it. */
  check(): Promise<{ ok: true } | { ok: false; reason: string }>;
  prepare(req: SandboxRequest): Promise<PreparedSandbox>;
}
