/**
 * What a review reads of its earlier reviews on GitHub. Only reviews written
 * by this token's identity count: anyone can post a review whose body carries
 * a forged marker, and a forged head would shrink the next review's range.
 * When the token cannot say who it is (the default GITHUB_TOKEN), a bot's
 * review counts only if it is shaped as ours exactly: our marker at its very
 * start, naming the commit the review was posted on. A safe-output review of
 * another run cannot be that (its markers are defused), nor can a comment
 * quoting ours.
 */
import type { GitHubApi } from "../github/api.js";
import { markedCommentKey, markedHead, reviewMarker, type EarlierComment } from "./merge.js";

/** Who posts with the default GITHUB_TOKEN, which cannot say who it is. */
export const ACTIONS_BOT = "github-actions[bot]";

export async function ownReviews(api: GitHubApi, pr: number, warn?: (message: string) => void): Promise<{ body: string }[]> {
  const [reviews, me] = await Promise.all([api.pullRequestReviews(pr), api.authenticatedLogin()]);
  if (me !== undefined) return reviews.filter((v) => v.author === me);
  const bots = reviews.filter((v) => v.authorType === "Bot");
  const kept = bots.filter((v) => {
    const head = markedHead(v.body);
    return head !== undefined && v.body.startsWith(reviewMarker(head)) && v.commitId === head;
  });
  const ignored = bots.filter((v) => markedHead(v.body) !== undefined).length - kept.length;
  if (ignored > 0)
    warn?.(
      `Review: the token cannot say who it is, and ${ignored} bot review(s) carry a review marker not shaped as ours (marker first, naming the commit the review was posted on): not used. If no other earlier review counts, the whole pull request is reviewed.`,
    );
  return kept;
}

/**
 * This project's own earlier inline comments, which a review does not repeat: our marker at the start
 * AND written by the token's identity (github-actions[bot] when the token cannot say). Anyone else's
 * comment, marker or not, is not "already said": else a stranger could suppress a finding by posting it first.
 */
export async function ownReviewComments(api: Pick<GitHubApi, "pullRequestReviewComments" | "authenticatedLogin">, pr: number): Promise<EarlierComment[]> {
  const [comments, me] = await Promise.all([api.pullRequestReviewComments(pr), api.authenticatedLogin()]);
  const author = me ?? ACTIONS_BOT;
  return comments.flatMap((c) => {
    const key = c.author === author ? markedCommentKey(c.body) : undefined;
    return key ? [{ path: c.path, line: c.line, key }] : [];
  });
}
