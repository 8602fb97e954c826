/**
 * A fan-out's pool (`max-total-cost-usd`) as gather reports it: spent,
 * reserved and left, and which items hold no reservation in it (their
 * reserve job found the pool spent or reserved, so their agent never
 * started). Pure: the ledger as read, the pool's id and cap, the items.
 */
import { legRun } from "./legs.js";
import { poolCheck, tally, type CheckTally, type ReadLedger } from "./tally.js";

export interface PoolReport extends CheckTally {
  /** Items of the plan with no reservation in the pool: skipped for lack of budget. */
  skipped: string[];
  /** Entries that failed validation (counted as spent at what they claim). */
  rejected: number;
}

export function poolReport(read: ReadLedger, pool: string, capUsd: number, now: Date, items: string[]): PoolReport {
  // A rejected entry counts at what it claims here: gather has no item's max-cost-usd (admission counts each at least at that).
  const t = tally(read, poolCheck(capUsd, pool), now, 0);
  const held = new Set<string>();
  for (const { entry } of read.reservations.values()) if (entry.pool === pool) held.add(entry.run.toLowerCase());
  const skipped = items.filter((item) => !held.has(legRun(pool, item).toLowerCase()));
  return { ...t, skipped, rejected: read.rejected.length };
}
