/**
 * The GitHub side of a run before the agent starts: which trigger this is,
 * whether its actor may use the agent, what delivery it gets, and (run
 * phase) the workspace made safe and the task written.
 */
import path from "node:path";
import type { HostContext } from "../config/host.js";
import { inputStagingDir, readInputFiles, repoRelative, type BaseCommitFiles } from "../config/input-files.js";
import { configFilePath, type RawInputs } from "../config/parse.js";
import type { Settings } from "../config/schema.js";
import { RESULTS_FILES } from "../constants.js";
import { ConfigurationError } from "../errors.js";
import { Git } from "../git/git.js";
import { TouchedWorkspaces } from "../git/touched.js";
import { GitHubApi } from "../github/api.js";
import { authorize } from "./authorize.js";
import { apiErrorMessage, createOctokit, GitHubApiError } from "../github/client.js";
import { gitAuthEnv } from "../github/git-auth.js";
import type { Logger } from "../logger.js";
import type { GitHubRun } from "../stage-context.js";
import { planDelivery } from "../config/deliver-plan.js";
import { agentCommandFilesOnBase, fileAtCommit, guardAgentConfig, resolveBaseCommit } from "./config-guard.js";
import type { GitHubEvent } from "./event.js";
import { checkItemCheckout, checkItemEvent, decideTrigger, itemTarget, readItemThread, type ItemThread } from "./item.js";
import { AUTOMATION_EVENTS } from "../shared/item-ref.js";
import { checkoutPullRequest } from "./pr-checkout.js";
import { buildTask, type ChangedFile, type WorkspaceHead } from "./task.js";
import type { PullRequestInfo } from "../shared/trigger.js";

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
  const files: BaseCommitFiles = { git, commit, root, foundFrom: stepDir, describe: `the base branch ${pr.baseRef} (${commit.slice(0, 12)})` };
  const rel = repoRelative(root, configFilePath(raw, host.workspace).full);
  // A config file outside the repository is not the PR's: the first parse read it already.
  if (rel === undefined) return { kind: "base", settings: input.settings, files };
  return { kind: "base", settings: input.reparse({ text: await fileAtCommit(git, commit, rel), source: files.describe }), files };
}

export async function prepareTrigger(input: TriggerInput): Promise<TriggerOutcome> {
  const { event, host, log } = input;
  let settings = input.settings;
  // `issue-number` / `repository` name the thread or repository instead of the event (item.ts).
  const target = itemTarget(input.raw, host);
  if (target) checkItemEvent(target, event);
  let item: ItemThread | undefined;
  const decide = (s: Settings) => decideTrigger(event, resolveOptions(s, host), target, item);
  // A first look, before anything is read: irrelevant events end here (a named thread is read first).
  const decision = target?.number === undefined ? decide(settings) : undefined;
  if (decision?.kind === "skip") return decision;

  if (!settings.github.token)
    throw new ConfigurationError("Input 'github-token': is empty; GitHub-triggered runs need it (the default is ${{ github.token }}).");
  const octokit = await createOctokit({ token: settings.github.token, apiUrl: host.apiUrl, log, ...(host.apiRetryBaseMs !== undefined ? { retryBaseMs: host.apiRetryBaseMs } : {}) });
  const api = new GitHubApi(octokit, decision?.kind === "run" ? decision.trigger.repo : target!.repo);
  if (target?.number !== undefined) item = await readItemThread(api, target);
  const first = decision ?? decide(settings);
  if (first.kind === "skip") return first;
  let trigger = first.trigger;

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
  let baseFiles: BaseCommitFiles | undefined;
  // An earlier agent step of this job could have rewritten the repository (src/git/touched.ts):
  // its git must not run on the host again, and a PR thread needs git in it before the agent.
  const touched = await TouchedWorkspaces.forJob(host.runnerTemp).lookup(settings.workspace);
  if (pr && touched)
    throw new ConfigurationError(
      `Input 'working-directory': an agent already ran in '${touched.workTree}' earlier in this job, so host-side git cannot trust that repository for pull request #${pr.number} (checkout, base settings, agent config). Run each agent step on a pull request in a job of its own.`,
    );
  if (pr) {
    const base = await baseSettings(input, pr);
    if (base.kind === "skip") return base;
    baseFiles = base.files;
    settings = await readInputFiles(base.settings, { ...staging, base: base.files });
    commandFiles = await agentCommandFilesOnBase(settings, base.files);
  } else settings = await readInputFiles(settings, staging);

  // The decision that holds: with the settings and prompt that will run.
  const final = decide(settings);
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
  // The run lives in the workflow's repository, also when the item is another's.
  const url = runUrl(host, host.repository ?? trigger.repo.fullName);
  const serverRemote = `${host.serverUrl.replace(/\/+$/, "")}/${trigger.repo.fullName}.git`;
  // After an earlier agent step the workspace's origin is the agent's to choose: push only to the server.
  const remoteUrl = touched ? serverRemote : await originUrl(new Git(settings.workspace, host.gitEnv), serverRemote);
  if (target) checkItemCheckout(target, remoteUrl, host.serverUrl);
  return {
    kind: "run",
    settings,
    run: {
      trigger,
      api,
      plan,
      ...(commandFiles.length ? { commandFiles } : {}),
      ...(baseFiles ? { base: baseFiles } : {}),
      remoteUrl,
      ...(url ? { runUrl: url } : {}),
    },
  };
}

