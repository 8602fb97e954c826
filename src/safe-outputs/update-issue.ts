/** `update-issue`: the title, body or state of an issue or pull request, only the `fields` the workflow lists. */
import * as z from "../shared/zod.js";
import { Body, defineKind, Refusal, TITLE_LIMIT, targetText, Title } from "./kind.js";

const FIELDS = ["title", "body", "state"] as const;

export const updateIssue = defineKind({
  key: "update-issue",
  tool: "update_issue",
  defaultMax: 1,
  targetArg: "issue_number",
  options: z.strictObject({ fields: z._default(z.array(z.enum(FIELDS)).check(z.minLength(1)), [...FIELDS]) }),
  description: (o, c) =>
    `Change the ${o.fields.join(", ")} of ${targetText(c.target)}. At most ${c.max} per run. Applied by Agent Runner after the run (you hold no GitHub token).`,
  // Only the fields the workflow lists are arguments at all; another one is an unknown field.
  args: (o) => {
    const all = {
      title: z.optional(Title).check(z.describe("New title.")),
      body: z.optional(Body).check(z.describe("New body, in GitHub Markdown.")),
      state: z.optional(z.enum(["open", "closed"])).check(z.describe("open or closed.")),
    };
    return z.pick(z.object(all), Object.fromEntries(o.fields.map((f) => [f, true])) as { title?: true; body?: true; state?: true });
  },
  refine: (a) => (a.title === undefined && a.body === undefined && a.state === undefined ? "give at least one of title, body, state" : undefined),
  async apply(a, _o, ctx, target) {
    if (!target) throw new Refusal("no issue or pull request to update");
    const updated = await ctx.api.updateIssue(target.number, {
      ...(typeof a.title === "string" ? { title: ctx.line(a.title, TITLE_LIMIT) } : {}),
      ...(typeof a.body === "string" ? { body: ctx.post(a.body) } : {}),
      ...(a.state === "open" || a.state === "closed" ? { state: a.state } : {}),
    });
    return { url: updated.url };
  },
});
