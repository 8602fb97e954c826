/** `add-comment`: a comment on an issue or pull request. */
import * as z from "../shared/zod.js";
import { Body, defineKind, Refusal, targetText } from "./kind.js";

export const addComment = defineKind({
  key: "add-comment",
  tool: "add_comment",
  defaultMax: 1,
  targetArg: "issue_number",
  options: z.strictObject({}),
  description: (_o, c) =>
    `Post a comment on ${targetText(c.target)}. Applied by Agent Runner after the run (you hold no GitHub token). At most ${c.max} per run. Markdown; images and links to hosts outside GitHub are shown as code, @mentions do not notify.`,
  args: () => z.object({ body: Body.check(z.describe("The comment, in GitHub Markdown.")) }),
  async apply(a, _o, ctx, target) {
    if (!target) throw new Refusal("no issue or pull request to comment on");
    const comment = await ctx.api.createComment(target.number, ctx.post(a.body));
    return { url: comment.url };
  },
});
