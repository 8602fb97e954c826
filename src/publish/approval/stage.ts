/**
 * `approval: required`, after every check passed (patch rules, threat
 * detection, safe-output policy): nothing is delivered and no request is
 * applied. The run's one comment becomes the staging comment: what would be
 * written, where, the digest, and how to approve it. The run artifact stays
 * as it is: it is what an approval publishes.
 */
import { readFile } from "node:fs/promises";
import { ConfigurationError } from "../../errors.js";
import type { RunResult } from "../../result.js";
import type { StageContext } from "../../stage-context.js";
import type { RunArtifactRef } from "../artifact-stage.js";
import { agentMarkdown, patchBlock } from "../comment.js";
import type { GitHubStage } from "../github-stage.js";
import { codeName, fenced } from "../markdown-code.js";
import type { Outputs } from "../outputs.js";
import type { RequestsFile } from "../safe-outputs/requests.js";
import { DIGEST_PREFIX_LENGTH, stagedContent, stagedDigest, type StagedPlan } from "./digest.js";
import { approvalMarker, saveRecord, type ApprovalRecord } from "./record.js";
import { workflowIdentity } from "../../shared/workflow-identity.js";

export interface Staged {
  digest: string;
  record: ApprovalRecord;
  outputs: Outputs;
  summary: string;
}

/** The plan the digest binds: the same function at staging and at approval, from the run each has. */
export function stagedPlan(gh: Pick<GitHubStage, "run">, result: RunResult): StagedPlan {
  const t = gh.run.trigger;
  return { mode: gh.run.plan.mode, repository: t.repo.fullName, ...(t.thread ? { thread: t.thread.number } : {}), baseCommit: result.diff.baseCommit };
}

export async function stageForApproval(ctx: StageContext, gh: GitHubStage, result: RunResult, artifact: RunArtifactRef | undefined, requests: RequestsFile): Promise<Staged> {
  const { io, settings, log } = ctx;
  const runId = io.host.runId;
  const thread = gh.run.trigger.thread;
  if (!artifact || !runId)
    throw new ConfigurationError(
      "Input 'approval': 'required' stages the run artifact for a later approval, and this run has none (it needs the Actions artifact service and 'upload-artifacts: true').",
    );
  if (!thread) throw new ConfigurationError("Input 'approval': 'required' needs an issue or pull request to put the staging comment on.");
  const workflow = workflowIdentity(io.host.workflowRef);
  if (!workflow) throw new ConfigurationError("Input 'approval': 'required' binds the staged run to its workflow, and this run does not know it (GITHUB_WORKFLOW_REF is not set).");
  const plan = stagedPlan(gh, result);
  const content = await stagedContent(result, requests, plan, { runId, id: artifact.id, name: artifact.name }, workflow);
  const digest = stagedDigest(content);
  const now = io.host.now ? new Date(io.host.now) : new Date();
  const record: ApprovalRecord = {
    v: 1,
    state: "staged",
    digest,
    repository: plan.repository,
    thread: thread.number,
    runId,
    artifactId: artifact.id,
    artifactName: artifact.name,
    workflow,
    stagedAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + settings.approval.expiresHours * 3600_000).toISOString(),
    ...(gh.run.trigger.requester ? { actor: gh.run.trigger.requester.login } : {}),
  };
  const patch = await readFile(result.diff.patchPath, "utf8");
  const body = stagingBody({ record, marker: gh.progress.marker, result, patch, requests, plan, ...(artifact.url ? { artifactUrl: artifact.url } : {}) });
  await gh.progress.finish(body);
  await saveRecord(ctx.resultsDir, record);
  log.info(`Approval: staged ${result.diff.changedFiles.length} changed file(s) and ${requests.requests.length} safe-output request(s); digest ${digest}. Nothing was written but the staging comment.`);
  const short = digest.slice(0, DIGEST_PREFIX_LENGTH);
  return {
    digest,
    record,
    outputs: { "approval-state": "staged", "approval-digest": digest, ...(gh.progress.commentUrl ? { "comment-url": gh.progress.commentUrl } : {}) },
    summary: `### Approval\n\n- Staged, waiting for approval: \`/approve ${short}\` on the thread publishes it.\n- Digest: \`${digest}\`\n`,
  };
}

export const PLAN_WORDS: Record<StagedPlan["mode"], string> = {
  "pull-request": "a pull request from a new branch",
  commit: "a commit on the pull request's branch",
  comment: "the patch in a comment (nothing pushed)",
  none: "nothing delivered",
  "working-tree": "the patch applied to the local working tree",
};

export interface StagingBodyInput {
  record: ApprovalRecord;
  marker: string;
  result: RunResult;
  patch: string;
  requests: RequestsFile;
  plan: StagedPlan;
  artifactUrl?: string;
  /** Lines added once the record has a decision (the audit). */
  decision?: string;
}

/** The staging comment; rebuilt with `decision` when an approval or rejection is recorded. */
export function stagingBody(i: StagingBodyInput): string {
  const short = i.record.digest.slice(0, DIGEST_PREFIX_LENGTH);
  const files = i.result.diff.changedFiles;
  const lines = [
    approvalMarker(i.record),
    i.marker,
    `### ${i.decision ? "Agent Runner: approval recorded" : "⏸️ Agent Runner: waiting for approval"}`,
    "",
    ...(i.decision ? [i.decision, ""] : []),
    "Nothing has been written yet. An approval publishes exactly what is listed here, and nothing else.",
    "",
    `**Delivery:** ${PLAN_WORDS[i.plan.mode]}, on ${codeName(i.plan.baseCommit.slice(0, 12))}.`,
    "",
    `**Files changed (${files.length}):** ${files.slice(0, 50).map((f) => codeName(f)).join(", ") || "none"}${files.length > 50 ? `, … and ${files.length - 50} more` : ""}`,
    "",
    ...requestLines(i.requests),
    "**Final message:**",
    "",
    i.result.output.trim() ? agentMarkdown(i.result.output, 4000) : "_The agent gave no final message._",
    "",
    `**Digest:** \`${i.record.digest}\``,
    "",
    `**Expires:** ${i.record.expiresAt}`,
    "",
    ...(i.decision
      ? []
      : ["To publish it, a maintainer comments:", "", fenced(`/approve ${short}`), "", "or `/reject` to drop it.", ""]),
  ];
  const head = lines.join("\n");
  const room = 60_000 - head.length;
  return i.patch.trim() ? `${head}\n${patchBlock({ text: i.patch, bytes: Buffer.byteLength(i.patch), path: "patch.diff" }, room, i.artifactUrl)}\n` : head;
}

function requestLines(requests: RequestsFile): string[] {
  if (!requests.requests.length && !requests.problems.length) return ["**Safe-output requests:** none", ""];
  const items = requests.requests.map((r) => {
    if ("error" in r) return `- line ${r.line}: unreadable (${agentMarkdown(r.error, 200)})`;
    const { type, ...args } = r.value;
    return `- \`${String(type).replace(/`/g, "")}\`\n\n${fenced(JSON.stringify(args, null, 2).slice(0, 3000), "json")}`;
  });
  return [`**Safe-output requests (${requests.requests.length}):**`, "", ...items, ...requests.problems.map((p) => `- ${agentMarkdown(p, 300)}`), ""];
}
