/**
 * What the action's stages share: the runner surface (ActionIO: the real
 * runner's file commands in the action, plain callbacks in the CLI) and the
 * context every stage receives once the settings are parsed, and what the
 * trigger stage hands the stages after the run (GitHubRun).
 */
import type { DeliveryPlan } from "./config/deliver-plan.js";
import type { HostContext } from "./config/host.js";
import type { BaseCommitFiles } from "./config/input-files.js";
import type { RawInputs } from "./config/parse.js";
import type { Settings } from "./config/schema.js";
import type { OutputName } from "./constants.js";
import type { GitHubApi } from "./github/api.js";
import type { Logger } from "./logger.js";
import type { SafeMarkdown } from "./shared/safe-markdown.js";
import type { Redactor } from "./shared/redact.js";
import type { Trigger } from "./shared/trigger.js";

export interface ActionIO {
  inputs: RawInputs;
  host: HostContext;
  /** Where to write results; default: a fresh folder under the runner's temp dir. */
  resultsDir?: string;
  log: Logger;
  setSecret(value: string): void;
  setOutput(name: OutputName, value: string): void;
  saveState(name: string, value: string): void;
  /** Once per step: the whole job summary, through the posting filter (it renders as GitHub Markdown). */
  appendSummary(markdown: SafeMarkdown): Promise<void>;
  setFailed(message: string): void;
  /** CLI `--state-dir`: a folder that keeps session state between local runs. */
  stateDir?: string;
  /** The CLI: the working directory's config file counts as the user's only when `config-file` names it (config/provenance.ts localConfigOrigin). */
  localConfig?: boolean;
  /** The CLI: model keys exported in the shell (config/host.ts modelKeysFromEnv); secrets like `secrets`' values. */
  keyEnv?: Record<string, string>;
  /** Aborted when the job is cancelled (SIGINT/SIGTERM): the agent's tree is stopped and the run still reports. */
  signal?: AbortSignal;
}

/** What every stage may use. */
export interface StageContext {
  io: ActionIO;
  settings: Settings;
  /** io.log with every line redacted. */
  log: Logger;
  redactor: Redactor;
  resultsDir: string;
  /** This run's private folder under the runner's temp dir (scratch, downloads, delivery repository). */
  runDir: string;
  /** The config file as this step read it (git/touched.ts): recorded for later agent steps of the job. */
  configFingerprint?: string;
  /** The repository the config file's folder is a checkout of (config/provenance.ts), recorded for a later agent step. */
  configCheckout?: string;
  /**
   * A run whose thread or repository the `issue-number` / `repository` inputs named (a fan-out
   * item): `owner/repo#n` and the key that tells its run artifact, delivery record and session
   * state apart from the other items' of the same workflow run (trigger/item.ts).
   */
  item?: { ref: string; key: string };
}

/** The GitHub side of a run, as the trigger stage decided it (trigger/stage.ts): what comments, delivery and safe outputs act on. */
export interface GitHubRun {
  trigger: Trigger;
  api: GitHubApi;
  plan: DeliveryPlan;
  /** Where delivery pushes: the workspace's origin as it was before the agent ran. */
  remoteUrl: string;
  /** PR events: repository files `agent-command` runs (the program, scripts it is given), swapped for the base's before the agent starts. */
  commandFiles?: string[];
  /** PR events: the base commit the settings and file inputs came from (the agent-command check runs again after pr-checkout). */
  base?: BaseCommitFiles;
  runUrl?: string;
  /** `/approve`: who approved which staged digest (delivery names them). */
  approval?: { by: string; digest: string };
}
