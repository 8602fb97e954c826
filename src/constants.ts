/**
 * Names users type, in one place: every input and output of the action, with
 * its description and contract default. action.yml and the README reference
 * are generated from this table (`npm run build`), and a test checks both.
 */
export interface InputSpec {
  description: string;
  default?: string;
  required?: boolean;
}

export const INPUTS = {
  agent: { description: "Agent backend: `claude`, `codex`, `opencode`, `gemini`, or `command`.", required: true },
  "agent-version": {
    description: "npm version of the agent CLI. Defaults to the version pinned and tested for the backend; `preinstalled` uses the CLI found on PATH.",
  },
  "agent-command": { description: "For `agent: command`: the command line to run (shell words). The prompt arrives on stdin." },
  model: { description: "Model id. Defaults to the backend's default." },
  "base-url": {
    description: "Model API base URL (a gateway, a proxy, a local server), as the provider's SDK takes it: Anthropic and Gemini without a version path, OpenAI-style with `/v1`.",
  },
  prompt: { description: "The task. On comment triggers, defaults to the comment text after the trigger phrase." },
  "prompt-file": { description: "Path of a file holding the prompt (instead of `prompt`)." },
  instructions: { description: "Standing instructions, written to the agent's instruction file." },
  "instructions-file": { description: "Path of a file holding the instructions." },
  "mcp-servers": { description: "MCP servers, JSON or YAML: name → `{command, args, env}` or `{url, headers}`." },
  skills: { description: "Newline-separated folders that each hold a `SKILL.md`." },
  permissions: {
    description: "Permission policy, YAML or JSON: `default: allow|ask|deny` plus `allow`/`ask`/`deny` lists of tools (`bash`, `write`, `edit`, `read`, `webfetch`, `mcp__server__tool`, optionally `tool(pattern)`).",
  },
  "agent-args": { description: "Extra CLI arguments for the agent: a JSON array or shell words." },
  "output-schema": { description: "JSON Schema (inline or a file path); the result goes to output `structured-output`." },
  "max-turns": { description: "Turn limit, where the backend has one." },
  "timeout-minutes": { description: "Hard time limit for the agent's whole process tree, in minutes (fractions allowed).", default: "30" },
  "config-file": {
    description: "YAML file with the same settings (keys are input names). Defaults to `.github/agent-runner.yml` when present; inputs set in the step override it.",
  },
  env: { description: "`NAME=value` lines passed to the agent." },
  "forward-env": { description: "Names of runner environment variables to pass to the agent (newline- or comma-separated)." },
  secrets: {
    description: "`NAME=value` lines: masked, redacted from every output, never written to disk. Model API keys are held by the gateway and never enter the sandbox.",
  },
  strict: {
    description: "When `true`, an option the backend cannot honour is an error; when `false`, a warning.",
    default: "true",
  },
  sandbox: { description: "Sandbox: `auto`, `bwrap`, `docker`, `none`.", default: "auto" },
  network: { description: "Network policy for the agent: `none`, `model-only`, `allowlist`, `open`.", default: "model-only" },
  "allowed-domains": {
    description: "Extra hosts for `network: allowlist`, newline- or comma-separated; `*.example.com` wildcards; an IP or `localhost` allowed.",
  },
  "docker-image": { description: "Image for `sandbox: docker`." },
  "working-directory": { description: "Repository folder the agent works in.", default: "." },
  session: { description: "`new`, `continue` (resume this issue/PR's last session), or a session id to resume.", default: "new" },
  "fork-session": { description: "Resume into a new session id instead of extending the old one.", default: "false" },
  "trigger-phrase": { description: "Phrase that triggers the agent in comments; `/agent` at the start of a comment also works.", default: "@agent" },
  "allowed-users": { description: "Extra users who may trigger without write access (risky: they control what the agent does)." },
  "allowed-bots": { description: "Bot logins allowed to trigger (none by default)." },
  "github-token": { description: "Token for the GitHub API and git pushes. Never given to the agent.", default: "${{ github.token }}" },
  phase: {
    description: "`run` (agent only, results to an artifact), `publish` (deliver a run's artifact), or `all`.",
    default: "all",
  },
  deliver: { description: "How the result is delivered: `auto`, `comment`, `commit`, `pull-request`, `none`.", default: "auto" },
  comment: { description: "Progress comment: `sticky` (one comment, edited), `new`, `none`.", default: "sticky" },
  "branch-prefix": { description: "Prefix of branches the action pushes.", default: "agent/" },
  "base-branch": { description: "Base branch for pull requests. Defaults to the repository's default branch." },
  draft: { description: "Open pull requests as drafts.", default: "true" },
  "allow-workflow-changes": {
    description: "Deliver patches that touch `.github/workflows/` (refused unless `true`).",
    default: "false",
  },
  "upload-artifacts": { description: "Upload the trace, patch and outputs as a workflow artifact.", default: "true" },
  "artifact-name": { description: "Artifact name. Defaults to `agent-run-<run id>-<attempt>`." },
  "retention-days": { description: "Artifact retention in days. Defaults to the repository's setting." },
} as const satisfies Record<string, InputSpec>;

export type InputName = keyof typeof INPUTS;

export const OUTPUTS = {
  conclusion: "`success`, `failure`, `timeout`, `cancelled` or `skipped`.",
  "final-message": "The agent's final message.",
  "session-id": "The agent's session id (pass to `session` to resume).",
  "structured-output": "JSON result matching `output-schema`.",
  usage: "JSON: `inputTokens`, `outputTokens`, `cachedTokens`, `costUsd` when known.",
  "duration-ms": "Wall time of the agent run in milliseconds.",
  "changed-files": "JSON array of the paths the agent changed.",
  "patch-path": "Path of the patch file (against the starting commit).",
  "artifact-id": "Id of the uploaded run artifact.",
  "artifact-url": "URL of the uploaded run artifact.",
  "comment-url": "URL of the result comment.",
  "pull-request-url": "URL of the pull request opened or updated.",
  "pull-request-number": "Number of the pull request opened or updated.",
  branch: "Branch pushed by the action.",
  "commit-sha": "Commit pushed by the action.",
} as const;

export type OutputName = keyof typeof OUTPUTS;

/** Values passed from main to post through GITHUB_STATE. */
export const STATE = {
  resultsDir: "results-dir",
  runTemp: "run-temp",
  finished: "finished",
  /** The progress comment ({repo, id, marker, runUrl}), so post can finish it if main was killed. */
  comment: "comment",
  /** The marker every agent process carries, so post can kill what a killed main left behind. */
  agentRunId: "agent-run-id",
} as const;

export const RESULTS_FILES = {
  result: "result.json",
  patch: "patch.diff",
  stdout: "raw/stdout.jsonl",
  stderr: "raw/stderr.log",
  trace: "trace.jsonl",
  structuredOutput: "structured-output.json",
  transcriptMd: "transcript.md",
  transcriptHtml: "transcript.html",
  outputs: "outputs",
} as const;
