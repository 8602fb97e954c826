/**
 * The `task: review` inputs, as the run's parser and plan and gather read them.
 */
import { describe, expect, it } from "vitest";
import { parseReviewInputs } from "../../src/config/review.js";
import type { InputName } from "../../src/constants.js";

function parse(inputs: Partial<Record<InputName, string>>) {
  const problems: string[] = [];
  const settings = parseReviewInputs((n) => inputs[n], (input, message) => problems.push(`${input}: ${message}`));
  return { settings, problems };
}

describe("parseReviewInputs", () => {
  it("refuses approval: required with task: review, naming the input (an approved run would not post its review)", () => {
    expect(parse({ task: "review", approval: "required" }).problems).toEqual([expect.stringMatching(/^approval: 'required' does not apply to 'task: review'/)]);
    expect(parse({ task: "review", approval: "none" }).problems).toEqual([]);
    expect(parse({ task: "change", approval: "required" }).problems).toEqual([]);
  });

  it("reads a shard job's shard and range, and refuses one without the other", () => {
    const range = `${"a".repeat(40)}..${"b".repeat(40)}`;
    expect(parse({ task: "review", "review-shard": "2", "review-range": range }).settings?.shard).toEqual({ index: 2, range: { from: "a".repeat(40), head: "b".repeat(40) } });
    expect(parse({ task: "review", "review-shard": "2" }).problems).toEqual([expect.stringMatching(/^review-range:/)]);
  });
});
