/** `remove-labels`: labels from `allowed` taken off an issue or pull request; `max` counts labels. */
import { defineKind, Refusal, targetText } from "./kind.js";
import { allowedRequired, LabelOptions, labelsArg, uniqueLabels } from "./labels.js";

export const removeLabels = defineKind({
  key: "remove-labels",
  tool: "remove_labels",
  defaultMax: 3,
  targetArg: "issue_number",
  options: LabelOptions,
  configProblem: allowedRequired,
  description: (o, c) =>
    `Remove labels from ${targetText(c.target)}. Allowed labels: ${o.allowed.join(", ")}; at most ${c.max} labels per run. Applied by Agent Runner after the run (you hold no GitHub token).`,
  args: (o, c) => labelsArg(o, c, "remove"),
  cost: (a) => uniqueLabels(a.labels).length,
  async apply(a, _o, ctx, target) {
    if (!target) throw new Refusal("no issue or pull request to take labels from");
    const removed: string[] = [];
    for (const name of uniqueLabels(a.labels)) if (await ctx.api.removeLabel(target.number, name)) removed.push(name);
    if (!removed.length) throw new Refusal(`#${target.number} carries none of the labels ${uniqueLabels(a.labels).join(", ")}`);
    return { url: target.url };
  },
});
