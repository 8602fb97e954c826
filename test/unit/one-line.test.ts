import { describe, expect, it } from "vitest";
import { oneLine } from "../../src/text.js";

/** oneLine as it was before it stopped flattening long texts past what the line needs. */
const wholeFlatten = (s: string, max = 300) => {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

describe("oneLine", () => {
  it("gives what flattening the whole text gives, for long texts of every shape", () => {
    const pieces = ["word", " ", "\n\n", "\t \r\n ", "x".repeat(50), " ".repeat(700), "é✓", "\u2028", "🙂"];
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 400; i++) {
      let s = "";
      const parts = 1 + rand(400);
      for (let j = 0; j < parts; j++) s += pieces[rand(pieces.length)];
      for (const max of [10, 200, 400]) expect(oneLine(s, max)).toBe(wholeFlatten(s, max));
    }
    // Mostly whitespace at the head: the whole text still decides.
    const sparse = " ".repeat(5000) + "a b c " + "word ".repeat(200);
    expect(oneLine(sparse, 400)).toBe(wholeFlatten(sparse, 400));
    expect(oneLine("short  text\n", 400)).toBe("short text");
  });
});
