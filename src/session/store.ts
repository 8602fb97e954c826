/**
 * Where session state lives between runs. On GitHub: artifacts named
 * `agent-session-<issue|PR number>`, the newest one of the repository wins.
 * On a laptop (CLI `--state-dir`): a folder per key under the state dir.
 */
import { cp, mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { unuploadablePath } from "../shared/artifact-name.js";
import type { ArtifactService, RepositoryAccess } from "../publish/artifacts.js";
import { regularFiles } from "../trace/redact-files.js";

/** Where a state was saved: words for the log, the artifact id when it is one. */
export interface SavedState {
  where: string;
  artifactId?: number;
}

export interface SessionStore {
  /** Fetch the newest saved state for `key` into `dir`; undefined when there is none. Returns where it came from. */
  fetch(key: string, dir: string): Promise<string | undefined>;
  /** Save the folder `dir` as the newest state for `key`. */
  save(key: string, dir: string): Promise<SavedState>;
}

export class ArtifactSessionStore implements SessionStore {
  constructor(
    private readonly service: ArtifactService,
    private readonly access: RepositoryAccess,
    private readonly opts: { retentionDays?: number },
  ) {}

  async fetch(key: string, dir: string): Promise<string | undefined> {
    const found = await this.service.findNewest(key, this.access);
    if (!found) return undefined;
    await this.service.downloadFromRun(found, dir, this.access);
    return `artifact '${key}' (id ${found.id}, workflow run ${found.runId}, ${found.createdAt})`;
  }

  async save(key: string, dir: string): Promise<SavedState> {
    // A re-run of the same workflow run already has one: the newer state replaces it.
    const existing = (await this.service.listThisRun()).find((a) => a.name === key);
    if (existing) await this.service.deleteThisRun(key);
    const files = (await regularFiles(dir)).files.filter((f) => !unuploadablePath(path.relative(dir, f)));
    const uploaded = await this.service.upload(key, dir, files, this.opts);
    return { where: `artifact '${key}' (id ${uploaded.id})`, artifactId: uploaded.id };
  }
}

/** `<stateDir>/sessions/<key>/`, replaced whole on each save. */
export class DirSessionStore implements SessionStore {
  constructor(private readonly stateDir: string) {}

  private folder(key: string): string {
    return path.join(this.stateDir, "sessions", key);
  }

  async fetch(key: string, dir: string): Promise<string | undefined> {
    const from = this.folder(key);
    if (!(await stat(from).catch(() => undefined))?.isDirectory()) return undefined;
    await cp(from, dir, { recursive: true, verbatimSymlinks: true });
    return from;
  }

  async save(key: string, dir: string): Promise<SavedState> {
    const to = this.folder(key);
    const tmp = `${to}.saving-${process.pid}`;
    await mkdir(path.dirname(to), { recursive: true });
    await rm(tmp, { recursive: true, force: true });
    await cp(dir, tmp, { recursive: true });
    await rm(to, { recursive: true, force: true });
    await rename(tmp, to);
    return { where: to };
  }
}
