/**
 * `agent-runner show <artifact.zip | results folder>`: a past run's summary
 * and its transcript. A zip (the run artifact as GitHub's "Download" button
 * or the REST API gives it) is extracted with the project's one zip door
 * (publish/unzip.ts: no path leaving the folder, no symlinks, size caps).
 *
 * The transcript is always rendered anew from trace.jsonl into a fresh temp
 * folder: the artifact's own transcript.html was written by a job that ran
 * agent code, so it is never shown or opened.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { RESULTS_FILES } from "../constants.js";
import { ConfigurationError } from "../errors.js";
import { extractZipSafely, UnsafeArchiveError } from "../publish/unzip.js";
import type { RunResult } from "../result.js";
import { writeTranscriptHtml } from "../trace/transcript-files.js";
import { readResult, readRunRow, showLines, type RunRow } from "./run-row.js";
import { writeLines } from "./terminal.js";
import { loadRecord, recordLine, type AnyApprovalRecord } from "../publish/approval/record.js";

export interface ShowOptions {
  /** A run artifact zip or a results folder. */
  target: string;
  /** Where a zip is extracted (default: a new folder under the system temp directory). */
  out?: string;
  /** Open the freshly rendered transcript.html in the system's browser. */
  open?: boolean;
  json?: boolean;
}

export interface Shown {
  row: RunRow;
  /** approval: required: the record the step (or `agent-runner run` and `approve`) left in the results folder. */
  approval?: AnyApprovalRecord;
  /** The results folder read (the extracted zip for an artifact). */
  dir: string;
  transcript?: string;
}

export async function showRun(opts: ShowOptions): Promise<Shown> {
  const target = path.resolve(opts.target);
  const info = await stat(target).catch(() => undefined);
  if (!info) throw new ConfigurationError(`'${opts.target}' does not exist: give a run artifact zip or a results folder.`);
  const dir = info.isDirectory() ? target : await extractArtifact(target, opts.out);
  const row = await readRunRow(dir, path.basename(target).replace(/\.zip$/i, ""));
  const transcript = await renderTranscript(dir);
  if (opts.open && transcript) openInBrowser(transcript);
  const approval = await loadRecord(dir);
  return { row, dir, ...(transcript ? { transcript } : {}), ...(approval ? { approval } : {}) };
}

/** What `show` prints, one line per field (the caller writes them through the terminal door, cli/terminal.ts). */
export function showLinesOf(shown: Shown): string[] {
  return [
    ...showLines(shown.row, shown.transcript),
    ...(shown.approval ? [`approval:${" ".repeat(6)}${recordLine(shown.approval)}`] : []),
    `results:${" ".repeat(7)}${shown.dir}`,
  ];
}

async function extractArtifact(zip: string, out: string | undefined): Promise<string> {
  const dir = out ? path.resolve(out) : await mkdtemp(path.join(os.tmpdir(), "agent-runner-show-"));
  try {
    await extractZipSafely(zip, dir);
  } catch (e) {
    if (e instanceof UnsafeArchiveError) throw new ConfigurationError(`'${zip}' was refused: ${e.message}.`);
    throw e;
  }
  return resultsFolderIn(dir);
}

/** The artifact's files sit at the zip's root; a zip of a folder has them one level down. */
async function resultsFolderIn(dir: string): Promise<string> {
  if (existsSync(path.join(dir, RESULTS_FILES.result))) return dir;
  const entries = await readdir(dir, { withFileTypes: true });
  const inner = entries.filter((e) => e.isDirectory() && existsSync(path.join(dir, e.name, RESULTS_FILES.result)));
  return inner.length === 1 ? path.join(dir, inner[0]!.name) : dir;
}

/** transcript.html rendered from the folder's trace.jsonl into a new temp folder; none without a trace. */
async function renderTranscript(dir: string): Promise<string | undefined> {
  if (!existsSync(path.join(dir, RESULTS_FILES.trace))) return undefined;
  const result = await readResult(dir);
  // The header needs only these fields; the patch is the folder's own.
  const local = { ...result, diff: { ...result.diff, patchPath: path.join(dir, RESULTS_FILES.patch) }, sandboxBackend: result.sandboxBackend ?? "" } as unknown as RunResult;
  const html = path.join(await mkdtemp(path.join(os.tmpdir(), "agent-runner-transcript-")), RESULTS_FILES.transcriptHtml);
  await writeTranscriptHtml(dir, local, html);
  return html;
}

function openInBrowser(file: string): void {
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(opener, [file], { detached: true, stdio: "ignore" });
    child.on("error", () => writeLines(process.stderr, [`Could not start '${opener}'; open ${file} in a browser.`]));
    child.unref();
  } catch {
    writeLines(process.stderr, [`Could not start '${opener}'; open ${file} in a browser.`]);
  }
}
