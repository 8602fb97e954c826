/**
 * The table of attempts (`attempts` > 1) for the job summary and the final
 * comment: raw Markdown, posted through the filter (safe-markdown.ts) like
 * the rest; the only agent-chosen text in it (the judge's reasons, a
 * fallback that quotes the judge's end) is code.
 */
import type { RunResult } from "../result.js";
import { codeName } from "./markdown-code.js";

const VERIFIED: Record<NonNullable<RunResult["attempts"]>[number]["verified"], string> = { passed: "✅ passed", failed: "❌ failed", "not-run": "not run" };

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Lines of the section; none for a run of one attempt. */
export function attemptsSection(result: RunResult, heading = "### Attempts"): string[] {
  const rows = result.attempts;
  if (!rows?.length) return [];
  const sel = result.attemptSelection;
  const how =
    sel?.select === "judge"
      ? sel.fallback
        ? `Chosen by \`select: verify\` (the judge did not decide: ${codeName(sel.fallback.slice(0, 500))}).`
        : "Chosen by the judge agent (`select: judge`)."
      : "Chosen by `select: verify`: a passing attempt first, then the fewest changed lines.";
  return [
    heading,
    "",
    how,
    "",
    "| Attempt | Conclusion | Verify | Changed lines | Files | Exit | Duration | |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (a) =>
        `| ${a.attempt} | ${a.conclusion} | ${VERIFIED[a.verified]} | ${a.changedLines} | ${a.changedFiles} | ${a.exitCode ?? "–"} | ${seconds(a.durationMs)} | ${a.chosen ? "**chosen**" : ""} |`,
    ),
    "",
    ...(sel?.reasons?.length ? ["Judge's reasons:", "", ...sel.reasons.slice(0, 10).map((r) => `- ${codeName(r.slice(0, 500))}`), ""] : []),
    `Every attempt's patch and trace is in the run artifact (\`attempt-<n>/\`).`,
    "",
  ];
}
