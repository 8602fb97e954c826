/**
 * Which issue or pull request a run belongs to, from the event payload: the
 * key that ties sessions of one conversation together across runs.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import * as z from "../shared/zod.js";

const Numbered = z.object({ number: z.number().check(z.int(), z.positive()) });
// Only the fields that carry the number; the payload is otherwise untouched data.
const EventPayload = z.object({
  issue: z.catch(z.optional(Numbered), undefined),
  pull_request: z.catch(z.optional(Numbered), undefined),
  number: z.catch(z.optional(z.number().check(z.int(), z.positive())), undefined),
});

/** The issue/PR number of the event, or undefined (schedule, dispatch, push, no event file). */
export async function threadNumber(eventPath: string | undefined): Promise<number | undefined> {
  if (!eventPath) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(eventPath, "utf8"));
  } catch {
    return undefined;
  }
  const parsed = EventPayload.safeParse(doc);
  if (!parsed.success) return undefined;
  // issue_comment on a PR carries the PR as `issue`; review events carry `pull_request`.
  return parsed.data.issue?.number ?? parsed.data.pull_request?.number ?? parsed.data.number;
}

/** Name of the artifact (or local folder) holding a thread's session state. */
export function sessionKey(thread: number | "local"): string {
  return `agent-session-${thread}`;
}

export { workflowIdentity } from "../shared/workflow-identity.js";

/** What artifact names may hold of a session id without loss (`:` is refused by the artifact service). */
const NAME_SAFE_ID = /^[A-Za-z0-9._-]{1,200}$/;

/**
 * Name of the state saved under a session id, so a later job or run can find
 * it from the id alone (`session: <id>`). An id with characters artifact
 * names cannot hold is named by its hash.
 */
export function sessionIdKey(sessionId: string): string {
  return NAME_SAFE_ID.test(sessionId) ? `agent-session-id-${sessionId}` : `agent-session-id-h${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}`;
}

/**
 * Name of a workflow's last session, for `session: continue` on runs without
 * an issue or PR (schedule, dispatch): the workflow file's name for people,
 * plus a hash of the whole identity, so two repositories' or folders' files
 * of the same name never share one.
 */
export function workflowSessionKey(workflow: string): string {
  const file = workflow.split("/").pop()?.replace(/\.ya?ml$/i, "") ?? "";
  const slug = file.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40) || "workflow";
  return `agent-session-workflow-${slug}-${createHash("sha256").update(workflow).digest("hex").slice(0, 12)}`;
}
