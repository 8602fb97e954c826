/**
 * The GitHub side of a triggered run, after the trigger stage: the progress
 * comment while the agent works, then delivery and the final comment, or
 * the reason in that comment when the run fails on the way.
 */
import { STATE } from "../constants.js";
import { errorMessage } from "../errors.js";
import type { ReactionTarget } from "../github/api.js";
import type { RunResult } from "../result.js";
import type { GitHubRun, StageContext } from "../stage-context.js";
import type { Trigger } from "../shared/trigger.js";
import { errorBody } from "./comment.js";
import { deliver, type DeliveryOutcome } from "./deliver.js";
import type { DeliveryPlan } from "../config/deliver-plan.js";
import { deliveryOutputs, deliverySummary, renderFinalComment } from "./deliver-report.js";
import type { Outputs } from "./outputs.js";
import { codeName } from "./markdown-code.js";
import { Progress } from "./progress.js";
import { runVerdict, type Verdict, type VerdictInput } from "./verdict.js";

/** A GitHub-triggered run: who asked and how it is delivered, and its progress comment. */
export interface GitHubStage {
  run: GitHubRun;
  progress: Progress;
}

/** 👀 goes on the triggering comment, else on the issue or PR itself. */
function reactionTarget(t: Trigger): ReactionTarget | undefined {
  if (t.comment?.kind === "issue_comment") return { kind: "issue_comment", id: t.comment.id };
  if (t.comment?.kind === "review_comment") return { kind: "review_comment", id: t.comment.id };
  if (!t.comment && t.thread) return { kind: "issue", number: t.thread.number };
  return undefined;
}

/**
 * 👀 on the trigger and the "working" comment. Not in `phase: run`: that job
 * holds a read-only token and writes nothing to GitHub; its publish job
 * reacts and comments instead.
 */
export async function startProgress(ctx: StageContext, run: GitHubRun): Promise<GitHubStage> {
  const writes = ctx.settings.delivery.phase !== "run";
  const t = run.trigger;
  const reactTo = writes ? reactionTarget(t) : undefined;
  const progress = new Progress({
    api: run.api,
    mode: writes ? ctx.settings.delivery.comment : "none",
    ...(t.thread ? { threadNumber: t.thread.number } : {}),
    ...(reactTo ? { reactTo } : {}),
    stickyKey: t.stickyKey,
    ...(run.runUrl ? { runUrl: run.runUrl } : {}),
    ...(t.requester ? { requester: t.requester.login } : {}),
    log: ctx.log,
    redactor: ctx.redactor,
    postText: {
      serverUrl: ctx.io.host.serverUrl,
      allowedDomains: ctx.settings.run.network.allowedDomains,
      ...(t.requester ? { keepMentions: [t.requester.login] } : {}),
    },
    ...(ctx.settings.delivery.threatDetection !== "none" ? { screen: screenActivity } : {}),
    // If the job is killed before the result is written, the post step finishes this comment.
    onComment: (id, marker) =>
      ctx.io.saveState(STATE.comment, JSON.stringify({ repo: t.repo.fullName, id, marker, ...(run.runUrl ? { runUrl: run.runUrl } : {}) })),
  });
  await progress.start();
  return { run, progress };
}

export interface Delivered {
  outputs: Outputs;
  /** The job summary's delivery section, when delivery was attempted. */
  summary?: string;
  /** Delivery or the final comment failed: the step fails with this, after the outputs are set. */
  error?: string;
  /** What the run came to, delivery included: the `conclusion` output and the job summary's headline. */
  verdict: Verdict;
}

/** The run's outcome as the headline and the `conclusion` output tell it (verdict.ts). */
export function deliveryVerdict(result: RunResult, o: { outcome?: DeliveryOutcome; refusal?: string; held?: boolean; failed?: boolean }): Verdict {
  // The patch rules refuse in delivery too (on the tree a moved branch makes): a refusal, not a failed push.
  const refused = o.refusal !== undefined || Boolean(o.outcome?.refusedFiles?.length);
  const input: VerdictInput = { result, held: o.held === true, refused, deliveryFailed: o.failed === true || Boolean(o.outcome?.error) };
  const delivered = o.outcome !== undefined && o.outcome.mode !== "none";
  // Only the agent's own work counts: paths an earlier step changed are left out by design (excludedFiles),
  // but a change the agent made to one of them is not delivered.
  const leftOut = delivered && result.diff.excludedTouched?.length ? "some of the agent's changes were left out of the patch" : undefined;
  const partial = o.outcome?.incomplete ?? leftOut;
  return runVerdict(partial ? { ...input, partial } : input);
}

/**
 * Publish/all: the patch becomes a commit, a pull request or stays in the
 * comment; then the comment is finalized. In `phase: run`, or when the patch
 * was refused (`refusal`), nothing is delivered and the comment says why.
 * Failures here never lose the result: they come back as `error`.
 */
