/**
 * Fake GitHub Actions results service + Azure-blob-like storage on 127.0.0.1,
 * good enough for the REAL `@actions/artifact` v6 client (DefaultArtifactClient)
 * to upload, list, download and delete artifacts.
 *
 *   const results = await startFakeActionsResults();
 *   const env = results.runtimeEnv({ runId: 7, github });   // env for the child process
 *   ... child uploads with DefaultArtifactClient ...
 *   results.readArtifactFile("agent-run-7-1", "result.json").toString()
 *
 * Twirp: POST /twirp/github.actions.results.api.v1.ArtifactService/<Method>, JSON,
 * snake_case, int64 as strings; every answer (errors included) is JSON, because a
 * non-JSON answer makes the client retry 5 times (~30 s).
 * Blob: path /<account>/<container>/<blob> (the Azure SDK's IP-host layout),
 * `PUT ?comp=block&blockid=`, `PUT ?comp=blocklist` (XML), plain `PUT` (Put Blob),
 * `GET`/`HEAD` (served with the stored content type, `application/zip` for archives,
 * which makes the client unzip).
 *
 * Artifacts live in an `ArtifactStore` that `startFakeGitHub({ results })` shares,
 * so the REST artifact routes (cross-run `findBy`) list and redirect to them.
 */
import { createHash, createHmac, randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  sendJson,
  startLoopbackServer,
  type FaultOptions,
  type FaultRule,
  type LoopbackServer,
  type RecordedRequest,
} from "./fake-github-http.js";
import { createZip, listZipEntries, readZipEntry, type ZipEntry } from "./fake-actions-results-zip.js";

export { createZip, listZipEntries, readZipEntry, readZipFiles, type ZipEntry } from "./fake-actions-results-zip.js";

const SERVICE = "github.actions.results.api.v1.ArtifactService";
const ACCOUNT = "devstoreaccount1";
/** Every blob path starts with this (the Azure SDK's IP-host layout: /<account>/<container>/<blob>). */
export const BLOB_PATH_PREFIX = `/${ACCOUNT}/`;
const CONTAINER = "actions-results";

export interface StoredArtifact {
  /** database_id in twirp, `id` in REST. */
  id: number;
  name: string;
  /** The numeric workflow run id (GITHUB_RUN_ID) the artifact belongs to. */
  runId: number;
  runAttempt: number;
  /** `owner/repo`. */
  repository: string;
  workflowRunBackendId: string;
  workflowJobRunBackendId: string;
  /** Size reported at finalize (bytes of the zip). */
  size: number;
  /** `sha256:<hex>` as reported at finalize (or computed for seeded artifacts). */
  digest?: string;
  mimeType?: string;
  createdAt: string;
  updatedAt: string;
  expiresAt?: string;
  finalized: boolean;
  /** Decoded blob path `/<account>/<container>/...`. */
  blobPath: string;
  /** The committed blob bytes (the zip), once uploaded. */
  bytes?: Buffer;
  /** Content type recorded for the blob (`x-ms-blob-content-type`). */
  contentType?: string;
  /** sha256 of `bytes` as the fake computed it (to compare with `digest`). */
  computedDigest?: string;
  headBranch?: string;
  headSha?: string;
  /** A fork pull request's run: the head repository's id (REST `workflow_run.head_repository_id`); default the repository's own. */
  headRepositoryId?: number;
}

export interface RunInfo {
  runId: number;
  runAttempt: number;
  repository: string;
  workflowRunBackendId: string;
  headBranch?: string;
  headSha?: string;
  /** A fork pull request's run: the head repository's id (REST `workflow_run.head_repository_id`); default the repository's own. */
  headRepositoryId?: number;
}

export interface SeedArtifact {
  name: string;
  /** name → content; zipped with `createZip`. Or give `zip` bytes directly. */
  files?: Record<string, string | Uint8Array>;
  zip?: Buffer;
  runId?: number;
  runAttempt?: number;
  repository?: string;
  createdAt?: Date;
  expiresAt?: Date;
}

/**
 * The artifacts of all runs, shared by the results fake (twirp + blob) and the
 * GitHub REST fake (`/actions/artifacts`).
 */
