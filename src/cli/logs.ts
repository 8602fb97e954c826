/**
 * `agent-runner logs --repo owner/name`: recent runs' agent artifacts,
 * through the REST API, one row each (the columns of `show`), then totals.
 *
 *   GET /repos/{owner}/{repo}/actions/workflows/{workflow}/runs   (--workflow: which runs count)
 *   GET /repos/{owner}/{repo}/actions/artifacts                   (newest first, `agent-run-*`)
 *   GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip          (302 to storage, fetched without the token)
 *
 * Each artifact is extracted through publish/unzip.ts into a temp folder
 * that is removed once its result.json is read. Artifacts of fork pull
 * requests' runs are left out (publish/artifact-origin.ts), as sessions
 * leave them out: a fork's job can upload an `agent-run-*` of its own making.
 */
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { ConfigurationError, errorMessage } from "../errors.js";
import { apiErrorMessage, createOctokit, type Octokit } from "../github/client.js";
import type { Logger } from "../logger.js";
import { fromRepositoryItself } from "../publish/artifact-origin.js";
import { extractZipSafely } from "../publish/unzip.js";
import { readRunRow, totalsOf, type RunRow, type RunTotals } from "./run-row.js";
import { fetchHonouringProxy } from "../shared/fetch.js";

export interface LogsOptions {
  /** `owner/name`. */
  repo: string;
  /** Workflow file name (`agent.yml`) or id: only its runs. */
  workflow?: string;
  limit: number;
  /** Artifact name prefix of the run artifacts (default `agent-run-`). */
  namePrefix: string;
  token: string;
  apiUrl: string;
  log: Logger;
}

export interface Logs {
  rows: RunRow[];
  totals: RunTotals;
  /** Artifacts that could not be read (expired while listed, refused zip, not a result). */
  skipped: { name: string; reason: string }[];
}

/** Pages of 100 artifacts looked through at most, newest first. */
const MAX_ARTIFACT_PAGES = 10;

export async function listRuns(opts: LogsOptions): Promise<Logs> {
  const [owner, repo] = opts.repo.split("/") as [string, string];
  const octokit = await createOctokit({ token: opts.token, apiUrl: opts.apiUrl, log: opts.log });
  const runIds = opts.workflow ? await workflowRunIds(octokit, owner, repo, opts.workflow) : undefined;
  const artifacts = await runArtifacts(octokit, owner, repo, opts, runIds);
  const rows: RunRow[] = [];
  const skipped: Logs["skipped"] = [];
  for (const a of artifacts) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agent-runner-logs-"));
    try {
      await downloadZip(octokit, owner, repo, a.id, path.join(dir, "artifact.zip"));
      await extractZipSafely(path.join(dir, "artifact.zip"), path.join(dir, "files"));
      rows.push(await readRunRow(path.join(dir, "files"), runLabel(a)));
    } catch (e) {
      skipped.push({ name: a.name, reason: errorMessage(e) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return { rows, totals: totalsOf(rows), skipped };
}

interface ListedArtifact {
  id: number;
  name: string;
  runId?: number;
}

/** `6001-1` for the default name (`agent-run-<run id>-<attempt>`), else the run id, else the name. */
function runLabel(a: ListedArtifact): string {
  const m = /^agent-run-(\d+-\d+)$/.exec(a.name);
  return m ? m[1]! : a.runId !== undefined ? String(a.runId) : a.name;
}

async function workflowRunIds(octokit: Octokit, owner: string, repo: string, workflow: string): Promise<Set<number>> {
  try {
    const res = await octokit.rest.actions.listWorkflowRuns({ owner, repo, workflow_id: workflow, per_page: 100 });
    return new Set(res.data.workflow_runs.map((r) => r.id));
  } catch (e) {
    throw new ConfigurationError(`--workflow: listing the runs of '${workflow}' in ${owner}/${repo} failed: ${apiErrorMessage(e)}. Give the workflow's file name (agent.yml) or id.`);
  }
}

async function runArtifacts(octokit: Octokit, owner: string, repo: string, opts: LogsOptions, runIds: Set<number> | undefined): Promise<ListedArtifact[]> {
  const found: ListedArtifact[] = [];
  for (let page = 1; page <= MAX_ARTIFACT_PAGES && found.length < opts.limit; page++) {
    let res;
    try {
      res = await octokit.rest.actions.listArtifactsForRepo({ owner, repo, per_page: 100, page });
    } catch (e) {
      throw new ConfigurationError(
        `--repo: listing the artifacts of ${owner}/${repo} failed: ${apiErrorMessage(e)}. The token (GH_TOKEN or GITHUB_TOKEN) needs read access to Actions.`,
      );
    }
    const list = res.data.artifacts;
    for (const a of list) {
      if (found.length >= opts.limit) break;
      if (a.expired || !a.name.startsWith(opts.namePrefix)) continue;
      if (!a.workflow_run || !fromRepositoryItself(a.workflow_run)) continue;
      const runId = a.workflow_run?.id ?? undefined;
      if (runIds && (runId === undefined || !runIds.has(runId))) continue;
      found.push({ id: a.id, name: a.name, ...(runId !== undefined ? { runId } : {}) });
    }
    if (list.length < 100) break;
  }
  return found;
}

/**
 * The API answers 302 to a short-lived storage URL; it is fetched without
 * the token (as @actions/artifact does), so the token never goes to storage.
 */
async function downloadZip(octokit: Octokit, owner: string, repo: string, id: number, file: string): Promise<void> {
  const res = await octokit.rest.actions.downloadArtifact({ owner, repo, artifact_id: id, archive_format: "zip", request: { redirect: "manual" } });
  const location = (res.headers as Record<string, string | undefined>).location;
  if (!location) throw new Error(`the API gave no download location for artifact ${id} (HTTP ${res.status})`);
  const blob = await fetchHonouringProxy(location);
  if (!blob.ok || !blob.body) throw new Error(`downloading artifact ${id} failed: HTTP ${blob.status}`);
  await pipeline(Readable.fromWeb(blob.body as WebReadableStream<Uint8Array>), createWriteStream(file));
}
