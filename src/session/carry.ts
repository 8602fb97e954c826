/**
 * Sessions across runs, as one object the action's stages use:
 *   before the run: find the thread's saved state, decide what to resume;
 *   during the run: restore it into HOME, capture it afterwards (runner hooks);
 *   after the run:  save the captured state for the next run.
 *
 * `session: continue` is resolved here, never passed to a CLI as "continue
 * the last session": the agent's HOME is fresh each run, so its own notion
 * of "last" would be empty. Nothing found means a new session, said in the log.
 */
import path from "node:path";
import type { RunConfig, Settings } from "../config/schema.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { SessionHooks } from "../runner.js";
import type { Redactor } from "../trace/redact.js";
import { captureSession, readSessionManifest, restoreSession, type SessionManifest } from "./state.js";
import type { SavedState, SessionStore } from "./store.js";

export interface SessionCarryOptions {
  settings: Settings;
  /** Undefined when state cannot be carried here (no artifact service, no --state-dir, uploads off). */
  store?: SessionStore;
  /** `agent-session-<n>`; undefined when the run is not on an issue or PR. */
  key?: string;
  /**
   * The workflow this run belongs to (workflowIdentity): state saved by another
   * workflow is restored only when `session` names its id. Undefined locally.
   */
  workflow?: string;
  /** Private folder for downloaded and captured state. */
  workDir: string;
  log: Logger;
  redactor: Redactor;
}

export interface SessionCarry {
  /** The run config with `session` resolved (continueLast off, resumeSessionId set when resuming). */
  run: RunConfig;
  hooks: SessionHooks;
  /** Upload/store what `hooks.capture` collected; never throws. */
  save(): Promise<(SavedState & { key: string }) | undefined>;
}

/** A state without a workflow was saved locally (or before workflows were recorded): it matches only a run without one. */
function sameWorkflow(manifest: SessionManifest, workflow: string | undefined): boolean {
  return (manifest.workflow ?? undefined) === workflow;
}

export async function prepareSessionCarry(o: SessionCarryOptions): Promise<SessionCarry> {
  const { settings, store, key, log } = o;
  const run: RunConfig = { ...settings.run, continueLast: false };
  const inDir = path.join(o.workDir, "session-in");
  const outDir = path.join(o.workDir, "session-out");
  let saved: SessionManifest | undefined;
  let captured: SessionManifest | undefined;

  if (settings.session !== "new") {
    const wanted = settings.session === "continue" ? "the last session" : `session ${settings.session}`;
    if (!store || !key) {
      const why = !key ? "this run is not on an issue or pull request" : "session state cannot be stored here (no artifact service and no --state-dir, or upload-artifacts is false)";
      if (settings.session === "continue") log.info(`Session: cannot continue ${wanted}: ${why}. Starting a new session.`);
    } else {
      let source: string | undefined;
      try {
        source = await store.fetch(key, inDir);
      } catch (e) {
        log.warning(`Session: could not fetch the saved state '${key}': ${errorMessage(e)}. Starting a new session.`);
      }
      if (!source) {
        if (settings.session === "continue") log.info(`Session: no saved session '${key}' found for this thread. Starting a new session.`);
      } else {
        const read = await readSessionManifest(inDir);
        if ("problem" in read) log.warning(`Session: the saved state from ${source} is unusable: ${read.problem}. Starting a new session.`);
        else if (read.manifest.backend !== settings.agent.backend)
          log.info(`Session: the saved session from ${source} belongs to agent '${read.manifest.backend}', not '${settings.agent.backend}'. Starting a new session.`);
        else if (!sameWorkflow(read.manifest, o.workflow) && settings.session !== read.manifest.sessionId)
          log.info(
            `Session: the saved session from ${source} was saved by ${read.manifest.workflow ? `workflow ${read.manifest.workflow}` : "an unnamed workflow"}, not by this one (${o.workflow ?? "none"}); another workflow's session is resumed only when the step names its id (session: ${read.manifest.sessionId}). Starting a new session.`,
          );
        else {
          saved = read.manifest;
          if (settings.session === "continue") {
            run.resumeSessionId = saved.sessionId;
            log.info(`Session: resuming ${saved.sessionId} from ${source}.`);
          } else log.info(`Session: restored the saved state from ${source} to resume ${settings.session}.`);
          if (saved.workspace !== settings.workspace)
            log.warning(`Session: it was recorded in ${saved.workspace}, this run works in ${settings.workspace}; CLIs that key sessions by folder may not find it.`);
        }
      }
    }
  }

  const hooks: SessionHooks = {
    async restore(backend, ctx) {
      if (!saved) return;
      const { restored, refused } = await restoreSession(backend, ctx, inDir, saved);
      log.info(`Session: restored ${restored} file${restored === 1 ? "" : "s"} into the agent's HOME.`);
      if (refused.length)
        log.warning(
          `Session: left out ${refused.length} saved file(s) that are not ${backend.name} session files (outside its session paths, configuration, links, or over the size limit): ${refused.slice(0, 5).join(", ")}`,
        );
    },
    async capture(backend, ctx, result) {
      if (!store || !key) return;
      captured = await captureSession(
        backend,
        ctx,
        { sessionId: result.sessionId, ...(result.agentVersion ? { agentVersion: result.agentVersion } : {}), ...(o.workflow ? { workflow: o.workflow } : {}) },
        outDir,
        o.redactor,
        log,
      );
    },
  };

  return {
    run,
    hooks,
    async save() {
      if (!store || !key || !captured) return undefined;
      try {
        const saved = await store.save(key, outDir);
        log.info(`Session: saved ${captured.sessionId} (${captured.files.length} file${captured.files.length === 1 ? "" : "s"}) as ${saved.where}.`);
        return { ...saved, key };
      } catch (e) {
        log.warning(`Session: saving the state as '${key}' failed: ${errorMessage(e)}`);
        return undefined;
      }
    },
  };
}
