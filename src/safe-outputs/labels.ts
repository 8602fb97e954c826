/** What add-labels and remove-labels share: label names and the `allowed` list they are checked against. */
import * as z from "../shared/zod.js";
import type { CommonLimits } from "./kind.js";

/** A label name as GitHub takes it (up to 50 characters), and never one that reads as an option. */
export const LabelName = z
  .string()
  .check(
    z.trim(),
    z.minLength(1),
    z.maxLength(50),
    z.refine((s) => !s.startsWith("-") && !/[\p{Cc}\p{Cf}]/u.test(s), "is not a usable label name"),
  );

export const LabelOptions = z.strictObject({ allowed: z._default(z.array(LabelName).check(z.maxLength(100)), []) });
export type LabelOptions = z.infer<typeof LabelOptions>;

export function allowedRequired(o: LabelOptions): string | undefined {
  return o.allowed.length ? undefined : "needs 'allowed': the labels the agent may use, e.g. { allowed: [bug, question] }";
}

/** `labels`: names from `allowed` only, at most `max` in one call. */
export function labelsArg(o: LabelOptions, c: CommonLimits, verb: string) {
  const names = o.allowed as [string, ...string[]];
  return z.object({
    labels: z
      .array(z.enum(names, { error: `must be one of the allowed labels: ${names.join(", ")}` }))
      .check(
        z.minLength(1, "name at least one label"),
        z.maxLength(c.max, `at most ${c.max} labels per run`),
        z.describe(`Labels to ${verb}, from: ${names.join(", ")}.`),
      ),
  });
}

export function uniqueLabels(labels: string[]): string[] {
  return [...new Set(labels)];
}
