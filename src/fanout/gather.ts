/**
 * `phase: gather`: one report of this workflow run's fan-out items. Every
 * `agent-run-*` artifact of the run (and each item's delivery record) is
 * downloaded through the one safe extractor (publish/unzip.ts, with its
 * caps), one at a time, and removed once read. Each result.json is hostile
 * input: validated with zod, only the few fields the report shows are kept.
 *
 * An item is identified by the key in its artifact names (trigger/item.ts);
 * of several attempts of one item (re-run jobs), the newest counts. With
 * `items` (the plan's matrix) an item that left nothing shows as missing.
 */
import { lstat, readFile, rm } from "node:fs/promises";
import path from "node:path";
import * as z from "../shared/zod.js";
import type { HostContext } from "../config/host.js";
import { RESULTS_FILES } from "../constants.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { ArtifactService } from "../publish/artifacts.js";
import { inlineCode } from "../text.js";
import { formatDuration } from "../publish/summary.js";
import { itemKey, itemRef, parseRepository } from "../shared/item-ref.js";
import type { RepoRef } from "../shared/trigger.js";
import { MATRIX_LIMIT, type FanOutItem } from "./items.js";
import { DeliveryRecord, RECORD_FILE } from "./record.js";
import type { PoolReport } from "../ledger/pool.js";
import { RUN_CONCLUSIONS, type ConclusionOutput } from "../result.js";

/** The `conclusion` output's values; result.json holds the agent run's (RUN_CONCLUSIONS), without `partial`. */
type Conclusion = ConclusionOutput;

/** One row of the report (and one entry of the `report` output). */
export interface ReportEntry {
  item: string;
  key: string;
  /**
   * What the item's run came to, delivery included, as its publish step's `conclusion` output said (the
   * delivery record); the agent run's own (result.json) when no record came; `missing` when the item left
   * no run artifact, `unreadable` when it was refused.
   */
  conclusion: Conclusion | "missing" | "unreadable";
  durationMs?: number;
  costUsd?: number;
  /** How many files the agent changed, and the first of them. */
  changedFiles: number;
  files: string[];
  pullRequestUrl?: string;
  commentUrl?: string;
  /** `delivered` (a link), `failed` (the publish step said why), `none` (nothing to deliver), `unknown` (no delivery record). */
  delivery: "delivered" | "failed" | "none" | "unknown";
  error?: string;
  artifact?: string;
}

/** result.json as gather reads it: the fields the report shows, nothing more. */
const ResultFields = z.object({
  conclusion: z.enum(RUN_CONCLUSIONS),
  durationMs: z.number().check(z.nonnegative()),
  usage: z.object({ costUsd: z.optional(z.number().check(z.nonnegative())) }),
  diff: z.object({ changedFiles: z.array(z.string().check(z.maxLength(4096))).check(z.maxLength(100_000)) }),
});

/** result.json is a few kilobytes; a bigger one was not written by Agent Runner. */
const MAX_RESULT_BYTES = 16 * 1024 * 1024;
const FILES_LISTED = 20;
/** Run artifacts plus delivery records of a full matrix, with room for re-run attempts. */
const MAX_ARTIFACTS = 4 * MATRIX_LIMIT;

interface Named {
  id: number;
  name: string;
  key: string;
  attempt: number;
}

/**
 * This run's `agent-run-*` and `agent-delivery-*` artifacts by item key,
 * newest attempt first. A name of another form (a custom `artifact-name`)
 * is its own item. A name claiming an attempt after this one (`runAttempt`,
 * when known) was not written by this run's jobs and is left out.
 */
