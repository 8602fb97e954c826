/**
 * `agent-runner ledger`: the budget ledger of a local clone, as a table per
 * UTC day and workflow, and per fan-out pool. Read with plain git through the
 * project's git door: `git fetch <remote> refs/agent-runner/ledger`, then the
 * commits' messages. The entries are checked as the action checks them; a
 * rejected one is listed and counted as spent (at what it claims: the CLI
 * knows no run's cap).
 */
import { Git } from "../git/git.js";
import { LEDGER_REF, utcDay } from "../ledger/entry.js";
import { readCommits, type LedgerCommit, type ReadLedger, type Rejected } from "../ledger/tally.js";

/** Where the fetched ledger is kept in the clone: apart from the refs a `git fetch` of branches would move. */
const LOCAL_REF = "refs/agent-runner/ledger";
const FIELD = "\x1f";
const RECORD = "\x1e";

export interface LedgerRow {
  /** `YYYY-MM-DD` (UTC) and workflow, or `pool <run id>`. */
  day: string;
  workflow: string;
  runs: number;
  settledUsd: number;
  /** Reserved and not settled (open, or expired: a killed job). */
  openUsd: number;
  tokens: number;
}

export interface LedgerTable {
  days: LedgerRow[];
  pools: LedgerRow[];
  rejected: Rejected[];
  entries: number;
}

export async function readLocalLedger(o: { dir: string; remote: string; fetch: boolean; env: Record<string, string> }): Promise<ReadLedger & { entries: number }> {
  const git = new Git(o.dir, o.env);
  if (o.fetch) await git.exec(["fetch", "--quiet", "--no-tags", o.remote, `+${LEDGER_REF}:${LOCAL_REF}`]);
  const has = await git.exec(["rev-parse", "--verify", "--quiet", `${LOCAL_REF}^{commit}`], { okCodes: [1] });
  if (has.exitCode !== 0) return { ...readCommits([], true), entries: 0 };
  const log = await git.exec(["log", `--format=%H${FIELD}%P${FIELD}%an${FIELD}%cI${FIELD}%B${RECORD}`, LOCAL_REF]);
  const commits: LedgerCommit[] = log.stdout
    .split(RECORD)
    .map((r) => r.replace(/^\n/, ""))
    .filter(Boolean)
    .map((r) => {
      const [sha = "", parents = "", author = "", time = "", message = ""] = r.split(FIELD);
      return { sha, parents: parents.split(" ").filter(Boolean), author, time, message };
    });
  return { ...readCommits(commits, true), entries: commits.length };
}

export function ledgerTable(ledger: ReadLedger & { entries: number }): LedgerTable {
  const settlementOf = new Map(ledger.settlements.map((s) => [s.entry.id, s.entry]));
  const days = new Map<string, LedgerRow>();
  const pools = new Map<string, LedgerRow>();
  const add = (rows: Map<string, LedgerRow>, day: string, workflow: string, settled: number | undefined, reserved: number, tokens: number) => {
    const key = `${day}\n${workflow}`;
    const row = rows.get(key) ?? { day, workflow, runs: 0, settledUsd: 0, openUsd: 0, tokens: 0 };
    row.runs++;
    if (settled !== undefined) row.settledUsd += settled;
    else row.openUsd += reserved;
    row.tokens += tokens;
    rows.set(key, row);
  };
  for (const { entry: r } of ledger.reservations.values()) {
    const s = settlementOf.get(r.id);
    add(days, utcDay(r.time), r.workflow, s?.amountUsd, r.amountUsd, s?.tokens ?? 0);
    if (r.pool) add(pools, `pool ${r.pool}`, r.workflow, s?.amountUsd, r.amountUsd, s?.tokens ?? 0);
  }
  const sorted = (m: Map<string, LedgerRow>) => [...m.values()].sort((a, b) => (a.day === b.day ? a.workflow.localeCompare(b.workflow) : a.day < b.day ? 1 : -1));
  return { days: sorted(days), pools: sorted(pools), rejected: ledger.rejected, entries: ledger.entries };
}

export function ledgerLines(t: LedgerTable): string[] {
  const money = (n: number) => `$${n.toFixed(2)}`;
  const rows = (title: string, list: LedgerRow[]) => {
    if (!list.length) return [];
    const cells = list.map((r) => [r.day, r.workflow, String(r.runs), money(r.settledUsd), money(r.openUsd), String(r.tokens)]);
    const head = [title, "workflow", "runs", "settled", "unsettled", "tokens"];
    const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    const line = (c: string[]) => c.map((x, i) => (i >= 2 ? x.padStart(width[i]!) : x.padEnd(width[i]!))).join("  ").trimEnd();
    return [line(head), ...cells.map(line), ""];
  };
  if (!t.entries) return [`No budget ledger (${LEDGER_REF}) in this repository yet.`];
  return [
    ...rows("day (UTC)", t.days),
    ...rows("pool", t.pools),
    ...t.rejected.map((r) => `rejected ${r.sha.slice(0, 12)} (${r.time}): ${r.problem}; counted as spent${r.claimedUsd !== undefined ? ` (claims $${r.claimedUsd.toFixed(2)})` : ""}`),
    `${t.entries} commit(s) on ${LEDGER_REF}; unsettled: reserved by a run still going, or by a job killed before it settled (counted until its reservation expires).`,
  ];
}
