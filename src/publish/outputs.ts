/** RunResult → the action's outputs (strings), redacted. */
import type { RunResult } from "../result.js";
import type { Outputs } from "../shared/outputs.js";

export type { Outputs };

export function resultOutputs(result: RunResult): Outputs {
  const out: Outputs = {
    conclusion: result.conclusion,
    "final-message": result.output,
    usage: JSON.stringify(result.usage),
    "budget-exceeded": String(result.budgetExceeded === true),
    "duration-ms": String(result.durationMs),
    "changed-files": JSON.stringify(result.diff.changedFiles),
    "excluded-files": JSON.stringify(result.diff.excludedFiles ?? []),
    "patch-path": result.diff.patchPath,
    attempts: JSON.stringify(result.attempts ?? []),
    verified: result.verified ?? "not-run",
  };
  if (result.sessionId) out["session-id"] = result.sessionId;
  if (result.structuredOutput !== undefined) out["structured-output"] = JSON.stringify(result.structuredOutput);
  return out;
}

/** The uploaded results artifact's outputs (none when nothing was uploaded). */
export function artifactOutputs(artifact: { id: number; url?: string } | undefined): Outputs {
  return artifact ? { "artifact-id": String(artifact.id), ...(artifact.url ? { "artifact-url": artifact.url } : {}) } : {};
}