export class ArtifactStore {
  readonly artifacts: StoredArtifact[] = [];
  /** workflowRunBackendId → run. */
  readonly runs = new Map<string, RunInfo>();
  /** blob path → staged (uncommitted) blocks, by block id. */
  readonly stagedBlocks = new Map<string, Map<string, Buffer>>();
  /** blob path → signature expected on upload / download URLs. */
  readonly signatures = new Map<string, { upload: string; download: string }>();
  private nextId = 4001;
  /** Base URL of the blob endpoint, set by the results server. */
  blobBaseUrl = "";

  readonly defaultRepository: string;

  constructor(defaultRepository = "octo-org/octo-repo") {
    this.defaultRepository = defaultRepository;
  }

  newId(): number {
    return this.nextId++;
  }

  /** The run for a numeric run id (created with fresh backend ids when new). */
  run(runId: number, opts: { runAttempt?: number; repository?: string; headBranch?: string; headSha?: string; headRepositoryId?: number } = {}): RunInfo {
    const repository = opts.repository ?? this.defaultRepository;
    for (const r of this.runs.values()) {
      if (r.runId === runId && r.repository.toLowerCase() === repository.toLowerCase()) {
        if (opts.runAttempt) r.runAttempt = opts.runAttempt;
        return r;
      }
    }
    const info: RunInfo = {
      runId,
      runAttempt: opts.runAttempt ?? 1,
      repository,
      workflowRunBackendId: randomUUID(),
      ...(opts.headBranch ? { headBranch: opts.headBranch } : {}),
      ...(opts.headSha ? { headSha: opts.headSha } : {}),
      ...(opts.headRepositoryId !== undefined ? { headRepositoryId: opts.headRepositoryId } : {}),
    };
    this.runs.set(info.workflowRunBackendId, info);
    return info;
  }

  /** Finalized (visible) artifacts, optionally filtered. */
  list(filter: { runId?: number; repository?: string; name?: string; workflowRunBackendId?: string; id?: number } = {}): StoredArtifact[] {
    return this.artifacts.filter(
      (a) =>
        a.finalized &&
        (filter.runId === undefined || a.runId === filter.runId) &&
        (filter.repository === undefined || a.repository.toLowerCase() === filter.repository.toLowerCase()) &&
        (filter.name === undefined || a.name === filter.name) &&
        (filter.workflowRunBackendId === undefined || a.workflowRunBackendId === filter.workflowRunBackendId) &&
        (filter.id === undefined || a.id === filter.id),
    );
  }

  /** A finalized artifact by id or name (newest of that name). Throws when absent. */
  get(idOrName: number | string): StoredArtifact {
    const matches = this.list(typeof idOrName === "number" ? { id: idOrName } : { name: idOrName });
    const a = matches.sort((x, y) => y.id - x.id)[0];
    if (!a) throw new Error(`fake artifact store: no artifact ${JSON.stringify(idOrName)} (have: ${this.list().map((x) => `${x.id}:${x.name}`).join(", ") || "none"})`);
    return a;
  }

  remove(id: number): boolean {
    const i = this.artifacts.findIndex((a) => a.id === id);
    if (i < 0) return false;
    this.artifacts.splice(i, 1);
    return true;
  }

  blobPathFor(run: string, job: string, name: string): string {
    return `/${ACCOUNT}/${CONTAINER}/${run}/${job}/${name}.zip`;
  }

  private sigFor(blobPath: string) {
    let s = this.signatures.get(blobPath);
    if (!s) {
      s = { upload: randomBytes(12).toString("hex"), download: randomBytes(12).toString("hex") };
      this.signatures.set(blobPath, s);
    }
    return s;
  }

