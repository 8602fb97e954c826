/**
 * What the ledger says is spent, reserved and left, from the commits read
 * back (newest first). Pure: the commits, the clock and the caps come in.
 *
 * - A reservation counts at its amount until it is settled or expires; once
 *   settled, at the settlement's measured cost; once expired unsettled (a
 *   job killed before it settled), at nothing.
 * - An entry that fails validation, was not written by the action's own
 *   identity, or settles a reservation the ledger does not hold, is reported
 *   and counts as spent in every check at the larger of what it claims and
 *   `untrustedUsd` (the reading run's own cap, the most one reservation of it
 *   can hold): never as credit. Whatever time it claims: its time is not
 *   verified. Only its place in the ledger leaves it out: below (older than)
 *   the first valid entry whose own time is before the read's `since`.
 */
import { parseEntryMessage, utcDay, type LedgerEntry, type LedgerScope, type Reservation, type Settlement } from "./entry.js";

/** A commit of the ledger ref, as the API or git lists it. */
export interface LedgerCommit {
  sha: string;
  parents: string[];
  message: string;
  /** The login GitHub links the author to (the API), or the author name (plain git). */
  author?: string;
  /** GitHub verified the commit's signature: it was made through the API, not pushed. Undefined: not known (plain git). */
  verified?: boolean;
  /** Committer date, ISO. */
  time: string;
}

export interface Rejected {
  sha: string;
  time: string;
  problem: string;
  /** What it claims, where that much could be read. */
  claimedUsd?: number;
}

export interface ReadLedger {
  reservations: Map<string, { sha: string; entry: Reservation }>;
  settlements: { sha: string; entry: Settlement }[];
  rejected: Rejected[];
}

/** The action's own identity: a bot (the workflow's token or a GitHub App's), with GitHub's signature on the commit. */
export function writtenByTheAction(c: LedgerCommit): string | undefined {
  if (c.verified === false) return "the commit is not signed by GitHub (it was pushed, not made through the API by the action)";
  if (!/\[bot\]$/.test(c.author ?? "")) return `the commit was made by '${c.author ?? "(unknown)"}', not by the action's token`;
  return undefined;
}

/**
 * The time of a valid entry written by the action, as the entry itself says
 * (undefined for anything else). Only such a time may decide where reading
 * the ledger stops: a rejected commit's dates are whatever its writer chose.
 */
export function trustedTime(c: LedgerCommit): number | undefined {
  if (c.parents.length !== 1 || writtenByTheAction(c)) return undefined;
  const parsed = parseEntryMessage(c.message);
  return parsed.ok ? Date.parse(parsed.entry.time) : undefined;
}

/**
 * Sorts the commits into valid reservations, valid settlements and rejected
 * entries. `complete` says the list reaches the ledger's root: only then is a
 * settlement whose reservation is missing certainly an orphan (else the
 * reservation may lie beyond what was read, and the settlement is dropped).
 * With `since`, rejected entries below the first valid entry older than it
 * are left out (they are older than the window by their place in the ledger).
 */
export interface ReadOptions {
  since?: Date;
  /**
   * "unknown": the commits were read with plain git, which cannot see GitHub's
   * signature or the login behind a commit (an author name is free text), so
   * entries are judged by their content alone and the reader must say so.
   */
  identity?: "checked" | "unknown";
}

