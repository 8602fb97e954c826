import { describe, expect, it } from "vitest";
import { SummaryBuilder } from "../../src/trace/summary.js";

describe("event summary", () => {
  it("takes the final message from the text after the last tool call, capped at 64 KB", () => {
    const b = new SummaryBuilder();
    b.add({ type: "text", text: "before the tool" });
    b.add({ type: "tool_call", name: "Bash", input: { command: "ls" } });
    for (let i = 0; i < 10_000; i++) b.add({ type: "text", text: `line ${i} ${"x".repeat(100)}` });
    const message = b.summary().finalMessage;
    expect(message.length).toBeLessThanOrEqual(64 * 1024);
    expect(message.endsWith(`line 9999 ${"x".repeat(100)}`)).toBe(true);
    expect(message).not.toContain("before the tool");
  });

  it("prefers the CLI's own result text and cumulative usage", () => {
    const b = new SummaryBuilder();
    b.add({ type: "text", text: "thinking out loud" });
    b.add({ type: "usage", usage: { inputTokens: 5, outputTokens: 1, cachedTokens: 0 } });
    b.add({ type: "usage", usage: { inputTokens: 50, outputTokens: 10, cachedTokens: 4 }, cumulative: true });
    b.add({ type: "result", text: "The answer.", isError: false });
    expect(b.summary()).toMatchObject({ finalMessage: "The answer.", usage: { inputTokens: 50, outputTokens: 10, cachedTokens: 4 } });
  });
});
