/**
 * Issue #31, truthful headlines: every outcome the action can reach, its
 * `conclusion` output and its headline in the comment and in the job
 * summary, from the one mapping (src/publish/verdict.ts). ✅ only when
 * everything asked was done; ⚠️ delivered in part; ❌ otherwise.
 */
import { describe, expect, it } from "vitest";
import { OUTPUTS } from "../../src/constants.js";
import { finalBody, stickyMarker } from "../../src/publish/comment.js";
import type { DeliveryOutcome } from "../../src/publish/deliver.js";
import { deliveryVerdict } from "../../src/publish/github-stage.js";
import { summaryMarkdown } from "../../src/publish/summary.js";
import { runVerdict, type OutcomeKind, type Verdict } from "../../src/publish/verdict.js";
import type { RunResult } from "../../src/result.js";
import { runResult } from "../support/run-result.js";

const result = runResult;

const pushed: DeliveryOutcome = { mode: "pull-request", showPatch: false, branch: "agent/7-x", commitSha: "c".repeat(40) };

interface Case {
  verdict: () => Verdict;
  result: RunResult;
  conclusion: string;
  headline: string;
}

/** A Record over OutcomeKind: a new outcome without a row here does not compile. */
const CASES: Record<OutcomeKind, Case> = {
  done: {
    result: result(),
    verdict: () => deliveryVerdict(result(), { outcome: { ...pushed, pullRequest: { number: 8, url: "u", created: true } } }),
    conclusion: "success",
    headline: "✅ Agent Runner finished",
  },
  partial: {
    result: result(),
    verdict: () => deliveryVerdict(result(), { outcome: { ...pushed, incomplete: "the pull request was not opened", compareUrl: "https://github.com/o/r/compare/main...agent/7-x?expand=1" } }),
    conclusion: "partial",
    headline: "⚠️ Agent Runner finished in part: the pull request was not opened",
  },
  "delivery-failed": {
    result: result(),
    verdict: () => deliveryVerdict(result(), { outcome: { mode: "pull-request", showPatch: true, branch: "agent/7-x", error: "Pushing branch 'agent/7-x' failed: GH013" } }),
    conclusion: "failure",
    headline: "❌ Agent Runner: delivery failed",
  },
  refused: {
    result: result(),
    verdict: () => deliveryVerdict(result(), { refusal: "The patch from this run was refused: .github/workflows/ci.yml" }),
    conclusion: "failure",
    headline: "❌ Agent Runner: the changes were refused",
  },
  held: {
    result: result({ output: "" }),
    verdict: () => deliveryVerdict(result({ output: "" }), { refusal: "Held back: a secret in the patch", held: true }),
    conclusion: "failure",
    headline: "❌ Agent Runner: held back by threat detection",
  },
  "verify-failed": {
    result: result({ conclusion: "failure", verified: "failed", reason: "verify-command still fails" }),
    verdict: () => deliveryVerdict(result({ conclusion: "failure", verified: "failed" }), { outcome: { mode: "comment", showPatch: true, note: "Held back" } }),
    conclusion: "failure",
    headline: "❌ Agent Runner: the changes fail verify-command",
  },
  budget: {
    result: result({ conclusion: "failure", budgetExceeded: true, reason: "Budget exceeded" }),
    verdict: () => deliveryVerdict(result({ conclusion: "failure", budgetExceeded: true }), { outcome: { mode: "comment", showPatch: true } }),
    conclusion: "failure",
    headline: "❌ Agent Runner: stopped by a budget",
  },
  "agent-failed": {
    result: result({ conclusion: "failure", reason: "The agent exited with code 1." }),
    verdict: () => deliveryVerdict(result({ conclusion: "failure" }), { outcome: { mode: "comment", showPatch: true } }),
    conclusion: "failure",
    headline: "❌ Agent Runner: the agent failed",
  },
  incomplete: {
    result: result({ conclusion: "incomplete", checkpoint: { cause: "time-limit", runs: 1 }, reason: "Stopped at the time limit." }),
    verdict: () => deliveryVerdict(result({ conclusion: "incomplete" }), { outcome: { mode: "comment", showPatch: true } }),
    conclusion: "incomplete",
    headline: "⏸️ Agent Runner: stopped before finishing, work kept",
  },
  timeout: {
    result: result({ conclusion: "timeout", reason: "The agent hit the 'timeout-minutes' limit and was stopped." }),
    verdict: () => deliveryVerdict(result({ conclusion: "timeout" }), { outcome: { mode: "comment", showPatch: true } }),
    conclusion: "timeout",
    headline: "❌ Agent Runner: timeout",
  },
  cancelled: {
    result: result({ conclusion: "cancelled", reason: "The run was cancelled." }),
    verdict: () => deliveryVerdict(result({ conclusion: "cancelled" }), { outcome: { mode: "comment", showPatch: true } }),
    conclusion: "cancelled",
    headline: "❌ Agent Runner: cancelled",
  },
  skipped: {
    result: result({ conclusion: "skipped" }),
    verdict: () => runVerdict({ result: result({ conclusion: "skipped" }) }),
    conclusion: "skipped",
    headline: "⏭️ Agent Runner: skipped",
  },
};

