/**
 * The local approval record (publish/approval/local.ts, record.ts) and the
 * digest's local part, without a run: both record kinds read back from
 * approval.json, `show`'s line for each, and the expiry bound in a local
 * digest while a GitHub digest's document has no such key (its digests are
 * unchanged).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson, stagedContent, stagedDigest } from "../../src/publish/approval/digest.js";
import { loadRecord, parseRecord, recordLine, type LocalApprovalRecord } from "../../src/publish/approval/record.js";
import { localPlan, LOCAL_WORKFLOW } from "../../src/publish/approval/local.js";
import { GITHUB_RECORD, stagedResult } from "./fixtures.js";

const LOCAL: LocalApprovalRecord = {
  v: 1,
  kind: "local",
  state: "enacted",
  digest: "cd".repeat(32),
  stagingId: "0f4d2a8e-5a3c-4a57-9a51-2f0f1c0e8b11",
  workTree: "/home/me/repo",
  baseCommit: "a".repeat(40),
  stagedAt: "2026-01-01T00:00:00.000Z",
  expiresAt: "2026-01-04T00:00:00.000Z",
  requestVerdicts: [],
  decision: { by: "me", at: "2026-01-01T01:00:00.000Z" },
};

describe("approval.json of either kind", () => {
  it("reads back each kind, and `show` says where a local one applies and who approved it", async () => {
    expect(parseRecord(JSON.stringify(LOCAL))).toEqual(LOCAL);
    expect(parseRecord(JSON.stringify(GITHUB_RECORD))).toEqual(GITHUB_RECORD);
    const dir = mkdtempSync(path.join(os.tmpdir(), "local-record-"));
    writeFileSync(path.join(dir, "approval.json"), JSON.stringify(LOCAL));
    expect(await loadRecord(dir)).toEqual(LOCAL);
    expect(recordLine(LOCAL)).toBe(
      `enacted by me at 2026-01-01T01:00:00.000Z; digest ${"cd".repeat(32)}; staged 2026-01-01T00:00:00.000Z locally for /home/me/repo on aaaaaaaaaaaa, expires 2026-01-04T00:00:00.000Z`,
    );
    expect(recordLine(GITHUB_RECORD)).toContain("from run 42 (artifact 'agent-run-42-1')");
  });

  it("a local record with a bad digest, staging id or base commit is no record", () => {
    for (const bad of [{ digest: "zz" }, { stagingId: "../../x" }, { baseCommit: "HEAD" }, { kind: "remote" }]) expect(parseRecord(JSON.stringify({ ...LOCAL, ...bad }))).toBeUndefined();
    expect(parseRecord("not json")).toBeUndefined();
  });
});

describe("the local digest", () => {
  const { result } = stagedResult("a".repeat(40), "local-digest-");
  const requests = { requests: [], problems: [] };
  const artifact = { runId: "local-1", id: 0, name: "results folder" };

  it("binds the expiry and the working tree; without an expiry the document has no such key (GitHub's digests are unchanged)", async () => {
    const plain = await stagedContent(result, requests, localPlan("/home/me/repo", "a".repeat(40)), artifact, LOCAL_WORKFLOW);
    expect(canonicalJson(plain)).not.toContain("expiresAt");
    const bound = (expiresAt: string, workTree = "/home/me/repo") =>
      stagedContent(result, requests, localPlan(workTree, "a".repeat(40)), artifact, LOCAL_WORKFLOW, { expiresAt }).then(stagedDigest);
    const d = await bound("2026-01-04T00:00:00.000Z");
    expect(d).not.toBe(stagedDigest(plain));
    expect(await bound("2999-01-01T00:00:00.000Z")).not.toBe(d);
    expect(await bound("2026-01-04T00:00:00.000Z", "/home/me/other")).not.toBe(d);
    expect(await bound("2026-01-04T00:00:00.000Z")).toBe(d);
  });
});
