/**
 * What a run came to, in one place: the `conclusion` output, and the icon
 * and words of the comment's and the job summary's headline. A person
 * scanning the thread reads the headline only, so ✅ means everything asked
 * was done; ⚠️ that something was delivered but not all of it; ❌ that the
 * changes did not get where they were asked to go, for whatever reason.
 */
import type { ConclusionOutput, RunResult } from "../result.js";


/** Every way a run ends, most severe first in `runVerdict` (`incomplete`: stopped with a checkpoint, see session/checkpoint.ts). */
export type OutcomeKind =
  | "done"
  | "partial"
  | "delivery-failed"
  | "refused"
  | "held"
  | "verify-failed"
  | "budget"
  | "agent-failed"
  | "incomplete"
  | "timeout"
  | "cancelled"
  | "skipped";

export type HeadlineIcon = "✅" | "⚠️" | "❌" | "⏭️" | "⏸️";

export interface Verdict {
  kind: OutcomeKind;
  conclusion: ConclusionOutput;
  icon: HeadlineIcon;
  /** The headline without its icon: `Agent Runner finished`. */
  words: string;
}

export interface VerdictInput {
  result: Pick<RunResult, "conclusion" | "budgetExceeded" | "verified">;
  /** Threat detection held the run back: nothing but the report was posted. */
  held?: boolean;
  /** The patch was refused (patch rules, validation): nothing was delivered. */
  refused?: boolean;
  /** Delivery was attempted and did not happen (a push refused, a conflict, the final comment not written). */
  deliveryFailed?: boolean;
  /** Delivered, but not all of it: what was left undone, as a short phrase ("the pull request was not opened"). */
  partial?: string;
}

const OUTCOMES: Record<OutcomeKind, { conclusion: ConclusionOutput; icon: HeadlineIcon; words: string }> = {
  done: { conclusion: "success", icon: "✅", words: "Agent Runner finished" },
  partial: { conclusion: "partial", icon: "⚠️", words: "Agent Runner finished in part" },
  "delivery-failed": { conclusion: "failure", icon: "❌", words: "Agent Runner: delivery failed" },
  refused: { conclusion: "failure", icon: "❌", words: "Agent Runner: the changes were refused" },
  held: { conclusion: "failure", icon: "❌", words: "Agent Runner: held back by threat detection" },
  "verify-failed": { conclusion: "failure", icon: "❌", words: "Agent Runner: the changes fail verify-command" },
  budget: { conclusion: "failure", icon: "❌", words: "Agent Runner: stopped by a budget" },
  "agent-failed": { conclusion: "failure", icon: "❌", words: "Agent Runner: the agent failed" },
  incomplete: { conclusion: "incomplete", icon: "⏸️", words: "Agent Runner: stopped before finishing, work kept" },
  timeout: { conclusion: "timeout", icon: "❌", words: "Agent Runner: timeout" },
  cancelled: { conclusion: "cancelled", icon: "❌", words: "Agent Runner: cancelled" },
  skipped: { conclusion: "skipped", icon: "⏭️", words: "Agent Runner: skipped" },
};

function kindOf(i: VerdictInput): OutcomeKind {
  const r = i.result;
  if (r.conclusion === "skipped") return "skipped";
  if (r.conclusion === "cancelled") return "cancelled";
  if (r.budgetExceeded) return "budget";
  if (r.conclusion === "timeout") return "timeout";
  if (r.conclusion === "failure") return r.verified === "failed" ? "verify-failed" : "agent-failed";
  if (i.held) return "held";
  if (i.refused) return "refused";
  if (i.deliveryFailed) return "delivery-failed";
  // Not delivered, but nothing lost: the checkpoint (and the artifact) keep the work for `@agent continue`.
  if (r.conclusion === "incomplete") return "incomplete";
  if (i.partial) return "partial";
  return "done";
}

/** The one mapping from a run's outcome to its `conclusion` output and headline. */
export function runVerdict(i: VerdictInput): Verdict {
  const kind = kindOf(i);
  const o = OUTCOMES[kind];
  return { kind, ...o, words: kind === "partial" && i.partial ? `${o.words}: ${i.partial}` : o.words };
}

/** `✅ Agent Runner finished`: the headline of the comment (`###`) and of the job summary (`##`). */
export function headline(v: Verdict): string {
  return `${v.icon} ${v.words}`;
}
