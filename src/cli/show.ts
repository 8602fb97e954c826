/**
 * `agent-runner show <artifact.zip | results folder>`: a past run's summary
 * and its transcript. A zip (the run artifact as GitHub's "Download" button
 * or the REST API gives it) is extracted with the project's one zip door
 * (publish/unzip.ts: no path leaving the folder, no symlinks, size caps).
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
import { Redactor } from "../shared/redact.js";
import { writeTranscriptFiles } from "../trace/transcript-files.js";
import { readResult, readRunRow, showLines, type RunRow } from "./run-row.js";

export interface ShowOptions {
  /** A run artifact zip or a results folder. */
  target: string;
  /** Where a zip is extracted (default: a new folder under the system temp directory). */
  out?: string;
  /** Open transcript.html in the system's browser. */
  open?: boolean;
  json?: boolean;
}

export interface Shown {
  row: RunRow;
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
  const transcript = await ensureTranscript(dir);
  if (opts.open && transcript) openInBrowser(transcript);
  return { row, dir, ...(transcript ? { transcript } : {}) };
}

export function showText(shown: Shown): string {
  return [...showLines(shown.row, shown.transcript), `results:${" ".repeat(7)}${shown.dir}`].join("\n") + "\n";
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

/** transcript.html as the run wrote it; rendered again from trace.jsonl when it is missing. */
async function ensureTranscript(dir: string): Promise<string | undefined> {
  const html = path.join(dir, RESULTS_FILES.transcriptHtml);
  if (existsSync(html)) return html;
  if (!existsSync(path.join(dir, RESULTS_FILES.trace))) return undefined;
  const result = await readResult(dir);
  // The header needs only these fields; the patch is the folder's own.
  const local = { ...result, diff: { ...result.diff, patchPath: path.join(dir, RESULTS_FILES.patch) }, sandboxBackend: result.sandboxBackend ?? "" } as unknown as RunResult;
  await writeTranscriptFiles(dir, local, { redactor: new Redactor([]) });
  return html;
}

function openInBrowser(file: string): void {
  const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(opener, [file], { detached: true, stdio: "ignore" });
    child.on("error", () => process.stderr.write(`Could not start '${opener}'; open ${file} in a browser.\n`));
    child.unref();
  } catch {
    process.stderr.write(`Could not start '${opener}'; open ${file} in a browser.\n`);
  }
}
