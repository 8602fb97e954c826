/**
 * Admission across runs: before the agent starts, a job holding
 * `contents: write` reserves the run's cap from what the ledger says is left
 * (the daily cap of the workflow or repository, a fan-out's pool); the run's
 * `max-cost-usd` becomes at most that reservation, and after the run the
 * reservation is settled to the gateway's measured cost.
 */
import { LEDGER_REF, type Reservation, type Settlement, type LedgerScope } from "./entry.js";
import { MAX_READ, type GitHubLedger } from "./ledger.js";
import { dailyCheck, poolCheck, tally, type CheckTally, type LedgerCheck, type ReadLedger, type Rejected } from "./tally.js";

/** Below this nothing is left: a reservation of less would stop the agent at its first request. */
export const MIN_RESERVATION_USD = 0.01;
const HOUR_MS = 60 * 60 * 1000;

export interface AdmissionRequest {
  now: Date;
  /** `<run id>-<attempt>`, and which job of it. */
  run: string;
  workflow: string;
  thread?: string;
  model?: string;
  /** The run's own max-cost-usd, if any: the reservation is at most this. */
  runCapUsd?: number;
  daily?: { capUsd: number; scope: LedgerScope };
  pool?: { capUsd: number; id: string };
  /** When an unsettled reservation stops counting: the job's timeout past now. */
  expires: Date;
  /** The reservation's id (random per run). */
  id: string;
}

export type Admission =
  | { kind: "reserved"; reservation: Reservation; tallies: CheckTally[]; rejected: Rejected[]; rounds: number; calls: number }
  | { kind: "no-room"; message: string; tallies: CheckTally[]; rejected: Rejected[]; rounds: number; calls: number };

export function checksOf(req: Pick<AdmissionRequest, "daily" | "pool" | "workflow" | "now">): LedgerCheck[] {
  return [
    ...(req.daily ? [dailyCheck(req.daily.capUsd, req.daily.scope, req.workflow, req.now)] : []),
    ...(req.pool ? [poolCheck(req.pool.capUsd, req.pool.id)] : []),
  ];
}

/** A rejected entry counts as the most one reservation could have held: the run's own cap, else the smallest cap checked. */
export function untrustedAmount(req: Pick<AdmissionRequest, "runCapUsd" | "daily" | "pool">): number {
  return req.runCapUsd ?? Math.min(req.daily?.capUsd ?? Infinity, req.pool?.capUsd ?? Infinity);
}

/** What the ledger must be read back to: a day and an hour (the UTC day started at most 24 hours ago; clocks differ a little). */
export function readSince(now: Date): Date {
  return new Date(now.getTime() - 25 * HOUR_MS);
}

export async function reserve(ledger: GitHubLedger, req: AdmissionRequest): Promise<Admission> {
  const checks = checksOf(req);
  const untrusted = untrustedAmount(req);
  let tallies: CheckTally[] = [];
  let rejected: Rejected[] = [];
  const before = ledger.calls;
  let unread: string | undefined;
  const since = readSince(req.now);
  const { entry, rounds } = await ledger.update(since, (read) => {
    tallies = checks.map((c) => tally(read.ledger, c, req.now, untrusted));
    rejected = read.ledger.rejected;
    // Fail closed: what was not read may be today's spending, and never counts as nothing.
    unread = read.truncated ? unreadMessage(read.commits, since) : undefined;
    if (unread) return undefined;
    const left = Math.min(...tallies.map((t) => t.leftUsd));
    if (left < MIN_RESERVATION_USD) return undefined;
    const amountUsd = roundCents(Math.min(left, req.runCapUsd ?? left));
    return {
      v: 1 as const,
      kind: "reserve" as const,
      id: req.id,
      run: req.run,
      workflow: req.workflow,
      ...(req.thread ? { thread: req.thread } : {}),
      ...(req.pool ? { pool: req.pool.id } : {}),
      amountUsd,
      ...(req.model ? { model: req.model } : {}),
      time: req.now.toISOString(),
      expires: req.expires.toISOString(),
    };
  });
  const calls = ledger.calls - before;
  if (entry) return { kind: "reserved", reservation: entry, tallies, rejected, rounds, calls };
  return { kind: "no-room", message: unread ?? noRoomMessage(tallies, req), tallies, rejected, rounds, calls };
}

