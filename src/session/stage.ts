/**
 * The session stages of phase run/all: before the agent, where session state
 * is kept for this run (this job's temp folder; the repository's artifacts or
 * the CLI's --state-dir), under which scope (the issue/PR, else the workflow)
 * and what `session` resolves to; after it, the state saved for the next
 * step, job or run.
 */
import path from "node:path";
import { artifactUrl } from "../shared/artifact-name.js";
import { ActionsArtifactService, repositoryAccess } from "../publish/artifacts.js";
import type { RunResult } from "../result.js";
import type { StageContext } from "../stage-context.js";
import { prepareSessionCarry, type SessionCarry, type SessionCarryOptions } from "./carry.js";
import { ArtifactSessionStore, DirSessionStore } from "./store.js";
import { sessionKey, threadNumber, workflowIdentity, workflowSessionKey } from "./thread.js";
import { itemSessionKey } from "../shared/item-ref.js";

type Places = Pick<SessionCarryOptions, "store" | "storeLabel" | "key" | "scope" | "jobStore">;

/** Where this run's session state is looked for and saved. */
async function sessionPlaces(ctx: StageContext, workflow: string | undefined): Promise<Places> {
  const { io, settings } = ctx;
  const thread = await threadNumber(io.host.eventPath);
  // RUNNER_TEMP is the job's own (emptied between jobs) and hidden from the sandbox; the CLI's --state-dir plays both parts.
  const runnerTemp = io.host.sandbox.runnerTemp;
  const jobStore = !io.stateDir && runnerTemp ? { jobStore: new DirSessionStore(path.join(runnerTemp, "agent-runner")) } : {};
  if (io.stateDir) return { store: new DirSessionStore(io.stateDir), storeLabel: `--state-dir ${io.stateDir}`, key: sessionKey(thread ?? "local"), scope: "thread" };
  const scope: Pick<Places, "key" | "scope"> = ctx.item
    ? { key: itemSessionKey(ctx.item.key), scope: "thread" }
    : thread !== undefined ? { key: sessionKey(thread), scope: "thread" } : workflow ? { key: workflowSessionKey(workflow), scope: "workflow" } : {};
  const access = settings.artifacts.upload && io.host.artifactService ? repositoryAccess(io.host, settings.github.token) : undefined;
  if (!access) return { ...jobStore, ...scope };
  const retention = settings.artifacts.retentionDays !== undefined ? { retentionDays: settings.artifacts.retentionDays } : {};
  return {
    ...jobStore,
    ...scope,
    store: new ArtifactSessionStore(new ActionsArtifactService(), access, retention),
    storeLabel: `the artifacts of ${access.owner}/${access.repo}`,
  };
}

export async function openSession(ctx: StageContext): Promise<SessionCarry> {
  const workflow = workflowIdentity(ctx.io.host.workflowRef);
  return prepareSessionCarry({
    settings: ctx.settings,
    ...(await sessionPlaces(ctx, workflow)),
    ...(workflow ? { workflow } : {}),
    workDir: ctx.runDir,
    log: ctx.log,
    redactor: ctx.redactor,
  });
}

/** Saves the captured state; artifacts are listed in the result (summary links them). */
export async function saveSession(ctx: StageContext, result: RunResult, session: SessionCarry): Promise<void> {
  for (const saved of await session.save()) {
    if (saved.artifactId === undefined) continue;
    const url = artifactUrl(ctx.io.host, saved.artifactId);
    result.artifacts.push({ name: saved.key, id: String(saved.artifactId), ...(url ? { url } : {}) });
  }
}
