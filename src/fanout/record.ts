/**
 * The delivery record of one fan-out item: what its publish step did (the
 * pull request, the comment, or why nothing was delivered), as a small
 * artifact `agent-delivery-<run id>-<attempt>-<key>`. The run artifact is
 * made before delivery and cannot say it; gather reads both.
 *
 * Written by the host after delivery, from the step's own outputs. Read by
 * gather as hostile input all the same (any job of the run could upload an
 * artifact of that name): validated with zod, links kept only when they
 * point at this GitHub.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import * as z from "../shared/zod.js";
import type { HostContext } from "../config/host.js";
import { errorMessage } from "../errors.js";
import { ActionsArtifactService } from "../publish/artifacts.js";
import type { Outputs } from "../publish/outputs.js";
import type { RunResult } from "../result.js";
import { CONCLUSION_OUTPUTS } from "../result.js";
import type { StageContext } from "../stage-context.js";

export const RECORD_FILE = "delivery.json";
const RECORD_PREFIX = "agent-delivery-";

export function deliveryRecordName(host: Pick<HostContext, "runId" | "runAttempt">, key: string): string {
  return `${RECORD_PREFIX}${host.runId ?? "local"}-${host.runAttempt ?? "1"}-${key}`;
}

const Conclusion = z.enum(CONCLUSION_OUTPUTS);

export const DeliveryRecord = z.object({
  version: z.literal(1),
  item: z.string().check(z.maxLength(300)),
  key: z.string().check(z.maxLength(300)),
  /** The step's `conclusion` output: what the run came to, delivery included (a failed delivery is `failure`, not the agent's `success`). */
  conclusion: Conclusion,
  pullRequestUrl: z.optional(z.string().check(z.maxLength(2000))),
  commentUrl: z.optional(z.string().check(z.maxLength(2000))),
  commitSha: z.optional(z.string().check(z.regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/))),
  /** Why nothing (or not everything) was delivered: a refused patch, a failed push. */
  error: z.optional(z.string().check(z.maxLength(2000))),
});
export type DeliveryRecord = z.infer<typeof DeliveryRecord>;

/** The run's verdict as its `conclusion` output gave it (set by `report`, before this record); else the agent's. */
function verdictOf(outputs: Outputs, result: RunResult): z.infer<typeof Conclusion> {
  const said = Conclusion.safeParse(outputs.conclusion);
  return said.success ? said.data : result.conclusion;
}

/**
 * After delivery (phase publish/all) of an item: upload its record. Never
 * fails the step: without it gather shows the item without links.
 */
export async function recordDelivery(ctx: StageContext, result: RunResult, outputs: Outputs, failure: string | undefined): Promise<void> {
  const { io, settings, log, item } = ctx;
  if (!item || !settings.artifacts.upload || !io.host.artifactService) return;
  const record: DeliveryRecord = {
    version: 1,
    item: item.ref,
    key: item.key,
    conclusion: verdictOf(outputs, result),
    ...(outputs["pull-request-url"] ? { pullRequestUrl: outputs["pull-request-url"] } : {}),
    ...(outputs["comment-url"] ? { commentUrl: outputs["comment-url"] } : {}),
    ...(outputs["commit-sha"] ? { commitSha: outputs["commit-sha"] } : {}),
    ...(failure ? { error: ctx.redactor.redact(failure).slice(0, 2000) } : {}),
  };
  const name = deliveryRecordName(io.host, item.key);
  const dir = path.join(ctx.runDir, "delivery-record");
  try {
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, RECORD_FILE);
    await writeFile(file, JSON.stringify(DeliveryRecord.parse(record), null, 2) + "\n");
    const days = settings.artifacts.retentionDays;
    await new ActionsArtifactService().upload(name, dir, [file], days !== undefined ? { retentionDays: days } : {});
    log.info(`Fan-out: recorded the delivery of ${item.ref} as '${name}'.`);
  } catch (e) {
    log.warning(`Fan-out: could not upload the delivery record '${name}' (gather will show ${item.ref} without links): ${errorMessage(e)}`);
  }
}
