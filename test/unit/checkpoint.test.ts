/**
 * Issue #36: the pieces of checkpoints that need no run. The record in a
 * checkpoint commit's message is read as data (only the runner's own shape
 * counts), the ref name is checked, the margin before `timeout-minutes` and
 * the watchdog's period keep a stall within `stall-minutes` + 30 s, and the
 * workspace scan is bounded, sees a change and ends when the watch stops.
 */
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { checkpointMessage, checkpointRef, parseCheckpointMessage } from "../../src/git/checkpoint.js";
import { checkpointMarginMs } from "../../src/runner.js";
import { asksToContinue } from "../../src/session/checkpoint.js";
import { checkPeriodMs, MAX_PERIOD_MS, watchForStall, workspaceFingerprint } from "../../src/runner/stall.js";

const BASE = "a".repeat(40);

/** How many directory entries the file system handed to the code, per directory, and which directory handles were closed. */
const fsSeen = vi.hoisted(() => ({ entries: new Map<string, number>(), open: new Set<string>(), opened: [] as string[] }));
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const add = (dir: unknown, n: number) => fsSeen.entries.set(String(dir), (fsSeen.entries.get(String(dir)) ?? 0) + n);
  return {
    ...real,
    readdir: async (...args: Parameters<typeof real.readdir>) => {
      const list = await real.readdir(...args);
      add(args[0], list.length);
      return list;
    },
    opendir: async (...args: Parameters<typeof real.opendir>) => {
      const d = await real.opendir(...args);
      const name = String(args[0]);
      fsSeen.open.add(name);
      fsSeen.opened.push(name);
      const read = d.read.bind(d) as () => Promise<import("node:fs").Dirent | null>;
      const close = d.close.bind(d) as () => Promise<void>;
      return Object.assign(d, {
        read: async () => {
          const e = await read();
          if (e) add(name, 1);
          return e;
        },
        close: async () => {
          fsSeen.open.delete(name);
          return close();
        },
      });
    },
  };
});

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

  it("a directory with more entries than the limit is read only up to the limit, and its handle is closed", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "stall-huge-"));
    for (let i = 0; i < 3_000; i++) writeFileSync(path.join(dir, `f${i}`), "");
    fsSeen.entries.clear();
    expect(await workspaceFingerprint(dir, 50)).toMatch(/^50:/);
    // Not the 3,000 entries a whole-directory read loads: at most the limit (the kernel's batch stays inside the Dir).
    expect(fsSeen.entries.get(dir)).toBe(50);
    expect(fsSeen.open.has(dir)).toBe(false);
  });

  it("a scan under way when the watch stops ends after the call under way, closing its handle: no walk outlives the agent", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "stall-stop-"));
    for (let i = 0; i < 3_000; i++) writeFileSync(path.join(dir, `f${i}`), "");
    // Subdirectories too: an unstopped walk enters them once it has read the first directory.
    for (let i = 0; i < 5; i++) mkdirSync(path.join(dir, `d${i}`));
    expect(await workspaceFingerprint(dir, 100, AbortSignal.abort())).toBeUndefined();

    fsSeen.entries.clear();
    fsSeen.opened.length = 0;
    const onStall = vi.fn();
    // A period of 100 ms: a scan re-armed after stop() would start within the wait below.
    let clock = Date.now();
    const watch = watchForStall({ stallMs: 400, workspace: dir, onStall, now: () => clock });
    // The reference scan starts with the watch; the agent ends once the scan is into the directory.
    await vi.waitFor(() => expect(fsSeen.entries.get(dir)).toBeGreaterThan(0), { timeout: 10_000, interval: 1 });
    watch.stop();
    await vi.waitFor(() => expect(fsSeen.open.has(dir)).toBe(false), { timeout: 10_000, interval: 5 });
    const seen = fsSeen.entries.get(dir)!;
    expect(seen).toBeLessThan(3_000);
    // Nothing more is read or opened once the handle is closed (no subdirectory is entered, no scan
    // re-armed), and nothing counts as a stall, however long the agent has been quiet.
    clock += 60_000;
    await new Promise((r) => setTimeout(r, 500));
    expect(fsSeen.entries.get(dir)).toBe(seen);
    expect(fsSeen.opened).toEqual([dir]);
    expect(onStall).not.toHaveBeenCalled();
    expect(watch.stalled).toBe(false);
  });
});
