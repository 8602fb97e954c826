/**
 * The GitHub REST calls Agent Runner makes, bound to one repository. Small
 * typed wrappers, so stages read as what they do and tests can see every
 * route in one place. Every body GitHub renders as Markdown is SafeMarkdown:
 * it went through the posting filter (publish/safe-markdown.ts).
 */
import type { SafeMarkdown } from "../shared/safe-markdown.js";
import type { PullRequestInfo, RepoRef } from "../shared/trigger.js";
import { isNotFound, type Octokit } from "./client.js";

export interface IssueComment {
  id: number;
  body: string;
  url: string;
  author?: string;
  authorType?: string;
}

export interface PullRequestRef {
  number: number;
  url: string;
}

export interface IssueRef {
  number: number;
  url: string;
  isPull: boolean;
  state: "open" | "closed";
}

/** `https://api.github.com/repos/owner/name` names `owner/name` (case-insensitive). */
function sameRepository(repositoryUrl: string | undefined, fullName: string): boolean {
  if (!repositoryUrl) return true;
  return repositoryUrl.toLowerCase().replace(/\/+$/, "").endsWith(`/repos/${fullName.toLowerCase()}`);
}

export interface GitTreeEntry {
  path: string;
  mode: "100644" | "100755" | "120000";
  /** null deletes the path. */
  sha: string | null;
}

export type ReactionTarget =
  | { kind: "issue_comment"; id: number }
  | { kind: "review_comment"; id: number }
  | { kind: "issue"; number: number };

export class GitHubApi {
  constructor(
    readonly octokit: Octokit,
    readonly repo: RepoRef,
  ) {}

  private get r() {
    return { owner: this.repo.owner, repo: this.repo.name };
  }

  async pullRequest(number: number): Promise<{ info: PullRequestInfo; title: string; body: string }> {
    const { data } = await this.octokit.rest.pulls.get({ ...this.r, pull_number: number });
    const headRepo = data.head.repo?.full_name;
    return {
      info: {
        number: data.number,
        headRef: data.head.ref,
        headSha: data.head.sha,
        ...(headRepo ? { headRepo } : {}),
        baseRef: data.base.ref,
        baseSha: data.base.sha,
        isFork: !headRepo || headRepo.toLowerCase() !== this.repo.fullName.toLowerCase(),
        url: data.html_url,
      },
      title: data.title,
      body: data.body ?? "",
    };
  }

  /** Up to `max` files of a pull request; `truncated` when there were more. */
  async pullRequestFiles(number: number, max = 300): Promise<{ files: { filename: string; status: string; additions: number; deletions: number }[]; truncated: boolean }> {
    const files: { filename: string; status: string; additions: number; deletions: number }[] = [];
    let truncated = false;
    for await (const page of this.octokit.paginate.iterator(this.octokit.rest.pulls.listFiles, { ...this.r, pull_number: number, per_page: 100 })) {
      for (const f of page.data) {
        if (files.length >= max) {
          truncated = true;
          break;
        }
        files.push({ filename: f.filename, status: f.status, additions: f.additions, deletions: f.deletions });
      }
      if (truncated) break;
    }
    return { files, truncated };
  }

  /** The collaborator permission (`admin`, `maintain`, `write`, `triage`, `read`, `none`); `none` for non-collaborators. */
  async permission(login: string): Promise<string> {
    try {
      const { data } = await this.octokit.rest.repos.getCollaboratorPermissionLevel({ ...this.r, username: login });
      // `permission` folds maintain into write and triage into read; role_name keeps them.
      const role = (data as { role_name?: string }).role_name;
      return role && ["admin", "maintain", "write", "triage", "read"].includes(role) ? role : data.permission;
    } catch (e) {
      if (isNotFound(e)) return "none";
      throw e;
    }
  }

  async defaultBranch(): Promise<string> {
    const { data } = await this.octokit.rest.repos.get(this.r);
    return data.default_branch;
  }

  async react(target: ReactionTarget, content: "eyes" | "rocket" | "confused" | "+1"): Promise<void> {
    if (target.kind === "issue_comment") await this.octokit.rest.reactions.createForIssueComment({ ...this.r, comment_id: target.id, content });
    else if (target.kind === "review_comment") await this.octokit.rest.reactions.createForPullRequestReviewComment({ ...this.r, comment_id: target.id, content });
    else await this.octokit.rest.reactions.createForIssue({ ...this.r, issue_number: target.number, content });
  }

  async issueComments(number: number): Promise<IssueComment[]> {
    const all = await this.octokit.paginate(this.octokit.rest.issues.listComments, { ...this.r, issue_number: number, per_page: 100 });
    return all.map((c) => ({
      id: c.id,
      body: c.body ?? "",
      url: c.html_url,
      ...(c.user?.login ? { author: c.user.login } : {}),
      ...(c.user?.type ? { authorType: c.user.type } : {}),
    }));
  }