  private signedUrl(blobPath: string, kind: "upload" | "download"): string {
    if (!this.blobBaseUrl) throw new Error("ArtifactStore has no blob endpoint (start it through startFakeActionsResults)");
    const encoded = blobPath.split("/").map(encodeURIComponent).join("/");
    const se = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, "Z");
    const q = new URLSearchParams({
      sv: "2023-11-03",
      se,
      sr: "b",
      sp: kind === "upload" ? "cw" : "r",
      sig: this.sigFor(blobPath)[kind],
    });
    return `${this.blobBaseUrl}${encoded}?${q}`;
  }

  uploadUrl(a: StoredArtifact): string {
    return this.signedUrl(a.blobPath, "upload");
  }

  /** A signed GET URL for the artifact's zip (what GetSignedArtifactURL and the REST 302 return). */
  downloadUrl(a: StoredArtifact): string {
    return this.signedUrl(a.blobPath, "download");
  }

  checkSig(blobPath: string, kind: "upload" | "download", sig: string | null): boolean {
    const s = this.signatures.get(blobPath);
    return !!s && !!sig && (s[kind] === sig || (kind === "download" && s.upload === sig));
  }

  /** Add a finalized artifact as if an earlier run had uploaded it. */
  add(seed: SeedArtifact): StoredArtifact {
    const bytes = seed.zip ?? createZip(seed.files ?? {});
    const run = this.run(seed.runId ?? 1, {
      ...(seed.runAttempt ? { runAttempt: seed.runAttempt } : {}),
      ...(seed.repository ? { repository: seed.repository } : {}),
    });
    const job = randomUUID();
    const now = (seed.createdAt ?? new Date()).toISOString();
    const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    const a: StoredArtifact = {
      id: this.newId(),
      name: seed.name,
      runId: run.runId,
      runAttempt: seed.runAttempt ?? run.runAttempt,
      repository: run.repository,
      workflowRunBackendId: run.workflowRunBackendId,
      workflowJobRunBackendId: job,
      size: bytes.length,
      digest,
      computedDigest: digest,
      mimeType: "application/zip",
      contentType: "application/zip",
      createdAt: now,
      updatedAt: now,
      ...(seed.expiresAt ? { expiresAt: seed.expiresAt.toISOString() } : {}),
      finalized: true,
      blobPath: this.blobPathFor(run.workflowRunBackendId, job, seed.name),
      bytes,
    };
    this.artifacts.push(a);
    return a;
  }

  /** Entries of an artifact's zip. */
  entries(idOrName: number | string): ZipEntry[] {
    return listZipEntries(this.bytesOf(idOrName));
  }

  /** File paths (no directories) inside an artifact's zip, sorted. */
  files(idOrName: number | string): string[] {
    return this.entries(idOrName)
      .filter((e) => !e.isDirectory)
      .map((e) => e.name)
      .sort();
  }

  /** One file of an artifact's zip. */
  readFile(idOrName: number | string, path: string): Buffer {
    return readZipEntry(this.bytesOf(idOrName), path);
  }

  private bytesOf(idOrName: number | string): Buffer {
    const a = this.get(idOrName);
    if (!a.bytes) throw new Error(`artifact ${a.name} has no uploaded content`);
    return a.bytes;
  }
}

export interface RuntimeEnvOptions {
  /** GITHUB_RUN_ID (default 1). Calls with the same run id share the run backend id. */
  runId?: number;
  runAttempt?: number;
  /** Job name; the same name in the same run reuses the job backend id (default "agent"). */
  job?: string;
  /** `owner/repo` (default: the store's default repository). */
  repository?: string;
  /** The fake GitHub: sets GITHUB_API_URL (and GITHUB_SERVER_URL to its `serverUrl`). */
  github?: { url: string; serverUrl?: string };
  /** GITHUB_SERVER_URL override; must be github.com, *.ghe.com or *.localhost for the artifact client. */
  serverUrl?: string;
  workspace?: string;
  /** GITHUB_RETENTION_DAYS (the repository's maximum retention), default 90. */
  retentionDays?: number;
  headBranch?: string;
  headSha?: string;
  /** A fork pull request's run: the head repository's id (REST `workflow_run.head_repository_id`); default the repository's own. */
  headRepositoryId?: number;
}

