/**
 * Names users type, in one place: every input and output of the action, with
 * its description and contract default. action.yml and the README reference
 * are generated from this table (`npm run build`), and a test checks both.
 */
/**
 * Where users get Agent Runner, in one place: the action's repository and major tag, and the CLI's npm
 * package. The build writes them into the generated workflows and checks package.json against them; the
 * docs' `uses:` lines and install command name the same (docs/releasing.md).
 */
export const COORDINATES = {
  actionRepository: "agent-runner/agent-runner",
  /** Moved to each release of that major version by .github/workflows/release.yml. */
  majorTag: "v1",
  npmPackage: "@agent-runner/cli",
  bin: "agent-runner",
} as const;

/** `uses:` of the action, and of a reusable workflow it ships (`agent.yml`, `fan-out.yml`). */
export const ACTION_USES = `${COORDINATES.actionRepository}@${COORDINATES.majorTag}`;
export const workflowUses = (file: string): string => `${COORDINATES.actionRepository}/.github/workflows/${file}@${COORDINATES.majorTag}`;
/** How a person gets the CLI: once per machine, or each time through npx. */
export const INSTALL_COMMAND = `npm install --global ${COORDINATES.npmPackage}`;
export const NPX_COMMAND = `npx ${COORDINATES.npmPackage}`;

export interface InputSpec {
  description: string;
  default?: string;
  required?: boolean;
}

/**
 * `max-cost-usd` when the workflow sets none: above what the README's "bigger
 * change" costs with the dearest default model (about $4 with claude's), so
 * ordinary runs never meet it, while a run that loops for its whole 30
 * minutes on that model (tens of dollars) is stopped. Applied only where the
 * price table knows the model (config/parse.ts, sandbox/usage-meter.ts).
 */
export const DEFAULT_MAX_COST_USD = "5";

