/**
 * The GitHub side of a run before the agent starts: which trigger this is,
 * whether its actor may use the agent, what delivery it gets, and (run
 * phase) the workspace made safe and the task written.
 */
import path from "node:path";
import type { HostContext } from "../config/host.js";
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
import { fileAtCommit, guardAgentConfig, resolveBaseCommit } from "./config-guard.js";
import type { GitHubEvent } from "./event.js";
import { resolveTrigger } from "./resolve.js";
import { buildTask, type ChangedFile } from "./task.js";
import type { Trigger } from "./types.js";

export interface GitHubRun {
  trigger: Trigger;
  api: GitHubApi;
  plan: DeliveryPlan;
  /** Where delivery pushes: the workspace's origin as it was before the agent ran. */
  remoteUrl: string;
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
}

/** Events whose payload may hold the request, so an empty `prompt` input is not an error while parsing. */
export function eventMayProvidePrompt(event: GitHubEvent | undefined): boolean {
  return event !== undefined && event.name !== "schedule";
}

export function runUrl(host: HostContext, repo: string): string | undefined {
  if (!host.runId) return undefined;
  return `${host.serverUrl.replace(/\/+$/, "")}/${repo}/actions/runs/${host.runId}${host.runAttempt && host.runAttempt !== "1" ? `/attempts/${host.runAttempt}` : ""}`;
}

function resolveOptions(settings: Settings, host: HostContext) {
  return {
    triggerPhrase: settings.github.triggerPhrase,
    prompt: settings.promptGiven ? settings.run.prompt : "",
    ...(host.repository ? { repository: host.repository } : {}),
    ...(host.actor ? { hostActor: host.actor } : {}),
    ...(host.workflow ? { workflow: host.workflow } : {}),
  };
}

async function originUrl(git: Git, fallback: string): Promise<string> {
  const r = await git.exec(["remote", "get-url", "origin"], { okCodes: [1, 2, 128] }).catch(() => undefined);
  return r && r.exitCode === 0 && r.stdout.trim() ? r.stdout.trim() : fallback;
}

export async function prepareTrigger(input: TriggerInput): Promise<TriggerOutcome> {
  const { event, host, log } = input;
  let settings = input.settings;
  let decision = resolveTrigger(event, resolveOptions(settings, host));
  if (decision.kind === "skip") return decision;

  if (!settings.github.token)
    throw new ConfigurationError("Input 'github-token': is empty; GitHub-triggered runs need it (the default is ${{ github.token }}).");
  const octokit = await createOctokit({ token: settings.github.token, apiUrl: host.apiUrl, log });
  const api = new GitHubApi(octokit, decision.trigger.repo);
  let trigger = decision.trigger;

  if (trigger.needsPullRequest && trigger.thread) {
    const number = trigger.thread.number;
    try {
      trigger = { ...trigger, pullRequest: (await api.pullRequest(number)).info, needsPullRequest: false };
    } catch (e) {
      throw new GitHubApiError(`Reading pull request #${number}`, e);
    }
  }

  // On PR events the config file in the working tree is the PR's: its allowed-users or
  // mcp-servers must not decide anything. Settings come from the base branch's copy.
  const pr = trigger.pullRequest;
  if (pr) {
    const git = new Git(settings.workspace, host.gitEnv);
    const base = await resolveBaseCommit({
      git,
      workspace: settings.workspace,
      baseSha: pr.baseSha,
      baseRef: pr.baseRef,
      isFork: pr.isFork,
      asideDir: "",
      authEnv: gitAuthEnv(settings.github.token, host.serverUrl),
      log,
    });
    const root = (await git.exec(["rev-parse", "--show-toplevel"], { okCodes: [128] })).stdout.trim();
    const { full } = configFilePath(input.raw, host.workspace);
    const rel = root ? path.relative(root, full).split(path.sep).join("/") : "";
    if (base && rel && !rel.startsWith("..")) {
      settings = input.reparse({ text: await fileAtCommit(git, base, rel), source: `the base branch ${pr.baseRef}` });
      const again = resolveTrigger(event, resolveOptions(settings, host));
      if (again.kind === "skip") return again;
      trigger = { ...again.trigger, pullRequest: pr, needsPullRequest: false };
    } else if (!base) log.warning(`Could not read the base commit of pull request #${pr.number}; using the workspace's settings.`);
  }

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