export function groupArtifacts(
  list: { id: number; name: string }[],
  runId: string | undefined,
  runAttempt?: string,
): { runs: Map<string, Named>; records: Map<string, Named> } {
  const runs = new Map<string, Named>();
  const records = new Map<string, Named>();
  const run = runId ?? "local";
  for (const a of list) {
    const kind = a.name.startsWith("agent-run-") ? runs : a.name.startsWith("agent-delivery-") ? records : undefined;
    if (!kind) continue;
    const rest = a.name.slice(kind === runs ? "agent-run-".length : "agent-delivery-".length);
    // The attempt as the runner writes it (no leading zero): one name per kind, key and attempt.
    const m = new RegExp(`^${run.replace(/\W/g, "")}-([1-9]\\d{0,8})(?:-(.+))?$`).exec(rest);
    const named: Named = m ? { id: a.id, name: a.name, key: m[2] ?? "", attempt: Number(m[1]) } : { id: a.id, name: a.name, key: a.name, attempt: 0 };
    if (runAttempt && /^\d+$/.test(runAttempt) && named.attempt > Number(runAttempt)) continue;
    const had = kind.get(named.key);
    if (!had || had.attempt < named.attempt || (had.attempt === named.attempt && had.id < named.id)) kind.set(named.key, named);
  }
  return { runs, records };
}

/** A link we show: only to this GitHub (the record is hostile input). */
function ownLink(url: string | undefined, serverUrl: string): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    const server = new URL(serverUrl);
    return /^https?:$/.test(u.protocol) && u.host.toLowerCase() === server.host.toLowerCase() && !u.username && !u.password ? u.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** The item a key stands for when no plan and no record says: this repository's number, or the key itself. */
function itemOfKey(key: string, repository: RepoRef): string {
  if (/^\d+$/.test(key)) return itemRef(repository, Number(key));
  return key || "(this run)";
}

async function readJsonFile(file: string, max: number): Promise<unknown> {
  const st = await lstat(file).catch(() => undefined);
  if (!st?.isFile()) throw new Error(`${path.basename(file)} is missing`);
  if (st.size > max) throw new Error(`${path.basename(file)} is ${st.size} bytes, more than ${max}`);
  return JSON.parse(await readFile(file, "utf8"));
}

