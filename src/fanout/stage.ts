/**
 * The fan-out phases as the action's main step runs them (no agent, no
 * sandbox): `plan` lists the items and sets `matrix` and `count`; `gather`
 * reads this workflow run's item artifacts and sets `report`, writes the job
 * summary table and, with `report-issue`, the tracking comment.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { ConfigurationError } from "../errors.js";
import { GitHubApi } from "../github/api.js";
import { createOctokit } from "../github/client.js";
import type { Logger } from "../logger.js";
import { ActionsArtifactService } from "../publish/artifacts.js";
import { workflowIdentity } from "../session/thread.js";
import type { ActionIO } from "../stage-context.js";
import type { Redactor } from "../shared/redact.js";
import { ownerOf } from "../shared/item-ref.js";
import { runUrl } from "../trigger/stage.js";
import { gatherReport, poolSection, reportTable, withPoolSkips } from "./gather.js";
import { parseFanOutSettings, type FanOutPhase, type FanOutSettings } from "./inputs.js";
import { expectedItems } from "./items.js";
import { droppedLine, matrixJson, planItems, planLine, planSummary } from "./plan.js";
import { postTrackingComment } from "./tracking.js";
import { reviewGatherStage, reviewPhaseContext, reviewPlanStage, reviewTask } from "./review.js";
import { SUMMARY_LIMIT, toSafeMarkdown } from "../publish/safe-markdown.js";

export async function runFanOutPhase(io: ActionIO, log: Logger, redactor: Redactor, phase: FanOutPhase): Promise<void> {
  if (reviewTask(io.inputs)) {
    const token = io.inputs["github-token"]?.trim() ?? "";
    const c = await reviewPhaseContext(io, log, redactor, (repo) => {
      let own: GitHubApi | undefined;
      return async () => (own ??= new GitHubApi(await createOctokit({ token, apiUrl: io.host.apiUrl, log }), repo));
    });
    return phase === "plan" ? reviewPlanStage(c) : reviewGatherStage(c);
  }
  const settings = parseFanOutSettings(io.inputs, io.host, phase);
  let api: GitHubApi | undefined;
  const github = async () =>
    (api ??= new GitHubApi(await createOctokit({ token: settings.token, apiUrl: io.host.apiUrl, log }), settings.repository));
  if (phase === "plan") await planStage(io, log, settings, github);
  else await gatherStage(io, log, redactor, settings, github);
}

async function planStage(io: ActionIO, log: Logger, settings: FanOutSettings, github: () => Promise<GitHubApi>): Promise<void> {
  const { source, maxItems, allowForeign } = settings.plan!;
  const plan = await planItems({ source, maxItems, repository: settings.repository, thisRepository: io.host.repository, allowForeign, api: github, log });
  log.info(planLine(plan, maxItems));
  const dropped = droppedLine(plan, ownerOf(io.host.repository) ?? settings.repository.owner);
  if (dropped) log.warning(dropped);
  for (const i of plan.items) log.info(`  ${i.item}`);
  io.setOutput("matrix", matrixJson(plan));
  io.setOutput("count", String(plan.items.length));
  await io.appendSummary(toSafeMarkdown(planSummary(plan, maxItems), { serverUrl: io.host.serverUrl }, SUMMARY_LIMIT));
}

async function gatherStage(io: ActionIO, log: Logger, redactor: Redactor, settings: FanOutSettings, github: () => Promise<GitHubApi>): Promise<void> {
  if (!io.host.artifactService)
    throw new ConfigurationError("Input 'phase': 'gather' reads this workflow run's artifacts from the Actions artifact service, which exists only inside a GitHub Actions job.");
  const expected = settings.gather?.expected ? expectedItems(settings.gather.expected, settings.repository, io.host.repository) : [];
  const entries = await gatherReport({
    service: new ActionsArtifactService(),
    host: io.host,
    repository: settings.repository,
    expected,
    workDir: path.join(io.host.runnerTemp, "agent-runner", `gather-${randomUUID()}`),
    log,
  });
  const url = runUrl(io.host, io.host.repository ?? settings.repository.fullName);
  const pool = await poolOfRun(io, log, settings, expected.map((i) => i.item));
  const reported = pool ? withPoolSkips(entries, pool) : entries;
  const table = reportTable(reported, url) + (pool ? `\n${poolSection(pool)}` : "");
  log.info(`Gather: ${reported.length} item(s): ${reported.map((e) => `${e.item} ${e.conclusion}`).join(", ") || "none"}.`);
  if (pool) log.info(`Gather: budget pool ${pool.capUsd}: $${pool.spentUsd.toFixed(2)} spent, $${pool.reservedUsd.toFixed(2)} reserved, $${pool.leftUsd.toFixed(2)} left; ${pool.skipped.length} item(s) skipped for lack of budget${pool.skipped.length ? `: ${pool.skipped.join(", ")}` : ""}.`);
  io.setOutput("report", redactor.redact(JSON.stringify(reported)));
  await io.appendSummary(toSafeMarkdown(redactor.redact(table), { serverUrl: io.host.serverUrl }, SUMMARY_LIMIT));
  const reportIssue = settings.gather?.reportIssue;
  if (reportIssue === undefined) return;
  const workflow = workflowIdentity(io.host.workflowRef) ?? io.host.workflow ?? "workflow";
  await postTrackingComment(
    {
      api: await github(),
      issue: reportIssue,
      workflow,
      ...(io.host.workflow ? { workflowName: io.host.workflow } : {}),
      ...(io.host.runId ? { runId: io.host.runId } : {}),
      ...(url ? { runUrl: url } : {}),
      serverUrl: io.host.serverUrl,
      log,
      redactor,
    },
    table,
  );
}

/** `max-total-cost-usd`: this workflow run's pool on the budget ledger (of this repository), for the report. */
async function poolOfRun(io: ActionIO, log: Logger, settings: FanOutSettings, items: string[]) {
  const capUsd = settings.gather?.poolCapUsd;
  if (capUsd === undefined) return undefined;
  const { readPoolReport } = await import("../ledger/run.js");
  const repository = io.host.repository ?? settings.repository.fullName;
  const [owner = "", name = ""] = repository.split("/");
  return readPoolReport({
    token: settings.token,
    apiUrl: io.host.apiUrl,
    repository: { owner, name, fullName: repository },
    log,
    now: () => (io.host.now ? new Date(io.host.now) : new Date()),
    pool: io.host.runId ?? "local",
    capUsd,
    items,
  });
}
