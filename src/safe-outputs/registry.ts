/** Every safe-output kind, one line each. Adding a kind = one file in this folder + one line here. */
import { addComment } from "./add-comment.js";
import { addLabels } from "./add-labels.js";
import { createIssue } from "./create-issue.js";
import { createPullRequestReview } from "./create-pull-request-review.js";
import type { SafeOutputKind } from "./kind.js";
import { removeLabels } from "./remove-labels.js";
import { updateIssue } from "./update-issue.js";

export const SAFE_OUTPUT_KINDS: readonly SafeOutputKind[] = [
  addComment,
  createIssue,
  addLabels,
  removeLabels,
  updateIssue,
  createPullRequestReview,
];
