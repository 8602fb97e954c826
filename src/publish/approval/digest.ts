/**
 * The digest a person approves: SHA-256 over one canonical JSON document of
 * what would be written (the patch's bytes, each safe-output request, the
 * agent's final message), where it would go (the delivery plan), which
 * run artifact holds it and which workflow staged it (only that workflow's
 * approvals, with its approvers, may publish it). Staging computes it from the results folder; an
 * approval recomputes it from the artifact downloaded again, so a replaced
 * or edited artifact, or a plan that changed, no longer matches.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { DeliveryMode } from "../../config/deliver-plan.js";
import type { RunResult } from "../../result.js";
import type { RequestsFile } from "../safe-outputs/requests.js";

/** The first hex digits an `/approve` comment names: enough to tell staged runs apart, short enough to type. */
export const DIGEST_PREFIX_LENGTH = 12;

/**
 * Where the staged bytes would go. `working-tree` (the CLI, local.ts): the patch applied to a
 * local checkout, named by `repository` (its absolute path).
 */
export interface StagedPlan {
  mode: DeliveryMode | "working-tree";
  repository: string;
  thread?: number;
  /** The commit the patch was made against. */
  baseCommit: string;
}

/** The run artifact that holds the staged bytes. */
export interface StagedArtifact {
  runId: string;
  id: number;
  name: string;
}

export interface StagedContent {
  version: 1;
  patchSha256: string;
  patchBytes: number;
  changedFiles: string[];
  requests: unknown[];
  requestProblems: string[];
  finalMessageSha256: string;
  plan: StagedPlan;
  artifact: StagedArtifact;
  /** The workflow that staged it and alone may publish it (workflowIdentity: `owner/repo/.github/workflows/x.yml`). */
  workflow: string;
  /** Local staging only (local.ts): when it expires, bound here because the record beside it is in a folder anyone may edit. */
  expiresAt?: string;
}

const sha256 = (data: string | Buffer): string => createHash("sha256").update(data).digest("hex");

/** JSON with object keys sorted at every level: one document, one string, whatever order the keys were built in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What is staged, read from a results folder (the run's own, or the artifact downloaded again). */
export async function stagedContent(
  result: RunResult,
  requests: RequestsFile,
  plan: StagedPlan,
  artifact: StagedArtifact,
  workflow: string,
  bound: { expiresAt?: string } = {},
): Promise<StagedContent> {
  const patch = await readFile(result.diff.patchPath);
  return {
    version: 1,
    patchSha256: sha256(patch),
    patchBytes: patch.length,
    changedFiles: [...result.diff.changedFiles].sort(),
    // In file order: the order they are applied in is part of what is approved.
    requests: requests.requests.map((r) => ("error" in r ? { line: r.line, error: r.error } : { line: r.line, value: r.value })),
    requestProblems: [...requests.problems],
    finalMessageSha256: sha256(result.output),
    plan,
    artifact,
    workflow,
    // Absent on GitHub (canonicalJson leaves undefined out): its digests are unchanged.
    ...(bound.expiresAt !== undefined ? { expiresAt: bound.expiresAt } : {}),
  };
}

export function stagedDigest(content: StagedContent): string {
  return sha256(canonicalJson(content));
}

/** Whether an approver's `digest` (at least DIGEST_PREFIX_LENGTH hex digits) names `full`. */
export function digestMatches(full: string, given: string): boolean {
  const g = given.toLowerCase();
  return g.length >= DIGEST_PREFIX_LENGTH && /^[0-9a-f]+$/.test(g) && full.startsWith(g);
}
