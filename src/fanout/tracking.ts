/**
 * `report-issue`: one tracking comment that holds the report table. Found
 * again by a hidden marker per workflow (the sticky-comment logic of
 * publish/progress.ts, which counts only comments by a bot or the token's
 * owner), so reruns and the workflow's next runs edit it instead of adding
 * one. Everything posted goes through toSafeMarkdown (there).
 *
 * `new` opens one issue per workflow run (found again by its own marker on a
 * rerun) and keeps the comment there.
 */
import { createHash } from "node:crypto";
import type { GitHubApi } from "../github/api.js";
import { apiErrorMessage } from "../github/client.js";
import type { Logger } from "../logger.js";
import { toSafeMarkdown } from "../publish/safe-markdown.js";
import { Progress } from "../publish/progress.js";
import type { Redactor } from "../shared/redact.js";
import { ConfigurationError } from "../errors.js";

export interface TrackingOptions {
  api: GitHubApi;
  issue: number | "new";
  /** workflowIdentity: one tracking comment per workflow. */
  workflow: string;
  workflowName?: string;
  runId?: string;
  runUrl?: string;
  serverUrl: string;
  log: Logger;
  redactor: Redactor;
}

function marker(kind: string, key: string): string {
  return `<!-- agent-runner:${kind}:${createHash("sha256").update(key).digest("hex").slice(0, 20)} -->`;
}

/** `new`: this workflow run's report issue, opened once. */
async function reportIssueNumber(o: TrackingOptions): Promise<number> {
  if (o.issue !== "new") return o.issue;
  const mark = marker("fan-out-issue", `${o.workflow}|${o.runId ?? ""}`);
  const me = await o.api.authenticatedLogin();
  const existing = (await o.api.recentIssues()).find((i) => i.body.includes(mark) && (i.authorType === "Bot" || (me !== undefined && i.author === me)));
  if (existing) return existing.number;
  const title = `Agent Runner report: ${o.workflowName ?? "fan-out"}${o.runId ? ` run ${o.runId}` : ""}`.slice(0, 200);
  const body = toSafeMarkdown(`${mark}\nThe report of ${o.runUrl ? `[this workflow run](${o.runUrl})` : "a workflow run"} is in the comment below.`, { serverUrl: o.serverUrl, allowedDomains: [] });
  const created = await o.api.createIssue({ title, body, labels: [] });
  o.log.info(`Report: opened issue #${created.number} (${created.url}).`);
  return created.number;
}

/** Post or update the tracking comment; returns its URL. */
export async function postTrackingComment(o: TrackingOptions, table: string): Promise<string | undefined> {
  let number: number;
  try {
    number = await reportIssueNumber(o);
  } catch (e) {
    throw new ConfigurationError(`Input 'report-issue': could not ${o.issue === "new" ? "open the report issue" : `read issue #${o.issue}`}: ${apiErrorMessage(e)} (the job needs 'issues: write').`);
  }
  const progress = new Progress({
    api: o.api,
    mode: "sticky",
    threadNumber: number,
    stickyKey: `fan-out-report|${o.workflow}`,
    log: o.log,
    redactor: o.redactor,
    postText: { serverUrl: o.serverUrl, allowedDomains: [] },
  });
  try {
    await progress.finish(`${progress.marker}\n${table}`);
  } catch (e) {
    throw new ConfigurationError(`Input 'report-issue': ${(e as Error).message} (the job needs 'issues: write').`);
  }
  o.log.info(`Report: tracking comment on #${number}${progress.commentUrl ? `: ${progress.commentUrl}` : ""}.`);
  return progress.commentUrl;
}
