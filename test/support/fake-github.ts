/**
 * A stateful fake of the GitHub REST API on 127.0.0.1, for @actions/github's
 * octokit (`getOctokit(token, { baseUrl: gh.url })`) and for @actions/artifact's
 * cross-run REST calls (`findBy`).
 *
 *   const results = await startFakeActionsResults();
 *   const gh = await startFakeGitHub({ results });          // shares artifacts
 *   gh.setPermission("alice", "write");
 *   gh.seedEvent(buildEvent("issue_comment.issue"));          // issue + comment from a fixture
 *   ... run the code under test with GITHUB_API_URL=gh.url ...
 *   expect(gh.issueComments(7)).toHaveLength(1);
 *   expect(gh.unhandled).toEqual([]);
 *
 * One in-memory model: repo → issues (PRs are issues too) / pulls / comments /
 * review comments / reviews / reactions / collaborators; artifacts come from an
 * `ArtifactStore` (the results fake's when given). Every request is recorded;
 * `failNext` injects 5xx / rate limits / resets. Responses are GitHub-shaped
 * (ids, node_id, html_url on `serverUrl`, user objects with login/type).
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { components } from "@octokit/openapi-types";
import {
  parseRoute,
  sendJson,
  startLoopbackServer,
  type FaultOptions,
  type FaultRule,
  type RecordedRequest,
} from "./fake-github-http.js";
import {
  ArtifactStore,
  BLOB_PATH_PREFIX,
  handleBlobRequest,
  type FakeActionsResults,
  type StoredArtifact,
} from "./fake-actions-results.js";
import { GitData, GitDataError } from "./fake-github-git-data.js";
import { NOT_ACCESSIBLE, PR_CREATION_NOT_PERMITTED, RULESET_CREATION, workflowChangeIn, workflowRefusal, writePolicyHook, type RepoPolicy } from "./fake-github-policy.js";
import { searchIssues, type SearchIssueItem, type SearchIssuesResponse, type SimpleUser } from "./fake-github-search.js";
import { answerIfCommandSaidNo, execFileFromHelper } from "./spawn-helper.js";

export type { RecordedRequest, FaultOptions, FaultRule } from "./fake-github-http.js";
export type { RepoPolicy } from "./fake-github-policy.js";

/** git from the tests' spawn helper (spawn-helper.ts): the worker forks less. */
const run = execFileFromHelper;

/** Repository roles as `role_name`; `permission` is the legacy base role (maintain→write, triage→read). */
export type Permission = "admin" | "maintain" | "write" | "triage" | "read" | "none";

export interface FakeUser {
  login: string;
  id: number;
  type: "User" | "Bot" | "Organization";
}

export interface RepoSeed {
  /** `owner/name`. */
  fullName: string;
  defaultBranch?: string;
  private?: boolean;
  /** A fork of `parent` (`owner/name`). */
  fork?: boolean;
  parent?: string;
  /** A git directory (bare origin or work tree): enables branch checks, head shas and PR files from git. */
  gitDir?: string;
  /** login → permission; `null` = the user does not exist (404). */
  collaborators?: Record<string, Permission | null>;
  /**
   * What the permission API says for a user missing from `collaborators`:
   * default `"read"` on public repos, `"none"` on private ones (GitHub answers
   * 200 for non-collaborators); `404` to answer Not Found instead.
   */
  nonCollaborator?: Permission | 404;
  id?: number;
  ownerType?: "User" | "Organization";
}

export interface IssueState {
  repo: string;
  number: number;
  id: number;
  title: string;
  body: string | null;
  user: string;
  state: "open" | "closed";
  stateReason: string | null;
  labels: string[];
  assignees: string[];
  isPull: boolean;
  locked: boolean;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
}

export interface PullFile {
  filename: string;
  status: "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";
  additions: number;
  deletions: number;
  changes?: number;
  patch?: string;
  previous_filename?: string;
  sha?: string;
}

export interface PullState {
  repo: string;
  number: number;
  id: number;
  title: string;
  body: string | null;
  user: string;
  state: "open" | "closed";
  draft: boolean;
  merged: boolean;
  head: { ref: string; sha: string; repo: string };
  base: { ref: string; sha: string };
  maintainerCanModify: boolean;
  files?: PullFile[];
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
}

export interface CommentState {
  repo: string;
  id: number;
  issueNumber: number;
  body: string;
  user: string;
  createdAt: string;
  updatedAt: string;
}

export interface ReviewCommentState {
  repo: string;
  id: number;
  pullNumber: number;
  reviewId: number | null;
  body: string;
  user: string;
  path: string;
  diffHunk: string;
  line: number | null;
  side: "LEFT" | "RIGHT";
  commitId: string;
  inReplyToId?: number;
  createdAt: string;
  updatedAt: string;
}

export interface ReviewState {
  repo: string;
  id: number;
  pullNumber: number;
  body: string;
  user: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "PENDING" | "DISMISSED";
  commitId: string;
  submittedAt: string | null;
}

export type ReactionContent = "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes";
const REACTIONS: readonly string[] = ["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"];

export interface ReactionState {
  repo: string;
  id: number;
  /** What was reacted to: an issue/PR (by number), an issue comment or a PR review comment (by id). */
  subject: "issue" | "issue_comment" | "pull_comment";
  subjectId: number;
  content: ReactionContent;
  user: string;
  createdAt: string;
}

export interface RepoState {
  id: number;
  owner: string;
  name: string;
  fullName: string;
  ownerType: "User" | "Organization";
  defaultBranch: string;
  private: boolean;
  fork: boolean;
  parent?: string;
  gitDir?: string;
  collaborators: Map<string, { login: string; permission: Permission | null }>;
  nonCollaborator?: Permission | 404;
  issues: Map<number, IssueState>;
  pulls: Map<number, PullState>;
  comments: CommentState[];
  reviewComments: ReviewCommentState[];
  reviews: ReviewState[];
  reactions: ReactionState[];
  nextNumber: number;
  /** The settings that make GitHub refuse writes (fake-github-policy.ts); `setPolicy` changes them. */
  policy: RepoPolicy;
}

export interface TokenSpec {
  /** `read` tokens get 403 "Resource not accessible by integration" on writes. Default `write`. */
  access?: "read" | "write";
  /** Who acts with this token (author of comments, PRs, reactions). Default `github-actions[bot]`. */
  login?: string;
  type?: "User" | "Bot";
}

export interface FakeGitHubOptions {
  /** The accepted token (write access, acting as `github-actions[bot]`). Default `ghs_fake_token`. */
  token?: string;
  /** More tokens, e.g. `{ ghs_read: { access: "read" } }`. */
  tokens?: Record<string, TokenSpec>;
  /** The default repository (default `octo-org/octo-repo`). */
  repo?: string | RepoSeed;
  /** Share artifacts with the results fake (or pass a store directly). */
  results?: FakeActionsResults | ArtifactStore;
  /**
   * Web routes GitHub serves outside the REST API (e.g. `/user-attachments/…`,
   * see fake-github-attachments.ts), tried after authentication, before the API routes.
   */
  webRoutes?: (req: { method: string; path: string; query: URLSearchParams }) => { status: number; body?: unknown; headers?: Record<string, string> } | undefined;
  /** `body_html` added to answers with a `body` when the request asks for the `full` or `html` media type. */
  renderBodyHtml?: (markdown: string) => string;
}

/**
 * The fields of GitHub's OpenAPI `workflow-run` (@octokit/openapi-types) the fake renders; the repositories are
 * the fake's own rendering (not every field of `minimal-repository`).
 */
type RenderedWorkflowRun = Pick<
  components["schemas"]["workflow-run"],
  | "id" | "name" | "node_id" | "head_branch" | "head_sha" | "path" | "run_number" | "run_attempt" | "event" | "status" | "conclusion"
  | "workflow_id" | "url" | "html_url" | "pull_requests" | "created_at" | "updated_at" | "artifacts_url" | "display_title"
> & { repository: Record<string, unknown>; head_repository: Record<string, unknown> };

/** A workflow run, for `GET …/actions/workflows/{workflow_id}/runs` (agent-runner logs --workflow). */
export interface WorkflowRunSeed {
  id: number;
  /** `.github/workflows/agent.yml`. */
  path: string;
  repo?: string;
  name?: string;
  event?: string;
  conclusion?: string | null;
  headBranch?: string;
  createdAt?: string;
  /** `head_repository.full_name` when the run is a fork's pull request (default: the repository itself). */
  headRepo?: string;
}

export interface FakeGitHub {
  /** API base URL (`GITHUB_API_URL`, octokit `baseUrl`): `http://127.0.0.1:<port>`. */
  url: string;
  /** Web URL used in `html_url`s and for `GITHUB_SERVER_URL`: `http://github.localhost:<port>` (passes the artifact client's GHES check; not resolvable, just a name). */
  serverUrl: string;
  token: string;
  /** Every request, in order. */
  requests: RecordedRequest[];
  /** Requests no route handled (answered 404): assert it is empty to catch API drift. */
  unhandled: RecordedRequest[];
  /** Errors thrown inside handlers (answered 500). */
  errors: unknown[];
  repos: Map<string, RepoState>;
  users: Map<string, FakeUser>;
  artifactStore: ArtifactStore;

  /** Requests matching `"METHOD /path/{x}/*"` (method optional; `**` = any rest). */
  requestsTo(route: string): RecordedRequest[];
  /** Requests that changed state (POST/PATCH/PUT/DELETE), optionally matching a route. */
  writes(route?: string): RecordedRequest[];
  clearRequests(): void;

  /** Fail the next matching requests (default: once, 502). See FaultOptions for rate limits and resets. */
  failNext(route: string, opts?: FaultOptions): FaultRule;
  /** Repository settings GitHub refuses writes by, answered as GitHub does (REST, and git pushes to the origin through a pre-receive hook). */
  setPolicy(policy: RepoPolicy, repo?: string): Promise<void>;

  repo(fullName?: string): RepoState;
  addRepo(seed: RepoSeed): RepoState;
  /** Seed a workflow run (the fake keeps no runs of its own; artifacts name their run id). */
  addWorkflowRun(seed: WorkflowRunSeed): void;
  user(login: string, type?: FakeUser["type"]): FakeUser;
  setPermission(login: string, permission: Permission | null, repo?: string): void;
  addIssue(seed: {
    repo?: string;
    number?: number;
    id?: number;
    title?: string;
    body?: string | null;
    user?: string;
    userType?: FakeUser["type"];
    labels?: string[];
    assignees?: string[];
    state?: "open" | "closed";
  }): IssueState;
  addPull(seed: {
    repo?: string;
    number?: number;
    id?: number;
    title?: string;
    body?: string | null;
    user?: string;
    userType?: FakeUser["type"];
    head: { ref: string; sha?: string; repo?: string };
    base?: { ref?: string; sha?: string };
    draft?: boolean;
    state?: "open" | "closed";
    merged?: boolean;
    files?: PullFile[];
    labels?: string[];
  }): PullState;
  addComment(seed: { repo?: string; issue: number; id?: number; body: string; user?: string; userType?: FakeUser["type"]; createdAt?: string }): CommentState;
  addReviewComment(seed: {
    repo?: string;
    pull: number;
    id?: number;
    body: string;
    user?: string;
    userType?: FakeUser["type"];
    path: string;
    diffHunk?: string;
    line?: number;
    commitId?: string;
    reviewId?: number;
  }): ReviewCommentState;
  /** Seed the repo, issue/PR, comment, review comment and review an event payload refers to. */
  seedEvent(event: { payload: Record<string, unknown>; pull?: PullHint } | Record<string, unknown>): void;