export function readCommits(commits: LedgerCommit[], complete: boolean, o: ReadOptions = {}): ReadLedger {
  const { since } = o;
  const reservations = new Map<string, { sha: string; entry: Reservation }>();
  const settlements: { sha: string; entry: Settlement; beyond: boolean }[] = [];
  const rejected: Rejected[] = [];
  let beyond = false;
  for (const c of commits) {
    // The root commit holds no entry: it only starts the ref.
    if (c.parents.length === 0) continue;
    const parsed = parseEntryMessage(c.message);
    const identity = o.identity === "unknown" ? undefined : writtenByTheAction(c);
    if (!parsed.ok || identity || c.parents.length !== 1) {
      const claimed = parsed.ok ? parsed.entry.amountUsd : claimedAmount(c.message);
      if (!beyond) rejected.push({ sha: c.sha, time: c.time, problem: identity ?? (parsed.ok ? "a merge commit" : parsed.problem), ...(claimed !== undefined ? { claimedUsd: claimed } : {}) });
      continue;
    }
    if (parsed.entry.kind === "reserve") {
      if (!reservations.has(parsed.entry.id)) reservations.set(parsed.entry.id, { sha: c.sha, entry: parsed.entry });
      else if (!beyond) rejected.push({ sha: c.sha, time: c.time, problem: `reservation ${parsed.entry.id} is recorded twice`, claimedUsd: parsed.entry.amountUsd });
    } else settlements.push({ sha: c.sha, entry: parsed.entry, beyond });
    if (since && Date.parse(parsed.entry.time) < since.getTime()) beyond = true;
  }
  const settled = new Set<string>();
  const kept: { sha: string; entry: Settlement }[] = [];
  for (const { beyond, ...s } of settlements) {
    if (beyond) continue;
    const r = reservations.get(s.entry.id);
    if (!r) {
      if (complete) rejected.push({ sha: s.sha, time: s.entry.time, problem: `settles reservation ${s.entry.id}, which the ledger does not hold`, claimedUsd: s.entry.amountUsd });
      continue;
    }
    if (settled.has(s.entry.id)) {
      rejected.push({ sha: s.sha, time: s.entry.time, problem: `settles reservation ${s.entry.id} a second time`, claimedUsd: s.entry.amountUsd });
      continue;
    }
    settled.add(s.entry.id);
    kept.push(s);
  }
  return { reservations, settlements: kept, rejected };
}

/** A number after `amountUsd` in a message that does not validate: what it claims, if it says. */
function claimedAmount(message: string): number | undefined {
  const m = /"amountUsd"\s*:\s*([0-9.]+)/.exec(message);
  const n = m ? Number(m[1]) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** One cap the ledger is checked against. */
export interface LedgerCheck {
  /** The input that sets it. */
  input: "max-daily-cost-usd" | "max-total-cost-usd";
  capUsd: number;
  /** Which reservations it counts. Rejected entries count in every check: their time and scope are not to be believed. */
  counts: (r: Reservation) => boolean;
}

export interface CheckTally {
  input: LedgerCheck["input"];
  capUsd: number;
  spentUsd: number;
  reservedUsd: number;
  /** Counted from rejected entries (included in spentUsd). */
  rejectedUsd: number;
  leftUsd: number;
}

export function tally(ledger: ReadLedger, check: LedgerCheck, now: Date, untrustedUsd: number): CheckTally {
  const settlementOf = new Map(ledger.settlements.map((s) => [s.entry.id, s.entry]));
  let spent = 0;
  let reserved = 0;
  for (const { entry: r } of ledger.reservations.values()) {
    if (!check.counts(r)) continue;
    const s = settlementOf.get(r.id);
    if (s) spent += s.amountUsd;
    else if (Date.parse(r.expires) > now.getTime()) reserved += r.amountUsd;
  }
  let rejectedUsd = 0;
  for (const x of ledger.rejected) rejectedUsd += Math.max(x.claimedUsd ?? 0, untrustedUsd);
  spent += rejectedUsd;
  return { input: check.input, capUsd: check.capUsd, spentUsd: spent, reservedUsd: reserved, rejectedUsd, leftUsd: Math.max(0, check.capUsd - spent - reserved) };
}

/** The daily check of a run: this UTC day, this workflow (or the whole repository). */
export function dailyCheck(capUsd: number, scope: LedgerScope, workflow: string, now: Date): LedgerCheck {
  const day = utcDay(now.toISOString());
  return {
    input: "max-daily-cost-usd",
    capUsd,
    counts: (r) => utcDay(r.time) === day && (scope === "repository" || r.workflow === workflow),
  };
}

/** A fan-out's pool: every reservation drawn from it, whenever. */
export function poolCheck(capUsd: number, pool: string): LedgerCheck {
  return { input: "max-total-cost-usd", capUsd, counts: (r) => r.pool === pool };
}

export type { LedgerEntry };
