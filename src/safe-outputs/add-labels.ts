/** `add-labels`: labels from `allowed` on an issue or pull request; `max` counts labels. */
import { defineKind, Refusal, targetText } from "./kind.js";
import { allowedRequired, LabelOptions, labelsArg, uniqueLabels } from "./labels.js";

export const addLabels = defineKind({
  key: "add-labels",
  tool: "add_labels",
  defaultMax: 3,
  targetArg: "issue_number",
  options: LabelOptions,
  configProblem: allowedRequired,
  description: (o, c) =>
    `Add labels to ${targetText(c.target)}. Allowed labels: ${o.allowed.join(", ")}; at most ${c.max} labels per run. Applied by Agent Runner after the run (you hold no GitHub token).`,
  args: (o, c) => labelsArg(o, c, "add"),
  cost: (a) => uniqueLabels(a.labels).length,
  async apply(a, _o, ctx, target) {
    if (!target) throw new Refusal("no issue or pull request to label");
    await ctx.api.addLabels(target.number, uniqueLabels(a.labels));
    return { url: target.url };
  },
});
