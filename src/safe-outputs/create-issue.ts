/** `create-issue`: a new issue in this repository, its title prefixed and its labels fixed by the workflow. */
import * as z from "../shared/zod.js";
import { Body, defineKind, TITLE_LIMIT, Title } from "./kind.js";
import { LabelName } from "./labels.js";

export const createIssue = defineKind({
  key: "create-issue",
  tool: "create_issue",
  defaultMax: 1,
  options: z.strictObject({
    "title-prefix": z.optional(z.string().check(z.maxLength(64))),
    /** Added to every issue created. */
    labels: z._default(z.array(LabelName).check(z.maxLength(20)), []),
    /** Labels the agent may add itself (none unless listed). */
    allowed: z._default(z.array(LabelName).check(z.maxLength(100)), []),
  }),
  description: (o, c) =>
    [
      `Open a new issue in this repository. Applied by Agent Runner after the run (you hold no GitHub token). At most ${c.max} per run.`,
      o["title-prefix"] ? `The title gets the prefix ${JSON.stringify(o["title-prefix"])}.` : "",
      o.labels.length ? `Labels ${o.labels.join(", ")} are added.` : "",
      o.allowed.length ? `You may add labels from: ${o.allowed.join(", ")}.` : "",
    ]
      .filter(Boolean)
      .join(" "),
  args: (o) =>
    z.object({
      title: Title.check(z.describe("The issue's title.")),
      body: Body.check(z.describe("The issue's body, in GitHub Markdown.")),
      ...(o.allowed.length
        ? { labels: z.optional(z.array(z.enum(o.allowed as [string, ...string[]])).check(z.maxLength(o.allowed.length))).check(z.describe("Labels to add.")) }
        : {}),
    }),
  async apply(a, o, ctx) {
    const prefix = o["title-prefix"] ?? "";
    // The agent may have written the prefix itself: it appears once.
    const bare = prefix && a.title.startsWith(prefix) ? a.title.slice(prefix.length).trim() : a.title;
    const title = ctx.line(`${prefix}${bare}`, TITLE_LIMIT);
    const requested = "labels" in a && Array.isArray(a.labels) ? (a.labels as string[]) : [];
    const labels = [...new Set([...o.labels, ...requested])];
    const issue = await ctx.api.createIssue({ title, body: ctx.post(a.body), labels });
    return { url: issue.url };
  },
});
