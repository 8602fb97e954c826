/**
 * The Actions artifact service behind one small interface: upload a folder,
 * download from this workflow run, and find the newest artifact of a name in
 * the whole repository (for sessions carried across runs).
 *
 * The real client is `@actions/artifact`; it reads ACTIONS_RUNTIME_TOKEN,
 * ACTIONS_RESULTS_URL and GITHUB_* itself. Cross-run lookups use the REST
 * API with the workflow token (`actions: read`).
 */
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import path from "node:path";
import type { DefaultArtifactClient } from "@actions/artifact";
import * as z from "../shared/zod.js";
import type { HostContext } from "../config/host.js";
import { ConfigurationError, errorMessage } from "../errors.js";
import { extractZipSafely, UnsafeArchiveError } from "./unzip.js";
import { fromRepositoryItself } from "./artifact-origin.js";
import { byCodeUnits } from "../shared/plain-format.js";

export interface UploadedArtifact {
  id: number;
  name: string;
  size: number;
  url?: string;
}

/** An artifact of any run in the repository. */
export interface FoundArtifact {
  id: number;
  name: string;
  runId: number;
  createdAt: string;
  size: number;
}

export interface RepositoryAccess {
  token: string;
  owner: string;
  repo: string;
  apiUrl: string;
}

/** REST access to this run's repository (GITHUB_REPOSITORY); undefined when that is not `owner/name`. */
export function repositoryAccess(host: Pick<HostContext, "repository" | "apiUrl">, token: string): RepositoryAccess | undefined {
  const [owner, repo] = (host.repository ?? "").split("/");
  if (!owner || !repo) return undefined;
  return { token, owner, repo, apiUrl: host.apiUrl };
}

export interface ArtifactService {
  upload(name: string, rootDir: string, files: string[], opts: { retentionDays?: number }): Promise<UploadedArtifact>;
  /** Names of this workflow run's artifacts, newest first. */
  listThisRun(): Promise<{ id: number; name: string }[]>;
  /** Download an artifact of this workflow run into `dir` (unzipped, safely). */
  downloadThisRun(artifact: { id: number; name: string }, dir: string): Promise<void>;
  /** Newest non-expired artifact called `name` in the repository, from runs of the repository itself. */
  findNewest(name: string, access: RepositoryAccess): Promise<FoundArtifact | undefined>;
  /** Download an artifact of any run into `dir` (unzipped). */
  downloadFromRun(artifact: FoundArtifact, dir: string, access: RepositoryAccess): Promise<void>;
  deleteThisRun(name: string): Promise<void>;
}

/**
 * The client saves the zip as it is (skipDecompress) into a private folder
 * beside `dir`; our own extractor then unpacks it, refusing a tampered
 * archive outright (see unzip.ts) instead of the client's silent rewriting.
 */
async function downloadSafely(name: string, dir: string, download: (tmp: string) => Promise<unknown>): Promise<void> {
  await mkdir(path.dirname(dir), { recursive: true });
  const tmp = await mkdtemp(`${dir}.download-`);
  try {
    await download(tmp);
    const saved = await readdir(tmp);
    if (saved.length !== 1) throw new Error(`expected one archive for '${name}', found ${saved.length} files`);
    try {
      await extractZipSafely(path.join(tmp, saved[0]!), dir);
    } catch (e) {
      if (e instanceof UnsafeArchiveError) throw new ConfigurationError(`The artifact '${name}' was refused: ${e.message}. Nothing from it was used.`);
      throw e;
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

// REST answer for GET /repos/{o}/{r}/actions/artifacts: validated, it comes from the network.
const RestArtifact = z.object({
  id: z.number().check(z.int()),
  name: z.string(),
  size_in_bytes: z.optional(z.number()),
  expired: z.optional(z.boolean()),
  created_at: z.nullish(z.string()),
  workflow_run: z.nullish(
    z.object({
      id: z.nullish(z.number().check(z.int())),
      repository_id: z.nullish(z.number().check(z.int())),
      head_repository_id: z.nullish(z.number().check(z.int())),
    }),
  ),
});
const RestArtifactList = z.object({ total_count: z.optional(z.number()), artifacts: z.array(RestArtifact) });

export class ActionsArtifactService implements ArtifactService {
  private loaded?: Promise<DefaultArtifactClient>;

  /** The artifact client (and the Azure and HTTP stack under it) loads on first use: a step that moves no artifact never loads it. */
  private client(): Promise<DefaultArtifactClient> {
    return (this.loaded ??= import("@actions/artifact").then((m) => new m.DefaultArtifactClient()));
  }

  async upload(name: string, rootDir: string, files: string[], opts: { retentionDays?: number }): Promise<UploadedArtifact> {
    const res = await (await this.client()).uploadArtifact(name, files, rootDir, {
      ...(opts.retentionDays !== undefined ? { retentionDays: opts.retentionDays } : {}),
    });
    if (res.id === undefined) throw new Error(`the artifact service did not return an id for '${name}'`);
    return { id: res.id, name, size: res.size ?? 0 };
  }

  async listThisRun(): Promise<{ id: number; name: string }[]> {
    const { artifacts } = await (await this.client()).listArtifacts({ latest: true });
    return artifacts.map((a) => ({ id: a.id, name: a.name })).sort((a, b) => b.id - a.id);
  }

  async downloadThisRun(artifact: { id: number; name: string }, dir: string): Promise<void> {
    await downloadSafely(artifact.name, dir, async (tmp) => (await this.client()).downloadArtifact(artifact.id, { path: tmp, skipDecompress: true }));
  }

  async findNewest(name: string, access: RepositoryAccess): Promise<FoundArtifact | undefined> {
    const octokit = (await import("@actions/github")).getOctokit(access.token, { baseUrl: access.apiUrl });
    let res;
    try {
      res = await octokit.request("GET /repos/{owner}/{repo}/actions/artifacts", {
        owner: access.owner,
        repo: access.repo,
        name,
        per_page: 100,
      });
    } catch (e) {
      const status = (e as { status?: number }).status;
      if (status === 403 || status === 401)
        throw new ConfigurationError(
          `Input 'session': listing artifacts needs a token with 'actions: read' (add 'permissions: actions: read' to the job): ${errorMessage(e)}`,
        );
      throw e;
    }
    const list = RestArtifactList.parse(res.data).artifacts.filter(
      (a) =>
        a.name === name &&
        !a.expired &&
        a.workflow_run?.id != null &&
        // A pull request from a fork can upload artifacts of any name: only runs of the repository's own branches count.
        fromRepositoryItself(a.workflow_run),
    );
    list.sort((a, b) => byCodeUnits(b.created_at ?? "", a.created_at ?? "") || b.id - a.id);
    const newest = list[0];
    if (!newest) return undefined;
    return { id: newest.id, name: newest.name, runId: newest.workflow_run!.id!, createdAt: newest.created_at ?? "", size: newest.size_in_bytes ?? 0 };
  }

  async downloadFromRun(artifact: FoundArtifact, dir: string, access: RepositoryAccess): Promise<void> {
    await downloadSafely(artifact.name, dir, async (tmp) =>
      (await this.client()).downloadArtifact(artifact.id, {
        path: tmp,
        skipDecompress: true,
        findBy: { token: access.token, workflowRunId: artifact.runId, repositoryOwner: access.owner, repositoryName: access.repo },
      }),
    );
  }

  async deleteThisRun(name: string): Promise<void> {
    await (await this.client()).deleteArtifact(name);
  }
}
