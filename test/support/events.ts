/**
 * GitHub event payload fixtures (test/support/events/*.json) and a small
 * builder to tweak them.
 *
 * Fixtures share one world: repo `octo-org/octo-repo` (public, default branch
 * `main`), maintainer `alice` (id 1001), outside contributor `mallory` (id 1002,
 * owns the fork `mallory/octo-repo`), issue #7, same-repo PR #12
 * (`feature/greeting`), fork PR #13 (`mallory:patch-1`), issues #21–23.
 *
 *   const ev = buildEvent("issue_comment.pr-fork", { body: "@agent fix it", author: "bob" });
 *   gh.seedEvent(ev);                         // the fake GitHub now serves issue/PR/comment
 *   const { env } = await writeEvent(tmp, ev); // GITHUB_EVENT_NAME / GITHUB_EVENT_PATH / …
 *
 * An issue_comment on a PR carries only `issue.pull_request` (no head info):
 * `ev.pull` holds the head repo/ref/sha the fake GitHub should serve from
 * `GET /pulls/{n}`, as the real API would.
 */
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { PullHint } from "./fake-github.js";

export const EVENT_FIXTURES = {
  "issue_comment.issue": "issue_comment",
  "issue_comment.pr": "issue_comment",
  "issue_comment.pr-fork": "issue_comment",
  pull_request_review_comment: "pull_request_review_comment",
  pull_request_review: "pull_request_review",
  "issues.opened": "issues",
  "issues.labeled": "issues",
  "issues.assigned": "issues",
  "pull_request.opened": "pull_request",
  "pull_request.opened-fork": "pull_request",
  workflow_dispatch: "workflow_dispatch",
  schedule: "schedule",
  repository_dispatch: "repository_dispatch",
} as const;

export type EventFixture = keyof typeof EVENT_FIXTURES;
export type EventName = (typeof EVENT_FIXTURES)[EventFixture];

/** Loosely typed JSON payload (as @actions/github's context.payload is). */
export type Payload = Record<string, any>;

export interface BuiltEvent {
  fixture: EventFixture;
  /** GITHUB_EVENT_NAME. */
  eventName: EventName;
  payload: Payload;
  /** For PR events whose payload lacks head info (issue_comment on a PR). */
  pull?: PullHint;
}

