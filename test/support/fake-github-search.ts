/**
 * `GET /search/issues` for the fake GitHub: GitHub's issue search qualifiers
 * that fan-out queries use, evaluated over the fake's repositories.
 *
 * Supported: `is:issue|pr|pull-request|open|closed|draft`, `type:issue|pr`,
 * `state:open|closed`, `label:x` / `label:"x y"` (each one must match),
 * `-label:x`, `no:label`, `no:assignee`, `repo:o/r` (any of them), `org:` /
 * `user:` / `owner:`, each negated (`-repo:o/r`: not that one), `author:`, `assignee:`, `sort:<field>-<asc|desc>`, and
 * free words (all must appear in the title or body, case-insensitive).
 * Without a sort the fake's "best match" is newest first. Like GitHub:
 * `q` is required (422), at most 100 per page, only the first 1,000 results.
 *
 * The response's shape is checked at compile time against GitHub's OpenAPI
 * description (@octokit/openapi-types, generated from it): see
 * `SearchIssuesResponse` where fake-github.ts renders it.
 */
import type { components, operations } from "@octokit/openapi-types";
import type { IssueState, RepoState } from "./fake-github.js";

export type SearchIssuesResponse = operations["search/issues-and-pull-requests"]["responses"][200]["content"]["application/json"];
export type SearchIssueItem = components["schemas"]["issue-search-result-item"];
export type SimpleUser = components["schemas"]["simple-user"];

export interface SearchQuery {
  kinds?: "issue" | "pr";
  state?: "open" | "closed";
  draft?: boolean;
  labels: string[];
  notLabels: string[];
  noLabel: boolean;
  noAssignee: boolean;
  repos: string[];
  owners: string[];
  notRepos: string[];
  notOwners: string[];
  author?: string;
  assignee?: string;
  words: string[];
  sort?: { field: "created" | "updated" | "comments"; order: "asc" | "desc" };
}

/** Words, `key:value` and `key:"quoted value"`, `-key:value`, `"quoted words"`. */
function tokens(q: string): string[] {
  return [...q.matchAll(/-?[\w-]+:"[^"]*"|"[^"]*"|\S+/g)].map((m) => m[0]);
}

export function parseSearchQuery(q: string): SearchQuery {
  const out: SearchQuery = { labels: [], notLabels: [], noLabel: false, noAssignee: false, repos: [], owners: [], notRepos: [], notOwners: [], words: [] };
  for (const t of tokens(q)) {
    const m = /^(-?)([\w-]+):(?:"([^"]*)"|(.+))$/.exec(t);
    if (!m) {
      out.words.push(t.replace(/^"|"$/g, "").toLowerCase());
      continue;
    }
    const neg = m[1] === "-";
    const key = m[2]!.toLowerCase();
    const value = m[3] ?? m[4]!;
    const v = value.toLowerCase();
    if ((key === "is" || key === "type") && (v === "issue" || v === "pr" || v === "pull-request")) out.kinds = v === "issue" ? "issue" : "pr";
    else if ((key === "is" || key === "state") && (v === "open" || v === "closed")) out.state = v;
    else if (key === "is" && v === "draft") out.draft = true;
    else if (key === "label") (neg ? out.notLabels : out.labels).push(v);
    else if (key === "no" && v === "label") out.noLabel = true;
    else if (key === "no" && v === "assignee") out.noAssignee = true;
    else if (key === "repo") (neg ? out.notRepos : out.repos).push(v);
    else if (key === "org" || key === "user" || key === "owner") (neg ? out.notOwners : out.owners).push(v);
    else if (key === "author") out.author = v;
    else if (key === "assignee") out.assignee = v;
    else if (key === "sort") {
      const s = /^(created|updated|comments)(?:-(asc|desc))?$/.exec(v);
      if (s) out.sort = { field: s[1] as "created" | "updated" | "comments", order: (s[2] as "asc" | "desc" | undefined) ?? "desc" };
    } else out.words.push(t.toLowerCase());
  }
  return out;
}

function matches(r: RepoState, i: IssueState, q: SearchQuery): boolean {
  if (q.kinds === "issue" && i.isPull) return false;
  if (q.kinds === "pr" && !i.isPull) return false;
  if (q.state && i.state !== q.state) return false;
  if (q.draft && !(i.isPull && r.pulls.get(i.number)?.draft)) return false;
  const labels = i.labels.map((l) => l.toLowerCase());
  if (q.labels.some((l) => !labels.includes(l))) return false;
  if (q.notLabels.some((l) => labels.includes(l))) return false;
  if (q.noLabel && labels.length) return false;
  if (q.noAssignee && i.assignees.length) return false;
  if (q.repos.length && !q.repos.includes(r.fullName.toLowerCase())) return false;
  if (q.owners.length && !q.owners.includes(r.owner.toLowerCase())) return false;
  if (q.notRepos.includes(r.fullName.toLowerCase()) || q.notOwners.includes(r.owner.toLowerCase())) return false;
  if (q.author && i.user.toLowerCase() !== q.author) return false;
  if (q.assignee && !i.assignees.some((a) => a.toLowerCase() === q.assignee)) return false;
  const text = `${i.title}\n${i.body ?? ""}`.toLowerCase();
  return q.words.every((w) => text.includes(w));
}

export interface SearchHit {
  repo: RepoState;
  issue: IssueState;
  comments: number;
}

/** Every issue and pull request matching `q`, in the order GitHub's `sort`/`order` (or the query's `sort:`) asks. */
export function searchIssues(repos: Iterable<RepoState>, q: string, params: { sort?: string | null; order?: string | null }): SearchHit[] {
  const query = parseSearchQuery(q);
  const hits: SearchHit[] = [];
  for (const r of repos)
    for (const i of r.issues.values()) if (matches(r, i, query)) hits.push({ repo: r, issue: i, comments: r.comments.filter((c) => c.issueNumber === i.number).length });
  const field = (params.sort as "created" | "updated" | "comments" | undefined) ?? query.sort?.field;
  const order = (params.order === "asc" || params.order === "desc" ? params.order : undefined) ?? query.sort?.order ?? "desc";
  const value = (h: SearchHit): number =>
    field === "comments" ? h.comments : Date.parse(field === "updated" ? h.issue.updatedAt : h.issue.createdAt);
  // Best match (no sort) is the fake's newest first; ties by number.
  hits.sort((a, b) => (value(a) - value(b) || a.issue.number - b.issue.number) * (order === "asc" ? 1 : -1));
  return hits;
}
