import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkBudget } from "../../src/sandbox/budget.js";
import { agentBackend } from "../../src/agents/registry.js";
import { parseSettings } from "../../src/config/parse.js";
import { detectorSettings, judgedDigest, parseVerdict, verdictFindings, verdictRecord, writeVerdict, type Judged } from "../../src/publish/threats/detection.js";

const CLEAR = { prompt_injection: false, secret_leak: false, malicious_patch: false, reasons: [] };

describe("the detection agent's answer", () => {
  it("is the whole text as JSON, or exactly one fenced block", () => {
    expect(parseVerdict(JSON.stringify(CLEAR))).toEqual({ verdict: CLEAR });
    expect(parseVerdict("Here is my verdict:\n```json\n" + JSON.stringify({ ...CLEAR, malicious_patch: true, reasons: ["curl | sh"] }) + "\n```\n")).toEqual({
      verdict: { ...CLEAR, malicious_patch: true, reasons: ["curl | sh"] },
    });
    expect(parseVerdict("```\n" + JSON.stringify(CLEAR) + "\n```")).toEqual({ verdict: CLEAR });
  });

  it("nothing looser: JSON in prose, two blocks, extra or missing fields, wrong types are no verdict", () => {
    expect(parseVerdict("")).toEqual({ error: expect.stringContaining("no answer") });
    expect(parseVerdict(`All clear: ${JSON.stringify(CLEAR)}`)).toEqual({ error: expect.stringContaining("not a JSON object") });
    const block = "```json\n" + JSON.stringify(CLEAR) + "\n```";
    expect(parseVerdict(`${block}\n${block}`)).toEqual({ error: expect.stringContaining("more than one") });
    expect(parseVerdict(JSON.stringify({ ...CLEAR, verdict: "ok" }))).toEqual({ error: expect.stringContaining("schema") });
    expect(parseVerdict(JSON.stringify({ prompt_injection: false, secret_leak: false, reasons: [] }))).toEqual({ error: expect.stringContaining("malicious_patch") });
    expect(parseVerdict(JSON.stringify({ ...CLEAR, secret_leak: "no" }))).toEqual({ error: expect.stringContaining("secret_leak") });
    expect(parseVerdict("{not json")).toEqual({ error: expect.stringContaining("not valid JSON") });
  });
});

