/**
 * `task: review` on the fan-out phases. `plan` splits the pull request's
 * diff (local git) into shards: the matrix carries each shard's number and
 * the commits (`range`), and every shard job recomputes its files from them
 * (trigger/review.ts). `gather` reads each shard job's artifact (hostile
 * input), merges their review requests into ONE review (review/merge.ts),
 * posts it, and ends `partial` or failed when a shard was not reviewed.
 */
import { randomUUID } from "node:crypto";
import { readFile, rm, lstat } from "node:fs/promises";
import path from "node:path";
import * as z from "../shared/zod.js";
import type { RawInputs } from "../config/parse.js";
import { parseRange, parseReviewInputs, type ReviewSettings } from "../config/review.js";
import { RESULTS_FILES, type InputName } from "../constants.js";
import { ConfigurationError, errorMessage } from "../errors.js";
import { Git } from "../git/git.js";
import type { GitHubApi } from "../github/api.js";
import type { Logger } from "../logger.js";
import { RUN_CONCLUSIONS } from "../result.js";
import { ActionsArtifactService, type ArtifactService } from "../publish/artifacts.js";
import { gitleaksMatches } from "../publish/threats/gitleaks.js";
import { SUMMARY_LIMIT, toSafeMarkdown } from "../publish/safe-markdown.js";
import { readRequests } from "../publish/safe-outputs/requests.js";
import { createPullRequestReview, SEVERITIES } from "../safe-outputs/create-pull-request-review.js";
import { DiffLines } from "../safe-outputs/diff-lines.js";
import { filePatches, hunksOf, mergeBase } from "../review/diff.js";
import { ownReviewComments, ownReviews } from "../review/github.js";
import { mergeReviews, type Leg, type LegReview, type MergedReview } from "../review/merge.js";
import { reviewRange, scopeNote, shardPlan, type RangeKind } from "../review/range.js";
import { SHARD_RECORD_FILE, ShardRecord, shardKey } from "../review/record.js";
import type { Shard } from "../review/shards.js";
import { itemKey, parseRepository } from "../shared/item-ref.js";
import type { Redactor } from "../shared/redact.js";
import type { RepoRef } from "../shared/trigger.js";
import type { ActionIO } from "../stage-context.js";
import { groupArtifacts } from "./gather.js";

export function reviewTask(raw: RawInputs): boolean {
  return raw.task?.trim() === "review";
}

interface ReviewPhaseContext {
  io: ActionIO;
  log: Logger;
  redactor: Redactor;
  review: ReviewSettings;
  repository: RepoRef;
  pr: number;
  git: Git;
  api: () => Promise<GitHubApi>;
}

