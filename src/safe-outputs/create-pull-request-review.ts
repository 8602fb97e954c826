/**
 * `create-pull-request-review`: one review with inline comments, COMMENT or
 * REQUEST_CHANGES, never APPROVE (an agent's approval could satisfy branch
 * protection). Comments only on lines the pull request's diff shows.
 */
import { z } from "zod";
import { Body, BODY_LIMIT, defineKind, Refusal, targetText } from "./kind.js";
import { DiffLines } from "./diff-lines.js";

const Side = z.enum(["LEFT", "RIGHT"]);
const Line = z.number().int().min(1);

export const createPullRequestReview = defineKind({
  key: "create-pull-request-review",
  tool: "create_pull_request_review",
  defaultMax: 1,
  targetArg: "pull_number",
  options: z.object({ "max-comments": z.number().int().min(0).max(100).default(10) }).strict(),
  description: (o, c) =>
    `Submit a review on ${targetText(c.target, "pull request")}: event COMMENT or REQUEST_CHANGES (never APPROVE), a body, and up to ${o["max-comments"]} inline comments on lines the pull request's diff shows (RIGHT: new file's line numbers, LEFT: old). At most ${c.max} per run. Applied by Agent Runner after the run (you hold no GitHub token).`,
  args: (o) =>
    z.object({
      body: Body.describe("The review's summary, in GitHub Markdown."),
      event: z.enum(["COMMENT", "REQUEST_CHANGES"], { error: "must be COMMENT or REQUEST_CHANGES (an agent never approves)" }).describe("COMMENT or REQUEST_CHANGES."),
      comments: z
        .array(
          z
            .object({
              path: z.string().min(1).max(1024).describe("File path as the diff names it."),
              line: Line.describe("Line the comment is on (last line of a range)."),
              side: Side.optional().describe("RIGHT (default): the new version; LEFT: the old one."),
              start_line: Line.optional().describe("First line of a multi-line comment."),
              body: Body.describe("The comment, in GitHub Markdown."),
            })
            .strict(),
        )
        .max(o["max-comments"], `at most ${o["max-comments"]} comments`)
        .default([])
        .describe("Inline comments."),
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
