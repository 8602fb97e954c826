/**
 * Which delivery a run gets, decided before the agent starts so that a
 * request that cannot be honoured (`commit` on an issue) fails before any
 * work is done. `auto` follows DESIGN.md: issue → pull request, same-repo PR →
 * commit to its head branch, fork PR → comment, schedule/dispatch → pull
 * request on a stable branch; no changes → comment (decided after the run).
 */
import type { DeliverySettings } from "./schema.js";
import { ConfigurationError } from "../errors.js";
import type { Trigger } from "../shared/trigger.js";

export type DeliveryMode = "comment" | "commit" | "pull-request" | "none";

export interface DeliveryPlan {
  mode: DeliveryMode;
  /** Why the mode differs from what was asked (fork PR, no thread): said in the comment. */
  note?: string;
  /**
   * What was asked and will not be done, as a short phrase for the headline
   * (`deliver: commit` on a fork's pull request): the run is then `partial`,
   * not `success` (publish/verdict.ts). Unset where the mode is what the
   * contract makes of the request (`auto` on a fork's pull request is a comment).
   */
  notDone?: string;
}

export function planDelivery(delivery: Pick<DeliverySettings, "deliver">, trigger: Trigger | undefined): DeliveryPlan {
  const asked = delivery.deliver;
  if (asked === "none") return { mode: "none" };
  if (!trigger) return { mode: "none", ...(asked !== "auto" ? { note: `deliver: ${asked} needs a GitHub event; nothing was delivered.` } : {}) };

  const pr = trigger.pullRequest;
  const onPullRequest = trigger.thread?.kind === "pull_request";
  const onIssue = trigger.thread?.kind === "issue";

  if (asked === "comment") {
    if (!trigger.thread) return { mode: "none", note: "There is no issue or pull request to comment on; the result is in the job summary and the outputs." };
    return { mode: "comment" };
  }
  if (asked === "pull-request") return { mode: "pull-request" };
  if (asked === "commit" || (asked === "auto" && onPullRequest)) {
    if (!onPullRequest || !pr) {
      if (asked === "auto") return { mode: "pull-request" };
      throw new ConfigurationError(
        `Input 'deliver': 'commit' pushes to a pull request's branch, but this '${trigger.eventName}' run is ${onIssue ? `about issue #${trigger.thread!.number}` : "not about a pull request"}. Use 'pull-request' or 'auto'.`,
      );
    }
    if (pr.isFork) {
      const fork = pr.headRepo ?? "deleted repository";
      if (asked === "auto")
        return { mode: "comment", note: `The pull request comes from a fork (${fork}); Agent Runner never pushes to forks, so the changes are in the patch below.` };
      return {
        mode: "comment",
        note: `⚠️ **No commit was pushed:** \`deliver: commit\` was asked for, but the pull request comes from a fork (${fork}), and Agent Runner never pushes to forks. The changes are in the patch below and in \`patch.diff\` of the run's artifact: the pull request's author can apply it to the head branch with \`git apply\` and push it.`,
        notDone: "no commit was pushed (the pull request comes from a fork)",
      };
    }
    return { mode: "commit" };
  }
  // auto on an issue or on schedule/dispatch.
  return { mode: "pull-request" };
}