export async function deliverToGitHub(
  ctx: StageContext,
  gh: GitHubStage,
  result: RunResult,
  refusal?: string,
  safeOutputsNote?: string,
  threats?: ThreatVerdict,
): Promise<Delivered> {
  const { io, settings, log } = ctx;
  const { run, progress } = gh;
  const review = threats?.review ?? [];
  let outcome: DeliveryOutcome | undefined;
  let note: string | undefined;
  if (settings.delivery.phase === "run") note = "The changes are delivered by the publish job.";
  else if (refusal) note = `❌ ${refusal}`;
  else {
    outcome = await deliver(
      {
        plan: reviewPlan(run.plan, review),
        ...(review.length ? { reviewFiles: review } : {}),
        settings: settings.delivery,
        trigger: run.trigger,
        api: run.api,
        token: settings.github.token,
        serverUrl: io.host.serverUrl,
        allowedDomains: settings.run.network.allowedDomains,
        gitEnv: io.host.gitEnv,
        remoteUrl: run.remoteUrl,
        ...(run.runUrl ? { runUrl: run.runUrl } : {}),
        ...(run.approval ? { approval: run.approval } : {}),
        ...(io.host.workflow ? { workflowName: io.host.workflow } : {}),
        ...(io.host.workflowRef ? { workflowRef: io.host.workflowRef } : {}),
        ...(io.host.ref ? { ref: io.host.ref } : {}),
        workDir: ctx.runDir,
        triggerPhrase: settings.github.triggerPhrase,
        log,
      },
      result,
    );
    if (outcome.error) log.error(`Delivery: ${outcome.error} The results are in ${ctx.resultsDir}.`);
  }
  const errors: string[] = outcome?.error ? [outcome.error] : [];
  const held = threats?.held === true;
  const verdict = deliveryVerdict(result, { ...(outcome ? { outcome } : {}), ...(refusal !== undefined ? { refusal } : {}), held });
  try {
    await progress.finish(
      await renderFinalComment({
        marker: progress.marker,
        result,
        ...(outcome ? { outcome } : {}),
        ...(note || safeOutputsNote || review.length ? { note: [note, reviewNote(review), safeOutputsNote].filter(Boolean).join("\n\n") } : {}),
        showPatch: held ? false : outcome ? outcome.showPatch : result.diff.changedFiles.length > 0,
        ...(run.runUrl ? { runUrl: run.runUrl } : {}),
        verdict,
      }),
    );
  } catch (e) {
    errors.push(`${errorMessage(e)}. The result is in the job summary and ${ctx.resultsDir}.`);
    log.error(errors.at(-1)!);
  }
  return {
    outputs: deliveryOutputs(outcome, progress.commentUrl),
    ...(outcome ? { summary: deliverySummary(outcome, progress.commentUrl) } : {}),
    ...(errors.length ? { error: `Delivery failed: ${errors.join(" ")}` } : {}),
    // The comment that could not be written is a delivery that failed too.
    verdict: errors.length > (outcome?.error ? 1 : 0) ? deliveryVerdict(result, { ...(refusal !== undefined ? { refusal } : {}), held, failed: true }) : verdict,
  };
}

/** The agent's activity lines carry its words and commands: no edit posts a secret before threat detection has judged. */
async function screenActivity(activity: string): Promise<boolean> {
  const { scanForSecrets } = await import("./threats/secret-scan.js");
  return (await scanForSecrets([{ where: "progress comment", text: activity }], () => false)).length === 0;
}

/** What threat detection decided, as delivery needs it (publish/threats/stage.ts). */
export interface ThreatVerdict {
  /** Nothing but the report is posted: no patch, no final message. */
  held: boolean;
  /** Protected paths: delivered only as a draft pull request that names them. */
  review: readonly string[];
}

function reviewNote(review: readonly string[]): string | undefined {
  if (!review.length) return undefined;
  const names = review.slice(0, 20).map((f) => codeName(f)).join(", ") + (review.length > 20 ? `, … and ${review.length - 20} more` : "");
  return `⚠️ **Protected files changed:** ${names}. Delivered only as a draft pull request, for a human review.`;
}

/** `protected-files: review` never commits onto an existing branch: a commit becomes a draft pull request stacked on it. */
function reviewPlan(plan: DeliveryPlan, review: readonly string[]): DeliveryPlan {
  if (!review.length || plan.mode !== "commit") return plan;
  return { mode: "pull-request", note: "The change touches protected files, so it is a draft pull request for review instead of a commit on this branch." };
}

/** Something failed after the comment said "working": the comment ends with the reason. */
export async function reportFailure(ctx: StageContext, gh: GitHubStage, e: unknown, result: RunResult | undefined): Promise<void> {
  const message = ctx.redactor.redact(errorMessage(e));
  const runUrl = gh.run.runUrl ? { runUrl: gh.run.runUrl } : {};
  try {
    const body = result
      ? await renderFinalComment({
          marker: gh.progress.marker,
          result,
          note: `❌ ${message}`,
          showPatch: result.diff.changedFiles.length > 0,
          ...runUrl,
          verdict: deliveryVerdict(result, { failed: true }),
        })
      : errorBody({ marker: gh.progress.marker, message, ...runUrl });
    await gh.progress.finish(body);
  } catch (err) {
    ctx.log.warning(`Could not write the failure into the comment: ${errorMessage(err)}`);
  }
}
