/**
 * A run's part in the ledger, as the action's main step takes it: one
 * reservation before the agent starts, one settlement after. Kept apart from
 * the action so the figures and messages are the same wherever a run is admitted.
 */
import { randomUUID } from "node:crypto";
import { GitHubApi } from "../github/api.js";
import { createOctokit } from "../github/client.js";
import type { Logger } from "../logger.js";
import { reserve, settle, tallyLine, usd, type Admission, type AdmissionRequest } from "./admission.js";
import type { Reservation } from "./entry.js";
import { GitHubLedger } from "./ledger.js";

/** What a run tells the ledger about itself: the admission request's own fields, with a clock and a time limit in place of its times. */
export type RunLedgerOptions = Pick<AdmissionRequest, "run" | "workflow" | "thread" | "model" | "runCapUsd" | "daily" | "pool"> & {
  token: string;
  apiUrl: string;
  repository: { owner: string; name: string; fullName: string };
  log: Logger;
  now: () => Date;
  /** The run's time limit: an unsettled reservation counts until then. */
  timeoutSeconds: number;
};

/** Slack past the agent's own time limit before an unsettled reservation stops counting (install, checks, delivery). */
const EXPIRY_SLACK_SECONDS = 15 * 60;

export interface RunAdmission {
  admission: Admission;
  /** Settles the reservation to the measured cost (once; later calls do nothing). */
  settle?: (costUsd: number | undefined, tokens: number | undefined) => Promise<void>;
}

export async function admitRun(o: RunLedgerOptions): Promise<RunAdmission> {
  const ledger = new GitHubLedger(new GitHubApi(await createOctokit({ token: o.token, apiUrl: o.apiUrl, log: o.log }), o.repository));
  const now = o.now();
  const started = Date.now();
  const admission = await reserve(ledger, {
    now,
    run: o.run,
    workflow: o.workflow,
    ...(o.thread ? { thread: o.thread } : {}),
    ...(o.model ? { model: o.model } : {}),
    ...(o.runCapUsd !== undefined ? { runCapUsd: o.runCapUsd } : {}),
    ...(o.daily ? { daily: o.daily } : {}),
    ...(o.pool ? { pool: o.pool } : {}),
    expires: new Date(now.getTime() + (o.timeoutSeconds + EXPIRY_SLACK_SECONDS) * 1000),
    id: randomUUID(),
  });
  for (const r of admission.rejected)
    o.log.warning(`Budget ledger: entry ${r.sha.slice(0, 12)} is rejected (${r.problem}); it counts as spent${r.claimedUsd !== undefined ? ` (it claims ${usd(r.claimedUsd)})` : ""}, never as credit.`);
  const took = `${Date.now() - started} ms, ${admission.calls} API calls, ${admission.rounds} round(s)`;
  if (admission.kind === "no-room") {
    o.log.info(`Budget ledger: ${took}.`);
    return { admission };
  }
  const reservation = admission.reservation;
  o.log.info(`Budget ledger: reserved ${usd(reservation.amountUsd)} (${admission.tallies.map(tallyLine).join("; ")}, before this reservation); ${took}.`);
  return { admission, settle: settler(ledger, reservation, o) };
}

function settler(ledger: GitHubLedger, reservation: Reservation, o: RunLedgerOptions): RunAdmission["settle"] {
  let done = false;
  return async (costUsd, tokens) => {
    if (done) return;
    done = true;
    // A cost the gateway could not measure counts as the whole reservation: never less than may have been spent.
    const measured = costUsd ?? reservation.amountUsd;
    const started = Date.now();
    await settle(ledger, reservation, { costUsd: measured, ...(tokens !== undefined ? { tokens } : {}) }, o.now());
    o.log.info(`Budget ledger: settled ${usd(measured)} of the ${usd(reservation.amountUsd)} reserved; ${Date.now() - started} ms.`);
  };
}