/** The pull request: `issue-number`, else the event's pull request. */
async function pullNumber(io: ActionIO): Promise<number | undefined> {
  const given = io.inputs["issue-number"]?.trim().replace(/^#/, "");
  if (given) return /^\d{1,10}$/.test(given) ? Number(given) : undefined;
  if (!io.host.eventPath) return undefined;
  const Event = z.looseObject({ pull_request: z.optional(z.looseObject({ number: z.number() })), issue: z.optional(z.looseObject({ number: z.number() })) });
  const ev = Event.safeParse(JSON.parse(await readFile(io.host.eventPath, "utf8").catch(() => "{}")));
  return ev.success ? (ev.data.pull_request?.number ?? ev.data.issue?.number) : undefined;
}

export async function reviewPhaseContext(io: ActionIO, log: Logger, redactor: Redactor, api: (repo: RepoRef) => () => Promise<GitHubApi>): Promise<ReviewPhaseContext> {
  const problems: string[] = [];
  const get = (name: InputName) => io.inputs[name];
  const review = parseReviewInputs(get, (input, message) => problems.push(`Input '${input}': ${message}`));
  const repoText = io.inputs.repository?.trim() || io.host.repository;
  const repository = repoText ? parseRepository(repoText) : undefined;
  if (!repository) problems.push("Input 'repository': is required here (GITHUB_REPOSITORY is not set).");
  const pr = await pullNumber(io);
  if (!pr) problems.push("Input 'issue-number': 'task: review' plans and gathers one pull request: name it with 'issue-number' or run on a pull request event.");
  if (problems.length || !review) throw new ConfigurationError(problems.length ? problems : ["Input 'task': must be 'review' here."]);
  const workspace = path.resolve(io.host.workspace, io.inputs["working-directory"]?.trim() || ".");
  return { io, log, redactor, review, repository: repository!, pr: pr!, git: new Git(workspace, io.host.gitEnv), api: api(repository!) };
}

/** The commits to review, as the plan chose them (the matrix's `range`), or chosen now. */
async function chooseRange(c: ReviewPhaseContext, planned?: { from: string; head: string; kind: RangeKind }) {
  const info = (await (await c.api()).pullRequest(c.pr)).info;
  if (planned) return { ...planned, prBase: await mergeBase(c.git, info.baseSha, planned.head) };
  const earlier = c.review.scope === "since-last-review" ? (await ownReviews(await c.api(), c.pr, (m) => c.log.warning(m))).map((r) => r.body) : [];
  return reviewRange(c.git, info, c.review.scope, earlier);
}

export async function reviewPlanStage(c: ReviewPhaseContext): Promise<void> {
  const started = Date.now();
  const range = await chooseRange(c);
  const plan = await shardPlan(c.git, range, { lines: c.review.shardLines, files: c.review.shardFiles });
  const note = scopeNote(range.kind, range);
  const key = itemKey(c.repository, c.pr, c.io.host.repository);
  const tooLarge = plan.lines > c.review.maxLines;
  const shards = tooLarge ? [] : plan.shards;
  const include = shards.map((s) => ({
    item: `${c.repository.fullName}#${c.pr}`,
    key: shardKey(key, s.index),
    repository: c.repository.fullName,
    "repository-owner": c.repository.owner,
    "repository-name": c.repository.name,
    "issue-number": c.pr,
    shard: s.index,
    shards: shards.length,
    range: `${range.from}..${range.head}`,
    scope: range.kind,
  }));
  const line = tooLarge
    ? `Review plan: ${plan.lines} changed lines, over 'review-max-lines' (${c.review.maxLines}): too large to review; gather reports it.`
    : `Review plan: ${plan.files.length} file(s), ${plan.lines} changed line(s) → ${shards.length} shard(s) (review-shard-lines ${c.review.shardLines}, review-shard-files ${c.review.shardFiles}) in ${Date.now() - started} ms. ${note}`;
  if (tooLarge) c.log.warning(line);
  else c.log.info(line);
  for (const s of shards) c.log.info(`  shard ${s.index}: ${s.files.length} file(s), ${s.lines} line(s)`);
  c.io.setOutput("matrix", JSON.stringify({ include }));
  c.io.setOutput("count", String(include.length));
  const rows = shards.map((s) => `| ${s.index} | ${s.files.length} | ${s.lines} |`);
  await c.io.appendSummary(toSafeMarkdown(["### Agent Runner review plan", "", line, "", ...(rows.length ? ["| shard | files | changed lines |", "|---|---|---|", ...rows, ""] : [])].join("\n"), { serverUrl: c.io.host.serverUrl }, SUMMARY_LIMIT));
}

const MatrixEntry = z.object({ shard: z.number().check(z.int(), z.positive()), range: z.string(), scope: z.optional(z.string()) });
const Matrix = z.object({ include: z.array(MatrixEntry) });

/** The plan's range from gather's `items` (the plan's matrix); undefined when it planned no shard. */
function plannedRange(text: string | undefined): { from: string; head: string; kind: RangeKind } | undefined {
  if (!text?.trim()) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ConfigurationError("Input 'items': with 'task: review', pass the plan's 'matrix' output unchanged.");
  }
  const m = Matrix.safeParse(doc);
  if (!m.success) throw new ConfigurationError("Input 'items': with 'task: review', pass the plan's 'matrix' output unchanged.");
  const ranges = new Set(m.data.include.map((e) => e.range));
  if (ranges.size > 1) throw new ConfigurationError("Input 'items': the matrix names more than one range; pass the plan's 'matrix' output unchanged.");
  const first = m.data.include[0];
  if (!first) return undefined;
  const range = parseRange(first.range);
  if (!range) throw new ConfigurationError("Input 'items': the matrix's 'range' is not 'from..head'.");
  const kinds: RangeKind[] = ["full", "since-last-review", "full-after-force-push", "full-first-review"];
  return { ...range, kind: kinds.find((k) => k === first.scope) ?? "full" };
}

