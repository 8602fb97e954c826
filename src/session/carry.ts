/**
 * Sessions across steps, jobs and runs, as one object the action's stages use:
 *   before the run: find the saved state, decide what to resume;
 *   during the run: restore it into HOME, capture it afterwards (runner hooks);
 *   after the run:  save the captured state where the next step, job or run looks.
 *
 * Where state is kept, and under which names:
 *   - this job's temp folder (RUNNER_TEMP, hidden from the sandbox): a later
 *     step of the same job finds it without any service;
 *   - the store (the repository's artifacts, or the CLI's --state-dir): a
 *     later job or run finds it, within the artifact retention period.
 * Each save goes under the session id (`agent-session-id-<id>`) and under the
 * run's scope key: the thread (`agent-session-<n>`) or, without one, the
 * workflow (`agent-session-workflow-…`), which is what `session: continue`
 * looks up.
 *
 * `session: continue` is resolved here, never passed to a CLI as "continue
 * the last session": the agent's HOME is fresh each run, so its own notion
 * of "last" would be empty. Nothing found means a new session, said in the log.
 * `session: <id>` that is found nowhere is an error naming the input, the id
 * and every place looked in, before the agent starts (a CLI asked to resume a
 * session it does not have only crashes).
 *
 * Restored state is untrusted (state.ts validates it). Only state the same
 * workflow saved is continued; another workflow's is used only when the step
 * names its id.
 */
import path from "node:path";
import type { RunConfig, Settings } from "../config/schema.js";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { SessionHooks } from "../runner.js";
import type { Redactor } from "../shared/redact.js";
import { captureSession, readSessionManifest, restoreSession, type SessionManifest } from "./state.js";
import type { SavedState, SessionStore } from "./store.js";
import { sessionIdKey } from "./thread.js";

export interface SessionCarryOptions {
  settings: Settings;
  /** Undefined when state cannot be carried across jobs here (no artifact service, no --state-dir, uploads off). */
  store?: SessionStore;
  /** How `store` reads in messages ("the repository's artifacts"). */
  storeLabel?: string;
  /** The run's scope key: `agent-session-<n>` on a thread, the workflow's key without one; undefined when neither. */
  key?: string;
  /** What the scope key stands for, in messages. */
  scope?: "thread" | "workflow";
  /** This job's temp folder: later steps of the same job look here first. */
  jobStore?: SessionStore;
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
  /** Save what `hooks.capture` collected; never throws. Returns what went to the store (artifacts are listed in the result). */
  save(): Promise<(SavedState & { key: string })[]>;
}

/** A state without a workflow was saved locally (or before workflows were recorded): it matches only a run without one. */
function sameWorkflow(manifest: SessionManifest, workflow: string | undefined): boolean {
  return (manifest.workflow ?? undefined) === workflow;
}

/** One place a state may be: a store and a name in it. */
interface Place {
  store: SessionStore;
  key: string;
  /** For messages: "this job's temp folder", "the repository's artifacts". */
  label: string;
  job?: boolean;
}

type Note = { level: "info" | "warning"; text: string };
type Found = { manifest: SessionManifest; source: string; dir: string };

/** Fetch and validate one place's state; a problem is a note, never a throw. */
async function lookIn(place: Place, dir: string, accept: (m: SessionManifest, source: string) => string | undefined): Promise<Found | Note | undefined> {
  let source: string | undefined;
  try {
    source = await place.store.fetch(place.key, dir);
  } catch (e) {
    return { level: "warning", text: `Session: could not fetch the saved state '${place.key}'${place.job ? ` from ${place.label}` : ""}: ${errorMessage(e)}.` };
  }
  if (!source) return undefined;
  const read = await readSessionManifest(dir);
  if ("problem" in read) return { level: "warning", text: `Session: the saved state from ${source} is unusable: ${read.problem}.` };
  const refusal = accept(read.manifest, source);
  if (refusal) return { level: "info", text: refusal };
  return { manifest: read.manifest, source, dir };
}

function isNote(r: Found | Note | undefined): r is Note {
  return r !== undefined && "text" in r;
}

