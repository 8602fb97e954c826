/**
 * What a review reads of its earlier reviews on GitHub. Only reviews written
 * by this token's identity (or a bot, when the token cannot say who it is)
 * count: anyone can post a review whose body carries a forged marker, and a
 * forged head would shrink the next review's range.
 */
import type { GitHubApi } from "../github/api.js";

export async function ownReviews(api: GitHubApi, pr: number): Promise<{ body: string }[]> {
  const [reviews, me] = await Promise.all([api.pullRequestReviews(pr), api.authenticatedLogin()]);
  return reviews.filter((v) => (me !== undefined ? v.author === me : v.authorType === "Bot"));
}

export async function ownReviewComments(api: GitHubApi, pr: number): Promise<{ path: string; line: number | null; body: string }[]> {
  const [comments, me] = await Promise.all([api.pullRequestReviewComments(pr), api.authenticatedLogin()]);
  return comments.filter((c) => me === undefined || c.author === me);
}