export interface FakeActionsResults {
  /** Origin of the service (ACTIONS_RESULTS_URL without the trailing slash). */
  url: string;
  store: ArtifactStore;
  /** Every request to the service and the blob endpoint. */
  requests: RecordedRequest[];
  /** Twirp calls only: method name + decoded JSON body. */
  calls(method?: string): Array<{ method: string; body: Record<string, unknown>; status: number }>;
  /** Mint an ACTIONS_RUNTIME_TOKEN (JWT, HS256 with the fake's key) for these backend ids. */
  mintRuntimeToken(workflowRunBackendId: string, workflowJobRunBackendId: string): string;
  /** Everything a child process needs to use the real artifact client against this fake. */
  runtimeEnv(opts?: RuntimeEnvOptions): Record<string, string>;
  /** Seed a finalized artifact (an "earlier run"). */
  addArtifact(seed: SeedArtifact): StoredArtifact;
  /** Finalized artifacts, optionally filtered. */
  artifacts(filter?: Parameters<ArtifactStore["list"]>[0]): StoredArtifact[];
  artifactFiles(idOrName: number | string): string[];
  readArtifactFile(idOrName: number | string, path: string): Buffer;
  /**
   * Fail the next matching requests: route is `"METHOD /path"` with `{x}`/`*`
   * wildcards, e.g. `"POST /twirp/*\/CreateArtifact"` or `"PUT /devstoreaccount1/**"`.
   * Note: twirp retries 5xx/429 after 3 s, 4.5 s, … (the client's fixed backoff).
   */
  failNext(route: string, opts?: FaultOptions): FaultRule;
  close(): Promise<void>;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString("base64url");
}

function twirpError(res: ServerResponse, status: number, code: string, msg: string): number {
  sendJson(res, status, { code, msg });
  return status;
}