export async function prepareSessionCarry(o: SessionCarryOptions): Promise<SessionCarry> {
  const { settings, log } = o;
  const run: RunConfig = { ...settings.run, continueLast: false };
  const outDir = path.join(o.workDir, "session-out");
  let saved: Found | undefined;
  let captured: SessionManifest | undefined;
  const backend = settings.agent.backend;
  const storeLabel = o.storeLabel ?? "the session store";
  const jobLabel = "this job's temp folder";
  let looked = 0;
  const dirFor = () => path.join(o.workDir, `session-in-${looked++}`);
  const wrongBackend = (m: SessionManifest, source: string) =>
    m.backend !== backend ? `Session: the saved session from ${source} belongs to agent '${m.backend}', not '${backend}'.` : undefined;

  if (settings.session === "continue") {
    const places: Place[] = o.key
      ? [...(o.jobStore ? [{ store: o.jobStore, key: o.key, label: jobLabel, job: true }] : []), ...(o.store ? [{ store: o.store, key: o.key, label: storeLabel }] : [])]
      : [];
    if (!places.length) {
      const why = !o.key
        ? "this run is not on an issue or pull request"
        : "session state cannot be stored here (no artifact service and no --state-dir, or upload-artifacts is false)";
      log.info(`Session: cannot continue the last session: ${why}. Starting a new session.`);
    } else {
      const notes: Note[] = [];
      for (const place of places) {
        const r = await lookIn(place, dirFor(), (m, source) => {
          const other = wrongBackend(m, source);
          if (other) return other;
          if (!sameWorkflow(m, o.workflow))
            return `Session: the saved session from ${source} was saved by ${m.workflow ? `workflow ${m.workflow}` : "an unnamed workflow"}, not by this one (${o.workflow ?? "none"}); another workflow's session is resumed only when the step names its id (session: ${m.sessionId}).`;
          return undefined;
        });
        if (isNote(r)) notes.push(r);
        else if (r) {
          saved = r;
          break;
        }
      }
      // The last note says what happens next when nothing was usable.
      notes.forEach((n, i) => log[n.level](!saved && i === notes.length - 1 ? `${n.text} Starting a new session.` : n.text));
      if (saved) {
        run.resumeSessionId = saved.manifest.sessionId;
        log.info(`Session: resuming ${saved.manifest.sessionId} from ${saved.source}.`);
      } else if (!notes.length) log.info(`Session: no saved session '${o.key}' found for this ${o.scope ?? "thread"}. Starting a new session.`);
    }
  } else if (settings.session !== "new") {
    saved = await findById(o, settings.session, dirFor, { jobLabel, storeLabel, wrongBackend });
    log.info(`Session: restored the saved state from ${saved.source} to resume ${settings.session}.`);
  }
  if (saved && saved.manifest.workspace !== settings.workspace)
    log.warning(`Session: it was recorded in ${saved.manifest.workspace}, this run works in ${settings.workspace}; CLIs that key sessions by folder may not find it.`);
  if (saved && run.forkSession) log.info(`Session: fork-session is true: the agent continues ${saved.manifest.sessionId}'s conversation under a new session id.`);

  const hooks: SessionHooks = {
    async restore(b, ctx) {
      if (!saved) return;
      const { restored, refused } = await restoreSession(b, ctx, saved.dir, saved.manifest);
      log.info(`Session: restored ${restored} file${restored === 1 ? "" : "s"} into the agent's HOME.`);
      if (refused.length)
        log.warning(
          `Session: left out ${refused.length} saved file(s) that are not ${b.name} session files (outside its session paths, configuration, links, or over the size limit): ${refused.slice(0, 5).join(", ")}`,
        );
    },
    async capture(b, ctx, result) {
      if (!o.store && !o.jobStore) return;
      captured = await captureSession(
        b,
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
      if (!captured) return [];
      const keys = [...(o.key ? [o.key] : []), sessionIdKey(captured.sessionId)];
      const out: (SavedState & { key: string })[] = [];
      const where: string[] = [];
      for (const [store, isJob] of [
        [o.jobStore, true],
        [o.store, false],
      ] as const) {
        if (!store) continue;
        for (const key of keys) {
          try {
            const s = await store.save(key, outDir);
            if (!isJob) out.push({ ...s, key });
            where.push(s.where);
          } catch (e) {
            log.warning(`Session: saving the state as '${key}' in ${isJob ? jobLabel : storeLabel} failed: ${errorMessage(e)}`);
          }
        }
      }
      if (where.length)
        log.info(`Session: saved ${captured.sessionId} (${captured.files.length} file${captured.files.length === 1 ? "" : "s"}) as ${where.join(", ")}.`);
      return out;
    },
  };
}

/**
 * `session: <id>`: this job's temp folder, then the store under the id, then
 * the run's scope key when the state there is that id's (how states were kept
 * before ids had names of their own). Any workflow's state may be used: the
 * step named it. Found nowhere: one error naming the input, the id and where
 * it looked.
 */
async function findById(
  o: SessionCarryOptions,
  id: string,
  dirFor: () => string,
  l: { jobLabel: string; storeLabel: string; wrongBackend: (m: SessionManifest, source: string) => string | undefined },
): Promise<Found> {
  const idKey = sessionIdKey(id);
  const places: Place[] = [
    ...(o.jobStore ? [{ store: o.jobStore, key: idKey, label: l.jobLabel, job: true }] : []),
    ...(o.store ? [{ store: o.store, key: idKey, label: l.storeLabel }] : []),
    ...(o.store && o.key ? [{ store: o.store, key: o.key, label: l.storeLabel }] : []),
  ];
  const looked: string[] = [];
  for (const place of places) {
    const r = await lookIn(place, dirFor(), (m, source) => (m.sessionId !== id ? `${source} holds session ${m.sessionId}, not ${id}` : l.wrongBackend(m, source)));
    if (r && !isNote(r)) return r;
    looked.push(isNote(r) ? r.text.replace(/^Session: /, "") : `'${place.key}' in ${place.label}: not there`);
  }
  if (!o.store) looked.push("no store for other jobs and runs here (upload-artifacts is false, or no artifact service; locally: no --state-dir)");
  throw new ConfigurationError(
    `Input 'session': no saved session '${id}' was found to resume. Looked in: ${looked.join("; ")}. ` +
      `A session id is found from an earlier step of this job, or from the '${idKey}' artifact an earlier job or run of this repository saved (kept for the artifact retention period); ` +
      `reading artifacts needs 'permissions: actions: read' on the job, the usual cause. Use 'session: continue' or 'new' to start without it.`,
  );
}