/**
 * On a PR thread: the PR's head checked out (pr-checkout), then the
 * agent-command files checked again on what is now in the workspace (a
 * script the PR adds is tracked only after the checkout). Returns which head
 * the workspace is, for the prompt.
 */
async function pullRequestWorkspace(run: GitHubRun, settings: Settings, host: HostContext, log: Logger): Promise<WorkspaceHead | undefined> {
  const pr = run.trigger.pullRequest;
  if (!pr) return undefined;
  const git = new Git(settings.workspace, host.gitEnv);
  if (settings.github.prCheckout === "none") {
    const head = (await git.exec(["rev-parse", "--verify", "-q", "HEAD"], { okCodes: [1, 128] }).catch(() => undefined))?.stdout.trim();
    return { kind: "as-checked-out", ...(head ? { sha: head } : {}) };
  }
  const head = await checkoutPullRequest({
    git,
    trigger: run.trigger,
    pr,
    api: run.api,
    remoteUrl: run.remoteUrl,
    authEnv: gitAuthEnv(settings.github.token, host.serverUrl),
    log,
  });
  if (run.base) {
    const files = await agentCommandFilesOnBase(settings, run.base);
    run.commandFiles = files.length ? files : undefined;
  }
  return { kind: "pull-request", head };
}

/**
 * Run phase, before the agent: the PR's head checked out, PR-supplied agent
 * config replaced, then the task written (request + untrusted context).
 * Returns the prompt to run with.
 */
export async function prepareWorkspace(run: GitHubRun, settings: Settings, resultsDir: string, host: HostContext, log: Logger): Promise<string> {
  const t = run.trigger;
  let replacedConfig: { paths: string[]; asideDir: string } | undefined;
  const workspaceHead = await pullRequestWorkspace(run, settings, host, log);
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
      // Resolved (and fetched if need be) once, when the settings were read from it.
      ...(run.base ? { baseCommit: run.base.commit } : {}),
      // Found from the same folder then, and no checkout since (one could turn a folder on the
      // working-directory path into a link out of the workspace): one `rev-parse --show-toplevel` fewer.
      ...(run.base?.foundFrom === settings.workspace && workspaceHead?.kind !== "pull-request" ? { root: run.base.root } : {}),
      ...(run.commandFiles ? { commandFiles: run.commandFiles } : {}),
      log,
    });
    if (guard.replaced.length) replacedConfig = { paths: guard.replaced, asideDir };
  }
  if (settings.review) {
    const { prepareReview } = await import("./review.js");
    const review = await prepareReview(run, settings, host, resultsDir, log);
    return buildTask({ trigger: t, review, ...(replacedConfig ? { replacedConfig } : {}), ...(workspaceHead ? { workspaceHead } : {}) });
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
  return buildTask({
    trigger: t,
    ...(changedFiles ? { changedFiles, changedFilesTruncated: truncated } : {}),
    ...(replacedConfig ? { replacedConfig } : {}),
    ...(workspaceHead ? { workspaceHead } : {}),
  });
}