function xmlError(res: ServerResponse, status: number, code: string, message: string): number {
  const body = `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res.writeHead(status, {
    "content-type": "application/xml",
    "content-length": String(Buffer.byteLength(body)),
    "x-ms-error-code": code,
    "x-ms-request-id": randomUUID(),
    "x-ms-version": "2023-11-03",
  });
  res.end(body);
  return status;
}

function blobHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "x-ms-request-id": randomUUID(),
    "x-ms-version": "2023-11-03",
    date: new Date().toUTCString(),
    ...extra,
  };
}

function commitBlob(store: ArtifactStore, blobPath: string, bytes: Buffer, contentType: string | undefined): boolean {
  const a = store.artifacts.find((x) => x.blobPath === blobPath);
  if (!a) return false;
  a.bytes = bytes;
  a.computedDigest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  if (contentType) a.contentType = contentType;
  a.updatedAt = new Date().toISOString();
  return true;
}

/**
 * The Azure-blob-like endpoint (`/<account>/<container>/<blob>`): staged blocks,
 * block list commit, Put Blob, GET/HEAD with the stored content type. Exported so
 * the GitHub fake can serve an `ArtifactStore`'s blobs when it runs without a
 * results fake.
 */
export function handleBlobRequest(
  store: ArtifactStore,
  ctx: { req: IncomingMessage; res: ServerResponse; method: string; path: string; query: URLSearchParams; rawBody: Buffer },
): number {
  const { req, res, method, path, query, rawBody } = ctx;
  const sig = query.get("sig");
  const comp = query.get("comp");
  if (method === "PUT") {
    if (!store.checkSig(path, "upload", sig)) return xmlError(res, 403, "AuthenticationFailed", "Signature did not match");
    if (comp === "block") {
      const id = query.get("blockid");
      if (!id) return xmlError(res, 400, "InvalidQueryParameterValue", "blockid is required");
      let blocks = store.stagedBlocks.get(path);
      if (!blocks) store.stagedBlocks.set(path, (blocks = new Map()));
      blocks.set(id, rawBody);
      res.writeHead(201, blobHeaders({ "content-length": "0", "x-ms-request-server-encrypted": "true" }));
      res.end();
      return 201;
    }
    const contentType = (req.headers["x-ms-blob-content-type"] as string | undefined) ?? undefined;
    let bytes: Buffer;
    if (comp === "blocklist") {
      const xml = rawBody.toString("utf8");
      const ids = [...xml.matchAll(/<(Latest|Uncommitted|Committed)>([^<]*)<\/\1>/g)].map((x) => x[2]!);
      const blocks = store.stagedBlocks.get(path) ?? new Map<string, Buffer>();
      const missing = ids.filter((i) => !blocks.has(i));
      if (missing.length) return xmlError(res, 400, "InvalidBlockList", `unknown block ids: ${missing.join(",")}`);
      bytes = Buffer.concat(ids.map((i) => blocks.get(i)!));
      store.stagedBlocks.delete(path);
    } else if (!comp) {
      bytes = rawBody; // Put Blob
    } else {
      return xmlError(res, 400, "InvalidQueryParameterValue", `unsupported comp=${comp}`);
    }
    commitBlob(store, path, bytes, contentType ?? (req.headers["content-type"] as string | undefined));
    const etag = `"0x${createHash("md5").update(bytes).digest("hex").slice(0, 15).toUpperCase()}"`;
    res.writeHead(
      201,
      blobHeaders({ "content-length": "0", etag, "last-modified": new Date().toUTCString(), "x-ms-request-server-encrypted": "true" }),
    );
    res.end();
    return 201;
  }
  if (method === "GET" || method === "HEAD") {
    if (!store.checkSig(path, "download", sig)) return xmlError(res, 403, "AuthenticationFailed", "Signature did not match");
    const a = store.artifacts.find((x) => x.blobPath === path && x.bytes);
    if (!a?.bytes) return xmlError(res, 404, "BlobNotFound", "The specified blob does not exist.");
    res.writeHead(
      200,
      blobHeaders({
        "content-type": a.contentType ?? "application/zip",
        "content-length": String(a.bytes.length),
        "last-modified": new Date(a.updatedAt).toUTCString(),
        "x-ms-blob-type": "BlockBlob",
        "accept-ranges": "bytes",
      }),
    );
    res.end(method === "HEAD" ? undefined : a.bytes);
    return 200;
  }
  return xmlError(res, 405, "UnsupportedHttpVerb", `${method} is not supported`);
}

export async function startFakeActionsResults(
  opts: { store?: ArtifactStore; repository?: string } = {},
): Promise<FakeActionsResults> {
  const store = opts.store ?? new ArtifactStore(opts.repository);
  const key = randomBytes(32);
  const jobIds = new Map<string, string>(); // `${runBackendId}/${job}` → job backend id

  function mintRuntimeToken(run: string, job: string): string {
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ alg: "HS256", typ: "JWT", x5t: "fake" }));
    const payload = b64url(
      JSON.stringify({
        nameid: "dddddddd-dddd-dddd-dddd-dddddddddddd",
        scp: `Actions.ExampleScope Actions.Results:${run}:${job}`,
        IdentityTypeClaim: "System:ServiceIdentity",
        ac: "[]",
        iss: "vstoken.actions.githubusercontent.com",
        aud: "vso:00000000-0000-0000-0000-000000000000",
        nbf: now - 60,
        iat: now - 60,
        exp: now + 6 * 3600,
      }),
    );
    const sig = createHmac("sha256", key).update(`${header}.${payload}`).digest("base64url");
    return `${header}.${payload}.${sig}`;
  }

  function verifyToken(auth: string | undefined): { run: string; job: string } | null {
    const m = /^Bearer\s+(.+)$/i.exec(auth ?? "");
    if (!m) return null;
    const [h, p, s] = m[1]!.split(".");
    if (!h || !p || !s) return null;
    if (createHmac("sha256", key).update(`${h}.${p}`).digest("base64url") !== s) return null;
    try {
      const claims = JSON.parse(Buffer.from(p, "base64url").toString("utf8")) as { scp?: string; exp?: number };
      if (claims.exp && claims.exp * 1000 < Date.now()) return null;
      for (const scope of (claims.scp ?? "").split(" ")) {
        const parts = scope.split(":");
        if (parts[0] === "Actions.Results" && parts.length === 3) return { run: parts[1]!, job: parts[2]! };
      }
    } catch {
      return null;
    }
    return null;
  }

  const twirp = (method: string, body: Record<string, unknown>, res: ServerResponse, ids: { run: string; job: string }): number => {
    const run = String(body["workflow_run_backend_id"] ?? "");
    const job = String(body["workflow_job_run_backend_id"] ?? "");
    if (run !== ids.run) {
      return twirpError(res, 403, "permission_denied", `workflow run backend id ${run || "(none)"} does not match the token`);
    }
    const runInfo = store.runs.get(run) ?? (() => {
      // A token minted by hand for an unknown run: register it with run id 0.
      const info: RunInfo = { runId: 0, runAttempt: 1, repository: store.defaultRepository, workflowRunBackendId: run };
      store.runs.set(run, info);
      return info;
    })();
    const name = typeof body["name"] === "string" ? (body["name"] as string) : "";
    const toMonolith = (a: StoredArtifact) => ({
      workflow_run_backend_id: a.workflowRunBackendId,
      workflow_job_run_backend_id: a.workflowJobRunBackendId,
      database_id: String(a.id),
      name: a.name,
      size: String(a.size),
      created_at: a.createdAt,
      ...(a.digest ? { digest: a.digest } : {}),
    });
    switch (method) {
      case "CreateArtifact": {
        if (!name) return twirpError(res, 400, "invalid_argument", "name is required");
        if (job !== ids.job) return twirpError(res, 403, "permission_denied", "workflow job run backend id does not match the token");
        if (store.list({ workflowRunBackendId: run, name }).length > 0) {
          return twirpError(res, 409, "already_exists", "an artifact with this name already exists on the workflow run");
        }
        // A pending (never finalized) upload of the same name is replaced.
        for (const p of store.artifacts.filter((a) => !a.finalized && a.workflowRunBackendId === run && a.name === name)) store.remove(p.id);
        const now = new Date().toISOString();
        const mime = body["mime_type"];
        const a: StoredArtifact = {
          id: store.newId(),
          name,
          runId: runInfo.runId,
          runAttempt: runInfo.runAttempt,
          repository: runInfo.repository,
          workflowRunBackendId: run,
          workflowJobRunBackendId: job,
          size: 0,
          ...(typeof mime === "string" ? { mimeType: mime } : {}),
          createdAt: now,
          updatedAt: now,
          ...(typeof body["expires_at"] === "string" ? { expiresAt: body["expires_at"] as string } : {}),
          finalized: false,
          blobPath: store.blobPathFor(run, job, name),
          ...(runInfo.headBranch ? { headBranch: runInfo.headBranch } : {}),
          ...(runInfo.headSha ? { headSha: runInfo.headSha } : {}),
          ...(runInfo.headRepositoryId !== undefined ? { headRepositoryId: runInfo.headRepositoryId } : {}),
        };
        store.artifacts.push(a);
        sendJson(res, 200, { ok: true, signed_upload_url: store.uploadUrl(a) });
        return 200;
      }
      case "FinalizeArtifact": {
        const a = store.artifacts.find((x) => !x.finalized && x.workflowRunBackendId === run && x.name === name);
        if (!a) return twirpError(res, 404, "not_found", `no artifact named ${name} is being uploaded in this run`);
        if (!a.bytes) return twirpError(res, 412, "failed_precondition", "the artifact's blob was never committed");
        a.size = Number(body["size"] ?? a.bytes.length);
        if (typeof body["hash"] === "string") a.digest = body["hash"] as string;
        a.finalized = true;
        a.updatedAt = new Date().toISOString();
        sendJson(res, 200, { ok: true, artifact_id: String(a.id) });
        return 200;
      }
      case "ListArtifacts": {
        const nameFilter = typeof body["name_filter"] === "string" ? (body["name_filter"] as string) : undefined;
        const idFilter = body["id_filter"] !== undefined ? Number(body["id_filter"]) : undefined;
        const list = store.list({
          workflowRunBackendId: run,
          ...(nameFilter !== undefined ? { name: nameFilter } : {}),
          ...(idFilter !== undefined ? { id: idFilter } : {}),
        });
        sendJson(res, 200, { artifacts: list.map(toMonolith) });
        return 200;
      }
      case "GetSignedArtifactURL": {
        const a = store.list({ workflowRunBackendId: run, name }).sort((x, y) => y.id - x.id)[0];
        if (!a) return twirpError(res, 404, "not_found", `artifact ${name} not found`);
        sendJson(res, 200, { signed_url: store.downloadUrl(a) });
        return 200;
      }
      case "DeleteArtifact": {
        const a = store.list({ workflowRunBackendId: run, name }).sort((x, y) => y.id - x.id)[0];
        if (!a) return twirpError(res, 404, "not_found", `artifact ${name} not found`);
        store.remove(a.id);
        sendJson(res, 200, { ok: true, artifact_id: String(a.id) });
        return 200;
      }
      default:
        return twirpError(res, 404, "bad_route", `no handler for path "/twirp/${SERVICE}/${method}"`);
    }
  };

  const server: LoopbackServer = await startLoopbackServer(async ({ req, res, method, path, query, rawBody, body }) => {
    if (path.startsWith("/twirp/")) {
      const m = /^\/twirp\/([^/]+)\/([^/]+)$/.exec(path);
      if (!m || m[1] !== SERVICE) return twirpError(res, 404, "bad_route", `no handler for path "${path}"`);
      if (method !== "POST") return twirpError(res, 404, "bad_route", `unsupported method ${method} (only POST is allowed)`);
      const ids = verifyToken(req.headers.authorization);
      if (!ids) return twirpError(res, 401, "unauthenticated", "missing or invalid ACTIONS_RUNTIME_TOKEN");
      if (typeof body !== "object" || body === null) return twirpError(res, 400, "malformed", "the request body is not JSON");
      return twirp(m[2]!, body as Record<string, unknown>, res, ids);
    }
    if (path.startsWith(`/${ACCOUNT}/`)) return handleBlobRequest(store, { req, res, method, path, query, rawBody });
    return twirpError(res, 404, "bad_route", `no handler for path "${path}"`);
  });
  store.blobBaseUrl = server.url;

  const results: FakeActionsResults = {
    url: server.url,
    store,
    requests: server.requests,
    calls(method) {
      return server.requests
        .filter((r) => r.path.startsWith(`/twirp/${SERVICE}/`))
        .map((r) => ({ method: r.path.split("/").pop()!, body: (r.body ?? {}) as Record<string, unknown>, status: r.status }))
        .filter((c) => !method || c.method === method);
    },
    mintRuntimeToken,
    runtimeEnv(o = {}) {
      const run = store.run(o.runId ?? 1, {
        ...(o.runAttempt ? { runAttempt: o.runAttempt } : {}),
        ...(o.repository ? { repository: o.repository } : {}),
        ...(o.headBranch ? { headBranch: o.headBranch } : {}),
        ...(o.headSha ? { headSha: o.headSha } : {}),
        ...(o.headRepositoryId !== undefined ? { headRepositoryId: o.headRepositoryId } : {}),
      });
      const jobKey = `${run.workflowRunBackendId}/${o.job ?? "agent"}`;
      let job = jobIds.get(jobKey);
      if (!job) jobIds.set(jobKey, (job = randomUUID()));
      const serverUrl = o.serverUrl ?? o.github?.serverUrl ?? "https://github.com";
      const noProxy = "127.0.0.1,localhost,::1";
      return {
        ACTIONS_RUNTIME_TOKEN: mintRuntimeToken(run.workflowRunBackendId, job),
        ACTIONS_RESULTS_URL: `${server.url}/`,
        GITHUB_SERVER_URL: serverUrl,
        ...(o.github ? { GITHUB_API_URL: o.github.url } : {}),
        GITHUB_RUN_ID: String(run.runId),
        GITHUB_RUN_ATTEMPT: String(o.runAttempt ?? run.runAttempt),
        GITHUB_REPOSITORY: run.repository,
        GITHUB_REPOSITORY_OWNER: run.repository.split("/")[0]!,
        GITHUB_RETENTION_DAYS: String(o.retentionDays ?? 90),
        ...(o.workspace ? { GITHUB_WORKSPACE: o.workspace } : {}),
        NO_PROXY: noProxy,
        no_proxy: noProxy,
      };
    },
    addArtifact: (seed) => store.add(seed),
    artifacts: (filter) => store.list(filter),
    artifactFiles: (idOrName) => store.files(idOrName),
    readArtifactFile: (idOrName, path) => store.readFile(idOrName, path),
    failNext: (route, o) => server.faults.add(route, o),
    close: () => server.close(),
  };
  return results;
}
