/**
 * "Did you mean …?" for flags and config keys: the distance is right, and a
 * name too long to be a typo of a known one gets no suggestion (a key of
 * megabytes in a config file used to cost a table of its length per known name).
 */
import { describe, expect, it } from "vitest";
import { closestName, didYouMean, editDistance, MAX_SUGGESTED_NAME } from "../../src/shared/did-you-mean.js";

describe("editDistance", () => {
  it("counts inserts, deletes, substitutions and a swap of neighbours as one edit each", () => {
    expect(editDistance("prompt", "prompt")).toBe(0);
    expect(editDistance("promtp", "prompt")).toBe(1);
    expect(editDistance("prompt", "promt")).toBe(1);
    expect(editDistance("prompt", "prompts")).toBe(1);
    expect(editDistance("model", "modal")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("abc", "")).toBe(3);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("ca", "abc")).toBe(3); // optimal string alignment: no edit of a swapped pair
  });
});

describe("closestName", () => {
  const known = ["prompt", "model", "max-cost-usd", "model-prices"];
  it("suggests the close known name, or one the given word starts", () => {
    expect(closestName("promtp", known)).toBe("prompt");
    expect(closestName("MODAL", known)).toBe("model");
    expect(closestName("model-pri", known)).toBe("model-prices");
    expect(closestName("zzz", known)).toBeUndefined();
    expect(didYouMean("promt", known, "--")).toBe(" Did you mean '--prompt'?");
  });

  it(`names longer than ${MAX_SUGGESTED_NAME} characters get no suggestion, even one edit from a known name`, () => {
    const long = "k".repeat(MAX_SUGGESTED_NAME + 1);
    expect(closestName(long.slice(0, -1) + "x", [long])).toBeUndefined();
    // At the limit it still works.
    const atLimit = "k".repeat(MAX_SUGGESTED_NAME);
    expect(closestName(atLimit.slice(0, -1) + "x", [atLimit])).toBe(atLimit);
    // A key of 4 MB from a config file: no table of its length is built.
    const huge = "a".repeat(4 << 20);
    expect(closestName(huge, [...known, huge.slice(1)])).toBeUndefined();
  });
});