describe("headline × conclusion for every outcome", () => {
  it.each(Object.entries(CASES) as [OutcomeKind, Case][])("%s", (kind, c) => {
    const v = c.verdict();
    expect(v.kind).toBe(kind);
    // The `conclusion` output (action.ts sets it from this verdict), documented in OUTPUTS.
    expect(v.conclusion).toBe(c.conclusion);
    expect(OUTPUTS.conclusion).toContain(`\`${c.conclusion}\``);
    // The comment's headline.
    const body = finalBody({ marker: stickyMarker("k"), result: c.result, verdict: v, links: {} });
    expect(body.split("\n")[1]).toBe(`### ${c.headline}`);
    // The job summary's headline and its Conclusion row.
    const summary = summaryMarkdown(c.result, v);
    expect(summary.split("\n")[0]).toBe(`## ${c.headline}`);
    expect(summary).toMatch(new RegExp(`^\\| Conclusion \\| ${c.headline.split(" ")[0]} ${c.conclusion}( —|\\s\\|)`, "m"));
  });

  it("✅ only with conclusion success, ⚠️ only with partial, ❌ for every failure, timeout and cancellation", () => {
    for (const c of Object.values(CASES)) {
      const v = c.verdict();
      expect(v.icon === "✅", v.kind).toBe(v.conclusion === "success");
      expect(v.icon === "⚠️", v.kind).toBe(v.conclusion === "partial");
      if (["failure", "timeout", "cancelled"].includes(v.conclusion)) expect(v.icon, v.kind).toBe("❌");
    }
  });

  it("a refused push after a run that finished: ❌, never the old '✅ finished' over '❌ Delivery failed'", () => {
    const v = CASES["delivery-failed"].verdict();
    const body = finalBody({ marker: stickyMarker("k"), result: result(), verdict: v, links: {}, deliveryNote: "❌ **Delivery failed:** GH013" });
    expect(body).not.toContain("✅");
  });

  it("the agent's changes left out of a delivered patch: ⚠️ partial; with nothing delivered (deliver: none) the run is ✅", () => {
    const excluded = result({ diff: { ...result().diff, excludedFiles: ["build/out.js"], excludedTouched: ["build/out.js"] } });
    expect(deliveryVerdict(excluded, { outcome: { ...pushed, pullRequest: { number: 8, url: "u", created: true } } })).toMatchObject({ conclusion: "partial", icon: "⚠️" });
    expect(deliveryVerdict(excluded, { outcome: { mode: "none", showPatch: false } })).toMatchObject({ conclusion: "success", icon: "✅" });
  });

  it("paths only an earlier step changed, left out by design, are no partial delivery", () => {
    const earlier = result({ diff: { ...result().diff, excludedFiles: ["build/out.js"] } });
    expect(deliveryVerdict(earlier, { outcome: { ...pushed, pullRequest: { number: 8, url: "u", created: true } } })).toMatchObject({ conclusion: "success", icon: "✅" });
  });

  it("the final comment could not be written: the conclusion is failure even when delivery itself went through", () => {
    expect(deliveryVerdict(result(), { outcome: pushed, failed: true })).toMatchObject({ kind: "delivery-failed", conclusion: "failure" });
  });
});
