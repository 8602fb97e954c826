/**
 * The type of text GitHub may render. Every sink that posts Markdown to
 * GitHub (a comment, an issue or pull request body, a review, a safe
 * output, the job summary) takes `SafeMarkdown`, and the only way to make
 * one is `toSafeMarkdown`, which runs the posting filter (post-text.ts):
 * outside images and links shown as code, mentions broken. A string built
 * anywhere else does not type-check at a sink, so new Markdown cannot skip
 * the filter by accident.
 *
 * Agent-chosen names inside our own Markdown are written with codeName
 * (markdown-code.ts): the filter leaves code alone, so a name shows as it is.
 *
 * Filtered parts are not joined: an open HTML block (`<pre>`) in one part
 * would turn the next part's code back into HTML. A step's job summary is
 * therefore one document, filtered whole and appended once.
 */
import { neutralizeForGitHub, type PostTextPolicy } from "./post-text.js";

import type { SafeMarkdown } from "../shared/safe-markdown.js";

export type { SafeMarkdown };

/** The job summary holds at most 1 MiB per step; stay well under it. */
export const SUMMARY_LIMIT = 512 * 1024;

/**
 * `markdown` (already redacted: redaction after the filter could change
 * what it checked) through the posting filter. `maxLength` defaults to the
 * comment limit; the job summary passes SUMMARY_LIMIT.
 */
export function toSafeMarkdown(markdown: string, policy: PostTextPolicy, maxLength?: number): SafeMarkdown {
  return neutralizeForGitHub(markdown, policy, maxLength) as SafeMarkdown;
}
