/**
 * One ledger entry: a reservation or a settlement, written as one commit on
 * LEDGER_REF. The entry is the commit message's JSON after its first line, so
 * `git log refs/agent-runner/ledger` shows it as it is. Every entry read back
 * is checked here (zod) and against who wrote it (ledger/read.ts); what fails
 * is never credit.
 */
import * as z from "../shared/zod.js";

export const LEDGER_REF = "refs/agent-runner/ledger";

/** How `max-daily-cost-usd` groups runs: per workflow file, or every workflow of the repository together. */
export type LedgerScope = "workflow" | "repository";

const money = z.number().check(z.nonnegative());
const tokens = z.number().check(z.int(), z.nonnegative());
const isoTime = z.iso.datetime();
const id = z.string().check(z.minLength(1), z.maxLength(200));

/** What a reservation and its settlement both say: whose run, which budget, how much, when. */
const EntryBase = z.object({
  v: z.literal(1),
  /** A reservation's own id; a settlement names the reservation it settles. */
  id,
  /** `<run id>-<attempt>` of the workflow run, and the job's step (the same run may reserve for several legs). */
  run: id,
  workflow: id,
  thread: z.optional(id),
  /** A fan-out's pool: the workflow run that planned it. */
  pool: z.optional(id),
  amountUsd: money,
  model: z.optional(id),
  time: isoTime,
});

export const Reservation = z.extend(EntryBase, {
  kind: z.literal("reserve"),
  /** Until then an unsettled reservation counts as spent; after it, it counts no more (the job's timeout has passed). */
  expires: isoTime,
});
export type Reservation = z.infer<typeof Reservation>;

/** `amountUsd`: the model gateway's measured cost. */
export const Settlement = z.extend(EntryBase, {
  kind: z.literal("settle"),
  tokens: z.optional(tokens),
});
export type Settlement = z.infer<typeof Settlement>;

export const LedgerEntry = z.discriminatedUnion("kind", [Reservation, Settlement]);
export type LedgerEntry = z.infer<typeof LedgerEntry>;

/** The commit message of an entry: a one-line summary, a blank line, the JSON. */
export function entryMessage(e: LedgerEntry): string {
  const what = e.kind === "reserve" ? `reserve $${e.amountUsd.toFixed(4)}` : `settle $${e.amountUsd.toFixed(4)}`;
  return `agent-runner ledger: ${what} for ${e.workflow} run ${e.run}${e.pool ? ` (pool ${e.pool})` : ""}\n\n${JSON.stringify(e)}\n`;
}

/** The entry a commit message holds, or why it holds none. */
export function parseEntryMessage(message: string): { ok: true; entry: LedgerEntry } | { ok: false; problem: string } {
  const blank = message.indexOf("\n\n");
  if (blank < 0) return { ok: false, problem: "the commit message holds no entry" };
  let json: unknown;
  try {
    json = JSON.parse(message.slice(blank + 2));
  } catch {
    return { ok: false, problem: "the entry is not JSON" };
  }
  const parsed = LedgerEntry.safeParse(json);
  if (!parsed.success) return { ok: false, problem: `the entry does not validate: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(entry)"} ${i.message}`).join("; ")}` };
  return { ok: true, entry: parsed.data };
}

/** The UTC day of an ISO time: `YYYY-MM-DD`. */
export function utcDay(iso: string): string {
  return iso.slice(0, 10);
}
