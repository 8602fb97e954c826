/**
 * What the sandbox backends need to know about the runner, read once by
 * src/config/host.ts: where to find their tools, which host folders hold
 * runner secrets, and how the Docker CLI reaches its daemon.
 */
export interface SandboxHost {
  /** PATH searched for bwrap, socat, docker and the few tools the sandbox starts. */
  path: string;
  /** The runner user's HOME: hidden from the agent; the Docker CLI's config lives under it. */
  home?: string;
  /** RUNNER_TEMP: hidden (actions/checkout's credentials, the runner's file commands). */
  runnerTemp?: string;
  /** RUNNER_WORKSPACE: its parent, the runner's `_work` folder, is hidden. */
  runnerWorkspace?: string;
  /**
   * Cloud credentials files the runner's environment names (GOOGLE_APPLICATION_CREDENTIALS,
   * AWS_WEB_IDENTITY_TOKEN_FILE, AZURE_FEDERATED_TOKEN_FILE, …: shared/cloud.ts): hidden
   * from the agent wherever it could see them.
   */
  credentialFiles?: string[];
  /**
   * The runner's cloud credential variables (shared/cloud.ts names: AWS_*, GOOGLE_*, AZURE_*, …),
   * for the model gateway's signers only; never the agent's.
   */
  cloudEnv?: Record<string, string>;
  /** The runner's DOCKER_HOST, DOCKER_CONTEXT, …: how the Docker CLI finds its daemon. */
  dockerEnv: Record<string, string>;
  /** A GitHub-hosted runner, where bubblewrap may be installed and AppArmor relaxed with sudo. */
  githubHosted: boolean;
}