const ResultFields = z.object({
  conclusion: z.enum(RUN_CONCLUSIONS),
  reason: z.optional(z.string()),
  /** A budget (max-cost-usd, max-tokens, max-model-requests) stopped the shard's agent. */
  budgetExceeded: z.optional(z.boolean()),
  durationMs: z.number().check(z.nonnegative()),
  usage: z.object({ costUsd: z.optional(z.number().check(z.nonnegative())) }),
});

async function readJson(file: string, max: number): Promise<unknown> {
  const st = await lstat(file).catch(() => undefined);
  if (!st?.isFile()) throw new Error(`${path.basename(file)} is missing`);
  if (st.size > max) throw new Error(`${path.basename(file)} is ${st.size} bytes, more than ${max}`);
  return JSON.parse(await readFile(file, "utf8"));
}

/** One shard job's artifact → what it reviewed. Every file in it is checked: any job of the run can upload one. */
async function readLeg(service: ArtifactService, a: { id: number; name: string }, shard: Shard, range: { from: string; head: string }, workDir: string): Promise<Leg> {
  const dir = path.join(workDir, `artifact-${a.id}`);
  try {
    await service.downloadThisRun(a, dir);
    return await legFromDir(dir, a.name, shard, range);
  } catch (e) {
    return { shard, status: "refused", reason: `the artifact '${a.name}' was not used: ${errorMessage(e).slice(0, 200)}` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A shard's results folder (downloaded, or a single review job's own) → what it reviewed. */
export async function legFromDir(dir: string, name: string, shard: Shard, range: { from: string; head: string }): Promise<Leg> {
  const record = ShardRecord.safeParse(await readJson(path.join(dir, SHARD_RECORD_FILE), 4096).catch(() => undefined));
  if (!record.success) return { shard, status: "refused", reason: `the artifact '${name}' has no valid ${SHARD_RECORD_FILE}` };
  const r = record.data;
  // An artifact speaks only for the shard its name says, of the plan's commits.
  if (r.shard !== shard.index || r.from !== range.from || r.head !== range.head)
    return { shard, status: "refused", reason: `the artifact '${name}' claims shard ${r.shard} of ${r.from.slice(0, 12)}..${r.head.slice(0, 12)}, not shard ${shard.index} of this plan` };
  const result = ResultFields.safeParse(await readJson(path.join(dir, RESULTS_FILES.result), 16 * 1024 * 1024));
  if (!result.success) return { shard, status: "refused", reason: `the artifact '${name}' has no valid ${RESULTS_FILES.result}` };
  const { conclusion, usage, durationMs, budgetExceeded } = result.data;
  const costs = { ...(usage.costUsd !== undefined ? { costUsd: usage.costUsd } : {}), durationMs };
  const why = result.data.reason ? `: ${result.data.reason.slice(0, 200)}` : "";
  const review = await legReview(path.join(dir, RESULTS_FILES.outputs, "safe-outputs.jsonl"));
  // Gather has no threat-detection stage of its own: a review holding what looks like a secret is not posted.
  const leak = typeof review === "string" ? undefined : secretIn(review);
  if (leak) return { shard, status: "refused", reason: `its review request holds what looks like a secret (gitleaks rule '${leak}'); none of it is posted`, ...costs };
  // Stopped by its budget: not covered, whatever it asked for before the stop (its findings are kept, not claimed as a review of the shard).
  if (budgetExceeded) return { shard, status: "out-of-budget", reason: `the shard's agent was stopped by its budget${why}`, ...costs, ...(typeof review === "string" ? {} : { review }) };
  if (conclusion !== "success") return { shard, status: "failed", reason: `the shard's agent run ended '${conclusion}'${why}`, ...costs };
  if (typeof review === "string") return { shard, status: "failed", reason: review, ...costs };
  return { shard, status: "reviewed", review, ...costs };
}

/** The first gitleaks rule that finds a secret in the review's summary or comments, if any. */
function secretIn(review: LegReview): string | undefined {
  for (const text of [review.body, ...review.comments.map((c) => c.body)]) {
    const hit = gitleaksMatches(text)[0];
    if (hit) return hit.rule;
  }
  return undefined;
}

/** The shard's one review request, checked as the safe output checks it; a string says why there is none. */
async function legReview(file: string): Promise<LegReview | string> {
  const { requests, problems } = await readRequests(file);
  const asked = requests.filter((r) => "value" in r && r.value["type"] === createPullRequestReview.tool);
  if (!asked.length) return `the shard's agent asked for no review${problems.length ? ` (${problems[0]})` : ""}`;
  const raw = asked[0]!;
  if (!("value" in raw)) return "its review request was unreadable";
  // The pull request is gather's (the plan's), whatever number the request names.
  const { type: _type, pull_number: _pr, ...args } = raw.value;
  // Checked as the safe output checks it (shape, limits, no APPROVE), with the most comments a request may carry.
  const enabled = createPullRequestReview.enable({ "max-comments": 100 });
  if (!enabled.ok) return `its review request could not be checked: ${enabled.problem}`;
  const checked = enabled.kind.check(args);
  if (!checked.ok) return `its review request was refused: ${checked.reason}`;
  const parsed = LegReviewShape.safeParse(args);
  return parsed.success ? parsed.data : "its review request was refused: not a review";
}

const LegReviewShape = z.object({
  body: z.string(),
  event: z.enum(["COMMENT", "REQUEST_CHANGES"]),
  comments: z._default(
    z.array(
      z.object({
        path: z.string(),
        line: z.number().check(z.int(), z.positive()),
        side: z.optional(z.enum(["LEFT", "RIGHT"])),
        start_line: z.optional(z.number().check(z.int(), z.positive())),
        body: z.string(),
        severity: z.optional(z.enum(SEVERITIES)),
      }),
    ),
    [],
  ),
});

async function diffLinesFor(git: Git, from: string, head: string, files: string[]): Promise<DiffLines> {
  const patches = await filePatches(git, from, head, files);
  return new DiffLines(files.map((f) => ({ filename: f, ...(patches.get(f) ? { patch: hunksOf(patches.get(f)!) ?? "" } : {}) })).filter((f) => patches.has(f.filename)));
}

export async function reviewGatherStage(c: ReviewPhaseContext): Promise<void> {
  const { io } = c;
  if (!io.host.artifactService) throw new ConfigurationError("Input 'phase': 'gather' reads this workflow run's artifacts from the Actions artifact service, which exists only inside a GitHub Actions job.");
  const started = Date.now();
  const range = await chooseRange(c, plannedRange(io.inputs.items));
  const plan = await shardPlan(c.git, range, { lines: c.review.shardLines, files: c.review.shardFiles });
  const api = await c.api();
  const policy = { serverUrl: io.host.serverUrl, allowedDomains: [] };
  const post = (md: string) => toSafeMarkdown(c.redactor.redact(md), policy);
  if (plan.lines > c.review.maxLines) {
    const text = `This pull request is too large to review: ${plan.lines} changed lines, over 'review-max-lines' (${c.review.maxLines}). Nothing was reviewed.`;
    await api.createReview(c.pr, { commitId: range.head, body: post(`## Agent Runner review\n\n**${text}**`), event: "COMMENT", comments: [] });
    io.setOutput("conclusion", "failure");
    io.setFailed(text);
    return;
  }
  const service = new ActionsArtifactService();
  const { runs } = groupArtifacts(await service.listThisRun(), io.host.runId, io.host.runAttempt);
  const key = itemKey(c.repository, c.pr, io.host.repository);
  const workDir = path.join(io.host.runnerTemp, "agent-runner", `review-gather-${randomUUID()}`);
  const legs: Leg[] = [];
  for (const shard of plan.shards) {
    const a = runs.get(shardKey(key, shard.index));
    legs.push(a ? await readLeg(service, a, shard, range, workDir) : { shard, status: "missing", reason: "its job left no result (it failed before uploading, or was cancelled)" });
  }
  const merged = await postMergedReview({ c, api, range, legs, started });
  concludeReview(c, legs, merged.conclusion);
}

/** A review that covered nothing fails the step; one that left shards out warns (its conclusion output is `partial`). */
function concludeReview(c: Pick<ReviewPhaseContext, "io" | "log">, legs: Leg[], conclusion: MergedReview["conclusion"]): void {
  const { io, log } = c;
  const notReviewed = legs.filter((l) => l.status !== "reviewed");
  if (conclusion === "failure") io.setFailed(`The review covered nothing: ${legs.length ? `none of the ${legs.length} shard(s) was reviewed` : "the pull request's diff is empty"}. The posted review says why.`);
  else if (notReviewed.length) log.warning(`Review: ${notReviewed.length} shard(s) not reviewed (${notReviewed.map((l) => `${l.shard.index}: ${l.status}`).join(", ")}); the review names their files. Conclusion: partial.`);
}

interface PostInput {
  c: Pick<ReviewPhaseContext, "io" | "log" | "redactor" | "review" | "pr" | "git">;
  api: GitHubApi;
  range: { from: string; head: string; prBase: string; kind: RangeKind };
  legs: Leg[];
  started: number;
}

/** Merge the legs into one review, post it (pinned to the reviewed head) and set the outputs. */
export async function postMergedReview({ c, api, range, legs, started }: PostInput): Promise<MergedReview> {
  const { io, log } = c;
  const policy = { serverUrl: io.host.serverUrl, allowedDomains: [] };
  const post = (md: string) => toSafeMarkdown(c.redactor.redact(md), policy);
  const commented = [...new Set(legs.flatMap((l) => l.review?.comments.map((x) => x.path) ?? []))].sort();
  const [prDiff, rangeDiff, earlier] = await Promise.all([
    diffLinesFor(c.git, range.prBase, range.head, commented),
    diffLinesFor(c.git, range.from, range.head, commented),
    ownReviewComments(api, c.pr),
  ]);
  const merged = mergeReviews({ legs, prDiff, rangeDiff, earlier, maxComments: c.review.maxComments, canBlock: c.review.canBlock, head: range.head, scopeNote: scopeNote(range.kind, range) });
  const mergeMs = Date.now() - started;
  const posted = await api.createReview(c.pr, { commitId: range.head, body: post(merged.body), event: merged.event, comments: merged.comments.map((x) => ({ ...x, body: post(x.body) })) });
  log.info(`Review: posted ${posted.url} (${merged.event}, ${merged.comments.length} inline comment(s)); ${legs.filter((l) => l.status === "reviewed").length} of ${legs.length} shard(s) reviewed; gathered in ${mergeMs} ms.`);
  const report = legs.map((l) => ({ shard: l.shard.index, files: l.shard.files.length, lines: l.shard.lines, status: l.status, ...(l.reason ? { reason: l.reason } : {}), ...(l.costUsd !== undefined ? { costUsd: l.costUsd } : {}) }));
  io.setOutput("report", c.redactor.redact(JSON.stringify(report)));
  io.setOutput("conclusion", merged.conclusion);
  await io.appendSummary(post(`${merged.body}\n\n[The review](${posted.url}) · total cost $${merged.costUsd.toFixed(4)}\n`));
  return merged;
}

/**
 * `task: review` without shards (`phase: all`, or a publish job after its run
 * job): the run's own results are the one leg; the same merge and post as
 * gather's. `git` is where the commits are read: in one job the agent ran in
 * the workspace, so its `.git` is hostile (a planted `commondir`, config or
 * attributes could make host git run a textconv program) and the caller gives
 * the private repository made before the agent started (host-repo.ts); a
 * publish job gives its own fresh checkout.
 */
export async function reviewInOneJob(o: { io: ActionIO; log: Logger; redactor: Redactor; review: ReviewSettings; pr: number; git: Git; resultsDir: string; api: GitHubApi }): Promise<MergedReview["conclusion"] | undefined> {
  const started = Date.now();
  const record = ShardRecord.safeParse(await readJson(path.join(o.resultsDir, SHARD_RECORD_FILE), 4096).catch(() => undefined));
  if (!record.success) {
    // The run wrote no record (it failed before the review was prepared): say so rather than post nothing silently.
    o.log.warning(`Review: this run's results hold no valid ${SHARD_RECORD_FILE} (the run failed before its review was prepared); no review is posted.`);
    return undefined;
  }
  const { git } = o;
  const { from, head } = record.data;
  const info = (await o.api.pullRequest(o.pr)).info;
  const prBase = await mergeBase(git, info.baseSha, head);
  const plan = await shardPlan(git, { from, head }, { lines: o.review.shardLines, files: o.review.shardFiles });
  const shard: Shard = { index: 1, files: plan.files.map((f) => f.path).sort(), lines: plan.lines };
  const leg = await legFromDir(o.resultsDir, "this run", shard, { from, head });
  const kind: RangeKind = from === prBase ? "full" : "since-last-review";
  const c = { io: o.io, log: o.log, redactor: o.redactor, review: o.review, pr: o.pr, git };
  const merged = await postMergedReview({ c, api: o.api, range: { from, head, prBase, kind }, legs: [leg], started });
  concludeReview(c, [leg], merged.conclusion);
  return merged.conclusion;
}