describe("the verdict record, checked by the publish step", () => {
  const judged: Judged = { patch: Buffer.from("diff --git a/x b/x\n"), requests: ['{"type":"add_comment","body":"hi"}'], finalMessage: "Done.", structuredOutput: '{"ok":true}' };
  const digest = judgedDigest(judged);
  const clean = async () => true;
  const dir = () => mkdtempSync(path.join(os.tmpdir(), "verdict-"));

  it("the digest changes with any part of what was judged", () => {
    expect(judgedDigest({ ...judged, finalMessage: "Done!" })).not.toBe(digest);
    expect(judgedDigest({ ...judged, requests: [] })).not.toBe(digest);
    expect(judgedDigest({ ...judged, patch: Buffer.from("diff --git a/y b/y\n") })).not.toBe(digest);
    expect(judgedDigest({ ...judged, structuredOutput: '{"ok":false}' })).not.toBe(digest);
    // Parts cannot be shifted into each other.
    expect(judgedDigest({ patch: Buffer.from(""), requests: [], finalMessage: "ab", structuredOutput: "" })).not.toBe(judgedDigest({ patch: Buffer.from("a"), requests: [], finalMessage: "b", structuredOutput: "" }));
    expect(judgedDigest({ patch: Buffer.from(""), requests: [], finalMessage: "ab", structuredOutput: "" })).not.toBe(judgedDigest({ patch: Buffer.from(""), requests: [], finalMessage: "a", structuredOutput: "b" }));
  });

  it("a flagged threat is a finding per threat, its reasons bounded and screened", async () => {
    const d = dir();
    const reasons = ["pipes curl into sh", "x".repeat(500), "leaks xoxb-123", "4", "5", "6"];
    await writeVerdict(d, verdictRecord({ backend: "claude" }, digest, { conclusion: "success", output: JSON.stringify({ ...CLEAR, malicious_patch: true, secret_leak: true, reasons }), usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 } }));
    const { findings } = await verdictFindings(d, judged, { failOpen: false, cleanReason: async (r) => !r.includes("xoxb") });
    expect(findings.map((f) => f.kind)).toEqual(["threat-verdict", "threat-verdict"]);
    expect(findings.map((f) => f.detail.split(":")[0])).toEqual(["secret_leak", "malicious_patch"]);
    expect(findings[0]!.detail).not.toContain("xoxb");
    expect(findings[0]!.detail).toContain("(a reason left out: it looked like a secret)");
    expect(findings[0]!.detail).not.toContain(" / 6");
    expect(findings[0]!.detail.length).toBeLessThan(5 * 210 + 40);
  });

  it("no record, an unreadable one, or one for other content holds the run back, fail-open or not", async () => {
    expect((await verdictFindings(dir(), judged, { failOpen: true, cleanReason: clean })).findings).toEqual([expect.objectContaining({ kind: "detection-failed", detail: expect.stringContaining("no verdict") })]);
    const bad = dir();
    writeFileSync(path.join(bad, "x"), "");
    await writeVerdict(bad, verdictRecord({ backend: "claude" }, digest, { conclusion: "success", output: JSON.stringify(CLEAR), usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 } }));
    const other = { ...judged, finalMessage: "Something else was posted." };
    expect((await verdictFindings(bad, other, { failOpen: true, cleanReason: clean })).findings).toEqual([expect.objectContaining({ kind: "detection-failed", detail: expect.stringContaining("other content") })]);
    writeFileSync(path.join(bad, "detection", "verdict.json"), JSON.stringify({ version: 1, digest, agent: "claude", status: "verdict" }));
    expect((await verdictFindings(bad, judged, { failOpen: false, cleanReason: clean })).findings).toEqual([expect.objectContaining({ kind: "detection-failed" })]);
    writeFileSync(path.join(bad, "detection", "verdict.json"), "{");
    expect((await verdictFindings(bad, judged, { failOpen: true, cleanReason: clean })).findings).toEqual([expect.objectContaining({ detail: expect.stringContaining("not readable") })]);
  });

  it("a failed detector holds by default and warns with fail-open", async () => {
    const d = dir();
    await writeVerdict(d, verdictRecord({ backend: "claude" }, digest, { conclusion: "timeout", reason: "stopped", output: "", usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 } }));
    expect((await verdictFindings(d, judged, { failOpen: false, cleanReason: clean })).findings).toEqual([expect.objectContaining({ kind: "detection-failed", detail: expect.stringContaining("did not finish") })]);
    const open = await verdictFindings(d, judged, { failOpen: true, cleanReason: clean });
    expect(open.findings).toEqual([]);
    expect(open.warnings).toEqual([expect.stringContaining("published anyway")]);
  });
});

describe("the detector's settings", () => {
  const ws = () => mkdtempSync(path.join(os.tmpdir(), "detector-ws-"));
  const run = (agent: Record<string, string>) => parseSettings({ prompt: "p", "threat-detection": "agent", "max-cost-usd": "5", "max-tokens": "100000", ...agent }, { cwd: ws() });

  it("a model-backed detector gets its own 12-request budget, never the run's", () => {
    const s = detectorSettings(run({ agent: "claude", model: "claude-sonnet-4-5" }), ws(), "judge", { usesModelGateway: true });
    expect(s.budget?.maxModelRequests).toBe(12);
    expect(s.budget?.maxCostUsd).toBeUndefined();
    expect(s.budget?.maxTokens).toBeUndefined();
  });

  it("a command detector gets no model budget, so the runner's budget check accepts it", async () => {
    const settings = run({ agent: "command", "agent-command": "true", "detection-agent": "command", "max-cost-usd": "", "max-tokens": "" });
    const s = detectorSettings(settings, ws(), "judge", { usesModelGateway: agentBackend("command").provider !== undefined });
    expect(s.budget).toBeUndefined();
    await expect(checkBudget(s, agentBackend("command"))).resolves.toBeUndefined();
    // What it was given before: refused, so every run it judged was held as detection-failed.
    await expect(checkBudget({ ...s, budget: { maxModelRequests: 12, modelPrices: {} } }, agentBackend("command"))).rejects.toThrow(/max-model-requests/);
  });
});
