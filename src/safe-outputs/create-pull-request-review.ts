/**
 * `create-pull-request-review`: one review with inline comments, COMMENT or
 * REQUEST_CHANGES, never APPROVE (an agent's approval could satisfy branch
 * protection). Comments only on lines the pull request's diff shows.
 */
import * as z from "../shared/zod.js";
import { Body, BODY_LIMIT, defineKind, Refusal, targetText } from "./kind.js";
import { DiffLines } from "./diff-lines.js";

const Side = z.enum(["LEFT", "RIGHT"]);
const Line = z.number().check(z.int(), z.gte(1));
/** How much a comment matters: a capped review keeps the highest first (review/merge.ts). */
export const SEVERITIES = ["critical", "major", "minor", "nit"] as const;

export const createPullRequestReview = defineKind({
  key: "create-pull-request-review",
  tool: "create_pull_request_review",
  defaultMax: 1,
  targetArg: "pull_number",
  options: z.strictObject({ "max-comments": z._default(z.number().check(z.int(), z.gte(0), z.lte(100)), 10) }),
  description: (o, c) =>
    `Submit a review on ${targetText(c.target, "pull request")}: event COMMENT or REQUEST_CHANGES (never APPROVE), a body, and up to ${o["max-comments"]} inline comments on lines the pull request's diff shows (RIGHT: new file's line numbers, LEFT: old). At most ${c.max} per run. Applied by Agent Runner after the run (you hold no GitHub token).`,
  args: (o) =>
    z.object({
      body: Body.check(z.describe("The review's summary, in GitHub Markdown.")),
      event: z
        .enum(["COMMENT", "REQUEST_CHANGES"], { error: "must be COMMENT or REQUEST_CHANGES (an agent never approves)" })
        .check(z.describe("COMMENT or REQUEST_CHANGES.")),
      comments: z
        ._default(
          z
            .array(
              z.strictObject({
                path: z.string().check(z.minLength(1), z.maxLength(1024), z.describe("File path as the diff names it.")),
                line: Line.check(z.describe("Line the comment is on (last line of a range).")),
                side: z.optional(Side).check(z.describe("RIGHT (default): the new version; LEFT: the old one.")),
                start_line: z.optional(Line).check(z.describe("First line of a multi-line comment.")),
                body: Body.check(z.describe("The comment, in GitHub Markdown.")),
                severity: z.optional(z.enum(SEVERITIES)).check(z.describe("critical, major, minor or nit: when comments are capped, the most severe are kept.")),
              }),
            )
            .check(z.maxLength(o["max-comments"], `at most ${o["max-comments"]} comments`)),
          [],
        )
        .check(z.describe("Inline comments.")),
    }),
  refine: (a) => {
    const total = a.body.length + a.comments.reduce((n, c) => n + c.body.length, 0);
    return total > 4 * BODY_LIMIT ? `the review's text adds up to ${total} characters, more than ${4 * BODY_LIMIT}` : undefined;
  },
  async apply(a, _o, ctx, target) {
    if (!target) throw new Refusal("no pull request to review");
    if (!target.isPull) throw new Refusal(`#${target.number} is an issue, not a pull request`);
    const pr = await ctx.api.pullRequest(target.number);
    const { files } = await ctx.api.pullRequestPatches(target.number);
    const diff = new DiffLines(files);
    const comments = a.comments.map((c) => {
      const side = c.side ?? "RIGHT";
      const problem = diff.problem({ path: c.path, line: c.line, side, ...(c.start_line !== undefined ? { startLine: c.start_line } : {}) });
      if (problem) throw new Refusal(`review comment on ${problem}; nothing of this review was posted`);
      const multi = c.start_line !== undefined && c.start_line !== c.line;
      return { path: c.path, line: c.line, side, ...(multi ? { start_line: c.start_line, start_side: side } : {}), body: ctx.post(c.body) };
    });
    // Pinned to the head the lines were checked against: a later push cannot shift them.
    const review = await ctx.api.createReview(target.number, { commitId: pr.info.headSha, body: ctx.post(a.body), event: a.event, comments });
    return { url: review.url };
  },
});