  issueComments(issueNumber?: number, repo?: string): CommentState[];
  reactions(filter?: { subject?: ReactionState["subject"]; subjectId?: number; repo?: string }): ReactionState[];
  pulls(repo?: string): PullState[];
  reviews(pullNumber?: number, repo?: string): ReviewState[];
  reviewComments(pullNumber?: number, repo?: string): ReviewCommentState[];
  /** Artifacts visible through REST (finalized), optionally by run id. */
  artifacts(filter?: { runId?: number; name?: string; repo?: string }): StoredArtifact[];
  close(): Promise<void>;
}

/** Extra facts about an issue_comment-on-PR event's pull request (not in the payload). */
export interface PullHint {
  headRepo?: string;
  headRef?: string;
  headSha?: string;
  baseRef?: string;
  baseSha?: string;
  files?: PullFile[];
}

const KNOWN_USER_IDS: Record<string, number> = { "github-actions[bot]": 41898282, "dependabot[bot]": 49699333 };

function ts(d = new Date()): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function fakeSha(seed: string): string {
  return createHash("sha1").update(seed).digest("hex");
}

function nodeId(prefix: string, id: number): string {
  return Buffer.from(`${prefix}${id}`).toString("base64").replace(/=+$/, "");
}

class HttpError extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    super(String(body["message"] ?? status));
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

const DOCS = "https://docs.github.com/rest";
const notFound = () => new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });
const validation = (errors: unknown[], doc = DOCS) =>
  new HttpError(422, { message: "Validation Failed", errors, documentation_url: doc, status: "422" });
const unprocessable = (errors: string[]) =>
  new HttpError(422, { message: "Unprocessable Entity", errors, documentation_url: DOCS, status: "422" });

const MAX_BODY = 65536;

type Params = Record<string, string>;
interface Ctx {
  method: string;
  path: string;
  query: URLSearchParams;
  body: Record<string, unknown>;
  params: Params;
  token: TokenSpec & { login: string };
  res: ServerResponse;
}
type Result = { status: number; body?: unknown; headers?: Record<string, string> };
type RouteHandler = (ctx: Ctx) => Result | Promise<Result>;