/** Download one artifact into a fresh folder, read one JSON file from it, remove the folder. */
async function readArtifactJson(service: ArtifactService, a: Named, file: string, workDir: string, max: number): Promise<unknown> {
  const dir = path.join(workDir, `artifact-${a.id}`);
  try {
    await service.downloadThisRun(a, dir);
    return await readJsonFile(path.join(dir, file), max);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface GatherOptions {
  service: ArtifactService;
  host: Pick<HostContext, "runId" | "runAttempt" | "serverUrl">;
  repository: RepoRef;
  expected: FanOutItem[];
  workDir: string;
  log: Logger;
}

export async function gatherReport(o: GatherOptions): Promise<ReportEntry[]> {
  const { service, log } = o;
  // Grouped (and names past this attempt dropped) before the cap, and the plan's items first: names
  // nobody planned cannot crowd a planned item out of the report.
  const { runs, records } = groupArtifacts(await service.listThisRun(), o.host.runId, o.host.runAttempt);
  const expectedByKey = new Map(o.expected.map((i) => [i.key, i]));
  const allKeys = [...new Set([...o.expected.map((i) => i.key), ...runs.keys(), ...records.keys()])];
  const keys = allKeys.slice(0, Math.max(o.expected.length, MAX_ARTIFACTS / 2));
  if (keys.length < allKeys.length) log.warning(`Gather: this run has artifacts for ${allKeys.length} items; only ${keys.length} are read.`);

  const entries: ReportEntry[] = [];
  for (const key of keys) {
    const entry: ReportEntry = { item: expectedByKey.get(key)?.item ?? itemOfKey(key, o.repository), key, conclusion: "missing", changedFiles: 0, files: [], delivery: "unknown" };
    const run = runs.get(key);
    if (run) {
      entry.artifact = run.name;
      try {
        const parsed = ResultFields.safeParse(await readArtifactJson(service, run, RESULTS_FILES.result, o.workDir, MAX_RESULT_BYTES));
        if (!parsed.success) throw new Error(`${RESULTS_FILES.result} does not have the expected shape (${parsed.error.issues[0]?.path.join(".") || "(root)"}: ${parsed.error.issues[0]?.message})`);
        const r = parsed.data;
        entry.conclusion = r.conclusion;
        entry.durationMs = r.durationMs;
        if (r.usage.costUsd !== undefined) entry.costUsd = r.usage.costUsd;
        entry.changedFiles = r.diff.changedFiles.length;
        entry.files = r.diff.changedFiles.slice(0, FILES_LISTED);
      } catch (e) {
        entry.conclusion = "unreadable";
        entry.error = `The artifact '${run.name}' was not used: ${errorMessage(e)}`.slice(0, 500);
        log.warning(`Gather: ${entry.error}`);
      }
    }
    // A record speaks for its own attempt only: a re-run that left none (killed, upload failed) is not the earlier one's success.
    const rec = records.get(key);
    if (rec && run && rec.attempt !== run.attempt) log.warning(`Gather: the delivery record '${rec.name}' is from another attempt than '${run.name}'; not used.`);
    else if (rec) await applyRecord(entry, rec, o, expectedByKey.has(key));
    entries.push(entry);
  }
  return entries;
}

async function applyRecord(entry: ReportEntry, rec: Named, o: GatherOptions, planned: boolean): Promise<void> {
  let record: DeliveryRecord;
  try {
    const parsed = DeliveryRecord.safeParse(await readArtifactJson(o.service, rec, RECORD_FILE, o.workDir, 64 * 1024));
    if (!parsed.success) throw new Error(`${RECORD_FILE} does not have the expected shape`);
    record = parsed.data;
  } catch (e) {
    o.log.warning(`Gather: the delivery record '${rec.name}' was not used: ${errorMessage(e)}`);
    return;
  }
  // A record speaks for the item its name says, and its item must be a real reference to that key.
  if (record.key !== entry.key) {
    o.log.warning(`Gather: the delivery record '${rec.name}' names another item (${record.key.slice(0, 80)}); not used.`);
    return;
  }
  if (!planned && isItemRef(record.item) && keyOfItemRef(record.item, o.repository) === entry.key) entry.item = record.item;
  const pr = ownLink(record.pullRequestUrl, o.host.serverUrl);
  const comment = ownLink(record.commentUrl, o.host.serverUrl);
  if (pr) entry.pullRequestUrl = pr;
  if (comment) entry.commentUrl = comment;
  // The record's conclusion includes delivery (a failed push is `failure`, a refused pull request `partial`):
  // it stands over result.json's, which was written before delivery. A refused run artifact stays `unreadable`.
  if (entry.conclusion !== "unreadable") entry.conclusion = record.error && (record.conclusion === "success" || record.conclusion === "partial") ? "failure" : record.conclusion;
  entry.delivery = record.error ? "failed" : pr || comment ? "delivered" : "none";
  if (record.error) entry.error = record.error.slice(0, 500);
}

/** The artifact key of `owner/repo#12` or `owner/repo` (itemKey's), to check a record's item against its name. */
function keyOfItemRef(ref: string, repository: RepoRef): string | undefined {
  const [repo, n] = ref.split("#");
  const parsed = repo ? parseRepository(repo) : undefined;
  return parsed ? itemKey(parsed, n === undefined ? undefined : Number(n), repository.fullName) : undefined;
}

/** `owner/repo#12` or `owner/repo`: safe to show as it is (anything else, like a custom artifact name, is shown as code). */
function isItemRef(ref: string): boolean {
  const [repo, n] = ref.split("#");
  return Boolean(repo && parseRepository(repo) && (n === undefined || /^\d{1,10}$/.test(n)));
}

const ICON: Record<ReportEntry["conclusion"], string> = {
  success: "✅",
  partial: "⚠️",
  failure: "❌",
  incomplete: "⏸️",
  timeout: "⏱️",
  cancelled: "🚫",
  skipped: "⏭️",
  missing: "❔",
  unreadable: "⚠️",
};

function linkCell(e: ReportEntry): string {
  const parts: string[] = [];
  if (e.pullRequestUrl) {
    const n = /\/pull\/(\d+)/.exec(e.pullRequestUrl)?.[1];
    parts.push(`[${n ? `PR #${n}` : "pull request"}](${e.pullRequestUrl})`);
  }
  if (e.commentUrl) parts.push(`[comment](${e.commentUrl})`);
  if (e.delivery === "failed") parts.push("delivery failed");
  return parts.join(" · ") || "—";
}

/** The report as one Markdown table (job summary and tracking comment): only numbers, our words and checked links in it. */
export function reportTable(entries: ReportEntry[], runUrl: string | undefined): string {
  const done = entries.filter((e) => e.conclusion === "success").length;
  const cost = entries.reduce((n, e) => n + (e.costUsd ?? 0), 0);
  const anyCost = entries.some((e) => e.costUsd !== undefined);
  const head = [
    "### Agent Runner fan-out report",
    "",
    `${entries.length} item${entries.length === 1 ? "" : "s"}, ${done} succeeded${anyCost ? `, $${cost.toFixed(4)} in total` : ""}.${runUrl ? ` [Workflow run](${runUrl}).` : ""}`,
    "",
  ];
  if (!entries.length) return [...head, "_No items: the plan matched nothing, or no item job uploaded a result._", ""].join("\n");
  return [
    ...head,
    "| item | conclusion | duration | cost | changed files | pull request / comment |",
    "|---|---|---|---|---|---|",
    ...entries.map(
      (e) =>
        `| ${isItemRef(e.item) ? e.item : inlineCode(e.item)} | ${ICON[e.conclusion]} ${e.conclusion} | ${e.durationMs !== undefined ? formatDuration(e.durationMs) : "—"} | ${e.costUsd !== undefined ? `$${e.costUsd.toFixed(4)}` : "—"} | ${e.changedFiles} | ${linkCell(e)} |`,
    ),
    "",
  ].join("\n");
}

/** Why an item of the plan has no run: its reserve job found the pool (max-total-cost-usd) spent or reserved. */
export const SKIPPED_FOR_BUDGET = "Skipped for lack of budget: the fan-out's pool (max-total-cost-usd) was spent or reserved when this item reserved; its agent was not started.";

/** The entries with the items the pool skipped marked so (they left no artifact: `missing` until now). */
export function withPoolSkips(entries: ReportEntry[], pool: PoolReport): ReportEntry[] {
  const skipped = new Set(pool.skipped.map((i) => i.toLowerCase()));
  return entries.map((e) => (skipped.has(e.item.toLowerCase()) && (e.conclusion === "missing" || e.conclusion === "skipped") ? { ...e, conclusion: "skipped", error: SKIPPED_FOR_BUDGET } : e));
}

/** The pool's section of the report: only numbers, our words and item references (checked, else as code). */
export function poolSection(pool: PoolReport): string {
  const usd = (n: number) => `$${n.toFixed(2)}`;
  const lines = [
    `#### Budget pool (max-total-cost-usd ${pool.capUsd})`,
    "",
    `${usd(pool.spentUsd)} spent, ${usd(pool.reservedUsd)} reserved, ${usd(pool.leftUsd)} left${pool.rejected ? ` (${pool.rejected} ledger entr${pool.rejected === 1 ? "y" : "ies"} rejected and counted as spent: ${usd(pool.rejectedUsd)})` : ""}.`,
    "",
  ];
  if (!pool.skipped.length) return [...lines, "No item was skipped for lack of budget.", ""].join("\n");
  const names = pool.skipped.map((i) => (isItemRef(i) ? i : inlineCode(i)));
  return [...lines, `${pool.skipped.length} item${pool.skipped.length === 1 ? "" : "s"} skipped for lack of budget: ${names.join(", ")}.`, ""].join("\n");
}