export const INPUTS = {
  agent: { description: "Agent backend: `claude`, `codex`, `opencode`, `gemini`, or `command`.", required: true },
  "agent-version": {
    description: "npm version of the agent CLI. Defaults to the version pinned and tested for the backend; `preinstalled` uses the CLI found on PATH.",
  },
  "agent-command": { description: "For `agent: command`: the command line to run (shell words). The prompt arrives on stdin." },
  model: { description: "Model id. Defaults to the backend's default." },
  "base-url": {
    description:
      "Model API base URL (a gateway, a proxy, a local server), as the provider's SDK takes it: Anthropic and Gemini without a version path, OpenAI-style with `/v1`. For a cloud `provider`, the cloud endpoint to sign for (a private endpoint): Bedrock's runtime URL, Vertex AI's, or the Azure resource's.",
  },
  provider: {
    description:
      "Where model requests go: `anthropic`, `openai`, `gemini`, or a cloud: `bedrock` (AWS), `vertex` (Google Cloud), `azure`. Defaults to the agent's own. For a cloud the model gateway reads the credentials the official auth action left on the runner and signs every request; the agent never holds them (see Cloud providers).",
  },
  "aws-region": { description: "For `provider: bedrock`: the AWS region. Defaults to `AWS_REGION` (or `AWS_DEFAULT_REGION`) on the runner." },
  "vertex-project": { description: "For `provider: vertex`: the Google Cloud project. Defaults to `GOOGLE_CLOUD_PROJECT` on the runner." },
  "vertex-region": { description: "For `provider: vertex`: the region (`global`, `us-east5`, …). Defaults to `CLOUD_ML_REGION` (or `GOOGLE_CLOUD_LOCATION`) on the runner." },
  prompt: { description: "The task. On comment triggers, defaults to the comment text after the trigger phrase." },
  "prompt-file": { description: "Path of a file holding the prompt (instead of `prompt`)." },
  attachments: {
    description:
      "Files for the agent: newline-separated paths or globs, relative to `working-directory` or absolute on the runner. Copied into a read-only folder (`$AGENT_ATTACHMENTS_DIR`), listed at the end of the prompt, images and PDFs passed to the CLI natively. At most 10 files of 20 MB each: images (PNG, JPEG, GIF, WebP), PDF or UTF-8 text, checked by content; others are skipped with a warning.",
  },
  "comment-attachments": {
    description:
      "Attach the images and files pasted into the triggering comment and the issue or pull request body: downloaded by the runner (not the agent) from GitHub's attachment hosts only; links to other hosts stay text. Same limits as `attachments`.",
    default: "true",
  },
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
  "max-cost-usd": {
    description:
      "Budget: stop the agent once its model requests cost this many US dollars (prices from the pinned `@pydantic/genai-prices` table, or `model-prices`); `none` for no cap. Counted by the model gateway, which admits each request only with room for its estimated input and its output limit (see Budgets). The default cap applies where the price table knows the model: with a `base-url` server, `agent: command`, or a model without a price it is skipped with a notice (a cap you set yourself on an unknown model needs `model-prices`). The job summary shows the cap and the spend.",
    default: DEFAULT_MAX_COST_USD,
  },
  "max-tokens": {
    description:
      "Budget: stop the agent once its model requests used this many tokens, input plus output (cache reads and writes count as input). Counted by the model gateway, which admits each request only with room for its estimated input and its output limit (see Budgets).",
  },
  "max-model-requests": { description: "Budget: stop the agent after this many model requests (token counts and model lists not included). Counted by the model gateway." },
  "model-prices": {
    description:
      "Prices for models the price table does not know (or to override it), YAML: model id → `{input, output, cached}` in US dollars per million tokens (`cached`: cache reads, defaults to `input`). Required for an unknown model when `max-cost-usd` is set.",
  },
  "timeout-minutes": {
    description:
      "Hard time limit for the agent's whole process tree, in minutes (fractions allowed). The agent is stopped a margin earlier (10 % of the limit, at most a minute) so that its work is kept as a checkpoint: conclusion `incomplete`, continued with `@agent continue` (see docs/sessions.md).",
    default: "30",
  },
  "stall-minutes": {
    description:
      "Stall watchdog: an agent that makes no model request, writes no output and changes no file for this many minutes (fractions allowed) is stopped with a checkpoint (conclusion `incomplete`); `0` turns it off.",
    default: "10",
  },
  "model-retries": {
    description:
      "Retries of a model request the provider answered rate-limited (429) or overloaded (529, or 503 saying so), made by the model gateway before the agent sees the answer: `Retry-After` is honoured, else jittered exponential backoff. Each retry is admitted under the budget again; an answer already streaming to the agent is never retried. `0` passes such answers through as they come (see docs/rate-limits.md).",
    default: "3",
  },
  "model-retry-max-wait-seconds": {
    description: "The longest the model gateway waits in total for one model request's retries (a `Retry-After` beyond what is left is not waited for: the gateway moves to a fallback model or gives up).",
    default: "120",
  },
  "fallback-models": {
    description:
      "Models to send a request to, in order, when the model asked for stays rate-limited or overloaded after `model-retries`: newline- or comma-separated ids on the same provider and wire API. Priced at their own price under the same budget (a model the price table does not know needs `model-prices` when a cost cap is set); output `usage` says which model served how many requests.",
  },
  "max-daily-cost-usd": {
    description:
      "Budget across runs: at most this many US dollars per UTC day for this workflow (or the repository, `ledger-scope`), kept on the ledger ref `refs/agent-runner/ledger` in the repository. Before the agent starts the job reserves the run's `max-cost-usd` (or what is left, if less) and caps the run at it; after the run the reservation is settled to the gateway's measured cost. With nothing left the run ends `skipped` and the model is never called. Needs `contents: write` where it reserves and settles: `phase: all`, or the reusable workflows' reserve and publish jobs around a read-only run job (see Budgets across runs).",
  },
  "ledger-scope": {
    description: "What `max-daily-cost-usd` counts: `workflow` (this workflow file's runs) or `repository` (every workflow of the repository that uses the ledger).",
    default: "workflow",
  },
  "max-total-cost-usd": {
    description:
      "Fan-out pool: at most this many US dollars for all items of one workflow run together, on the same ledger. Each item draws its `max-cost-usd` (or what is left) from the pool when it starts; an item that finds the pool spent ends `skipped`.",
  },
  attempts: {
    description:
      "Independent agent runs (1–5) from the same start state, each in its own copy of the workspace, sharing one model gateway and its budget; each is verified, one is chosen (`select`) and delivered. Output `attempts` lists them.",
    default: "1",
  },
  select: {
    description:
      "How the delivered attempt is chosen when `attempts` > 1: `verify` (a passing attempt first, then the fewest changed lines) or `judge` (a read-only judge agent ranks the passing attempts' patches against the task; falls back to `verify` with a warning when it fails).",
    default: "verify",
  },
  "verify-command": {
    description:
      "The project's own check, run after the agent (shell words, e.g. `npm test`): on a clean copy of what would be delivered (the base commit with the patch, the ignored files such as node_modules as they were before the agent started, a fresh HOME), in a sandbox with the agent's network policy and environment, never the model key. A non-zero exit starts a fix round (`max-fix-rounds`). Its output is kept in the trace and the artifact (`verify/verify-<n>.log`); output `verified` says how it ended.",
  },
  "max-fix-rounds": {
    description:
      "With `verify-command`: how many times (0–10) a failing check resumes the agent's session with the tail of the check's output, then checks again. A change that never passes is not committed or pushed: it stays in the comment and artifact, and the step fails.",
    default: "2",
  },
  "verify-timeout-minutes": {
    description: "Time limit of each `verify-command` run, in minutes (fractions allowed); counted within `timeout-minutes`, which covers the agent, the checks and the fix rounds together.",
    default: "10",
  },
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
  sandbox: {
    description:
      "Sandbox: `auto` (bwrap, set up on GitHub-hosted runners; else docker when `docker-image` is set; else the step fails — it never runs the agent unsandboxed), `bwrap`, `docker`, or `none` (the explicit opt-out: no isolation, not a security boundary).",
    default: "auto",
  },
  network: { description: "Network policy for the agent: `none`, `model-only`, `allowlist`, `open`.", default: "model-only" },
  "allowed-domains": {
    description: "Extra hosts for `network: allowlist`, newline- or comma-separated; `*.example.com` wildcards; an IP or `localhost` allowed.",
  },
  "docker-image": { description: "Image for `sandbox: docker`." },
  "working-directory": { description: "Repository folder the agent works in.", default: "." },
  "pr-checkout": {
    description:
      "On pull request threads (comments, reviews, `pull_request` events): `auto` makes the workspace the PR's head before the agent starts (the head branch for same-repository PRs, `refs/pull/<n>/head` detached for forks); `none` leaves it as the workflow checked it out.",
    default: "auto",
  },
  session: {
    description:
      "`new`, `continue` (this issue/PR's last session; on schedule and dispatch runs this workflow's last), or a session id to resume (from an earlier step, job or run).",
    default: "new",
  },
  "fork-session": { description: "Resume into a new session id instead of extending the old one.", default: "false" },
  resume: {
    description:
      "`checkpoint`: start from this issue/PR's checkpoint (the work an `incomplete` run kept on `refs/agent-runner/checkpoints/<n>`) and its session, as the comment `@agent continue` does; `none` starts from the checkout.",
    default: "none",
  },
  "trigger-phrase": { description: "Phrase that triggers the agent in comments; `/agent` at the start of a comment also works.", default: "@agent" },
  "allowed-users": { description: "Extra users who may trigger without write access (risky: they control what the agent does)." },
  "allowed-bots": { description: "Bot logins allowed to trigger (none by default)." },
  "github-token": { description: "Token for the GitHub API and git pushes. Never given to the agent.", default: "${{ github.token }}" },
  approval: {
    description:
      "`none` or `required`: with `required` the publish phase checks everything, then writes nothing but one staging comment (the files, a collapsed diff, each safe-output request, the delivery plan and a digest); an `/approve <digest>` comment from an allowed approver publishes exactly those bytes, `/reject` drops them (see docs/approval.md). With `agent-runner run` the agent works in a copy of the checkout and the run prints what it staged; `agent-runner approve <results folder> <digest>` applies exactly that patch to the working tree.",
    default: "none",
  },
  approvers: { description: "With `approval: required`: who may approve (logins). Default: users with write, maintain or admin permission. Bots never approve." },
  "approval-self": { description: "With `approval: required`: whether the person who triggered the run may approve it.", default: "false" },
  "approval-expires-hours": { description: "With `approval: required`: hours a staged run can be approved (at most the artifact's retention).", default: "72" },
  phase: {
    description:
      "`run` (agent only, results to an artifact), `publish` (deliver a run's artifact), `all`; `reserve` (budgets across runs: reserves the run's cap on the ledger before a read-only run job, which takes it as its cap; the publish job settles it); for fan-out, `plan` (lists the items: output `matrix`) and `gather` (one report of this workflow run's items: output `report`).",
    default: "all",
  },
  deliver: { description: "How the result is delivered: `auto`, `comment`, `commit`, `pull-request`, `none`.", default: "auto" },
  comment: { description: "Progress comment: `sticky` (one comment, edited), `new`, `none`.", default: "sticky" },
  "branch-prefix": { description: "Prefix of branches the action pushes.", default: "agent/" },
  "base-branch": { description: "Base branch for pull requests. Defaults to the repository's default branch." },
  draft: { description: "Open pull requests as drafts.", default: "true" },
  "allow-workflow-changes": {
    description: "Deliver patches that touch `.github/workflows/` or `.github/actions/` (refused unless `true`).",
    default: "false",
  },
  "commit-method": {
    description:
      "How commits are made: `api` (GitHub's Git Data API: blobs, a tree and a commit with no author or committer, so GitHub signs it as the token's identity; modes, symlinks, binaries, renames and deletions kept) or `git` (git push, unsigned).",
    default: "api",
  },
  "allow-unsigned-commits": {
    description: "With `commit-method: api`: a change too large for the API (over 3,000 files, 200 MB, or a file over 50 MB) is pushed with git, unsigned, instead of failing the step.",
    default: "false",
  },
  "threat-detection": {
    description:
      "Before anything is published: `auto` scans the patch's added lines and file names (and binary files' new content), every safe-output request, the final message and the structured output for secrets (gitleaks' rules and the run's own secret values, also encoded, reversed or in pieces) and checks protected files; a secret holds everything back and fails the step. `agent` does the same and also has a detection agent judge the output for prompt injection, secret leaks and malicious patches (read-only sandbox, model gateway only, 12 model requests for a model-backed detector, 5 minutes). `none` turns it off.",
    default: "auto",
  },
  "detection-agent": {
    description: "With `threat-detection: agent`: the backend that judges (`claude`, `codex`, `opencode`, `gemini`, `command`). Defaults to the run's own `agent`; it uses the run's `base-url`, `env` and model key from `secrets`.",
  },
  "detection-model": { description: "With `threat-detection: agent`: the detection agent's model. Defaults to `model` when the backend is the run's, else the backend's default." },
  "threat-detection-fail-open": {
    description: "With `threat-detection: agent`: when the detection agent fails (exits non-zero, times out, gives no or invalid JSON), publish anyway with a warning instead of holding the run back.",
    default: "false",
  },
  "protected-files": {
    description:
      "Changes to protected files (dependency manifests and locks, CI and build config, build wrappers such as `mvnw` and `gradle/wrapper/`, git hook managers, task runners and tool managers, editor and dev-container tasks, package-manager config, Dockerfiles, every agent's instructions and settings, CODEOWNERS, `.github/**`; names compared case-insensitively): `review` (delivered only as a draft pull request that names them), `block` (refused) or `allow`. Judged on the tree the patch makes: a path is protected when any name it has through symlinks is, and symlinks into or out of protected places, symlinks out of the repository and submodules count too; under `review` those are held, as with `block`, since the diff does not show which protected file they change.",
    default: "review",
  },
  "protected-paths": { description: "Globs that edit the protected list, one per line: `glob` adds a path, `!glob` exempts one (e.g. `!**/package.json`)." },
  "safe-outputs": {
    description:
      "GitHub writes the agent may request, YAML or JSON: kind → limits (`add-comment`, `create-issue`, `add-labels`, `remove-labels`, `update-issue`, `create-pull-request-review`); only listed kinds are enabled, `true` or `{}` takes the defaults. The agent asks through the `agent-runner` MCP server (`agent: command`: the JSONL file `$AGENT_SAFE_OUTPUTS`); the publish step checks every request again and applies it with the token.",
  },
  "upload-artifacts": { description: "Upload the trace, patch and outputs as a workflow artifact.", default: "true" },
  "artifact-name": { description: "Artifact name. Defaults to `agent-run-<run id>-<attempt>`." },
  "retention-days": { description: "Artifact retention in days. Defaults to the repository's setting." },
  "otel-endpoint": {
    description:
      "OpenTelemetry OTLP/HTTP endpoint: one trace per run (the run, each model request, each tool call) is exported there after the run, within 5 seconds. A URL without a path gets `/v1/traces`. Defaults to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT` from the runner's environment (headers from `OTEL_EXPORTER_OTLP_HEADERS`, masked); none: no export.",
  },
  "issue-number": {
    description:
      "Run for this issue or pull request (of `repository`) without an event for it: schedule, dispatch, a fan-out item. Its context, session, delivery and safe outputs work as if it had been triggered there; its text is untrusted context.",
  },
  repository: {
    description:
      "`owner/repo` the run is for (default: this repository): with `issue-number`, the item's repository; in `phase: plan` the scope of `items-query`. Another repository's checkout is not this workflow's: of its config file only `instructions` is read. The `github-token` must reach it (e.g. a GitHub App token from `actions/create-github-app-token`), and the workspace must be its checkout.",
  },
  "items-query": {
    description:
      "`phase: plan`: a GitHub issue/pull request search query (REST search API), e.g. `is:issue is:open label:needs-triage`; limited to `repository` unless it names `repo:`, `org:` or `user:` (a negated `-repo:` does not). Only items of this workflow's owner are kept unless `allow-foreign-items` is `true`.",
  },
  items: {
    description:
      "`phase: plan`: a JSON array of issue/pull request numbers or `owner/repo#n`. `phase: gather`: the plan's `matrix` (or that array), so an item that left no result shows as missing.",
  },
  repositories: { description: "`phase: plan`: newline-separated `owner/repo`, one item each (one prompt across repositories)." },
  "max-items": { description: "`phase: plan`: keep at most this many items (1–256, GitHub's limit of jobs per matrix).", default: "20" },
  "allow-foreign-items": {
    description:
      "Fan-out items from repositories of other owners than this workflow's (user or organization). By default `phase: plan` drops them (the warning and the plan's summary name each), and a step whose `repository` has another owner is refused. Read from the step only.",
    default: "false",
  },
  task: {
    description:
      "What the run is for: `change` (the agent works on the request; its patch is delivered) or `review` (a pull request review: the agent gets the PR's description, its full file list and the diff of its part, computed from local git, and answers through `create-pull-request-review`; one review is posted, never an empty green run). See docs/review.md.",
    default: "change",
  },
  "review-shard-lines": {
    description: "`task: review`, `phase: plan`: above this many changed lines the review is split into shards (by directory, balanced by changed lines, a file never split), one matrix job each.",
    default: "3000",
  },
  "review-shard-files": { description: "`task: review`, `phase: plan`: above this many changed files the review is split into shards too.", default: "100" },
  "review-max-lines": {
    description: "`task: review`: a pull request with more changed lines than this is not reviewed: the run ends with an explicit \"too large to review\" result naming the limit.",
    default: "200000",
  },
  "review-can-block": { description: "`task: review`: post the review as REQUEST_CHANGES when the agent asks for changes; otherwise every review is a COMMENT.", default: "false" },
  "review-scope": {
    description:
      "`task: review`: `full` (the whole pull request) or `since-last-review` (only the commits since the head the last Agent Runner review covered, recorded in its hidden marker; after a force-push that dropped that commit, a full review that says so).",
    default: "full",
  },
  "review-max-comments": { description: "`task: review`: at most this many inline comments in the posted review, the highest severity first.", default: "30" },
  "review-shard": { description: "`task: review`, a shard's job: the shard this job reviews (the plan's `matrix` entry `shard`)." },
  "review-range": { description: "`task: review`, a shard's job: the commits the plan reviewed, `from..head` (the plan's `matrix` entry `range`); the job recomputes its shard from them." },
  "report-issue": {
    description: "`phase: gather`: an issue number, or `new`, whose one tracking comment holds the report table (updated, not duplicated, on later runs of the workflow).",
  },
} as const satisfies Record<string, InputSpec>;

