/** Fixtures the approval tests without a run share: a GitHub staging record, and a run result whose patch is a file of its own. */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ApprovalRecord } from "../../src/publish/approval/record.js";
import type { RunResult } from "../../src/result.js";

export const DIGEST = "ab".repeat(32);
export const WF = "o/r/.github/workflows/agent.yml";

/** A record run 42 of o/r's agent.yml staged on thread 7 (its artifact agent-run-42-1), expiring after 72 hours. */
export const GITHUB_RECORD: ApprovalRecord = {
  v: 1,
  state: "staged",
  digest: DIGEST,
  repository: "o/r",
  thread: 7,
  runId: "42",
  artifactId: 9,
  artifactName: "agent-run-42-1",
  workflow: WF,
  stagedAt: "2026-01-01T00:00:00.000Z",
  expiresAt: "2026-01-04T00:00:00.000Z",
};

/** A run's result (output "done", one changed file x on `baseCommit`) whose patch is `patchPath`, a fresh file. */
export function stagedResult(baseCommit: string, prefix: string): { result: RunResult; patchPath: string } {
  const patchPath = path.join(mkdtempSync(path.join(os.tmpdir(), prefix)), "patch.diff");
  writeFileSync(patchPath, "diff --git a/x b/x\n");
  const result = { output: "done", diff: { patchPath, changedFiles: ["x"], baseCommit } } as unknown as RunResult;
  return { result, patchPath };
}