function unreadMessage(commits: number, since: Date): string {
  return (
    `Budget: the budget ledger (${LEDGER_REF}) is too long to check: its newest ${commits} commits hold no valid entry older than ${since.toISOString()}, ` +
    `so what it holds for the budget's window was not all read (at most ${MAX_READ} commits are). The agent was not started. ` +
    `Look for commits on ${LEDGER_REF} not made by the action (\`agent-runner ledger\`), and restrict who can push it (docs/budgets.md).`
  );
}

/** Down to the cent, never up: the reservation stays within what is left. */
function roundCents(usd: number): number {
  return Math.floor(usd * 100) / 100;
}

/**
 * Settles `r` to the measured cost, unless the ledger already holds its
 * settlement (a publish job run again): decided on the read, like any write,
 * so two settlers racing write one settlement. Undefined: it was settled already.
 */
export async function settle(ledger: GitHubLedger, r: Reservation, measured: { costUsd: number; tokens?: number }, now: Date): Promise<Settlement | undefined> {
  const entry: Settlement = {
    v: 1,
    kind: "settle",
    id: r.id,
    run: r.run,
    workflow: r.workflow,
    ...(r.thread ? { thread: r.thread } : {}),
    ...(r.pool ? { pool: r.pool } : {}),
    amountUsd: measured.costUsd,
    ...(measured.tokens !== undefined ? { tokens: measured.tokens } : {}),
    ...(r.model ? { model: r.model } : {}),
    time: now.toISOString(),
  };
  const done = await ledger.update(readSince(now), (read) => (read.ledger.settlements.some((s) => s.entry.id === r.id) ? undefined : entry));
  return done.entry;
}

/** What a leg's run or publish job finds on the ledger for its run key (reserve job: `legRun`). */
export type Held = { kind: "held"; reservation: Reservation } | { kind: "settled"; reservation: Reservation } | { kind: "none" };

/**
 * The newest reservation recorded under `run` that is not settled (and, with
 * `live`, not expired: the run job starts no agent on a reservation that no
 * longer counts). Only valid entries written by the action are looked at.
 */
export function heldReservation(read: ReadLedger, run: string, now: Date, live: boolean): Held {
  const settled = new Set(read.settlements.map((s) => s.entry.id));
  let found: Held = { kind: "none" };
  // Newest first: the ledger is read from its head.
  for (const { entry } of read.reservations.values()) {
    if (entry.run !== run) continue;
    if (settled.has(entry.id)) {
      if (found.kind === "none") found = { kind: "settled", reservation: entry };
      continue;
    }
    if (live && Date.parse(entry.expires) <= now.getTime()) continue;
    return { kind: "held", reservation: entry };
  }
  return found;
}

/**
 * The cost a publish job settles a leg to: what the run artifact claims (hostile: the run job ran the
 * agent), never more than the reservation (the run job's gateway was capped there) and never a
 * claim missing or not a number (then all of it).
 */
export function settledClaim(claimUsd: number | undefined, reservedUsd: number): { amountUsd: number; clampedFrom?: number } {
  if (claimUsd === undefined || !Number.isFinite(claimUsd) || claimUsd < 0) return { amountUsd: reservedUsd };
  if (claimUsd > reservedUsd) return { amountUsd: reservedUsd, clampedFrom: claimUsd };
  return { amountUsd: claimUsd };
}

export function usd(n: number): string {
  return `$${n.toFixed(2)}`;
}

export function tallyLine(t: CheckTally): string {
  return `${t.input} ${t.capUsd}: ${usd(t.spentUsd)} spent${t.rejectedUsd ? ` (${usd(t.rejectedUsd)} of it for rejected entries)` : ""}, ${usd(t.reservedUsd)} reserved, ${usd(t.leftUsd)} left`;
}

function noRoomMessage(tallies: CheckTally[], req: AdmissionRequest): string {
  const full = tallies.filter((t) => t.leftUsd < MIN_RESERVATION_USD);
  const where = (t: CheckTally) =>
    t.input === "max-daily-cost-usd"
      ? `the daily budget of ${req.daily?.scope === "repository" ? "this repository" : `workflow ${req.workflow}`} for ${req.now.toISOString().slice(0, 10)} (UTC)`
      : `the fan-out's pool (workflow run ${req.pool?.id ?? ""})`;
  return `Budget: nothing is left in ${full.map(where).join(" and ")}: ${full.map(tallyLine).join("; ")}. The agent was not started.`;
}