/** Compile `/repos/{owner}/{repo}/branches/{+branch}` into a RegExp with named groups. */
function compile(path: string): RegExp {
  const src = path
    .split(/(\{\+?[a-z_]+\})/)
    .map((part) => {
      const m = /^\{(\+?)([a-z_]+)\}$/.exec(part);
      if (m) return m[1] ? `(?<${m[2]}>.+)` : `(?<${m[2]}>[^/]+)`;
      return part.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("");
  return new RegExp(`^${src}/?$`);
}

export async function startFakeGitHub(opts: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const token = opts.token ?? "ghs_fake_token";
  const tokens = new Map<string, TokenSpec & { login: string }>();
  tokens.set(token, { access: "write", login: "github-actions[bot]", type: "Bot" });
  for (const [t, spec] of Object.entries(opts.tokens ?? {})) {
    tokens.set(t, { access: spec.access ?? "write", login: spec.login ?? "github-actions[bot]", type: spec.type ?? (spec.login && !spec.login.endsWith("[bot]") ? "User" : "Bot") });
  }
  const store =
    opts.results instanceof ArtifactStore ? opts.results : opts.results ? opts.results.store : new ArtifactStore(typeof opts.repo === "string" ? opts.repo : opts.repo?.fullName);

  const repos = new Map<string, RepoState>();
  const workflowRuns: (Required<Omit<WorkflowRunSeed, "conclusion">> & { conclusion: string | null })[] = [];
  const users = new Map<string, FakeUser>();
  let nextId = 3_000_000_001;
  const newId = () => nextId++;
  let nextUserId = 100_001;
  const unhandled: RecordedRequest[] = [];
  const errors: unknown[] = [];
  let api = "";
  let web = "";

  // ---------------------------------------------------------------- model
  function user(login: string, type?: FakeUser["type"]): FakeUser {
    const key = login.toLowerCase();
    let u = users.get(key);
    if (!u) {
      u = { login, id: KNOWN_USER_IDS[key] ?? nextUserId++, type: type ?? (login.endsWith("[bot]") ? "Bot" : "User") };
      users.set(key, u);
    } else if (type) {
      u.type = type;
    }
    return u;
  }

  function addRepo(seed: RepoSeed): RepoState {
    const [owner, name] = seed.fullName.split("/");
    if (!owner || !name) throw new Error(`repo must be owner/name, got ${seed.fullName}`);
    const existing = repos.get(seed.fullName.toLowerCase());
    if (existing) {
      if (seed.gitDir) existing.gitDir = seed.gitDir;
      if (seed.defaultBranch) existing.defaultBranch = seed.defaultBranch;
      if (seed.private !== undefined) existing.private = seed.private;
      if (seed.nonCollaborator !== undefined) existing.nonCollaborator = seed.nonCollaborator;
      for (const [l, p] of Object.entries(seed.collaborators ?? {})) existing.collaborators.set(l.toLowerCase(), { login: l, permission: p });
      return existing;
    }
    user(owner, seed.ownerType ?? "Organization");
    const r: RepoState = {
      id: seed.id ?? newId(),
      owner,
      name,
      fullName: `${owner}/${name}`,
      ownerType: seed.ownerType ?? "Organization",
      defaultBranch: seed.defaultBranch ?? "main",
      private: seed.private ?? false,
      fork: seed.fork ?? false,
      ...(seed.parent ? { parent: seed.parent } : {}),
      ...(seed.gitDir ? { gitDir: seed.gitDir } : {}),
      collaborators: new Map(Object.entries(seed.collaborators ?? {}).map(([l, p]) => [l.toLowerCase(), { login: l, permission: p }])),
      ...(seed.nonCollaborator !== undefined ? { nonCollaborator: seed.nonCollaborator } : {}),
      issues: new Map(),
      pulls: new Map(),
      comments: [],
      reviewComments: [],
      reviews: [],
      reactions: [],
      nextNumber: 1,
      policy: {},
    };
    repos.set(r.fullName.toLowerCase(), r);
    return r;
  }

  const defaultSeed: RepoSeed = typeof opts.repo === "string" ? { fullName: opts.repo } : (opts.repo ?? { fullName: store.defaultRepository });
  const defaultRepo = addRepo(defaultSeed);

  function repo(fullName?: string): RepoState {
    if (!fullName) return defaultRepo;
    const r = repos.get(fullName.toLowerCase());
    if (!r) throw new Error(`fake GitHub: unknown repo ${fullName}`);
    return r;
  }

  function repoOrCreate(fullName: string, extra: Partial<RepoSeed> = {}): RepoState {
    return repos.get(fullName.toLowerCase()) ?? addRepo({ fullName, ...extra });
  }

  function takeNumber(r: RepoState, n?: number): number {
    if (n !== undefined) {
      if (r.issues.has(n)) throw new Error(`fake GitHub: #${n} already exists in ${r.fullName}`);
      r.nextNumber = Math.max(r.nextNumber, n + 1);
      return n;
    }
    return r.nextNumber++;
  }

  function addIssue(seed: Parameters<FakeGitHub["addIssue"]>[0], isPull = false): IssueState {
    const r = seed.repo ? repoOrCreate(seed.repo) : defaultRepo;
    const login = seed.user ?? "octocat";
    user(login, seed.userType);
    const now = ts();
    const issue: IssueState = {
      repo: r.fullName,
      number: takeNumber(r, seed.number),
      id: seed.id ?? newId(),
      title: seed.title ?? "An issue",
      body: seed.body === undefined ? "" : seed.body,
      user: login,
      state: seed.state ?? "open",
      stateReason: null,
      labels: seed.labels ?? [],
      assignees: seed.assignees ?? [],
      isPull,
      locked: false,
      createdAt: now,
      updatedAt: now,
      closedAt: seed.state === "closed" ? now : null,
    };
    r.issues.set(issue.number, issue);
    return issue;
  }

  function addPull(seed: Parameters<FakeGitHub["addPull"]>[0]): PullState {
    const r = seed.repo ? repoOrCreate(seed.repo) : defaultRepo;
    const headRepoName = seed.head.repo ?? r.fullName;
    if (headRepoName.toLowerCase() !== r.fullName.toLowerCase()) {
      repoOrCreate(headRepoName, { fork: true, parent: r.fullName, ownerType: "User" });
    }
    const issue = addIssue(
      {
        repo: r.fullName,
        ...(seed.number !== undefined ? { number: seed.number } : {}),
        title: seed.title ?? "A pull request",
        body: seed.body === undefined ? "" : seed.body,
        ...(seed.user ? { user: seed.user } : {}),
        ...(seed.userType ? { userType: seed.userType } : {}),
        ...(seed.labels ? { labels: seed.labels } : {}),
        ...(seed.state ? { state: seed.state } : {}),
      },
      true,
    );
    const baseRef = seed.base?.ref ?? r.defaultBranch;
    const pull: PullState = {
      repo: r.fullName,
      number: issue.number,
      id: seed.id ?? newId(),
      title: issue.title,
      body: issue.body,
      user: issue.user,
      state: issue.state,
      draft: seed.draft ?? false,
      merged: seed.merged ?? false,
      head: { ref: seed.head.ref, sha: seed.head.sha ?? fakeSha(`${headRepoName}:${seed.head.ref}`), repo: headRepoName },
      base: { ref: baseRef, sha: seed.base?.sha ?? fakeSha(`${r.fullName}:${baseRef}`) },
      maintainerCanModify: headRepoName.toLowerCase() !== r.fullName.toLowerCase(),
      ...(seed.files ? { files: seed.files } : {}),
      createdAt: issue.createdAt,
      updatedAt: issue.updatedAt,
      closedAt: issue.closedAt,
    };
    r.pulls.set(pull.number, pull);
    return pull;
  }

  function addComment(seed: Parameters<FakeGitHub["addComment"]>[0]): CommentState {
    const r = seed.repo ? repo(seed.repo) : defaultRepo;
    if (!r.issues.has(seed.issue)) addIssue({ repo: r.fullName, number: seed.issue });
    const login = seed.user ?? "octocat";
    user(login, seed.userType);
    const now = seed.createdAt ?? ts();
    const c: CommentState = { repo: r.fullName, id: seed.id ?? newId(), issueNumber: seed.issue, body: seed.body, user: login, createdAt: now, updatedAt: now };
    r.comments.push(c);
    return c;
  }

  function addReviewComment(seed: Parameters<FakeGitHub["addReviewComment"]>[0]): ReviewCommentState {
    const r = seed.repo ? repo(seed.repo) : defaultRepo;
    const p = r.pulls.get(seed.pull);
    if (!p) throw new Error(`fake GitHub: no pull #${seed.pull} in ${r.fullName}`);
    const login = seed.user ?? "octocat";
    user(login, seed.userType);
    const now = ts();
    const c: ReviewCommentState = {
      repo: r.fullName,
      id: seed.id ?? newId(),
      pullNumber: seed.pull,
      reviewId: seed.reviewId ?? null,
      body: seed.body,
      user: login,
      path: seed.path,
      diffHunk: seed.diffHunk ?? "@@ -1 +1 @@",
      line: seed.line ?? null,
      side: "RIGHT",
      commitId: seed.commitId ?? p.head.sha,
      createdAt: now,
      updatedAt: now,
    };
    r.reviewComments.push(c);
    return c;
  }

  // ---------------------------------------------------------------- git
  async function gitRef(r: RepoState, ref: string): Promise<string | null | undefined> {
    if (!r.gitDir) return undefined;
    try {
      const { stdout } = await run("git", ["-C", r.gitDir, "rev-parse", "--verify", "--quiet", `refs/heads/${ref}^{commit}`]);
      return stdout.trim() || null;
    } catch (e) {
      return answerIfCommandSaidNo(e, null);
    }
  }

  /** Refresh a PR's head/base shas from git (when the repos have a gitDir). */
  async function refreshPull(p: PullState): Promise<void> {
    const headRepo = repos.get(p.head.repo.toLowerCase());
    const h = headRepo ? await gitRef(headRepo, p.head.ref) : undefined;
    if (h) p.head.sha = h;
    const b = await gitRef(repo(p.repo), p.base.ref);
    if (b) p.base.sha = b;
  }

  async function gitFiles(r: RepoState, p: PullState): Promise<PullFile[]> {
    if (!r.gitDir || p.head.repo.toLowerCase() !== r.fullName.toLowerCase()) return [];
    const range = `refs/heads/${p.base.ref}...refs/heads/${p.head.ref}`;
    try {
      const { stdout: ns } = await run("git", ["-C", r.gitDir, "diff", "--no-renames", "--numstat", range]);
      const { stdout: st } = await run("git", ["-C", r.gitDir, "diff", "--no-renames", "--name-status", range]);
      const statuses = new Map(st.trim().split("\n").filter(Boolean).map((l) => { const [s, f] = l.split("\t"); return [f!, s!] as const; }));
      const files: PullFile[] = [];
      for (const line of ns.trim().split("\n").filter(Boolean)) {
        const [a, d, filename] = line.split("\t") as [string, string, string];
        const { stdout: diff } = await run("git", ["-C", r.gitDir, "diff", "--no-renames", range, "--", filename]);
        const at = diff.indexOf("\n@@");
        const s = statuses.get(filename);
        files.push({
          filename,
          status: s === "A" ? "added" : s === "D" ? "removed" : "modified",
          additions: a === "-" ? 0 : Number(a),
          deletions: d === "-" ? 0 : Number(d),
          changes: (a === "-" ? 0 : Number(a)) + (d === "-" ? 0 : Number(d)),
          ...(at >= 0 ? { patch: diff.slice(at + 1).replace(/\n$/, "") } : {}),
          sha: fakeSha(filename + diff),
        });
      }
      return files;
    } catch (e) {
      return answerIfCommandSaidNo(e, []);
    }
  }

  // ---------------------------------------------------------------- rendering
  function renderUser(login: string) {
    const u = user(login);
    return {
      login: u.login,
      id: u.id,
      node_id: nodeId(u.type === "Bot" ? "BOT_" : "U_", u.id),
      avatar_url: `${web}/avatars/u/${u.id}?v=4`,
      gravatar_id: "",
      url: `${api}/users/${encodeURIComponent(u.login)}`,
      html_url: u.type === "Bot" ? `${web}/apps/${u.login.replace(/\[bot\]$/, "")}` : `${web}/${u.login}`,
      type: u.type,
      user_view_type: "public",
      site_admin: false,
    };
  }

  function renderRepo(r: RepoState): Record<string, unknown> {
    const url = `${api}/repos/${r.fullName}`;
    const out: Record<string, unknown> = {
      id: r.id,
      node_id: nodeId("R_", r.id),
      name: r.name,
      full_name: r.fullName,
      private: r.private,
      owner: { ...renderUser(r.owner), type: r.ownerType },
      html_url: `${web}/${r.fullName}`,
      description: null,
      fork: r.fork,
      url,
      clone_url: `${web}/${r.fullName}.git`,
      git_url: `git://github.localhost/${r.fullName}.git`,
      ssh_url: `git@github.localhost:${r.fullName}.git`,
      default_branch: r.defaultBranch,
      visibility: r.private ? "private" : "public",
      archived: false,
      disabled: false,
      allow_forking: true,
      has_issues: true,
      topics: [],
      created_at: "2024-01-01T00:00:00Z",
      updated_at: "2024-01-01T00:00:00Z",
      pushed_at: "2024-01-01T00:00:00Z",
    };
    if (r.parent && repos.get(r.parent.toLowerCase())) {
      const parent = repos.get(r.parent.toLowerCase())!;
      out["parent"] = { id: parent.id, full_name: parent.fullName, html_url: `${web}/${parent.fullName}`, default_branch: parent.defaultBranch };
      out["source"] = out["parent"];
    }
    return out;
  }

  function reactionSummary(r: RepoState, subject: ReactionState["subject"], subjectId: number, url: string) {
    const list = r.reactions.filter((x) => x.subject === subject && x.subjectId === subjectId);
    const out: Record<string, unknown> = { url, total_count: list.length };
    for (const c of REACTIONS) out[c] = list.filter((x) => x.content === c).length;
    return out;
  }

  function renderIssue(r: RepoState, i: IssueState) {
    const url = `${api}/repos/${r.fullName}/issues/${i.number}`;
    const out: Record<string, unknown> = {
      url,
      repository_url: `${api}/repos/${r.fullName}`,
      comments_url: `${url}/comments`,
      html_url: `${web}/${r.fullName}/${i.isPull ? "pull" : "issues"}/${i.number}`,
      id: i.id,
      node_id: nodeId(i.isPull ? "PR_" : "I_", i.id),
      number: i.number,
      title: i.title,
      user: renderUser(i.user),
      labels: i.labels.map((name) => ({ id: Number.parseInt(fakeSha(name).slice(0, 8), 16), name, color: "ededed", default: false, description: null })),
      state: i.state,
      state_reason: i.stateReason,
      locked: i.locked,
      assignee: i.assignees[0] ? renderUser(i.assignees[0]) : null,
      assignees: i.assignees.map(renderUser),
      comments: r.comments.filter((c) => c.issueNumber === i.number).length,
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      closed_at: i.closedAt,
      author_association: authorAssociation(r, i.user),
      body: i.body,
      reactions: reactionSummary(r, "issue", i.number, `${url}/reactions`),
    };
    if (i.isPull) {
      const p = r.pulls.get(i.number);
      out["pull_request"] = {
        url: `${api}/repos/${r.fullName}/pulls/${i.number}`,
        html_url: `${web}/${r.fullName}/pull/${i.number}`,
        diff_url: `${web}/${r.fullName}/pull/${i.number}.diff`,
        patch_url: `${web}/${r.fullName}/pull/${i.number}.patch`,
        merged_at: p?.merged ? p.closedAt : null,
      };
      out["draft"] = p?.draft ?? false;
    }
    return out;
  }

  function authorAssociation(r: RepoState, login: string): string {
    if (login.toLowerCase() === r.owner.toLowerCase()) return "OWNER";
    const c = r.collaborators.get(login.toLowerCase());
    if (c?.permission && c.permission !== "none") return r.ownerType === "Organization" ? "MEMBER" : "COLLABORATOR";
    return "NONE";
  }

  function renderComment(r: RepoState, c: CommentState) {
    const url = `${api}/repos/${r.fullName}/issues/comments/${c.id}`;
    const isPull = r.issues.get(c.issueNumber)?.isPull ?? false;
    return {
      url,
      html_url: `${web}/${r.fullName}/${isPull ? "pull" : "issues"}/${c.issueNumber}#issuecomment-${c.id}`,
      issue_url: `${api}/repos/${r.fullName}/issues/${c.issueNumber}`,
      id: c.id,
      node_id: nodeId("IC_", c.id),
      user: renderUser(c.user),
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      author_association: authorAssociation(r, c.user),
      body: c.body,
      reactions: reactionSummary(r, "issue_comment", c.id, `${url}/reactions`),
      performed_via_github_app: null,
    };
  }

  function renderReviewComment(r: RepoState, c: ReviewCommentState) {
    const url = `${api}/repos/${r.fullName}/pulls/comments/${c.id}`;
    return {
      url,
      pull_request_review_id: c.reviewId,
      id: c.id,
      node_id: nodeId("PRRC_", c.id),
      diff_hunk: c.diffHunk,
      path: c.path,
      commit_id: c.commitId,
      original_commit_id: c.commitId,
      user: renderUser(c.user),
      body: c.body,
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      html_url: `${web}/${r.fullName}/pull/${c.pullNumber}#discussion_r${c.id}`,
      pull_request_url: `${api}/repos/${r.fullName}/pulls/${c.pullNumber}`,
      author_association: authorAssociation(r, c.user),
      line: c.line,
      original_line: c.line,
      side: c.side,
      subject_type: "line",
      ...(c.inReplyToId ? { in_reply_to_id: c.inReplyToId } : {}),
      reactions: reactionSummary(r, "pull_comment", c.id, `${url}/reactions`),
    };
  }

  function renderReview(r: RepoState, v: ReviewState) {
    return {
      id: v.id,
      node_id: nodeId("PRR_", v.id),
      user: renderUser(v.user),
      body: v.body,
      state: v.state,
      html_url: `${web}/${r.fullName}/pull/${v.pullNumber}#pullrequestreview-${v.id}`,
      pull_request_url: `${api}/repos/${r.fullName}/pulls/${v.pullNumber}`,
      author_association: authorAssociation(r, v.user),
      ...(v.submittedAt ? { submitted_at: v.submittedAt } : {}),
      commit_id: v.commitId,
    };
  }

  function renderReaction(x: ReactionState) {
    return { id: x.id, node_id: nodeId("REA_", x.id), user: renderUser(x.user), content: x.content, created_at: x.createdAt };
  }

  function renderPull(r: RepoState, p: PullState, full: boolean) {
    const url = `${api}/repos/${r.fullName}/pulls/${p.number}`;
    const issue = r.issues.get(p.number)!;
    const headRepo = repos.get(p.head.repo.toLowerCase());
    const headOwner = p.head.repo.split("/")[0]!;
    const out: Record<string, unknown> = {
      url,
      id: p.id,
      node_id: nodeId("PR_", p.id),
      html_url: `${web}/${r.fullName}/pull/${p.number}`,
      diff_url: `${web}/${r.fullName}/pull/${p.number}.diff`,
      patch_url: `${web}/${r.fullName}/pull/${p.number}.patch`,
      issue_url: `${api}/repos/${r.fullName}/issues/${p.number}`,
      number: p.number,
      state: p.state,
      locked: false,
      title: p.title,
      user: renderUser(p.user),
      body: p.body,
      labels: (renderIssue(r, issue)["labels"] as unknown[]) ?? [],
      created_at: p.createdAt,
      updated_at: p.updatedAt,
      closed_at: p.closedAt,
      merged_at: p.merged ? p.closedAt : null,
      merge_commit_sha: null,
      assignees: issue.assignees.map(renderUser),
      requested_reviewers: [],
      draft: p.draft,
      head: {
        label: `${headOwner}:${p.head.ref}`,
        ref: p.head.ref,
        sha: p.head.sha,
        user: renderUser(headOwner),
        repo: headRepo ? renderRepo(headRepo) : null,
      },
      base: {
        label: `${r.owner}:${p.base.ref}`,
        ref: p.base.ref,
        sha: p.base.sha,
        user: renderUser(r.owner),
        repo: renderRepo(r),
      },
      author_association: authorAssociation(r, p.user),
    };
    if (full) {
      Object.assign(out, {
        merged: p.merged,
        mergeable: p.state === "open" ? true : null,
        mergeable_state: p.state === "open" ? "clean" : "unknown",
        maintainer_can_modify: p.maintainerCanModify,
        comments: r.comments.filter((c) => c.issueNumber === p.number).length,
        review_comments: r.reviewComments.filter((c) => c.pullNumber === p.number).length,
        commits: 1,
        additions: (p.files ?? []).reduce((n, f) => n + f.additions, 0),
        deletions: (p.files ?? []).reduce((n, f) => n + f.deletions, 0),
        changed_files: (p.files ?? []).length,
      });
    }
    return out;
  }

  function renderArtifact(a: StoredArtifact) {
    const r = repos.get(a.repository.toLowerCase());
    const base = `${api}/repos/${a.repository}/actions/artifacts/${a.id}`;
    const expired = !!a.expiresAt && Date.parse(a.expiresAt) < Date.now();
    return {
      id: a.id,
      node_id: nodeId("MDg6QXJ0aWZhY3Q", a.id),
      name: a.name,
      size_in_bytes: a.size,
      url: base,
      archive_download_url: `${base}/zip`,
      expired,
      digest: a.digest ?? null,
      created_at: a.createdAt,
      updated_at: a.updatedAt,
      expires_at: a.expiresAt ?? new Date(Date.parse(a.createdAt) + 90 * 86400_000).toISOString(),
      workflow_run: {
        id: a.runId,
        repository_id: r?.id ?? 0,
        head_repository_id: a.headRepositoryId ?? r?.id ?? 0,
        head_branch: a.headBranch ?? r?.defaultBranch ?? "main",
        head_sha: a.headSha ?? fakeSha(`run-${a.runId}`),
      },
    };
  }

  // ---------------------------------------------------------------- helpers for handlers
  function paginate<T>(items: T[], ctx: Ctx): Result {
    const per = Math.min(100, Math.max(1, Number(ctx.query.get("per_page") ?? 30) || 30));
    const page = Math.max(1, Number(ctx.query.get("page") ?? 1) || 1);
    const last = Math.max(1, Math.ceil(items.length / per));
    const headers: Record<string, string> = {};
    const link = (p: number, rel: string) => {
      const q = new URLSearchParams(ctx.query);
      q.set("page", String(p));
      q.set("per_page", String(per));
      return `<${api}${ctx.path}?${q}>; rel="${rel}"`;
    };
    const links: string[] = [];
    if (page < last) links.push(link(page + 1, "next"), link(last, "last"));
    if (page > 1) links.push(link(1, "first"), link(page - 1, "prev"));
    if (links.length) headers["link"] = links.join(", ");
    return { status: 200, body: items.slice((page - 1) * per, page * per), headers };
  }

  function requireRepo(ctx: Ctx): RepoState {
    const r = repos.get(`${ctx.params["owner"]}/${ctx.params["repo"]}`.toLowerCase());
    if (!r) throw notFound();
    return r;
  }

  function requireIssue(r: RepoState, n: string | undefined): IssueState {
    const i = r.issues.get(Number(n));
    if (!i) throw notFound();
    return i;
  }

  function requirePull(r: RepoState, n: string | undefined): PullState {
    const p = r.pulls.get(Number(n));
    if (!p) throw notFound();
    return p;
  }

  function requireWrite(ctx: Ctx) {
    if (ctx.token.access !== "write") {
      throw new HttpError(403, {
        message: "Resource not accessible by integration",
        documentation_url: DOCS,
        status: "403",
      });
    }
  }

  function checkBody(resource: string, body: unknown, required: boolean): string | undefined {
    if (body === undefined || body === null) {
      if (required) throw validation([{ resource, code: "missing_field", field: "body" }]);
      return undefined;
    }
    if (typeof body !== "string") throw validation([{ resource, code: "invalid", field: "body" }]);
    if (body.length > MAX_BODY) {
      throw validation([{ resource, code: "custom", field: "body", message: `body is too long (maximum is ${MAX_BODY} characters)` }]);
    }
    if (required && body.trim() === "") throw validation([{ resource, code: "missing_field", field: "body" }]);
    return body;
  }

  function addReaction(ctx: Ctx, r: RepoState, subject: ReactionState["subject"], subjectId: number): Result {
    requireWrite(ctx);
    const content = ctx.body["content"];
    if (typeof content !== "string" || !REACTIONS.includes(content)) {
      throw validation([{ resource: "Reaction", code: "invalid", field: "content" }]);
    }
    const existing = r.reactions.find((x) => x.subject === subject && x.subjectId === subjectId && x.content === content && x.user.toLowerCase() === ctx.token.login.toLowerCase());
    if (existing) return { status: 200, body: renderReaction(existing) };
    const x: ReactionState = { repo: r.fullName, id: newId(), subject, subjectId, content: content as ReactionContent, user: ctx.token.login, createdAt: ts() };
    r.reactions.push(x);
    return { status: 201, body: renderReaction(x) };
  }

  function listReactions(ctx: Ctx, r: RepoState, subject: ReactionState["subject"], subjectId: number): Result {
    const content = ctx.query.get("content");
    return paginate(
      r.reactions.filter((x) => x.subject === subject && x.subjectId === subjectId && (!content || x.content === content)).map(renderReaction),
      ctx,
    );
  }

  function deleteReaction(ctx: Ctx, r: RepoState, subject: ReactionState["subject"], subjectId: number): Result {
    requireWrite(ctx);
    const id = Number(ctx.params["reaction_id"]);
    const i = r.reactions.findIndex((x) => x.subject === subject && x.subjectId === subjectId && x.id === id);
    if (i >= 0) r.reactions.splice(i, 1);
    return { status: 204 };
  }

  function findComment(r: RepoState, id: string | undefined): CommentState {
    const c = r.comments.find((x) => x.id === Number(id));
    if (!c) throw notFound();
    return c;
  }

  function findReviewComment(r: RepoState, id: string | undefined): ReviewCommentState {
    const c = r.reviewComments.find((x) => x.id === Number(id));
    if (!c) throw notFound();
    return c;
  }

  function artifactList(ctx: Ctx, r: RepoState, runId?: number): Result {
    const name = ctx.query.get("name") ?? undefined;
    const list = store
      .list({ repository: r.fullName, ...(runId !== undefined ? { runId } : {}), ...(name ? { name } : {}) })
      .sort((a, b) => b.id - a.id)
      .map(renderArtifact);
    const page = paginate(list, ctx);
    return { ...page, body: { total_count: list.length, artifacts: page.body } };
  }

  function requireArtifact(r: RepoState, id: string | undefined): StoredArtifact {
    const a = store.list({ repository: r.fullName, id: Number(id) })[0];
    if (!a) throw notFound();
    return a;
  }

  function permissionOf(r: RepoState, login: string): { permission: Permission; role: string } | null {
    if (login.toLowerCase() === r.owner.toLowerCase() && r.ownerType === "User") return { permission: "admin", role: "admin" };
    const c = r.collaborators.get(login.toLowerCase());
    if (c) {
      if (c.permission === null) return null;
      const legacy: Permission = c.permission === "maintain" ? "write" : c.permission === "triage" ? "read" : c.permission;
      return { permission: legacy, role: c.permission };
    }
    const nc = r.nonCollaborator ?? (r.private ? "none" : "read");
    if (nc === 404) return null;
    return { permission: nc, role: nc };
  }

  // ---------------------------------------------------------------- routes
  const routes: Array<{ method: string; re: RegExp; handler: RouteHandler }> = [];
  const on = (method: string, path: string, handler: RouteHandler) => routes.push({ method, re: compile(path), handler });
  /** One comment and its reactions: the same API for issue comments and pull request review comments. */
  function commentRoutes<C extends { id: number; body: string; updatedAt: string }>(
    base: string,
    resource: string,
    subject: ReactionState["subject"],
    find: (r: RepoState, id: string | undefined) => C,
    render: (r: RepoState, c: C) => unknown,
  ): void {
    const one = (ctx: Ctx) => {
      const r = requireRepo(ctx);
      return { r, c: find(r, ctx.params["comment_id"]) };
    };
    on("GET", `${base}/{comment_id}`, (ctx) => {
      const { r, c } = one(ctx);
      return { status: 200, body: render(r, c) };
    });
    on("PATCH", `${base}/{comment_id}`, (ctx) => {
      requireWrite(ctx);
      const { r, c } = one(ctx);
      c.body = checkBody(resource, ctx.body["body"], true)!;
      c.updatedAt = ts();
      return { status: 200, body: render(r, c) };
    });
    on("GET", `${base}/{comment_id}/reactions`, (ctx) => {
      const { r, c } = one(ctx);
      return listReactions(ctx, r, subject, c.id);
    });
    on("POST", `${base}/{comment_id}/reactions`, (ctx) => {
      const { r, c } = one(ctx);
      return addReaction(ctx, r, subject, c.id);
    });
    on("DELETE", `${base}/{comment_id}/reactions/{reaction_id}`, (ctx) => {
      const { r, c } = one(ctx);
      return deleteReaction(ctx, r, subject, c.id);
    });
  }
  const R = "/repos/{owner}/{repo}";

  on("GET", "/user", (ctx) => ({ status: 200, body: renderUser(ctx.token.login) }));
  on("GET", "/users/{login}", (ctx) => ({ status: 200, body: renderUser(ctx.params["login"]!) }));
  on("GET", R, (ctx) => {
    const r = requireRepo(ctx);
    const write = ctx.token.access === "write";
    return { status: 200, body: { ...renderRepo(r), permissions: { admin: false, maintain: false, push: write, triage: write, pull: true } } };
  });
  on("GET", `${R}/branches/{+branch}`, async (ctx) => {
    const r = requireRepo(ctx);
    const branch = ctx.params["branch"]!;
    const sha = await gitRef(r, branch);
    if (sha === null || (sha === undefined && branch !== r.defaultBranch)) {
      throw new HttpError(404, { message: "Branch not found", documentation_url: DOCS, status: "404" });
    }
    const s = sha ?? fakeSha(`${r.fullName}:${branch}`);
    return { status: 200, body: { name: branch, commit: { sha: s, url: `${api}/repos/${r.fullName}/commits/${s}` }, protected: false } };
  });

  // collaborators
  on("GET", `${R}/collaborators/{username}/permission`, (ctx) => {
    const r = requireRepo(ctx);
    const login = ctx.params["username"]!;
    const p = permissionOf(r, login);
    if (!p) throw notFound();
    const u = renderUser(login);
    const perms = {
      admin: p.role === "admin",
      maintain: ["admin", "maintain"].includes(p.role),
      push: ["admin", "maintain", "write"].includes(p.role),
      triage: ["admin", "maintain", "write", "triage"].includes(p.role),
      pull: p.role !== "none",
    };
    return { status: 200, body: { permission: p.permission, role_name: p.role, user: { ...u, permissions: perms, role_name: p.role } } };
  });
  on("GET", `${R}/collaborators/{username}`, (ctx) => {
    const r = requireRepo(ctx);
    const c = r.collaborators.get(ctx.params["username"]!.toLowerCase());
    if (!c?.permission || c.permission === "none") throw notFound();
    return { status: 204 };
  });

  // issues
  on("POST", `${R}/issues`, (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    if (typeof ctx.body["title"] !== "string" || !ctx.body["title"]) throw validation([{ resource: "Issue", code: "missing_field", field: "title" }]);
    const body = checkBody("Issue", ctx.body["body"], false);
    const i = addIssue({
      repo: r.fullName,
      title: ctx.body["title"] as string,
      body: body ?? null,
      user: ctx.token.login,
      labels: (ctx.body["labels"] as string[] | undefined) ?? [],
      assignees: (ctx.body["assignees"] as string[] | undefined) ?? [],
    });
    return { status: 201, body: renderIssue(r, i) };
  });
  on("GET", `${R}/issues/comments`, (ctx) => {
    const r = requireRepo(ctx);
    const since = ctx.query.get("since");
    return paginate(r.comments.filter((c) => !since || c.updatedAt >= since).map((c) => renderComment(r, c)), ctx);
  });
  commentRoutes(`${R}/issues/comments`, "IssueComment", "issue_comment", findComment, renderComment);
  on("DELETE", `${R}/issues/comments/{comment_id}`, (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    const c = findComment(r, ctx.params["comment_id"]);
    r.comments.splice(r.comments.indexOf(c), 1);
    return { status: 204 };
  });
  on("GET", `${R}/issues/{number}`, (ctx) => {
    const r = requireRepo(ctx);
    return { status: 200, body: renderIssue(r, requireIssue(r, ctx.params["number"])) };
  });
  on("PATCH", `${R}/issues/{number}`, (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    const i = requireIssue(r, ctx.params["number"]);
    if (typeof ctx.body["title"] === "string") i.title = ctx.body["title"];
    if ("body" in ctx.body) i.body = checkBody("Issue", ctx.body["body"], false) ?? null;
    if (ctx.body["state"] === "open" || ctx.body["state"] === "closed") {
      i.state = ctx.body["state"];
      i.closedAt = i.state === "closed" ? ts() : null;
      i.stateReason = (ctx.body["state_reason"] as string | undefined) ?? (i.state === "closed" ? "completed" : null);
    }
    if (Array.isArray(ctx.body["labels"])) i.labels = ctx.body["labels"] as string[];
    if (Array.isArray(ctx.body["assignees"])) i.assignees = ctx.body["assignees"] as string[];
    i.updatedAt = ts();
    const p = r.pulls.get(i.number);
    if (p) Object.assign(p, { title: i.title, body: i.body, state: i.state, closedAt: i.closedAt, updatedAt: i.updatedAt });
    return { status: 200, body: renderIssue(r, i) };
  });
  on("POST", `${R}/issues/{number}/labels`, (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    const i = requireIssue(r, ctx.params["number"]);
    const labels = (Array.isArray(ctx.body) ? ctx.body : (ctx.body["labels"] as unknown[] | undefined)) ?? [];
    for (const l of labels) {
      const name = typeof l === "string" ? l : String((l as { name?: string }).name);
      if (!i.labels.includes(name)) i.labels.push(name);
    }
    return { status: 200, body: renderIssue(r, i)["labels"] };
  });
  // DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}: 200 with the labels left; 404 when the issue does not carry it.
  on("DELETE", `${R}/issues/{number}/labels/{name}`, (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    const i = requireIssue(r, ctx.params["number"]);
    const name = ctx.params["name"]!;
    const at = i.labels.findIndex((l) => l.toLowerCase() === name.toLowerCase());
    if (at < 0) return { status: 404, body: { message: "Label does not exist", documentation_url: "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue", status: "404" } };
    i.labels.splice(at, 1);
    i.updatedAt = ts();
    return { status: 200, body: renderIssue(r, i)["labels"] };
  });
  on("GET", `${R}/issues/{number}/comments`, (ctx) => {
    const r = requireRepo(ctx);
    const i = requireIssue(r, ctx.params["number"]);
    const since = ctx.query.get("since");
    return paginate(
      r.comments.filter((c) => c.issueNumber === i.number && (!since || c.updatedAt >= since)).map((c) => renderComment(r, c)),
      ctx,
    );
  });
  on("POST", `${R}/issues/{number}/comments`, (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    const i = requireIssue(r, ctx.params["number"]);
    const body = checkBody("IssueComment", ctx.body["body"], true)!;
    if (i.locked) throw new HttpError(403, { message: "Unable to create comment because issue is locked.", documentation_url: DOCS, status: "403" });
    const c = addComment({ repo: r.fullName, issue: i.number, body, user: ctx.token.login });
    return { status: 201, body: renderComment(r, c), headers: { location: `${api}/repos/${r.fullName}/issues/comments/${c.id}` } };
  });
  on("GET", `${R}/issues/{number}/reactions`, (ctx) => {
    const r = requireRepo(ctx);
    return listReactions(ctx, r, "issue", requireIssue(r, ctx.params["number"]).number);
  });
  on("POST", `${R}/issues/{number}/reactions`, (ctx) => {
    const r = requireRepo(ctx);
    return addReaction(ctx, r, "issue", requireIssue(r, ctx.params["number"]).number);
  });
  on("DELETE", `${R}/issues/{number}/reactions/{reaction_id}`, (ctx) => {
    const r = requireRepo(ctx);
    return deleteReaction(ctx, r, "issue", requireIssue(r, ctx.params["number"]).number);
  });

  // pulls
  // Git Data API (commit-method: api): real objects in the repository's bare origin (fake-github-git-data.ts).
  const gitData = new Map<string, GitData>();
  const gitDataOf = (ctx: Ctx): GitData => {
    const r = requireRepo(ctx);
    if (!r.gitDir) throw notFound();
    let d = gitData.get(r.fullName.toLowerCase());
    if (!d) gitData.set(r.fullName.toLowerCase(), (d = new GitData(r.gitDir, `${api}/repos/${r.fullName}`)));
    return d;
  };
  const gitDataCall = async (ctx: Ctx, write: boolean, status: number, call: (d: GitData) => Promise<unknown>): Promise<Result> => {
    if (write) requireWrite(ctx);
    try {
      return { status, body: await call(gitDataOf(ctx)) };
    } catch (e) {
      if (e instanceof GitDataError) throw e.status === 404 ? notFound() : new HttpError(e.status, { message: e.message, documentation_url: `${DOCS}/git`, status: String(e.status) });
      throw e;
    }
  };
  on("POST", `${R}/git/blobs`, (ctx) => gitDataCall(ctx, true, 201, (d) => d.createBlob(ctx.body)));
  on("POST", `${R}/git/trees`, (ctx) => gitDataCall(ctx, true, 201, (d) => d.createTree(ctx.body)));
  on("POST", `${R}/git/commits`, (ctx) => gitDataCall(ctx, true, 201, (d) => d.createCommit(ctx.body, ctx.token.login, user(ctx.token.login).id)));
  on("GET", `${R}/git/commits/{sha}`, (ctx) => gitDataCall(ctx, false, 200, (d) => d.getCommit(ctx.params["sha"]!)));
  on("GET", `${R}/git/ref/{+ref}`, (ctx) => gitDataCall(ctx, false, 200, (d) => d.getRef(ctx.params["ref"]!)));
  on("GET", `${R}/commits`, (ctx) => {
    const per = Math.min(100, Math.max(1, Number(ctx.query.get("per_page") ?? 30) || 30));
    const page = Math.max(1, Number(ctx.query.get("page") ?? 1) || 1);
    return gitDataCall(ctx, false, 200, (d) => d.listCommits(ctx.query.get("sha") ?? "HEAD", page, per));
  });
  /** A ruleset or the missing `workflows` permission refuses a ref write, as GitHub's refs API does. */
  const refPolicy = async (ctx: Ctx, creating: boolean): Promise<void> => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    const doc = `https://docs.github.com/rest/git/refs#${creating ? "create" : "update"}-a-reference`;
    if (creating && r.policy.restrictBranchCreation && String(ctx.body["ref"] ?? "").startsWith("refs/heads/")) throw new HttpError(422, { message: RULESET_CREATION, documentation_url: doc, status: "422" });
    const sha = ctx.body["sha"];
    if (r.policy.workflowsPermission === false && r.gitDir && typeof sha === "string" && /^[0-9a-f]{40}$/.test(sha)) {
      const file = await workflowChangeIn(r.gitDir, sha);
      if (file) throw new HttpError(422, { message: workflowRefusal(file), documentation_url: doc, status: "422" });
    }
  };
  on("POST", `${R}/git/refs`, async (ctx) => {
    await refPolicy(ctx, true);
    return gitDataCall(ctx, true, 201, (d) => d.createRef(ctx.body));
  });
  on("PATCH", `${R}/git/refs/{+ref}`, async (ctx) => {
    await refPolicy(ctx, false);
    return gitDataCall(ctx, true, 200, (d) => d.updateRef(ctx.params["ref"]!, ctx.body));
  });
  /** The token's `pull-requests` permission, then (creating, the workflow's own token) the repository's Actions setting. */
  const pullsPolicy = (ctx: Ctx, r: RepoState, creating: boolean): void => {
    if ((r.policy.pullRequestsPermission ?? "write") !== "write") throw new HttpError(403, { message: NOT_ACCESSIBLE, documentation_url: DOCS, status: "403" });
    if (creating && r.policy.actionsCreatePullRequests === false && ctx.token.login === "github-actions[bot]")
      throw new HttpError(403, { message: PR_CREATION_NOT_PERMITTED, documentation_url: "https://docs.github.com/rest/pulls/pulls#create-a-pull-request", status: "403" });
  };

  on("GET", `${R}/pulls`, async (ctx) => {
    const r = requireRepo(ctx);
    const state = ctx.query.get("state") ?? "open";
    const head = ctx.query.get("head");
    const base = ctx.query.get("base");
    const [headOwner, headRef] = head?.includes(":") ? (head.split(/:(.*)/s) as [string, string]) : [r.owner, head];
    const direction = ctx.query.get("direction") ?? "desc";
    const list = [...r.pulls.values()]
      .filter(
        (p) =>
          (state === "all" || p.state === state) &&
          (!head || (p.head.repo.split("/")[0]!.toLowerCase() === headOwner.toLowerCase() && p.head.ref === headRef)) &&
          (!base || p.base.ref === base),
      )
      .sort((a, b) => (direction === "asc" ? a.number - b.number : b.number - a.number));
    for (const p of list) await refreshPull(p);
    return paginate(
      list.map((p) => renderPull(r, p, false)),
      ctx,
    );
  });
  on("POST", `${R}/pulls`, async (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    pullsPolicy(ctx, r, true);
    const doc = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request";
    const { title, head, base } = ctx.body as { title?: unknown; head?: unknown; base?: unknown };
    const missing = (["title", "head", "base"] as const).filter((f) => typeof ctx.body[f] !== "string" || !ctx.body[f]);
    if (missing.length) throw validation(missing.map((field) => ({ resource: "PullRequest", code: "missing_field", field })), doc);
    const body = checkBody("PullRequest", ctx.body["body"], false);
    const [hOwner, hRef] = (head as string).includes(":") ? ((head as string).split(/:(.*)/s) as [string, string]) : [r.owner, head as string];
    const headRepo =
      hOwner.toLowerCase() === r.owner.toLowerCase()
        ? r
        : [...repos.values()].find((x) => x.owner.toLowerCase() === hOwner.toLowerCase() && x.name.toLowerCase() === r.name.toLowerCase());
    if (!headRepo) throw validation([{ resource: "PullRequest", field: "head", code: "invalid" }], doc);
    const headSha = await gitRef(headRepo, hRef);
    if (headSha === null) throw validation([{ resource: "PullRequest", field: "head", code: "invalid" }], doc);
    const baseSha = await gitRef(r, base as string);
    if (baseSha === null) throw validation([{ resource: "PullRequest", field: "base", code: "invalid" }], doc);
    const dup = [...r.pulls.values()].find((p) => p.state === "open" && p.head.repo.toLowerCase() === headRepo.fullName.toLowerCase() && p.head.ref === hRef && p.base.ref === base);
    if (dup) throw validation([{ resource: "PullRequest", code: "custom", message: `A pull request already exists for ${headRepo.owner}:${hRef}.` }], doc);
    if (headSha && baseSha && headRepo === r && r.gitDir) {
      const { stdout } = await run("git", ["-C", r.gitDir, "rev-list", "--count", `${baseSha}..${headSha}`]);
      if (stdout.trim() === "0") throw validation([{ resource: "PullRequest", code: "custom", message: `No commits between ${base as string} and ${hRef}` }], doc);
    }
    const p = addPull({
      repo: r.fullName,
      title: title as string,
      body: body ?? null,
      user: ctx.token.login,
      head: { ref: hRef, repo: headRepo.fullName, ...(headSha ? { sha: headSha } : {}) },
      base: { ref: base as string, ...(baseSha ? { sha: baseSha } : {}) },
      draft: ctx.body["draft"] === true,
    });
    p.maintainerCanModify = ctx.body["maintainer_can_modify"] !== false && headRepo !== r;
    return { status: 201, body: renderPull(r, p, true), headers: { location: `${api}/repos/${r.fullName}/pulls/${p.number}` } };
  });
  commentRoutes(`${R}/pulls/comments`, "PullRequestReviewComment", "pull_comment", findReviewComment, renderReviewComment);
  on("GET", `${R}/pulls/{number}`, async (ctx) => {
    const r = requireRepo(ctx);
    const p = requirePull(r, ctx.params["number"]);
    await refreshPull(p);
    if (!p.files && r.gitDir) {
      const files = await gitFiles(r, p);
      return { status: 200, body: { ...renderPull(r, p, true), changed_files: files.length, additions: files.reduce((n, f) => n + f.additions, 0), deletions: files.reduce((n, f) => n + f.deletions, 0) } };
    }
    return { status: 200, body: renderPull(r, p, true) };
  });
  on("PATCH", `${R}/pulls/{number}`, async (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    pullsPolicy(ctx, r, false);
    const p = requirePull(r, ctx.params["number"]);
    const i = r.issues.get(p.number)!;
    if (typeof ctx.body["title"] === "string") p.title = i.title = ctx.body["title"];
    if ("body" in ctx.body) p.body = i.body = checkBody("PullRequest", ctx.body["body"], false) ?? null;
    if (ctx.body["state"] === "open" || ctx.body["state"] === "closed") {
      p.state = i.state = ctx.body["state"];
      p.closedAt = i.closedAt = p.state === "closed" ? ts() : null;
    }
    if (typeof ctx.body["base"] === "string") p.base.ref = ctx.body["base"];
    p.updatedAt = i.updatedAt = ts();
    await refreshPull(p);
    return { status: 200, body: renderPull(r, p, true) };
  });
  on("GET", `${R}/pulls/{number}/files`, async (ctx) => {
    const r = requireRepo(ctx);
    const p = requirePull(r, ctx.params["number"]);
    const files = p.files ?? (await gitFiles(r, p));
    return paginate(
      files.map((f) => ({
        sha: f.sha ?? fakeSha(f.filename),
        filename: f.filename,
        status: f.status,
        additions: f.additions,
        deletions: f.deletions,
        changes: f.changes ?? f.additions + f.deletions,
        blob_url: `${web}/${r.fullName}/blob/${p.head.sha}/${f.filename}`,
        raw_url: `${web}/${r.fullName}/raw/${p.head.sha}/${f.filename}`,
        contents_url: `${api}/repos/${r.fullName}/contents/${f.filename}?ref=${p.head.sha}`,
        ...(f.patch !== undefined ? { patch: f.patch } : {}),
        ...(f.previous_filename ? { previous_filename: f.previous_filename } : {}),
      })),
      ctx,
    );
  });
  on("GET", `${R}/pulls/{number}/comments`, (ctx) => {
    const r = requireRepo(ctx);
    const p = requirePull(r, ctx.params["number"]);
    return paginate(r.reviewComments.filter((c) => c.pullNumber === p.number).map((c) => renderReviewComment(r, c)), ctx);
  });
  on("POST", `${R}/pulls/{number}/comments`, (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    const p = requirePull(r, ctx.params["number"]);
    const body = checkBody("PullRequestReviewComment", ctx.body["body"], true)!;
    const replyTo = ctx.body["in_reply_to"] as number | undefined;
    const parent = replyTo !== undefined ? findReviewComment(r, String(replyTo)) : undefined;
    if (!parent && typeof ctx.body["path"] !== "string") throw validation([{ resource: "PullRequestReviewComment", code: "missing_field", field: "path" }]);
    const c = addReviewComment({
      repo: r.fullName,
      pull: p.number,
      body,
      user: ctx.token.login,
      path: parent?.path ?? (ctx.body["path"] as string),
      diffHunk: parent?.diffHunk ?? "@@ -1 +1 @@",
      ...(parent?.line ?? ctx.body["line"] ? { line: (parent?.line ?? ctx.body["line"]) as number } : {}),
      commitId: (ctx.body["commit_id"] as string | undefined) ?? p.head.sha,
    });
    if (parent) c.inReplyToId = parent.id;
    return { status: 201, body: renderReviewComment(r, c) };
  });
  on("POST", `${R}/pulls/{number}/comments/{comment_id}/replies`, (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    const p = requirePull(r, ctx.params["number"]);
    const parent = findReviewComment(r, ctx.params["comment_id"]);
    if (parent.pullNumber !== p.number) throw notFound();
    const body = checkBody("PullRequestReviewComment", ctx.body["body"], true)!;
    const c = addReviewComment({
      repo: r.fullName,
      pull: p.number,
      body,
      user: ctx.token.login,
      path: parent.path,
      diffHunk: parent.diffHunk,
      ...(parent.line !== null ? { line: parent.line } : {}),
      commitId: parent.commitId,
    });
    c.inReplyToId = parent.id;
    return { status: 201, body: renderReviewComment(r, c) };
  });
  on("GET", `${R}/pulls/{number}/reviews`, (ctx) => {
    const r = requireRepo(ctx);
    const p = requirePull(r, ctx.params["number"]);
    return paginate(r.reviews.filter((v) => v.pullNumber === p.number).map((v) => renderReview(r, v)), ctx);
  });
  on("POST", `${R}/pulls/{number}/reviews`, async (ctx) => {
    requireWrite(ctx);
    const r = requireRepo(ctx);
    const p = requirePull(r, ctx.params["number"]);
    await refreshPull(p);
    const event = ctx.body["event"] as string | undefined;
    const body = checkBody("PullRequestReview", ctx.body["body"], false) ?? "";
    const states: Record<string, ReviewState["state"]> = { APPROVE: "APPROVED", REQUEST_CHANGES: "CHANGES_REQUESTED", COMMENT: "COMMENTED" };
    if (event !== undefined && !states[event]) throw validation([{ resource: "PullRequestReview", code: "invalid", field: "event" }]);
    const comments = (ctx.body["comments"] as Array<Record<string, unknown>> | undefined) ?? [];
    if ((event === "REQUEST_CHANGES" || event === "COMMENT") && !body && comments.length === 0) {
      throw unprocessable([`Review Can not request changes or comment without a body`]);
    }
    if (event === "APPROVE" && p.user.toLowerCase() === ctx.token.login.toLowerCase()) {
      throw unprocessable(["Review Can not approve your own pull request"]);
    }
    if (event === "REQUEST_CHANGES" && p.user.toLowerCase() === ctx.token.login.toLowerCase()) {
      throw unprocessable(["Review Can not request changes on your own pull request"]);
    }
    const v: ReviewState = {
      repo: r.fullName,
      id: newId(),
      pullNumber: p.number,
      body,
      user: ctx.token.login,
      state: event ? states[event]! : "PENDING",
      commitId: (ctx.body["commit_id"] as string | undefined) ?? p.head.sha,
      submittedAt: event ? ts() : null,
    };
    r.reviews.push(v);
    for (const c of comments) {
      addReviewComment({
        repo: r.fullName,
        pull: p.number,
        body: String(c["body"] ?? ""),
        user: ctx.token.login,
        path: String(c["path"] ?? ""),
        ...(typeof c["line"] === "number" ? { line: c["line"] } : typeof c["position"] === "number" ? { line: c["position"] } : {}),
        commitId: v.commitId,
        reviewId: v.id,
      });
    }
    return { status: 200, body: renderReview(r, v) };
  });

  // workflow runs (seeded)
  type WorkflowRunState = (typeof workflowRuns)[number];
  const workflowId = (p: string) => Number.parseInt(createHash("sha256").update(p).digest("hex").slice(0, 8), 16);
  /**
   * A seeded run as both routes answer it: the fields of GitHub's OpenAPI `workflow-run` a client reads, typed
   * against it; `head_repository` is the fork for a fork's pull request.
   */
  function renderWorkflowRun(w: WorkflowRunState, r: RepoState): RenderedWorkflowRun {
    const repository = renderRepo(r);
    const head = w.headRepo && w.headRepo.toLowerCase() !== r.fullName.toLowerCase() ? { ...repository, id: r.id + 1000, full_name: w.headRepo, name: w.headRepo.split("/")[1] } : repository;
    return {
      id: w.id,
      name: w.name,
      node_id: nodeId("WFR_", w.id),
      head_branch: w.headBranch,
      head_sha: fakeSha(`run-${w.id}`),
      path: w.path,
      run_number: w.id,
      run_attempt: 1,
      event: w.event,
      status: "completed",
      conclusion: w.conclusion,
      workflow_id: workflowId(w.path),
      url: `${api}/repos/${r.fullName}/actions/runs/${w.id}`,
      html_url: `${web}/${r.fullName}/actions/runs/${w.id}`,
      pull_requests: [],
      created_at: w.createdAt,
      updated_at: w.createdAt,
      artifacts_url: `${api}/repos/${r.fullName}/actions/runs/${w.id}/artifacts`,
      display_title: w.name,
      repository,
      head_repository: head,
    };
  }

  // `GET …/actions/workflows/{workflow_id}/runs`: by file name or id, newest first.
  on("GET", `${R}/actions/workflows/{workflow_id}/runs`, (ctx) => {
    const r = requireRepo(ctx);
    const wf = String(ctx.params["workflow_id"]);
    const list = workflowRuns
      .filter((w) => w.repo.toLowerCase() === r.fullName.toLowerCase() && (w.path.split("/").pop() === wf || String(workflowId(w.path)) === wf))
      .sort((a, b) => b.id - a.id)
      .map((w) => renderWorkflowRun(w, r));
    const page = paginate(list, ctx);
    return { ...page, body: { total_count: list.length, workflow_runs: page.body } };
  });

  // One workflow run (`GET …/actions/runs/{run_id}`): the newest seed with that id.
  on("GET", `${R}/actions/runs/{run_id}`, (ctx) => {
    const r = requireRepo(ctx);
    const id = Number(ctx.params["run_id"]);
    const w = workflowRuns.filter((x) => x.id === id && x.repo.toLowerCase() === r.fullName.toLowerCase()).at(-1);
    if (!w) throw notFound();
    return { status: 200, body: renderWorkflowRun(w, r) };
  });

  // artifacts
  on("GET", `${R}/actions/artifacts`, (ctx) => artifactList(ctx, requireRepo(ctx)));
  on("GET", `${R}/actions/runs/{run_id}/artifacts`, (ctx) => artifactList(ctx, requireRepo(ctx), Number(ctx.params["run_id"])));
  on("GET", `${R}/actions/artifacts/{artifact_id}`, (ctx) => ({ status: 200, body: renderArtifact(requireArtifact(requireRepo(ctx), ctx.params["artifact_id"])) }));
  on("GET", `${R}/actions/artifacts/{artifact_id}/{archive_format}`, (ctx) => {
    const a = requireArtifact(requireRepo(ctx), ctx.params["artifact_id"]);
    if (ctx.params["archive_format"] !== "zip") throw notFound();
    if (a.expiresAt && Date.parse(a.expiresAt) < Date.now()) {
      throw new HttpError(410, { message: "Artifact has expired", documentation_url: DOCS, status: "410" });
    }
    return { status: 302, headers: { location: store.downloadUrl(a) } };
  });
  on("DELETE", `${R}/actions/artifacts/{artifact_id}`, (ctx) => {
    requireWrite(ctx);
    const a = requireArtifact(requireRepo(ctx), ctx.params["artifact_id"]);
    store.remove(a.id);
    return { status: 204 };
  });

  // ---------------------------------------------------------------- search (fan-out plans)
  /** A user as GitHub's OpenAPI `simple-user` has it (every required field). */
  function renderSimpleUser(login: string): SimpleUser {
    const base = renderUser(login);
    const url = base.url;
    return {
      ...base,
      followers_url: `${url}/followers`,
      following_url: `${url}/following{/other_user}`,
      gists_url: `${url}/gists{/gist_id}`,
      starred_url: `${url}/starred{/owner}{/repo}`,
      subscriptions_url: `${url}/subscriptions`,
      organizations_url: `${url}/orgs`,
      repos_url: `${url}/repos`,
      events_url: `${url}/events{/privacy}`,
      received_events_url: `${url}/received_events`,
    };
  }

  /** One search hit, typed against GitHub's OpenAPI description (`issue-search-result-item`). */
  function renderSearchItem(r: RepoState, i: IssueState, comments: number): SearchIssueItem {
    const url = `${api}/repos/${r.fullName}/issues/${i.number}`;
    const p = i.isPull ? r.pulls.get(i.number) : undefined;
    return {
      url,
      repository_url: `${api}/repos/${r.fullName}`,
      labels_url: `${url}/labels{/name}`,
      comments_url: `${url}/comments`,
      events_url: `${url}/events`,
      html_url: `${web}/${r.fullName}/${i.isPull ? "pull" : "issues"}/${i.number}`,
      timeline_url: `${url}/timeline`,
      id: i.id,
      node_id: nodeId(i.isPull ? "PR_" : "I_", i.id),
      number: i.number,
      title: i.title,
      locked: i.locked,
      user: renderSimpleUser(i.user),
      labels: i.labels.map((name) => ({ id: Number.parseInt(fakeSha(name).slice(0, 8), 16), node_id: nodeId("LA_", 1), url: `${api}/repos/${r.fullName}/labels/${encodeURIComponent(name)}`, name, color: "ededed", default: false, description: null })),
      state: i.state,
      state_reason: i.stateReason,
      assignee: i.assignees[0] ? renderSimpleUser(i.assignees[0]) : null,
      assignees: i.assignees.map(renderSimpleUser),
      milestone: null,
      comments,
      created_at: i.createdAt,
      updated_at: i.updatedAt,
      closed_at: i.closedAt,
      author_association: authorAssociation(r, i.user) as SearchIssueItem["author_association"],
      ...(i.body !== null ? { body: i.body } : {}),
      score: 1,
      ...(p
        ? {
            draft: p.draft,
            pull_request: {
              url: `${api}/repos/${r.fullName}/pulls/${i.number}`,
              html_url: `${web}/${r.fullName}/pull/${i.number}`,
              diff_url: `${web}/${r.fullName}/pull/${i.number}.diff`,
              patch_url: `${web}/${r.fullName}/pull/${i.number}.patch`,
              merged_at: p.merged ? p.closedAt : null,
            },
          }
        : {}),
    };
  }

  on("GET", "/search/issues", (ctx) => {
    const q = ctx.query.get("q");
    if (!q?.trim()) throw validation([{ resource: "Search", field: "q", code: "missing" }], "https://docs.github.com/rest/search/search#search-issues-and-pull-requests");
    const per = Math.min(100, Math.max(1, Number(ctx.query.get("per_page") ?? 30) || 30));
    const page = Math.max(1, Number(ctx.query.get("page") ?? 1) || 1);
    if (page * per > 1000 && (page - 1) * per >= 1000)
      throw validation([{ message: "Only the first 1000 search results are available", code: "invalid" }]);
    const hits = searchIssues(repos.values(), q, { sort: ctx.query.get("sort"), order: ctx.query.get("order") });
    const reachable = hits.slice(0, 1000);
    const last = Math.max(1, Math.ceil(reachable.length / per));
    const link = (n: number, rel: string) => {
      const qs = new URLSearchParams(ctx.query);
      qs.set("page", String(n));
      qs.set("per_page", String(per));
      return `<${api}${ctx.path}?${qs}>; rel="${rel}"`;
    };
    const links = [...(page < last ? [link(page + 1, "next"), link(last, "last")] : []), ...(page > 1 ? [link(1, "first"), link(page - 1, "prev")] : [])];
    const body: SearchIssuesResponse = {
      total_count: hits.length,
      incomplete_results: false,
      items: reachable.slice((page - 1) * per, page * per).map((h) => renderSearchItem(h.repo, h.issue, h.comments)),
      search_type: "lexical",
    };
    const headers: Record<string, string> = links.length ? { link: links.join(", ") } : {};
    return { status: 200, body, headers };
  });

  /** GET /repos/{o}/{r}/issues: issues and pull requests, as GitHub lists them (state, creator, labels, sort, direction). */
  on("GET", `${R}/issues`, (ctx) => {
    const r = requireRepo(ctx);
    const state = ctx.query.get("state") ?? "open";
    const creator = ctx.query.get("creator")?.toLowerCase();
    const labels = (ctx.query.get("labels") ?? "").split(",").map((l) => l.trim().toLowerCase()).filter(Boolean);
    const field = ctx.query.get("sort") ?? "created";
    const dir = ctx.query.get("direction") === "asc" ? 1 : -1;
    const value = (i: IssueState) => (field === "updated" ? Date.parse(i.updatedAt) : field === "comments" ? r.comments.filter((c) => c.issueNumber === i.number).length : Date.parse(i.createdAt));
    const list = [...r.issues.values()]
      .filter((i) => (state === "all" || i.state === state) && (!creator || i.user.toLowerCase() === creator) && labels.every((l) => i.labels.map((x) => x.toLowerCase()).includes(l)))
      .sort((a, b) => (value(a) - value(b) || a.number - b.number) * dir);
    return paginate(list.map((i) => renderIssue(r, i)), ctx);
  });

  // ---------------------------------------------------------------- server
  const server = await startLoopbackServer(
    async ({ req, res, method, path, query, body, record }) => {
      // Blobs of a store nobody else serves (standalone GitHub fake).
      if (path.startsWith(BLOB_PATH_PREFIX) && store.blobBaseUrl === api) {
        return handleBlobRequest(store, { req, res, method, path, query, rawBody: record.rawBody });
      }
      const common = {
        "x-github-request-id": `FAKE:${record.seq}`,
        "x-github-media-type": "github.v3; format=json",
        "x-ratelimit-limit": "5000",
        "x-ratelimit-remaining": "4999",
        "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
        "x-ratelimit-resource": "core",
      };
      const wantsHtml = opts.renderBodyHtml && /application\/vnd\.github(\.v3)?\.(full|html)\+json/.test(req.headers.accept ?? "");
      const withHtml = (b: unknown): unknown =>
        Array.isArray(b) ? b.map(withHtml) : typeof b === "object" && b !== null && typeof (b as { body?: unknown }).body === "string" ? { ...b, body_html: opts.renderBodyHtml!((b as { body: string }).body) } : b;
      const send = (result: Result) => {
        if (result.status === 204 || result.status === 302 || result.body === undefined) {
          res.writeHead(result.status, { ...common, "content-length": "0", ...result.headers });
          res.end();
        } else {
          sendJson(res, result.status, wantsHtml ? withHtml(result.body) : result.body, { ...common, ...result.headers });
        }
        return result.status;
      };
      // Authentication first, as GitHub does.
      const m = /^(?:token|bearer)\s+(\S+)$/i.exec(req.headers.authorization ?? "");
      if (!m) return send({ status: 401, body: { message: "Requires authentication", documentation_url: DOCS, status: "401" } });
      const tok = tokens.get(m[1]!);
      if (!tok) return send({ status: 401, body: { message: "Bad credentials", documentation_url: DOCS, status: "401" } });
      const webAnswer = opts.webRoutes?.({ method, path, query });
      if (webAnswer) return send(webAnswer);
      for (const route of routes) {
        if (route.method !== method) continue;
        const match = route.re.exec(path);
        if (!match) continue;
        const ctx: Ctx = {
          method,
          path,
          query,
          body: (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>,
          params: { ...match.groups },
          token: tok,
          res,
        };
        try {
          return send(await route.handler(ctx));
        } catch (e) {
          if (e instanceof HttpError) return send({ status: e.status, body: e.body, headers: e.headers });
          throw e;
        }
      }
      unhandled.push(record);
      return send({ status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } });
    },
    { onError: (e) => errors.push(e) },
  );
  api = server.url;
  web = `http://github.localhost:${server.port}`;
  if (!store.blobBaseUrl) store.blobBaseUrl = api;

  const matching = (route: string) => {
    const { method, pattern } = parseRoute(route);
    return (r: RecordedRequest) => (method === "*" || r.method === method) && pattern.test(r.path);
  };

  function seedEvent(event: { payload: Record<string, unknown>; pull?: PullHint } | Record<string, unknown>): void {
    const wrapped = "payload" in event && typeof event["payload"] === "object" ? (event as { payload: Record<string, unknown>; pull?: PullHint }) : { payload: event as Record<string, unknown> };
    // Event payloads are loosely typed JSON; read them as such.
    const p = wrapped.payload as Record<string, any>;
    const hint = wrapped.pull ?? {};
    const repoFull: string | undefined = p["repository"]?.full_name;
    if (!repoFull) return;
    const r = addRepo({
      fullName: repoFull,
      ...(p["repository"].default_branch ? { defaultBranch: p["repository"].default_branch } : {}),
      ...(p["repository"].private !== undefined ? { private: p["repository"].private } : {}),
      ...(p["repository"].id ? { id: p["repository"].id } : {}),
      ...(p["repository"].owner?.type ? { ownerType: p["repository"].owner.type } : {}),
    });
    if (p["sender"]?.login) user(p["sender"].login, p["sender"].type);
    const pr = p["pull_request"];
    if (pr && !r.pulls.has(pr.number)) {
      const headRepo: string = pr.head?.repo?.full_name ?? r.fullName;
      if (headRepo.toLowerCase() !== r.fullName.toLowerCase()) {
        addRepo({ fullName: headRepo, fork: true, parent: r.fullName, ownerType: pr.head?.repo?.owner?.type ?? "User", ...(pr.head?.repo?.id ? { id: pr.head.repo.id } : {}) });
      }
      const pull = addPull({
        repo: r.fullName,
        number: pr.number,
        ...(pr.id ? { id: pr.id } : {}),
        title: pr.title,
        body: pr.body ?? null,
        user: pr.user?.login ?? "octocat",
        ...(pr.user?.type ? { userType: pr.user.type } : {}),
        head: { ref: pr.head.ref, sha: pr.head.sha, repo: headRepo },
        base: { ref: pr.base?.ref ?? r.defaultBranch, ...(pr.base?.sha ? { sha: pr.base.sha } : {}) },
        draft: !!pr.draft,
        state: pr.state === "closed" ? "closed" : "open",
        labels: (pr.labels ?? []).map((l: { name: string }) => l.name),
        ...(hint.files ? { files: hint.files } : {}),
      });
      if (pr.maintainer_can_modify !== undefined) pull.maintainerCanModify = !!pr.maintainer_can_modify;
    }
    const issue = p["issue"];
    if (issue && !r.issues.has(issue.number)) {
      if (issue.pull_request) {
        const headRepo = hint.headRepo ?? r.fullName;
        addPull({
          repo: r.fullName,
          number: issue.number,
          title: issue.title,
          body: issue.body ?? null,
          user: issue.user?.login ?? "octocat",
          ...(issue.user?.type ? { userType: issue.user.type } : {}),
          head: { ref: hint.headRef ?? `pr-${issue.number}`, repo: headRepo, ...(hint.headSha ? { sha: hint.headSha } : {}) },
          base: { ref: hint.baseRef ?? r.defaultBranch, ...(hint.baseSha ? { sha: hint.baseSha } : {}) },
          state: issue.state === "closed" ? "closed" : "open",
          labels: (issue.labels ?? []).map((l: { name: string }) => l.name),
          ...(hint.files ? { files: hint.files } : {}),
        });
        r.issues.get(issue.number)!.id = issue.id ?? r.issues.get(issue.number)!.id;
      } else {
        addIssue({
          repo: r.fullName,
          number: issue.number,
          ...(issue.id ? { id: issue.id } : {}),
          title: issue.title,
          body: issue.body ?? null,
          user: issue.user?.login ?? "octocat",
          ...(issue.user?.type ? { userType: issue.user.type } : {}),
          labels: (issue.labels ?? []).map((l: { name: string }) => l.name),
          assignees: (issue.assignees ?? []).map((a: { login: string }) => a.login),
          state: issue.state === "closed" ? "closed" : "open",
        });
      }
    }
    const comment = p["comment"];
    if (comment?.id) {
      if (pr && comment.path !== undefined) {
        if (!r.reviewComments.some((c) => c.id === comment.id)) {
          addReviewComment({
            repo: r.fullName,
            pull: pr.number,
            id: comment.id,
            body: comment.body ?? "",
            user: comment.user?.login ?? "octocat",
            ...(comment.user?.type ? { userType: comment.user.type } : {}),
            path: comment.path,
            diffHunk: comment.diff_hunk ?? "@@ -1 +1 @@",
            ...(typeof comment.line === "number" ? { line: comment.line } : {}),
            ...(comment.commit_id ? { commitId: comment.commit_id } : {}),
            ...(comment.pull_request_review_id ? { reviewId: comment.pull_request_review_id } : {}),
          });
        }
      } else if (issue && !r.comments.some((c) => c.id === comment.id)) {
        addComment({
          repo: r.fullName,
          issue: issue.number,
          id: comment.id,
          body: comment.body ?? "",
          user: comment.user?.login ?? "octocat",
          ...(comment.user?.type ? { userType: comment.user.type } : {}),
          ...(comment.created_at ? { createdAt: comment.created_at } : {}),
        });
      }
    }
    const review = p["review"];
    if (review?.id && pr && !r.reviews.some((v) => v.id === review.id)) {
      user(review.user?.login ?? "octocat", review.user?.type);
      r.reviews.push({
        repo: r.fullName,
        id: review.id,
        pullNumber: pr.number,
        body: review.body ?? "",
        user: review.user?.login ?? "octocat",
        state: String(review.state ?? "commented").toUpperCase() as ReviewState["state"],
        commitId: review.commit_id ?? pr.head.sha,
        submittedAt: review.submitted_at ?? ts(),
      });
    }
  }

  const gh: FakeGitHub = {
    url: api,
    serverUrl: web,
    token,
    requests: server.requests,
    unhandled,
    errors,
    repos,
    users,
    artifactStore: store,
    requestsTo: (route) => server.requests.filter(matching(route)),
    writes: (route) => server.requests.filter((r) => r.method !== "GET" && r.method !== "HEAD" && (!route || matching(route)(r))),
    clearRequests: () => {
      server.requests.length = 0;
      unhandled.length = 0;
    },
    failNext: (route, o) => server.faults.add(route, o),
    repo,
    async setPolicy(policy, repoName) {
      const r = repo(repoName);
      r.policy = { ...r.policy, ...policy };
      if (r.gitDir) await writePolicyHook(r.gitDir, r.policy, `${web}/${r.fullName}/rules`);
    },
    addWorkflowRun: (seed) => {
      workflowRuns.push({
        id: seed.id,
        path: seed.path,
        repo: seed.repo ?? defaultRepo.fullName,
        name: seed.name ?? "agent",
        event: seed.event ?? "issue_comment",
        conclusion: seed.conclusion ?? "success",
        headBranch: seed.headBranch ?? "main",
        createdAt: seed.createdAt ?? ts(),
        headRepo: seed.headRepo ?? "",
      });
    },
    addRepo,
    user,
    setPermission: (login, permission, repoName) => {
      repo(repoName).collaborators.set(login.toLowerCase(), { login, permission });
      user(login);
    },
    addIssue: (seed) => addIssue(seed),
    addPull,
    addComment,
    addReviewComment,
    seedEvent,
    issueComments: (n, repoName) => repo(repoName).comments.filter((c) => n === undefined || c.issueNumber === n),
    reactions: (f = {}) =>
      repo(f.repo).reactions.filter((x) => (!f.subject || x.subject === f.subject) && (f.subjectId === undefined || x.subjectId === f.subjectId)),
    pulls: (repoName) => [...repo(repoName).pulls.values()],
    reviews: (n, repoName) => repo(repoName).reviews.filter((v) => n === undefined || v.pullNumber === n),
    reviewComments: (n, repoName) => repo(repoName).reviewComments.filter((c) => n === undefined || c.pullNumber === n),
    artifacts: (f = {}) =>
      store.list({ repository: f.repo ?? defaultRepo.fullName, ...(f.runId !== undefined ? { runId: f.runId } : {}), ...(f.name ? { name: f.name } : {}) }),
    close: () => server.close(),
  };
  return gh;
}
