/**
 * A run's part in the ledger, as the action's main step takes it: one
 * reservation before the agent starts, one settlement after. Kept apart from
 * the action so the figures and messages are the same wherever a run is admitted.
 *
 * In one job (`phase: all`) the step reserves and settles itself. In the
 * two-job flow of the reusable workflows the run job holds no write token, so
 * a `phase: reserve` job before it reserves under the leg's run key
 * (`legRun`); the run job finds that reservation on the ledger and takes it as
 * its cap (`findLegReservation`), and the publish job finds it again and
 * settles it to what the run artifact claims, never more than was reserved.
 * No job hands another the amount: each reads it from the ledger.
 */
import { randomUUID } from "node:crypto";
import { GitHubApi } from "../github/api.js";
import { createOctokit } from "../github/client.js";
import type { Logger } from "../logger.js";
import { heldReservation, readSince, reserve, settle, settledClaim, tallyLine, usd, type Admission, type AdmissionRequest } from "./admission.js";
import type { Reservation } from "./entry.js";
import { GitHubLedger } from "./ledger.js";
export { legRun } from "./legs.js";
import { poolReport, type PoolReport } from "./pool.js";

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

async function openLedger(o: Pick<RunLedgerOptions, "token" | "apiUrl" | "repository" | "log">): Promise<GitHubLedger> {
  return new GitHubLedger(new GitHubApi(await createOctokit({ token: o.token, apiUrl: o.apiUrl, log: o.log }), o.repository));
}

export async function admitRun(o: RunLedgerOptions): Promise<RunAdmission> {
  const ledger = await openLedger(o);
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

/** How a settler reads the measured cost: the gateway's own (one job), or a run artifact's claim (publish job), held to the reservation. */
type Measure = "gateway" | "claim";

function settler(ledger: GitHubLedger, reservation: Reservation, o: Pick<RunLedgerOptions, "log" | "now">, measure: Measure = "gateway"): RunAdmission["settle"] {
  let done = false;
  return async (costUsd, tokens) => {
    if (done) return;
    done = true;
    // A cost the gateway could not measure counts as the whole reservation: never less than may have been spent.
    const claim = measure === "claim" ? settledClaim(costUsd, reservation.amountUsd) : { amountUsd: costUsd ?? reservation.amountUsd };
    if (claim.clampedFrom !== undefined)
      o.log.warning(
        `Budget ledger: the run artifact claims ${usd(claim.clampedFrom)}, more than the ${usd(reservation.amountUsd)} reserved for this run; settled at the reservation (the run job's gateway was capped there; the artifact is the run job's word, not the ledger's).`,
      );
    const started = Date.now();
    const written = await settle(ledger, reservation, { costUsd: claim.amountUsd, ...(tokens !== undefined ? { tokens } : {}) }, o.now());
    if (!written) o.log.info(`Budget ledger: the reservation of ${usd(reservation.amountUsd)} was already settled (a job run again); nothing written.`);
    else o.log.info(`Budget ledger: settled ${usd(claim.amountUsd)} of the ${usd(reservation.amountUsd)} reserved; ${Date.now() - started} ms.`);
  };
}

export type LegReservation =
  | { kind: "held"; reservation: Reservation; settle?: RunAdmission["settle"] }
  | { kind: "settled"; reservation: Reservation }
  | { kind: "none"; message: string };

/**
 * The reservation the leg's reserve job made, read from the ledger (never
 * from another job's outputs or the run artifact). `for: "run"`: a live one,
 * to cap the agent at; `for: "publish"`: the one to settle (expired or not).
 */
export async function findLegReservation(
  o: Pick<RunLedgerOptions, "token" | "apiUrl" | "repository" | "log" | "now" | "run"> & { for: "run" | "publish" },
): Promise<LegReservation> {
  const ledger = await openLedger(o);
  const now = o.now();
  const started = Date.now();
  const read = await ledger.read(readSince(now));
  const held = heldReservation(read.ledger, o.run, now, o.for === "run");
  o.log.info(`Budget ledger: looked up run ${o.run}: ${held.kind === "none" ? "no reservation" : `${held.kind} ${usd(held.reservation.amountUsd)}`}; ${Date.now() - started} ms, ${read.calls} API calls.`);
  if (held.kind === "none") return { kind: "none", message: noReservationMessage(o.run, o.for) };
  // A settled reservation paid for one run already: a run job started again ("Re-run failed jobs" keeps the
  // leg's key) would otherwise spend up to it again, with nobody left to settle it.
  if (held.kind === "settled") return o.for === "run" ? { kind: "none", message: settledReservationMessage(o.run) } : held;
  return o.for === "publish" ? { ...held, settle: settler(ledger, held.reservation, o, "claim") } : held;
}

function settledReservationMessage(run: string): string {
  return `Budget: the budget ledger's reservation for this run (${run}) is settled already: an earlier attempt of this run job spent it. Re-run all jobs, so that the reserve job reserves again. The agent was not started.`;
}

function noReservationMessage(run: string, job: "run" | "publish"): string {
  return job === "run"
    ? `Budget: the budget ledger holds no live reservation for this run (${run}): its reserve job found nothing left in the budget (its log names the figures), did not run, or reserved longer ago than the run's time limit. The agent was not started.`
    : `Budget: the budget ledger holds no reservation for this run (${run}): its reserve job found nothing left, so no agent ran and there is nothing to publish or settle.`;
}

/** Gather's view of a fan-out's pool: the ledger read with the gather job's token, tallied for the plan's items. */
export async function readPoolReport(
  o: Pick<RunLedgerOptions, "token" | "apiUrl" | "repository" | "log" | "now"> & { pool: string; capUsd: number; items: string[] },
): Promise<PoolReport> {
  const ledger = await openLedger(o);
  const now = o.now();
  const read = await ledger.read(readSince(now));
  for (const r of read.ledger.rejected)
    o.log.warning(`Budget ledger: entry ${r.sha.slice(0, 12)} is rejected (${r.problem}); it counts as spent${r.claimedUsd !== undefined ? ` (it claims ${usd(r.claimedUsd)})` : ""}, never as credit.`);
  return poolReport(read.ledger, o.pool, o.capUsd, now, o.items);
}