  async createComment(number: number, body: SafeMarkdown): Promise<IssueComment> {
    const { data } = await this.octokit.rest.issues.createComment({ ...this.r, issue_number: number, body });
    return { id: data.id, body: data.body ?? "", url: data.html_url, ...(data.user?.login ? { author: data.user.login } : {}) };
  }

  async updateComment(id: number, body: SafeMarkdown): Promise<IssueComment> {
    const { data } = await this.octokit.rest.issues.updateComment({ ...this.r, comment_id: id, body });
    return { id: data.id, body: data.body ?? "", url: data.html_url, ...(data.user?.login ? { author: data.user.login } : {}) };
  }

  /** The login behind the token, when the token may ask (a PAT); undefined for app/workflow tokens. */
  async authenticatedLogin(): Promise<string | undefined> {
    try {
      const { data } = await this.octokit.rest.users.getAuthenticated();
      return data.login;
    } catch {
      return undefined;
    }
  }

  async openPullRequestFor(branch: string): Promise<PullRequestRef | undefined> {
    const { data } = await this.octokit.rest.pulls.list({ ...this.r, head: `${this.repo.owner}:${branch}`, state: "open", per_page: 10 });
    const pr = data.find((p) => p.head.ref === branch);
    return pr ? { number: pr.number, url: pr.html_url } : undefined;
  }

  async createPullRequest(p: { title: string; head: string; base: string; body: SafeMarkdown; draft: boolean }): Promise<PullRequestRef> {
    const { data } = await this.octokit.rest.pulls.create({ ...this.r, ...p });
    return { number: data.number, url: data.html_url };
  }

  // ------------------------------------------------------------------ Git Data API (commit-method: api)

  /** A blob from raw bytes; GitHub answers with git's own object id for them. */
  async createBlob(content: Buffer): Promise<string> {
    const { data } = await this.octokit.rest.git.createBlob({ ...this.r, content: content.toString("base64"), encoding: "base64" });
    return data.sha;
  }

  /** A tree on `baseTree` with `entries` replaced; an entry with `sha: null` deletes the path. */
  async createTree(baseTree: string, entries: GitTreeEntry[]): Promise<string> {
    const { data } = await this.octokit.rest.git.createTree({ ...this.r, base_tree: baseTree, tree: entries.map((e) => ({ path: e.path, mode: e.mode, type: "blob" as const, sha: e.sha })) });
    return data.sha;
  }

  /** No author, committer or signature: GitHub then writes and signs the commit as the token's identity. */
  async createCommit(p: { message: string; tree: string; parents: string[] }): Promise<{ sha: string; tree: string }> {
    const { data } = await this.octokit.rest.git.createCommit({ ...this.r, message: p.message, tree: p.tree, parents: p.parents });
    return { sha: data.sha, tree: data.tree.sha };
  }

  /** GitHub's verification of a commit, read back. */
  async commitVerification(sha: string): Promise<{ verified: boolean; reason: string }> {
    const { data } = await this.octokit.rest.git.getCommit({ ...this.r, commit_sha: sha });
    return { verified: data.verification.verified, reason: data.verification.reason };
  }

  async createBranch(branch: string, sha: string): Promise<void> {
    await this.octokit.rest.git.createRef({ ...this.r, ref: `refs/heads/${branch}`, sha });
  }

  /**
   * A ref that must not exist yet: GitHub creates it or answers 422, atomically, so of two callers
   * exactly one gets "created" (the approval lock, publish/approval/enact.ts).
   */
  async createRefOnce(ref: string, sha: string): Promise<"created" | "exists"> {
    try {
      await this.octokit.rest.git.createRef({ ...this.r, ref, sha });
      return "created";
    } catch (e) {
      const err = e as { status?: number; message?: string };
      if (err.status === 422 && /already exists/i.test(err.message ?? "")) return "exists";
      throw e;
    }
  }

  /** Moves a branch: `force: false` only fast-forwards (422 otherwise). */
  async updateBranch(branch: string, sha: string, force: boolean): Promise<void> {
    await this.octokit.rest.git.updateRef({ ...this.r, ref: `heads/${branch}`, sha, force });
  }

  // ------------------------------------------------------------------ workflow runs and artifacts (approval)

  /** An artifact of the repository: its name and the workflow run that uploaded it. */
  async artifact(id: number): Promise<{ id: number; name: string; runId?: number; expired: boolean }> {
    const { data } = await this.octokit.rest.actions.getArtifact({ ...this.r, artifact_id: id });
    return { id: data.id, name: data.name, ...(data.workflow_run?.id != null ? { runId: data.workflow_run.id } : {}), expired: data.expired };
  }

