/**
 * The GitHub side of a run before the agent starts: which trigger this is,
 * whether its actor may use the agent, what delivery it gets, and (run
 * phase) the workspace made safe and the task written.
 */
import path from "node:path";
import type { HostContext } from "../config/host.js";
import { readInputFiles, repoRelative, type BaseCommitFiles } from "../config/input-files.js";
import { configFilePath, type RawInputs } from "../config/parse.js";
import type { Settings } from "../config/schema.js";
import { RESULTS_FILES } from "../constants.js";
import { ConfigurationError } from "../errors.js";
import { Git } from "../git/git.js";
import { GitHubApi } from "../github/api.js";
import { authorize } from "../github/authorize.js";
import { apiErrorMessage, createOctokit, GitHubApiError } from "../github/client.js";
import { gitAuthEnv } from "../github/git-auth.js";
import type { Logger } from "../logger.js";
import { planDelivery, type DeliveryPlan } from "../publish/deliver-plan.js";
import { agentCommandFilesOnBase, fileAtCommit, guardAgentConfig, resolveBaseCommit } from "./config-guard.js";
import type { GitHubEvent } from "./event.js";
import { resolveTrigger } from "./resolve.js";
import { buildTask, type ChangedFile } from "./task.js";
import type { PullRequestInfo, Trigger } from "./types.js";

export interface GitHubRun {
  trigger: Trigger;
  api: GitHubApi;
  plan: DeliveryPlan;
  /** Where delivery pushes: the workspace's origin as it was before the agent ran. */
  remoteUrl: string;
  /** PR events: repository files `agent-command` runs (the program, scripts it is given), swapped for the base's before the agent starts. */
  commandFiles?: string[];
  runUrl?: string;
}

/** Started by the repository itself or by someone who already needed write access. */
const AUTOMATION_EVENTS = ["schedule", "workflow_dispatch", "repository_dispatch"];

export type TriggerOutcome = { kind: "skip"; reason: string } | { kind: "run"; run: GitHubRun; settings: Settings };

export interface TriggerInput {
  event: GitHubEvent;
  settings: Settings;
  raw: RawInputs;
  host: HostContext;
  log: Logger;
  /** Parse the settings again with the config file from another source (the PR's base). */
  reparse: (configFile: { text: string | undefined; source: string }) => Settings;
  /** This run's private folder: skills are copied below it. */
  runDir: string;
}

/** Events whose payload may hold the request, so an empty `prompt` input is not an error while parsing. */
export function eventMayProvidePrompt(event: GitHubEvent | undefined): boolean {
  return event !== undefined && event.name !== "schedule";
}

export function runUrl(host: HostContext, repo: string): string | undefined {
  if (!host.runId) return undefined;
  return `${host.serverUrl.replace(/\/+$/, "")}/${repo}/actions/runs/${host.runId}${host.runAttempt && host.runAttempt !== "1" ? `/attempts/${host.runAttempt}` : ""}`;
}

/** Stands in for a prompt-file not read yet, so the first look at the event does not skip for want of a prompt. */
const PROMPT_FILE_PENDING = "(the prompt-file, read once the event is known)";

function resolveOptions(settings: Settings, host: HostContext) {
  const prompt = settings.promptGiven ? settings.run.prompt || (settings.inputFiles.prompt ? PROMPT_FILE_PENDING : "") : "";
  return {
    triggerPhrase: settings.github.triggerPhrase,
    prompt,
    ...(host.repository ? { repository: host.repository } : {}),
    ...(host.actor ? { hostActor: host.actor } : {}),
    ...(host.workflow ? { workflow: host.workflow } : {}),
  };
}

async function originUrl(git: Git, fallback: string): Promise<string> {
  const r = await git.exec(["remote", "get-url", "origin"], { okCodes: [1, 2, 128] }).catch(() => undefined);
  return r && r.exitCode === 0 && r.stdout.trim() ? r.stdout.trim() : fallback;
}

/** Where file inputs' copies go. */
function inputStagingDir(runDir: string): string {
  return path.join(runDir, "inputs");
}

type BaseLookup = { kind: "skip"; reason: string } | { kind: "base"; settings: Settings; files: BaseCommitFiles };

/**
 * Settings for a pull request event, from the base commit. Where to look is
 * decided by the step's own inputs only (its `working-directory` and
 * `config-file`), never by the PR's copy of the config file: that copy could
 * point the lookup at a folder the PR controls. No base commit, no run: the
 * PR's own settings never stand in for the base's.
 */
async function baseSettings(input: TriggerInput, pr: PullRequestInfo): Promise<BaseLookup> {
  const { host, log, raw } = input;
  const stepDir = path.resolve(host.workspace, raw["working-directory"]?.trim() || ".");
  const cannot = (why: string): BaseLookup => ({
    kind: "skip",
    reason: `the settings for pull request #${pr.number} come from its base branch ${pr.baseRef}, and ${why}; nothing ran with the pull request's own settings`,
  });
  const top = await new Git(stepDir, host.gitEnv).exec(["rev-parse", "--show-toplevel"], { okCodes: [128] }).catch(() => undefined);
  if (!top || top.exitCode !== 0 || !top.stdout.trim()) return cannot(`'${stepDir}' is not a git repository (run actions/checkout first)`);
  const root = top.stdout.trim();
  const git = new Git(root, host.gitEnv);
  const commit = await resolveBaseCommit({
    git,
    workspace: stepDir,
    baseSha: pr.baseSha,
    baseRef: pr.baseRef,
    isFork: pr.isFork,
    asideDir: "",
    authEnv: gitAuthEnv(input.settings.github.token, host.serverUrl),
    log,
  });
  if (!commit) return cannot(`its base commit ${pr.baseSha} could not be found or fetched (check out with fetch-depth: 0, or give the job 'contents: read')`);
  const files: BaseCommitFiles = { git, commit, root, describe: `the base branch ${pr.baseRef} (${commit.slice(0, 12)})` };
  const rel = repoRelative(root, configFilePath(raw, host.workspace).full);
  // A config file outside the repository is not the PR's: the first parse read it already.
  if (rel === undefined) return { kind: "base", settings: input.settings, files };
  return { kind: "base", settings: input.reparse({ text: await fileAtCommit(git, commit, rel), source: files.describe }), files };
}

