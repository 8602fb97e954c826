/**
 * Issue #36: the pieces of checkpoints that need no run. The record in a
 * checkpoint commit's message is read as data (only the runner's own shape
 * counts), the ref name is checked, the margin before `timeout-minutes` and
 * the watchdog's period keep a stall within `stall-minutes` + 30 s, and the
 * workspace scan is bounded and sees a change.
 */
import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkpointMessage, checkpointRef, parseCheckpointMessage } from "../../src/git/checkpoint.js";
import { checkpointMarginMs } from "../../src/runner.js";
import { asksToContinue } from "../../src/session/checkpoint.js";
import { checkPeriodMs, MAX_PERIOD_MS, workspaceFingerprint } from "../../src/runner/stall.js";

const BASE = "a".repeat(40);

describe("checkpoint record", () => {
  it("round-trips the runner's record, and refuses anything else", () => {
    const msg = checkpointMessage({ cause: "stalled", runs: 2, base: BASE, spentUsd: 0.25 }, "#7");
    expect(parseCheckpointMessage(msg)).toEqual({ cause: "stalled", runs: 2, base: BASE, spentUsd: 0.25 });
    expect(parseCheckpointMessage("just a commit\n")).toBeUndefined();
    expect(parseCheckpointMessage(msg.replace("Agent-Runner-Cause: stalled", "Agent-Runner-Cause: rm"))).toBeUndefined();
    expect(parseCheckpointMessage(msg.replace(BASE, "HEAD~1"))).toBeUndefined();
    expect(parseCheckpointMessage(msg.replace("Runs: 2", "Runs: -1"))).toBeUndefined();
    expect(parseCheckpointMessage(msg.replace("Spent-Usd: 0.25", "Spent-Usd: -5"))).toBeUndefined();
  });

  it("names refs only from plain names", () => {
    expect(checkpointRef(12)).toBe("refs/agent-runner/checkpoints/12");
    for (const bad of ["../heads/main", "a..b", "x.lock", "", "a b", "-x"]) expect(() => checkpointRef(bad)).toThrow();
  });

  it("`@agent continue` is the request 'continue' (a few words may follow), not any request that mentions it", () => {
    expect(asksToContinue("continue")).toBe(true);
    expect(asksToContinue("  Continue please\n")).toBe(true);
    expect(asksToContinue("please continue")).toBe(false);
    expect(asksToContinue("continuer")).toBe(false);
  });
});

describe("time limits", () => {
  it("the margin before timeout-minutes is 10 %, at most a minute", () => {
    expect(checkpointMarginMs(6)).toBe(600);
    expect(checkpointMarginMs(30 * 60)).toBe(60_000);
    expect(checkpointMarginMs(5 * 60)).toBe(30_000);
  });

  it("the watchdog looks often enough to see a stall within stall-minutes + 30 s", () => {
    for (const minutes of [0.1, 1, 10, 60, 360]) {
      const period = checkPeriodMs(minutes * 60_000);
      expect(period).toBeLessThanOrEqual(MAX_PERIOD_MS);
      expect(period).toBeLessThan(30_000);
    }
  });

  it("the workspace scan is bounded and sees a changed file", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "stall-scan-"));
    for (let i = 0; i < 30; i++) writeFileSync(path.join(dir, `f${i}`), "x");
    const before = await workspaceFingerprint(dir);
    expect(await workspaceFingerprint(dir)).toBe(before);
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(dir, "f3"), later, later);
    expect(await workspaceFingerprint(dir)).not.toBe(before);
    expect(await workspaceFingerprint(dir, 10)).toMatch(/^10:/);
  });
});