  /** A workflow run of the repository: its workflow file, and where it and its head live. */
  async workflowRun(id: number): Promise<{ id: number; path: string; repository: string; headRepository?: string }> {
    const { data } = await this.octokit.rest.actions.getWorkflowRun({ ...this.r, run_id: id });
    return { id: data.id, path: data.path, repository: data.repository.full_name, ...(data.head_repository?.full_name ? { headRepository: data.head_repository.full_name } : {}) };
  }

  // ------------------------------------------------------------------ any ref (the budget ledger)

  /** The commit a fully qualified ref (`refs/…`) points at; undefined when it does not exist. */
  async refHead(ref: string): Promise<string | undefined> {
    try {
      const { data } = await this.octokit.rest.git.getRef({ ...this.r, ref: ref.replace(/^refs\//, "") });
      return data.object.sha;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** A tree from entries alone (no base tree). */
  async createRootTree(entries: GitTreeEntry[]): Promise<string> {
    const { data } = await this.octokit.rest.git.createTree({ ...this.r, tree: entries.map((e) => ({ path: e.path, mode: e.mode, type: "blob" as const, sha: e.sha })) });
    return data.sha;
  }

  /** Creates a fully qualified ref; 422 when it exists. */
  async createRef(ref: string, sha: string): Promise<void> {
    await this.octokit.rest.git.createRef({ ...this.r, ref, sha });
  }

  /** Moves a fully qualified ref, fast-forward only: GitHub answers 422 when `sha` does not descend from its head. */
  async fastForwardRef(ref: string, sha: string): Promise<void> {
    await this.octokit.rest.git.updateRef({ ...this.r, ref: ref.replace(/^refs\//, ""), sha, force: false });
  }

  /** One page of the commits reachable from `sha`, newest first (the REST commits list). */
  async commitsFrom(sha: string, page: number, perPage: number): Promise<{ sha: string; parents: string[]; tree: string; message: string; author?: string; verified: boolean; time: string }[]> {
    const { data } = await this.octokit.rest.repos.listCommits({ ...this.r, sha, page, per_page: perPage });
    return data.map((c) => ({
      sha: c.sha,
      parents: c.parents.map((p) => p.sha),
      tree: c.commit.tree.sha,
      message: c.commit.message,
      ...(c.author && "login" in c.author && c.author.login ? { author: c.author.login } : {}),
      verified: c.commit.verification?.verified === true,
      time: c.commit.committer?.date ?? c.commit.author?.date ?? "",
    }));
  }

  // ------------------------------------------------------------------ safe outputs (publish side only)

  /** An issue or pull request of this repository; undefined when there is none (404, 410) or GitHub moved it elsewhere. */
  async issue(number: number): Promise<IssueRef | undefined> {
    try {
      const { data } = await this.octokit.rest.issues.get({ ...this.r, issue_number: number });
      // A transferred issue answers from its new repository: that one is not ours to write.
      if (data.number !== number || !sameRepository(data.repository_url, this.repo.fullName)) return undefined;
      return { number: data.number, url: data.html_url, isPull: Boolean(data.pull_request), state: data.state === "closed" ? "closed" : "open" };
    } catch (e) {
      if (isNotFound(e) || (e as { status?: number }).status === 410) return undefined;
      throw e;
    }
  }

  async createIssue(p: { title: string; body: SafeMarkdown; labels: string[] }): Promise<IssueRef> {
    const { data } = await this.octokit.rest.issues.create({ ...this.r, title: p.title, body: p.body, ...(p.labels.length ? { labels: p.labels } : {}) });
    return { number: data.number, url: data.html_url, isPull: false, state: "open" };
  }

  async updateIssue(number: number, p: { title?: string; body?: SafeMarkdown; state?: "open" | "closed" }): Promise<IssueRef> {
    const { data } = await this.octokit.rest.issues.update({ ...this.r, issue_number: number, ...p });
    return { number: data.number, url: data.html_url, isPull: Boolean(data.pull_request), state: data.state === "closed" ? "closed" : "open" };
  }

  async addLabels(number: number, labels: string[]): Promise<void> {
    await this.octokit.rest.issues.addLabels({ ...this.r, issue_number: number, labels });
  }

  /** False when the issue does not carry the label (GitHub answers 404). */
  async removeLabel(number: number, name: string): Promise<boolean> {
    try {
      await this.octokit.rest.issues.removeLabel({ ...this.r, issue_number: number, name });
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /** Up to `max` files of a pull request with their diff hunks (`patch` is absent for binary or very large files). */
  async pullRequestPatches(number: number, max = 3000): Promise<{ files: { filename: string; patch?: string }[]; truncated: boolean }> {
    const files: { filename: string; patch?: string }[] = [];
    for await (const page of this.octokit.paginate.iterator(this.octokit.rest.pulls.listFiles, { ...this.r, pull_number: number, per_page: 100 })) {
      for (const f of page.data) {
        if (files.length >= max) return { files, truncated: true };
        files.push({ filename: f.filename, ...(f.patch !== undefined ? { patch: f.patch } : {}) });
      }
    }
    return { files, truncated: false };
  }

  async createReview(
    number: number,
    p: { commitId: string; body: SafeMarkdown; event: "COMMENT" | "REQUEST_CHANGES"; comments: { path: string; line: number; side: "LEFT" | "RIGHT"; start_line?: number; start_side?: "LEFT" | "RIGHT"; body: SafeMarkdown }[] },
  ): Promise<{ id: number; url: string }> {
    const { data } = await this.octokit.rest.pulls.createReview({ ...this.r, pull_number: number, commit_id: p.commitId, body: p.body, event: p.event, comments: p.comments });
    return { id: data.id, url: data.html_url };
  }

  /** A pull request's reviews: body, author and the commit each was made on (task: review finds its last one). */
  async pullRequestReviews(number: number): Promise<{ id: number; body: string; author?: string; authorType?: string; commitId?: string }[]> {
    const all = await this.octokit.paginate(this.octokit.rest.pulls.listReviews, { ...this.r, pull_number: number, per_page: 100 });
    return all.map((v) => ({
      id: v.id,
      body: v.body ?? "",
      ...(v.user?.login ? { author: v.user.login } : {}),
      ...(v.user?.type ? { authorType: v.user.type } : {}),
      ...(v.commit_id ? { commitId: v.commit_id } : {}),
    }));
  }

  /** A pull request's inline review comments: where each sits and what it says (task: review does not repeat them). */
  async pullRequestReviewComments(number: number): Promise<{ path: string; line: number | null; body: string; author?: string }[]> {
    const all = await this.octokit.paginate(this.octokit.rest.pulls.listReviewComments, { ...this.r, pull_number: number, per_page: 100 });
    return all.map((c) => ({ path: c.path, line: c.line ?? null, body: c.body, ...(c.user?.login ? { author: c.user.login } : {}) }));
  }

  async updatePullRequest(number: number, p: { title: string; body: SafeMarkdown }): Promise<PullRequestRef> {
    const { data } = await this.octokit.rest.pulls.update({ ...this.r, pull_number: number, ...p });
    return { number: data.number, url: data.html_url };
  }

  // ------------------------------------------------------------------ fan-out (plan, items named by issue-number)

  /**
   * An issue or pull request with its text (title and body are untrusted:
   * anyone can write them); undefined when there is none (404, 410) or
   * GitHub moved it to another repository.
   */
  async issueThread(number: number): Promise<{ number: number; title: string; body: string; url: string; author?: string; isPull: boolean } | undefined> {
    try {
      const { data } = await this.octokit.rest.issues.get({ ...this.r, issue_number: number });
      if (data.number !== number || !sameRepository(data.repository_url, this.repo.fullName)) return undefined;
      return {
        number: data.number,
        title: data.title,
        body: data.body ?? "",
        url: data.html_url,
        ...(data.user?.login ? { author: data.user.login } : {}),
        isPull: Boolean(data.pull_request),
      };
    } catch (e) {
      if (isNotFound(e) || (e as { status?: number }).status === 410) return undefined;
      throw e;
    }
  }

  /** One page of `GET /search/issues` (not bound to this repository: the query says where), as GitHub sent it; the caller validates it. */
  async searchIssues(q: string, page: number, perPage: number): Promise<unknown> {
    const { data } = await this.octokit.rest.search.issuesAndPullRequests({ q, page, per_page: perPage });
    return data;
  }

  /** The newest issues (not pull requests) of this repository, with their bodies, for finding one we opened by its marker. */
  async recentIssues(perPage = 100): Promise<{ number: number; body: string; url: string; author?: string; authorType?: string }[]> {
    const { data } = await this.octokit.rest.issues.listForRepo({ ...this.r, state: "all", sort: "created", direction: "desc", per_page: perPage });
    return data
      .filter((i) => !i.pull_request)
      .map((i) => ({
        number: i.number,
        body: i.body ?? "",
        url: i.html_url,
        ...(i.user?.login ? { author: i.user.login } : {}),
        ...(i.user?.type ? { authorType: i.user.type } : {}),
      }));
  }
}
