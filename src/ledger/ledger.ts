/**
 * The ledger on GitHub: read back through the commits list, appended to
 * through the Git Data API. There is no lock and no server: an entry is a
 * commit on the head that was read, and the ref moves only as a fast-forward
 * (`force: false`). When another run appended first, GitHub refuses the move
 * (422), and the writer reads the new head and decides again (compare and
 * swap), a bounded number of times with jittered back-off.
 */
import { apiErrorMessage, GitHubApiError } from "../github/client.js";
import type { GitHubApi } from "../github/api.js";
import { entryMessage, LEDGER_REF, type LedgerEntry } from "./entry.js";
import { readCommits, trustedTime, type LedgerCommit, type ReadLedger } from "./tally.js";

/** Commits per page of the read, and the pages read at most: 1,000 entries back. */
const PAGE = 100;
const MAX_PAGES = 10;
/** The most commits one read goes through before it gives up (and admission fails closed). */
export const MAX_READ = PAGE * MAX_PAGES;
/** Compare-and-swap rounds before the ledger counts as too busy to write. */
export const MAX_ROUNDS = 40;

const README = "Agent Runner's budget ledger: each commit after this one records one reservation or settlement, as JSON in its message (docs/budgets.md).\n";

export interface LedgerHead {
  sha: string;
  tree: string;
}

export interface LedgerRead {
  head?: LedgerHead;
  ledger: ReadLedger;
  /** The read reached the ledger's first commit. */
  complete: boolean;
  /**
   * The read stopped at its bound before it reached either the root or a
   * valid entry older than `since`: what lies beyond is unknown, and must not
   * count as nothing spent (admission refuses).
   */
  truncated: boolean;
  /** Commits read (with those remembered from an earlier read). */
  commits: number;
  /** API calls the read made (bench). */
  calls: number;
}

/** A run's handle on the ledger; it remembers what it read, so a retry reads only the new commits. */
export class GitHubLedger {
  private cache?: { head: string; commits: (LedgerCommit & { tree: string })[]; complete: boolean; reached: boolean };
  calls = 0;

  constructor(
    private readonly api: GitHubApi,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /** The ledger from its head back to `since` (entries older than that are not needed), or the bound. */
  async read(since: Date): Promise<LedgerRead> {
    const before = this.calls;
    this.calls++;
    const sha = await this.api.refHead(LEDGER_REF).catch((e: unknown) => {
      throw new GitHubApiError(`Reading the budget ledger (${LEDGER_REF})`, e);
    });
    if (!sha) return { ledger: readCommits([], true), complete: true, truncated: false, commits: 0, calls: this.calls - before };
    const commits: (LedgerCommit & { tree: string })[] = [];
    let complete = false;
    // Reached a valid entry whose own time is before `since`: everything below is older. Never a commit's
    // date: anyone who can push the ref chooses those.
    let reached = false;
    pages: for (let page = 1; page <= MAX_PAGES; page++) {
      this.calls++;
      const list = await this.api.commitsFrom(sha, page, PAGE).catch((e: unknown) => {
        throw new GitHubApiError(`Reading the budget ledger's commits`, e);
      });
      for (const c of list) {
        if (this.cache && c.sha === this.cache.head) {
          commits.push(...this.cache.commits);
          complete = this.cache.complete;
          reached ||= this.cache.reached;
          break pages;
        }
        commits.push(c);
        const time = trustedTime(c);
        if (time !== undefined && time < since.getTime()) reached = true;
        if (c.parents.length === 0) {
          complete = true;
          break pages;
        }
      }
      if (list.length < PAGE) {
        complete = true;
        break;
      }
      if (reached) break;
    }
    const truncated = !complete && !reached;
    this.cache = { head: sha, commits, complete, reached };
    return { head: { sha, tree: commits[0]?.tree ?? "" }, ledger: readCommits(commits, complete, { since }), complete, truncated, commits: commits.length, calls: this.calls - before };
  }

  /** Appends one entry on `head`; false when another writer moved the ref first. */
  async append(head: LedgerHead | undefined, entry: LedgerEntry): Promise<boolean> {
    const api = this.api;
    try {
      let parent = head;
      if (!parent) {
        // The ref's first commit holds only a README: it starts the ref, so every entry has exactly one parent.
        this.calls += 3;
        const blob = await api.createBlob(Buffer.from(README));
        const tree = await api.createRootTree([{ path: "README.md", mode: "100644", sha: blob }]);
        const root = await api.createCommit({ message: "agent-runner ledger: start\n", tree, parents: [] });
        try {
          this.calls++;
          await api.createRef(LEDGER_REF, root.sha);
        } catch (e) {
          if (isRefused(e)) return false;
          throw e;
        }
        parent = { sha: root.sha, tree };
      }
      this.calls += 2;
      const commit = await api.createCommit({ message: entryMessage(entry), tree: parent.tree, parents: [parent.sha] });
      try {
        await api.fastForwardRef(LEDGER_REF, commit.sha);
      } catch (e) {
        if (isRefused(e)) return false;
        throw e;
      }
      return true;
    } catch (e) {
      throw new GitHubApiError(`Writing to the budget ledger (${LEDGER_REF}; the job needs contents: write)`, e);
    }
  }

  /**
   * Compare and swap: read, let `decide` say what to append on what was read
   * (undefined: nothing), append; on a refused move read again. Returns what
   * was appended, with the read it was decided on.
   */
  async update<T extends LedgerEntry>(since: Date, decide: (read: LedgerRead) => T | undefined): Promise<{ entry?: T; read: LedgerRead; rounds: number }> {
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      const read = await this.read(since);
      const entry = decide(read);
      if (!entry) return { read, rounds: round };
      if (await this.append(read.head, entry)) return { entry, read, rounds: round };
      // Full jitter: concurrent writers spread out instead of colliding again in step.
      await this.sleep(Math.random() * Math.min(2000, 50 * 2 ** Math.min(round, 6)));
    }
    throw new GitHubApiError(`Writing to the budget ledger (${LEDGER_REF})`, new Error(`another run moved the ledger first ${MAX_ROUNDS} times in a row`));
  }
}

/** GitHub's refusal of a ref move that is not a fast-forward, or of creating a ref that exists: someone wrote first. */
function isRefused(e: unknown): boolean {
  return typeof e === "object" && e !== null && (e as { status?: unknown }).status === 422 && /fast forward|already exists/i.test(apiErrorMessage(e));
}