export type InputName = keyof typeof INPUTS;

export const OUTPUTS = {
  conclusion:
    "What the run came to, delivery included: `success` (everything asked was done), `partial` (delivered in part: the branch is pushed but GitHub refused to open the pull request, paths were left out of the patch, or `deliver: commit` on a fork's pull request left the changes as a patch in the comment; the step does not fail), `failure` (the agent failed, a budget stopped it, its changes fail `verify-command`, threat detection held it back, the patch was refused, or delivery failed), `incomplete` (stopped at `timeout-minutes`, on a cancel or by the stall watchdog, its work kept as a checkpoint to continue from: `@agent continue`), `timeout`, `cancelled` or `skipped`. The comment's and the job summary's headline say the same: ✅ `success`, ⚠️ `partial`, ⏸️ `incomplete`, ❌ the others but `skipped`.",
  "final-message": "The agent's final message.",
  "session-id": "The agent's session id (pass to `session` to resume).",
  "structured-output": "JSON result matching `output-schema`.",
  usage:
    "JSON, as the model gateway counted it (the same for every agent): `inputTokens`, `outputTokens`, `cachedTokens`, `costUsd` when known, `requests`; when the gateway retried a rate-limited or overloaded answer or a fallback model served, also `retries`, `retryWaitSeconds` and `models` (model id → `{requests, costUsd, fallback}`).",
  "budget-exceeded": "`true` when a budget (`max-cost-usd`, `max-tokens`, `max-model-requests`) stopped the run, else `false`.",
  attempts: "JSON array, one entry per attempt (`attempts` > 1): `{attempt, conclusion, verified: passed|failed|not-run, changedLines, changedFiles, exitCode, durationMs, chosen}`; `[]` with one attempt.",
  verified: "`passed` (the last `verify-command` run passed), `failed` (it still failed after the fix rounds, or the agent failed during one) or `not-run` (no `verify-command`, or the agent failed before the first check).",
  "duration-ms": "Wall time of the agent run in milliseconds.",
  "changed-files": "JSON array of the paths the agent changed.",
  "excluded-files": "JSON array of the paths left out of the patch: already changed or created relative to the starting commit before the agent ran (by an earlier step), whether or not the agent touched them.",
  "patch-path": "Path of the patch file (against the starting commit; it always applies to it).",
  "artifact-id": "Id of the uploaded run artifact.",
  "artifact-url": "URL of the uploaded run artifact.",
  "comment-url": "URL of the result comment.",
  "pull-request-url": "URL of the pull request opened or updated.",
  "pull-request-number": "Number of the pull request opened or updated.",
  branch: "Branch pushed by the action.",
  "commit-sha": "Commit pushed by the action.",
  checkpoint: "The checkpoint ref an `incomplete` run pushed (`refs/agent-runner/checkpoints/<n>`), when it pushed one.",
  "commit-verified": "`true` when GitHub verified (signed) the delivered commit, read back after `commit-method: api`; `false` when it did not.",
  "safe-outputs": "JSON array, one entry per agent request: `{type, status: applied|refused, url?, reason?}`.",
  threats: "JSON array of what threat detection found before publishing: `{kind: secret|run-secret|protected-file|threat-verdict|detection-failed|scan-incomplete, where, file?, detail}`; never the value. Empty when nothing was found.",
  matrix:
    "`phase: plan`: JSON for `strategy.matrix`: `{\"include\": [{item, key, repository, repository-owner, repository-name, issue-number}]}`; with `task: review`, one entry per shard: `{shard, shards, range, scope, issue-number}`.",
  count: "`phase: plan`: how many items `matrix` holds.",
  "approval-state": "With `approval: required`: `staged` (the staging comment was written, nothing else), `enacted` (an approval published the staged bytes), `rejected` or `refused` (an `/approve` or `/reject` that was answered with a reason).",
  "approval-digest": "With `approval: required`: the SHA-256 digest of the staged outputs (patch, safe-output requests, delivery plan, run artifact).",
  report: "`phase: gather`: JSON array, one entry per item: item, conclusion, duration, cost, changed files, pull request and comment links.",
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
  /** The verify-command's output, one log per run (verify-1.log, …). */
  verify: "verify",
  /** Copies of the files attached to the task (config/attachments.ts). */
  attachments: "attachments",
  /** threat-detection: agent: the detection agent's trace and the host-written verdict.json. */
  detection: "detection",
  /** approval: required: the approval record (staged, then who decided what and when); written after the artifact was uploaded. */
  approval: "approval.json",
} as const;
