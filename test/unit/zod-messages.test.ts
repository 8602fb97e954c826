/**
 * Host code parses with zod/mini (issue #22: classic zod cost ~70 ms on every
 * step), which ships no messages of its own ("Invalid input"). src/shared/zod.ts
 * sets the English locale, so what a user or the model reads stays what classic
 * zod wrote: the field, what was expected and what came.
 */
import { describe, expect, it } from "vitest";
import { enabledKinds, parseSafeOutputs } from "../../src/safe-outputs/config.js";
import { parseEvent } from "../../src/trigger/event.js";

describe("zod's messages on the host", () => {
  it("name the field and say, in English, what was expected and what came", () => {
    const { config, problems } = parseSafeOutputs({ "add-comment": { max: "2" }, "update-issue": { target: 0 } });
    expect(problems).toEqual([
      "'add-comment' max: Invalid input: expected number, received string.",
      "'update-issue' target: Too small: expected number to be >0.",
    ]);
    const [update] = enabledKinds({ ...config, "update-issue": {} });
    expect(update?.check({ title: 7, state: "merged" })).toEqual({
      ok: false,
      reason: 'title: Invalid input: expected string, received number; state: Invalid option: expected one of "open"|"closed"',
    });
    expect(() => parseEvent("issues", { action: "opened", issue: { number: 1.5, title: "t" } })).toThrow(
      "issue.number: Invalid input: expected int, received number",
    );
  });
});