export async function prepareTrigger(input: TriggerInput): Promise<TriggerOutcome> {
  const { event, host, log } = input;
  let settings = input.settings;
  // A first look, before anything is read: irrelevant events end here.
  const decision = resolveTrigger(event, resolveOptions(settings, host));
  if (decision.kind === "skip") return decision;

  if (!settings.github.token)
    throw new ConfigurationError("Input 'github-token': is empty; GitHub-triggered runs need it (the default is ${{ github.token }}).");
  const octokit = await createOctokit({ token: settings.github.token, apiUrl: host.apiUrl, log });
  const api = new GitHubApi(octokit, decision.trigger.repo);
  let trigger = decision.trigger;

  let pr = trigger.pullRequest;
  if (trigger.needsPullRequest && trigger.thread) {
    const number = trigger.thread.number;
    try {
      pr = (await api.pullRequest(number)).info;
    } catch (e) {
      throw new GitHubApiError(`Reading pull request #${number}`, e);
    }
  }

  // On PR events the workspace holds the PR's code: its config file's allowed-users or
  // mcp-servers, its instructions, prompt, schema, skills and agent script must not decide
  // anything. Settings and file inputs come from the base commit; otherwise the file
  // inputs are read from the workspace, never through a symlink leading out of it.
  const staging = { cwd: host.workspace, stagingDir: inputStagingDir(input.runDir) };
  let commandFiles: string[] = [];
  if (pr) {
    const base = await baseSettings(input, pr);
    if (base.kind === "skip") return base;
    settings = await readInputFiles(base.settings, { ...staging, base: base.files });
    commandFiles = await agentCommandFilesOnBase(settings, base.files);
  } else settings = await readInputFiles(settings, staging);

  // The decision that holds: with the settings and prompt that will run.
  const final = resolveTrigger(event, resolveOptions(settings, host));
  if (final.kind === "skip") return final;
  trigger = { ...final.trigger, ...(pr ? { pullRequest: pr } : {}), needsPullRequest: false };

  if (!AUTOMATION_EVENTS.includes(trigger.eventName)) {
    const actor = trigger.actor ?? (host.actor ? { login: host.actor, isBot: /\[bot\]$/i.test(host.actor) } : undefined);
    if (!actor) return { kind: "skip", reason: "the event names no actor to check" };
    let auth;
    try {
      auth = await authorize(actor, settings.github, api);
    } catch (e) {
      throw new GitHubApiError(`Checking whether @${actor.login} may trigger the agent (collaborator permission API)`, e);
    }
    if (!auth.allowed) return { kind: "skip", reason: auth.reason };
    log.info(`Triggered by @${actor.login} (${auth.via}) via ${trigger.eventName}${trigger.thread ? ` on #${trigger.thread.number}` : ""}.`);
  } else {
    // Dispatch needs write access to start; a schedule is the repository's own.
    log.info(`Triggered by a '${trigger.eventName}' run; no actor check needed.`);
  }

  const plan = planDelivery(settings.delivery, trigger);
  const url = runUrl(host, trigger.repo.fullName);
  return {
    kind: "run",
    settings,
    run: {
      trigger,
      api,
      plan,
      ...(commandFiles.length ? { commandFiles } : {}),
      remoteUrl: await originUrl(new Git(settings.workspace, host.gitEnv), `${host.serverUrl.replace(/\/+$/, "")}/${trigger.repo.fullName}.git`),
      ...(url ? { runUrl: url } : {}),
    },
  };
}

/**
 * Run phase, before the agent: replace PR-supplied agent config, then write
 * the task (request + untrusted context). Returns the prompt to run with.
 */
export async function prepareWorkspace(run: GitHubRun, settings: Settings, resultsDir: string, host: HostContext, log: Logger): Promise<string> {
  const t = run.trigger;
  let replacedConfig: { paths: string[]; asideDir: string } | undefined;
  if (t.pullRequest) {
    const asideDir = path.join(resultsDir, RESULTS_FILES.outputs, "pull-request-agent-config");
    const guard = await guardAgentConfig({
      git: new Git(settings.workspace, host.gitEnv),
      workspace: settings.workspace,
      baseSha: t.pullRequest.baseSha,
      baseRef: t.pullRequest.baseRef,
      isFork: t.pullRequest.isFork,
      asideDir,
      authEnv: gitAuthEnv(settings.github.token, host.serverUrl),
      ...(run.commandFiles ? { commandFiles: run.commandFiles } : {}),
      log,
    });
    if (guard.replaced.length) replacedConfig = { paths: guard.replaced, asideDir };
  }
  let changedFiles: ChangedFile[] | undefined;
  let truncated = false;
  if (t.thread?.kind === "pull_request") {
    try {
      const files = await run.api.pullRequestFiles(t.thread.number);
      changedFiles = files.files;
      truncated = files.truncated;
    } catch (e) {
      log.warning(`Could not list the pull request's files (the agent gets the rest of the context): ${apiErrorMessage(e)}`);
    }
  }
  return buildTask({ trigger: t, ...(changedFiles ? { changedFiles, changedFilesTruncated: truncated } : {}), ...(replacedConfig ? { replacedConfig } : {}) });
}
