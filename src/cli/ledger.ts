/**
 * `agent-runner ledger`: the budget ledger of a local clone, as a table per
 * UTC day and workflow, and per fan-out pool. Read with plain git through the
 * project's git door: `git fetch <remote> refs/agent-runner/ledger`, then the
 * commits' raw objects. The entries are checked by their content as the
 * action checks them; a rejected one is listed and counted as spent (at what
 * it claims: the CLI knows no run's cap). Who made a commit is not checked:
 * plain git sees neither GitHub's signature nor the login behind it (an author
 * name is whatever the writer typed), and the table says so.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Git } from "../git/git.js";
import { LEDGER_REF, utcDay } from "../ledger/entry.js";
import { readCommits, type LedgerCommit, type ReadLedger, type Rejected } from "../ledger/tally.js";

/** Where the fetched ledger is kept in the clone: apart from the refs a `git fetch` of branches would move. */
const LOCAL_REF = "refs/agent-runner/ledger";

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
  /** Who made each commit was not checked (plain git). */
  identity: "unverified";
}

export async function readLocalLedger(o: { dir: string; remote: string; fetch: boolean; env: Record<string, string> }): Promise<ReadLedger & { entries: number }> {
  const git = new Git(o.dir, o.env);
  if (o.fetch) await git.exec(["fetch", "--quiet", "--no-tags", o.remote, `+${LEDGER_REF}:${LOCAL_REF}`]);
  const has = await git.exec(["rev-parse", "--verify", "--quiet", `${LOCAL_REF}^{commit}`], { okCodes: [1] });
  if (has.exitCode !== 0) return { ...readCommits([], true, { identity: "unknown" }), entries: 0 };
  // Object ids only (hex), newest first; then the raw objects, length-prefixed by cat-file: a message may
  // hold any separator, so nothing is split on characters a commit's writer chooses.
  const shas = (await git.text(["rev-list", "--topo-order", LOCAL_REF])).split("\n").filter(Boolean);
  const dir = await mkdtemp(path.join(tmpdir(), "agent-runner-ledger-"));
  try {
    const file = path.join(dir, "objects");
    await git.exec(["cat-file", "--batch"], { input: shas.map((s) => `${s}\n`).join(""), stdoutFile: file });
    const commits = parseBatch(await readFile(file));
    // Plain git sees no signature and only a typed author name: identities are unknown, not checked.
    return { ...readCommits(commits, true, { identity: "unknown" }), entries: commits.length };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `git cat-file --batch` output of commits: `<sha> commit <size>\n<size bytes>\n` each. */
export function parseBatch(out: Buffer): LedgerCommit[] {
  const commits: LedgerCommit[] = [];
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at);
    const [sha = "", type = "", size = ""] = out.subarray(at, eol < 0 ? out.length : eol).toString("latin1").split(" ");
    if (eol < 0 || type !== "commit" || !/^\d+$/.test(size)) throw new Error(`git cat-file: unexpected answer for ${sha || "(nothing)"}`);
    const body = out.subarray(eol + 1, eol + 1 + Number(size));
    at = eol + 1 + Number(size) + 1;
    const split = body.indexOf("\n\n");
    const header = body.subarray(0, split < 0 ? body.length : split).toString("utf8").split("\n");
    const committer = header.find((l) => l.startsWith("committer "));
    const epoch = committer ? /(\d+) [+-]\d{4}$/.exec(committer)?.[1] : undefined;
    commits.push({
      sha,
      parents: header.filter((l) => l.startsWith("parent ")).map((l) => l.slice("parent ".length)),
      time: epoch ? new Date(Number(epoch) * 1000).toISOString() : "",
      message: split < 0 ? "" : body.subarray(split + 2).toString("utf8"),
    });
  }
  return commits;
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
  return { days: sorted(days), pools: sorted(pools), rejected: ledger.rejected, entries: ledger.entries, identity: "unverified" };
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
    `Who made each entry is not checked here: plain git sees neither GitHub's signature nor the login behind a commit (an author name is typed), so entries are judged by their content only. The action rejects entries not made through the API by a bot.`,
    `${t.entries} commit(s) on ${LEDGER_REF}; unsettled: reserved by a run still going, or by a job killed before it settled (counted until its reservation expires).`,
  ];
}
