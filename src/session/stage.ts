/**
 * The session stages of phase run/all: before the agent, which issue or pull
 * request this is, where its session state is kept and what `session`
 * resolves to; after it, the state saved for the next run on the thread.
 */
import { artifactUrl } from "../publish/artifact-name.js";
import { ActionsArtifactService, repositoryAccess } from "../publish/artifacts.js";
import type { RunResult } from "../result.js";
import type { StageContext } from "../stage-context.js";
import { prepareSessionCarry, type SessionCarry } from "./carry.js";
import { ArtifactSessionStore, DirSessionStore, type SessionStore } from "./store.js";
import { sessionKey, threadNumber, workflowIdentity } from "./thread.js";

/** The store and key for this thread: a local folder (CLI --state-dir) or artifacts of the repository. */
async function sessionStore(ctx: StageContext): Promise<{ store: SessionStore; key: string } | undefined> {
  const { io, settings } = ctx;
  const thread = await threadNumber(io.host.eventPath);
  if (io.stateDir) return { store: new DirSessionStore(io.stateDir), key: sessionKey(thread ?? "local") };
  if (thread === undefined || !settings.artifacts.upload || !io.host.artifactService) return undefined;
  const access = repositoryAccess(io.host, settings.github.token);
  if (!access) return undefined;
  const retention = settings.artifacts.retentionDays !== undefined ? { retentionDays: settings.artifacts.retentionDays } : {};
  return { store: new ArtifactSessionStore(new ActionsArtifactService(), access, retention), key: sessionKey(thread) };
}

export async function openSession(ctx: StageContext): Promise<SessionCarry> {
  const found = await sessionStore(ctx);
  const workflow = workflowIdentity(ctx.io.host.workflowRef);
  return prepareSessionCarry({
    settings: ctx.settings,
    ...(found ?? {}),
    ...(workflow ? { workflow } : {}),
    workDir: ctx.runDir,
    log: ctx.log,
    redactor: ctx.redactor,
  });
}

/** Saves the captured state; an artifact is listed in the result (summary links it). */
export async function saveSession(ctx: StageContext, result: RunResult, session: SessionCarry): Promise<void> {
  const saved = await session.save();
  if (saved?.artifactId === undefined) return;
  const url = artifactUrl(ctx.io.host, saved.artifactId);
  result.artifacts.push({ name: saved.key, id: String(saved.artifactId), ...(url ? { url } : {}) });
}
