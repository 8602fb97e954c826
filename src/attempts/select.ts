/**
 * `select: verify`: which attempt is delivered. A passing attempt first (the
 * verify command passed on its workspace), then the fewest changed lines:
 * among changes that work, the smallest is the easiest to review. Ties and
 * runs without a verify command are ordered so the choice never depends on
 * which attempt happened to finish first.
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { RunResult, Verified } from "../result.js";

export interface Finished {
  attempt: number;
  result: RunResult;
  verified: Verified;
  changedLines: number;
}

const VERIFIED_ORDER: Record<Verified, number> = { passed: 0, "not-run": 1, failed: 2 };

/**
 * Best first: verified passed, then not verified, then failed; within those,
 * a run that ended in success; then one that changed something (an attempt
 * that did nothing is not the best answer to a task that asked for a change,
 * though it is kept when none did); then the fewest changed lines; then the
 * lowest attempt number.
 */
export function rankByVerify(attempts: readonly Finished[]): Finished[] {
  const key = (a: Finished) => [
    VERIFIED_ORDER[a.verified],
    a.result.conclusion === "success" ? 0 : 1,
    a.changedLines > 0 || a.result.diff.changedFiles.length > 0 ? 0 : 1,
    a.changedLines,
    a.attempt,
  ];
  return [...attempts].sort((x, y) => {
    const kx = key(x);
    const ky = key(y);
    for (let i = 0; i < kx.length; i++) if (kx[i] !== ky[i]) return kx[i]! - ky[i]!;
    return 0;
  });
}

/** The attempts a judge may choose from: those that passed, or with no verify command the ones that succeeded. */
export function judgeCandidates(attempts: readonly Finished[]): Finished[] {
  const passed = attempts.filter((a) => a.verified === "passed");
  if (passed.length) return passed;
  return attempts.filter((a) => a.verified === "not-run" && a.result.conclusion === "success");
}

/** Added plus removed lines of a patch file (headers not counted), read as a stream: a patch can be large. */
export async function changedLines(patchPath: string): Promise<number> {
  let n = 0;
  try {
    const lines = createInterface({ input: createReadStream(patchPath, { encoding: "utf8" }), crlfDelay: Infinity });
    let inHunk = false;
    for await (const line of lines) {
      if (line.startsWith("diff --git ")) inHunk = false;
      else if (line.startsWith("@@")) inHunk = true;
      else if (inHunk && (line.startsWith("+") || line.startsWith("-"))) n++;
    }
  } catch {
    return 0;
  }
  return n;
}