export const FIXTURE_REPO = "octo-org/octo-repo";
export const FORK_REPO = "mallory/octo-repo";
export const SAME_REPO_HEAD = { ref: "feature/greeting", sha: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678" };
export const FORK_HEAD = { ref: "patch-1", sha: "f0e1d2c3b4a5968778695a4b3c2d1e0f98765432" };
export const BASE_SHA = "0123456789abcdef0123456789abcdef01234567";

const PULL_HINTS: Partial<Record<EventFixture, PullHint>> = {
  "issue_comment.pr": { headRepo: FIXTURE_REPO, headRef: SAME_REPO_HEAD.ref, headSha: SAME_REPO_HEAD.sha, baseRef: "main", baseSha: BASE_SHA },
  "issue_comment.pr-fork": { headRepo: FORK_REPO, headRef: FORK_HEAD.ref, headSha: FORK_HEAD.sha, baseRef: "main", baseSha: BASE_SHA },
};

const KNOWN_IDS: Record<string, number> = { alice: 1001, mallory: 1002, "agent-runner-bot": 1003, "github-actions[bot]": 41898282, "dependabot[bot]": 49699333 };

/** A webhook-shaped user object. */
export function eventUser(login: string, type: "User" | "Bot" | "Organization" = login.endsWith("[bot]") ? "Bot" : "User", id?: number): Payload {
  const uid = id ?? KNOWN_IDS[login] ?? 2000 + [...login].reduce((n, c) => (n * 31 + c.charCodeAt(0)) % 100000, 7);
  return {
    login,
    id: uid,
    node_id: Buffer.from(`${type === "Bot" ? "BOT_" : "U_"}${uid}`).toString("base64").replace(/=+$/, ""),
    avatar_url: `https://avatars.githubusercontent.com/u/${uid}?v=4`,
    gravatar_id: "",
    url: `https://api.github.com/users/${login}`,
    html_url: type === "Bot" ? `https://github.com/apps/${login.replace(/\[bot\]$/, "")}` : `https://github.com/${login}`,
    type,
    user_view_type: "public",
    site_admin: false,
  };
}

/** A deep copy of a fixture as stored. */
export function loadEvent(fixture: EventFixture): BuiltEvent {
  const url = new URL(`./events/${fixture}.json`, import.meta.url);
  const payload = JSON.parse(readFileSync(url, "utf8")) as Payload;
  const pull = PULL_HINTS[fixture];
  return { fixture, eventName: EVENT_FIXTURES[fixture], payload, ...(pull ? { pull: { ...pull } } : {}) };
}

export interface EventTweaks {
  /** The text that triggers: comment body (comment events), review body, or issue/PR body (issues, pull_request). */
  body?: string;
  /** Issue / PR title. */
  title?: string;
  /** Login of who triggered: comment/review author, issue/PR author for issues/pull_request; `sender` follows. */
  author?: string;
  authorType?: "User" | "Bot";
  /** author_association of the triggering comment/review/issue/PR (e.g. NONE, CONTRIBUTOR, MEMBER, OWNER). */
  authorAssociation?: string;
  /** Rename the repository (`owner/name`) everywhere in the payload. */
  repo?: string;
  /** PR head repository (`owner/name`): a fork when it differs from the repo. */
  headRepo?: string;
  headRef?: string;
  headSha?: string;
  baseRef?: string;
  /** Issue / PR number. */
  number?: number;
  action?: string;
  /** Label name for issues.labeled. */
  label?: string;
  /** Assignee login for issues.assigned. */
  assignee?: string;
  /** workflow_dispatch inputs (replace). */
  inputs?: Record<string, string | boolean | number>;
  /** repository_dispatch client_payload (replace) and event type (`action`). */
  clientPayload?: Record<string, unknown>;
  eventType?: string;
  /** schedule cron. */
  schedule?: string;
  /** Private repository. */
  private?: boolean;
  /** Last word: mutate the payload directly. */
  mutate?: (payload: Payload, event: BuiltEvent) => void;
}

/** Load a fixture and apply tweaks. */
export function buildEvent(fixture: EventFixture, t: EventTweaks = {}): BuiltEvent {
  let ev = loadEvent(fixture);
  if (t.repo && t.repo.toLowerCase() !== FIXTURE_REPO) ev = renameRepo(ev, t.repo);
  if (t.number !== undefined) ev = renumber(ev, t.number);
  const p = ev.payload;
  const name = ev.eventName;

  // The object whose author/body triggers.
  const trigger: Payload | undefined =
    name === "issue_comment" || name === "pull_request_review_comment"
      ? p["comment"]
      : name === "pull_request_review"
        ? p["review"]
        : name === "issues"
          ? p["issue"]
          : name === "pull_request"
            ? p["pull_request"]
            : undefined;

  if (t.body !== undefined && trigger) trigger["body"] = t.body;
  if (t.title !== undefined) {
    for (const o of [p["issue"], p["pull_request"]]) if (o) o["title"] = t.title;
  }
  if (t.author !== undefined || t.authorType !== undefined) {
    const login = t.author ?? (trigger?.["user"]?.login as string | undefined) ?? p["sender"]?.login ?? "alice";
    const u = eventUser(login, t.authorType ?? (login.endsWith("[bot]") ? "Bot" : "User"));
    if (trigger) trigger["user"] = u;
    if (p["sender"] || name !== "schedule") p["sender"] = u;
    // The author of an issues/pull_request event also authored the issue/PR object.
    if ((name === "issues" || name === "pull_request") && p["issue"]) p["issue"]["user"] = u;
  }
  if (t.authorAssociation !== undefined && trigger) trigger["author_association"] = t.authorAssociation;
  if (t.action !== undefined) p["action"] = t.action;
  if (t.private !== undefined) {
    p["repository"]["private"] = t.private;
    p["repository"]["visibility"] = t.private ? "private" : "public";
  }
  if (t.label !== undefined) {
    const label = { ...(p["label"] ?? {}), name: t.label, url: `${p["repository"]["url"]}/labels/${encodeURIComponent(t.label)}` };
    p["label"] = label;
    if (p["issue"]) p["issue"]["labels"] = [label];
  }
  if (t.assignee !== undefined) {
    const u = eventUser(t.assignee);
    p["assignee"] = u;
    if (p["issue"]) {
      p["issue"]["assignee"] = u;
      p["issue"]["assignees"] = [u];
    }
  }
  if (t.inputs !== undefined) p["inputs"] = t.inputs;
  if (t.clientPayload !== undefined) p["client_payload"] = t.clientPayload;
  if (t.eventType !== undefined && name === "repository_dispatch") p["action"] = t.eventType;
  if (t.schedule !== undefined) p["schedule"] = t.schedule;

  if (t.headRepo !== undefined || t.headRef !== undefined || t.headSha !== undefined || t.baseRef !== undefined) {
    const pr = p["pull_request"];
    if (pr) {
      if (t.headRepo !== undefined) {
        const [owner, repoName] = t.headRepo.split("/") as [string, string];
        const same = t.headRepo.toLowerCase() === String(p["repository"]["full_name"]).toLowerCase();
        const base = p["repository"];
        const headRepo = same
          ? base
          : {
              ...base,
              id: base.id + 1000,
              node_id: Buffer.from(`R_${base.id + 1000}`).toString("base64").replace(/=+$/, ""),
              name: repoName,
              full_name: t.headRepo,
              owner: eventUser(owner),
              fork: true,
              html_url: `https://github.com/${t.headRepo}`,
              url: `https://api.github.com/repos/${t.headRepo}`,
              clone_url: `https://github.com/${t.headRepo}.git`,
            };
        pr.head.repo = headRepo;
        pr.head.user = headRepo.owner;
        pr.maintainer_can_modify = !same;
      }
      if (t.headRef !== undefined) pr.head.ref = t.headRef;
      if (t.headSha !== undefined) pr.head.sha = t.headSha;
      if (t.baseRef !== undefined) {
        pr.base.ref = t.baseRef;
        pr.base.label = `${p["repository"]["owner"]["login"]}:${t.baseRef}`;
      }
      pr.head.label = `${pr.head.repo.owner.login}:${pr.head.ref}`;
    }
    if (ev.pull || (p["issue"]?.pull_request && !pr)) {
      ev.pull = {
        ...(ev.pull ?? {}),
        ...(t.headRepo !== undefined ? { headRepo: t.headRepo } : {}),
        ...(t.headRef !== undefined ? { headRef: t.headRef } : {}),
        ...(t.headSha !== undefined ? { headSha: t.headSha } : {}),
        ...(t.baseRef !== undefined ? { baseRef: t.baseRef } : {}),
      };
    }
  }
  t.mutate?.(p, ev);
  return ev;
}

function renameRepo(ev: BuiltEvent, full: string): BuiltEvent {
  const [owner, name] = full.split("/") as [string, string];
  // Replace the full name first (URLs, full_name), then the owner login and repo name tokens.
  let text = JSON.stringify(ev.payload).split(FIXTURE_REPO).join(full);
  text = text.replace(/(["/])octo-org(?=["/:])/g, `$1${owner}`).replace(/(["/])octo-repo(?=["/.])/g, `$1${name}`);
  const payload = JSON.parse(text) as Payload;
  const pull = ev.pull
    ? { ...ev.pull, ...(ev.pull.headRepo ? { headRepo: ev.pull.headRepo.toLowerCase() === FIXTURE_REPO ? full : ev.pull.headRepo.replace(/\/octo-repo$/, `/${name}`) } : {}) }
    : undefined;
  return { ...ev, payload, ...(pull ? { pull } : {}) };
}

function renumber(ev: BuiltEvent, n: number): BuiltEvent {
  const p = ev.payload;
  const old = (p["issue"]?.number ?? p["pull_request"]?.number) as number | undefined;
  if (old === undefined) return ev;
  const text = JSON.stringify(p).replace(new RegExp(`/(issues|pull|pulls)/${old}(?=["/#.])`, "g"), `/$1/${n}`);
  const payload = JSON.parse(text) as Payload;
  if (payload["issue"]) payload["issue"]["number"] = n;
  if (payload["pull_request"]) payload["pull_request"]["number"] = n;
  if (typeof payload["number"] === "number") payload["number"] = n;
  return { ...ev, payload };
}

/**
 * Write the payload to `<dir>/event.json` and return the env the runner sets
 * for it (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_ACTOR,
 * GITHUB_REF, GITHUB_SHA, GITHUB_HEAD_REF/BASE_REF for pull_request events).
 */
export async function writeEvent(dir: string, ev: BuiltEvent, fileName = "event.json"): Promise<{ path: string; env: Record<string, string> }> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, fileName);
  await writeFile(path, JSON.stringify(ev.payload, null, 2));
  const p = ev.payload;
  const repo = String(p["repository"]?.full_name ?? FIXTURE_REPO);
  const actor = String(p["sender"]?.login ?? "github-actions[bot]");
  const pr = p["pull_request"];
  const isPrEvent = ev.eventName.startsWith("pull_request");
  const defaultBranch = String(p["repository"]?.default_branch ?? "main");
  const ref = isPrEvent && pr
    ? `refs/pull/${pr.number}/merge`
    : typeof p["ref"] === "string"
      ? p["ref"]
      : `refs/heads/${ev.eventName === "repository_dispatch" && p["branch"] ? p["branch"] : defaultBranch}`;
  const env: Record<string, string> = {
    GITHUB_EVENT_NAME: ev.eventName,
    GITHUB_EVENT_PATH: path,
    GITHUB_REPOSITORY: repo,
    GITHUB_REPOSITORY_OWNER: repo.split("/")[0]!,
    GITHUB_REPOSITORY_ID: String(p["repository"]?.id ?? 1),
    GITHUB_ACTOR: actor,
    GITHUB_TRIGGERING_ACTOR: actor,
    GITHUB_REF: ref,
    GITHUB_REF_NAME: isPrEvent && pr ? `${pr.number}/merge` : ref.replace(/^refs\/heads\//, ""),
    GITHUB_REF_TYPE: "branch",
    GITHUB_SHA: String(pr?.head?.sha ?? BASE_SHA),
    GITHUB_HEAD_REF: isPrEvent && pr ? String(pr.head.ref) : "",
    GITHUB_BASE_REF: isPrEvent && pr ? String(pr.base.ref) : "",
    GITHUB_WORKFLOW: "Agent",
    GITHUB_WORKFLOW_REF: `${repo}/${String(p["workflow"] ?? ".github/workflows/agent.yml")}@${ref}`,
    GITHUB_JOB: "agent",
  };
  return { path, env };
}
