/**
 * What the action's stages share: the runner surface (ActionIO: the real
 * runner's file commands in the action, plain callbacks in the CLI) and the
 * context every stage receives once the settings are parsed.
 */
import type { HostContext } from "./config/host.js";
import type { RawInputs } from "./config/parse.js";
import type { Settings } from "./config/schema.js";
import type { OutputName } from "./constants.js";
import type { Logger } from "./logger.js";
import type { Redactor } from "./shared/redact.js";

export interface ActionIO {
  inputs: RawInputs;
  host: HostContext;
  /** Where to write results; default: a fresh folder under the runner's temp dir. */
  resultsDir?: string;
  log: Logger;
  setSecret(value: string): void;
  setOutput(name: OutputName, value: string): void;
  saveState(name: string, value: string): void;
  appendSummary(markdown: string): Promise<void>;
  setFailed(message: string): void;
  /** CLI `--state-dir`: a folder that keeps session state between local runs. */
  stateDir?: string;
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
  /**
   * A run whose thread or repository the `issue-number` / `repository` inputs named (a fan-out
   * item): `owner/repo#n` and the key that tells its run artifact, delivery record and session
   * state apart from the other items' of the same workflow run (trigger/item.ts).
   */
  item?: { ref: string; key: string };
}
