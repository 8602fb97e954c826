/**
 * The post step's last word on a thread: when the main step was killed before
 * it could finish its progress comment (the job cancelled past its grace
 * period, the workflow's timeout, a lost runner), the comment would say
 * "working" forever. Post always runs, so it rewrites that comment.
 */
import * as z from "../shared/zod.js";
import { GitHubApi } from "../github/api.js";
import { createOctokit } from "../github/client.js";
import type { Logger } from "../logger.js";
import { errorBody } from "./comment.js";
import { toSafeMarkdown } from "./safe-markdown.js";

/** What main saves (STATE.comment) once the progress comment exists. */
export const SavedComment = z.object({
  repo: z.string().check(z.regex(/^[\w.-]+\/[\w.-]+$/)),
  id: z.number().check(z.int(), z.positive()),
  marker: z.string().check(z.startsWith("<!--")),
  runUrl: z.optional(z.url()),
});

export async function finishAbandonedComment(saved: string, token: string, apiUrl: string, log: Logger): Promise<boolean> {
  let doc: unknown;
  try {
    doc = JSON.parse(saved);
  } catch {
    return false;
  }
  const parsed = SavedComment.safeParse(doc);
  if (!parsed.success || !token) return false;
  const { repo, id, marker, runUrl } = parsed.data;
  const [owner, name] = repo.split("/") as [string, string];
  const api = new GitHubApi(await createOctokit({ token, apiUrl, log }), { owner, name, fullName: repo });
  const body = errorBody({
    marker,
    message: "The job stopped before the agent finished (cancelled, hit the workflow's timeout, or lost its runner), so there is no result to deliver.",
    ...(runUrl ? { runUrl } : {}),
  });
  // Our own text only, but every post goes through the same door; the run link names the repository's host.
  await api.updateComment(id, toSafeMarkdown(body, { serverUrl: runUrl ? new URL(runUrl).origin : apiUrl }));
  return true;
}
