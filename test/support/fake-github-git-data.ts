/**
 * GitHub's Git Data API for the fake GitHub (blobs, trees, commits, refs),
 * writing real objects into the repository's bare origin, so a commit made
 * through the API is in origin exactly as a push would leave it. Commits
 * created with no author, committer or signature are the ones GitHub signs
 * as the token's identity; the fake records them as verified (`valid`),
 * others as `unsigned`. Response shapes are checked at compile time against
 * GitHub's OpenAPI description (@octokit/openapi-types).
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { deflateSync } from "node:zlib";
import os from "node:os";
import path from "node:path";
import type { components } from "@octokit/openapi-types";
import { answerIfCommandSaidNo, execFileFromHelper, runFromHelper, throwUnlessExitedZero } from "./spawn-helper.js";

/** git from the tests' spawn helper (spawn-helper.ts): the worker forks less. */
const run = execFileFromHelper;

export type ShortBlob = components["schemas"]["short-blob"];
export type GitTree = components["schemas"]["git-tree"];
export type GitCommit = components["schemas"]["git-commit"];
export type GitRef = components["schemas"]["git-ref"];
export type Verification = components["schemas"]["verification"];

export class GitDataError extends Error {
  constructor(
    readonly status: 404 | 409 | 422,
    message: string,
  ) {
    super(message);
  }
}

const SHA = /^[0-9a-f]{40}$/;
const MODES = new Set(["100644", "100755", "040000", "160000", "120000"]);

async function git(gitDir: string, args: string[], opts: { input?: Buffer | string; env?: Record<string, string> } = {}): Promise<Buffer> {
  const r = await runFromHelper("git", ["--git-dir", gitDir, ...args], { cwd: process.cwd(), env: { ...process.env, ...opts.env }, input: opts.input ?? "" });
  throwUnlessExitedZero(r, `git ${args.join(" ")}`);
  return r.stdout;
}

/**
 * Object types by id, asked of git in one `cat-file --batch-check` for all the ids not known
 * yet (a type never changes once the object exists; a missing one is asked again next time).
 */
class ObjectTypes {
  private readonly known = new Map<string, string>();

  constructor(private readonly gitDir: string) {}

  async of(shas: readonly string[]): Promise<Map<string, string>> {
    const ask = [...new Set(shas.filter((s) => SHA.test(s) && !this.known.has(s)))];
    if (ask.length) {
      const out = (await git(this.gitDir, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], { input: ask.join("\n") + "\n" })).toString();
      for (const line of out.split("\n")) {
        const [sha, type] = line.split(" ");
        if (sha && type && SHA.test(sha) && type !== "missing") this.known.set(sha, type);
      }
    }
    return this.known;
  }

  /** An object this process just wrote. */
  learn(sha: string, type: string): void {
    this.known.set(sha, type);
  }

  async type(sha: string): Promise<string | undefined> {
    return (await this.of([sha])).get(sha);
  }
}

export type CommitListItem = components["schemas"]["commit"];

export class GitData {
  /** Commit id → what GitHub says of its signature. */
  private readonly verifications = new Map<string, Verification>();
  /**
   * Ref writes one at a time, as GitHub applies them: of two concurrent moves
   * from the same head, the second sees the first's result and is refused as
   * not a fast-forward (compare-and-swap writers rely on exactly that).
   */
  private refWrites: Promise<unknown> = Promise.resolve();

  private serialized<T>(write: () => Promise<T>): Promise<T> {
    const next = this.refWrites.then(write, write);
    this.refWrites = next.catch(() => undefined);
    return next;
  }

  private readonly types: ObjectTypes;

  constructor(
    private readonly gitDir: string,
    private readonly api: string,
  ) {
    this.types = new ObjectTypes(gitDir);
  }

  async createBlob(body: Record<string, unknown>): Promise<ShortBlob> {
    const { content, encoding } = body as { content?: unknown; encoding?: unknown };
    if (typeof content !== "string") throw new GitDataError(422, "Invalid request.\n\n\"content\" wasn't supplied.");
    if (encoding !== undefined && encoding !== "utf-8" && encoding !== "base64") throw new GitDataError(422, `encoding ${String(encoding)} is not supported`);
    const bytes = encoding === "base64" ? Buffer.from(content, "base64") : Buffer.from(content, "utf8");
    const sha = await this.writeBlob(bytes);
    return { sha, url: `${this.api}/git/blobs/${sha}` };
  }

  /**
   * `git hash-object -w` without a git process (a commit through the API sends hundreds of blobs):
   * a loose object is the zlib stream of `blob <size>\0<bytes>`, named by its SHA-1, and written
   * under a temporary name, then renamed, as git writes it. git reads it back like its own.
   */
  /** Sizes of the blobs this process wrote (a tree of them is rendered without `ls-tree`). */
  private readonly blobSizes = new Map<string, number>();

  private async writeBlob(bytes: Buffer): Promise<string> {
    const sha = await this.writeObject("blob", bytes);
    this.blobSizes.set(sha, bytes.length);
    return sha;
  }

  /** A loose object of `type` (blob, commit): the zlib stream of `<type> <size>\0<bytes>`, as git writes it. */
  private async writeObject(type: "blob" | "tree" | "commit", bytes: Buffer): Promise<string> {
    const raw = Buffer.concat([Buffer.from(`${type} ${bytes.length}\0`), bytes]);
    const sha = createHash("sha1").update(raw).digest("hex");
    const dir = path.join(this.gitDir, "objects", sha.slice(0, 2));
    await mkdir(dir, { recursive: true });
    const tmp = path.join(dir, `tmp_obj_${randomUUID()}`);
    await writeFile(tmp, deflateSync(raw), { mode: 0o444 });
    await rename(tmp, path.join(dir, sha.slice(2)));
    this.types.learn(sha, type);
    return sha;
  }

  /** Entries on `base_tree` in a private index: GitHub's semantics for nested paths, `sha: null` deletes. */
  async createTree(body: Record<string, unknown>): Promise<GitTree> {
    const base = body["base_tree"];
    const entries = body["tree"];
    if (!Array.isArray(entries)) throw new GitDataError(422, "Invalid request.\n\n\"tree\" wasn't supplied.");
    const flat = base === undefined ? await this.flatTree(entries as Record<string, unknown>[]) : undefined;
    if (flat) return flat;
    const dir = await mkdtemp(path.join(os.tmpdir(), "fake-tree-"));
    const env = { GIT_INDEX_FILE: path.join(dir, "index") };
    try {
      if (typeof base === "string") {
        if ((await this.types.type(base)) !== "tree") throw new GitDataError(422, "base_tree is not a valid tree oid");
        await git(this.gitDir, ["read-tree", base], { env });
      } else await git(this.gitDir, ["read-tree", "--empty"], { env });
      // Every entry's type asked of git at once.
      await this.types.of((entries as Record<string, unknown>[]).map((e) => e["sha"]).filter((s): s is string => typeof s === "string"));
      const info: string[] = [];
      for (const raw of entries as Record<string, unknown>[]) info.push(await this.indexLine(raw));
      await git(this.gitDir, ["update-index", "--index-info"], { env, input: info.join("\n") + "\n" });
      const sha = (await git(this.gitDir, ["write-tree"], { env })).toString().trim();
      this.types.learn(sha, "tree");
      return this.renderTree(sha);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * A new tree of blobs this process wrote, each at a top-level name (the ledger's first commit, a README),
   * written as git writes a tree object: entries sorted by name, `<mode> <name>\0<binary id>`.
   * Undefined for anything else (nested paths, deletions, other objects): then git builds it in an index.
   */
  private async flatTree(entries: Record<string, unknown>[]): Promise<GitTree | undefined> {
    const rows: { path: string; mode: string; sha: string; size: number }[] = [];
    for (const e of entries) {
      const { path: p, mode, type, sha } = e as { path?: unknown; mode?: unknown; type?: unknown; sha?: unknown };
      if (typeof p !== "string" || !/^[^/\0]+$/.test(p) || p === "." || p === ".." || p === ".git") return undefined;
      if ((mode !== "100644" && mode !== "100755") || type !== "blob" || "content" in e || typeof sha !== "string") return undefined;
      const size = this.blobSizes.get(sha);
      if (size === undefined) return undefined;
      rows.push({ path: p, mode, sha, size });
    }
    if (rows.length === 0 || new Set(rows.map((r) => r.path)).size !== rows.length) return undefined;
    rows.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
    const sha = await this.writeObject("tree", Buffer.concat(rows.map((r) => Buffer.concat([Buffer.from(`${r.mode} ${r.path}\0`), Buffer.from(r.sha, "hex")]))));
    const tree = rows.map((r) => ({ path: r.path, mode: r.mode, type: "blob", sha: r.sha, size: r.size, url: `${this.api}/git/blobs/${r.sha}` }));
    return { sha, url: `${this.api}/git/trees/${sha}`, tree, truncated: false };
  }

  private async indexLine(e: Record<string, unknown>): Promise<string> {
    const { path: p, mode, type, sha } = e as { path?: unknown; mode?: unknown; type?: unknown; sha?: unknown };
    if (typeof p !== "string" || !p || p.startsWith("/") || p.split("/").some((s) => s === "" || s === "." || s === ".." || s === ".git"))
      throw new GitDataError(422, `tree.path ${String(p)} is invalid`);
    if (typeof mode !== "string" || !MODES.has(mode)) throw new GitDataError(422, `tree.mode ${String(mode)} is invalid`);
    if (type !== "blob" && type !== "tree" && type !== "commit") throw new GitDataError(422, `tree.type ${String(type)} is invalid`);
    if ("content" in e) throw new GitDataError(422, "the fake takes blobs by sha only");
    // A deletion: mode 0 removes the path from the index.
    if (sha === null) return `0 ${"0".repeat(40)}\t${p}`;
    if (typeof sha !== "string" || (await this.types.type(sha)) !== type) throw new GitDataError(422, `tree.sha ${String(sha)} is not a valid ${type}`);
    return `${mode} ${sha}\t${p}`;
  }

  private async renderTree(sha: string): Promise<GitTree> {
    const ls = (await git(this.gitDir, ["ls-tree", "-z", "-l", sha])).toString();
    const tree = ls
      .split("\0")
      .filter(Boolean)
      .map((line) => {
        const [meta, name] = line.split("\t") as [string, string];
        const [mode, type, objSha, size] = meta.split(/\s+/) as [string, string, string, string];
        return { path: name, mode, type, sha: objSha, ...(size !== "-" ? { size: Number(size) } : {}), url: `${this.api}/git/${type}s/${objSha}` };
      });
    return { sha, url: `${this.api}/git/trees/${sha}`, tree, truncated: false };
  }

  /** Written as `login` (GitHub's identity for the token); signed when the request names no author, committer or signature. */
  async createCommit(body: Record<string, unknown>, login: string, userId: number): Promise<GitCommit> {
    const { message, tree, parents, author, committer, signature } = body as Record<string, unknown>;
    if (typeof message !== "string") throw new GitDataError(422, "Invalid request.\n\n\"message\" wasn't supplied.");
    if (typeof tree !== "string" || (await this.types.type(tree)) !== "tree") throw new GitDataError(422, "Tree SHA does not exist");
    const parentList = Array.isArray(parents) ? (parents as unknown[]) : [];
    for (const p of parentList) if (typeof p !== "string" || (await this.types.type(p)) !== "commit") throw new GitDataError(422, "Parent SHA does not exist or is not a commit object");
    const who = { name: login, email: `${userId}+${login}@users.noreply.github.com` };
    const named = (v: unknown) => (typeof v === "object" && v !== null ? (v as { name?: string; email?: string }) : undefined);
    const a = named(author) ?? who;
    const c = named(committer) ?? who;
    const env = { GIT_AUTHOR_NAME: a.name ?? who.name, GIT_AUTHOR_EMAIL: a.email ?? who.email, GIT_COMMITTER_NAME: c.name ?? who.name, GIT_COMMITTER_EMAIL: c.email ?? who.email };
    const parentShas = parentList as string[];
    const sha =
      (await this.writeCommit(tree, parentShas, env, message)) ??
      (await git(this.gitDir, ["commit-tree", tree, ...parentShas.flatMap((p) => ["-p", p])], { input: message, env })).toString().trim();
    const signed = author === undefined && committer === undefined && signature === undefined;
    this.verifications.set(sha, { verified: signed, reason: signed ? "valid" : "unsigned", signature: signed ? "-----BEGIN PGP SIGNATURE-----\nfake\n-----END PGP SIGNATURE-----" : null, payload: null, verified_at: signed ? new Date().toISOString() : null });
    return this.getCommit(sha);
  }

  /**
   * `git commit-tree` without a git process (compare-and-swap writers make a commit every round): the
   * object git would write for these people, now, in the local time zone, the message kept byte for
   * byte. Undefined when git would write something else (a name or email git trims or refuses, a date
   * from the environment): then git writes it.
   */
  private async writeCommit(tree: string, parents: string[], who: Record<"GIT_AUTHOR_NAME" | "GIT_AUTHOR_EMAIL" | "GIT_COMMITTER_NAME" | "GIT_COMMITTER_EMAIL", string>, message: string): Promise<string | undefined> {
    if (process.env["GIT_AUTHOR_DATE"] !== undefined || process.env["GIT_COMMITTER_DATE"] !== undefined) return undefined;
    // git strips these from either end of a name or email ("crud"), and refuses <, > and newlines inside.
    const plain = (v: string) => v !== "" && !/^[\s.,:;<>"\\']|[\s.,:;<>"\\']$|[<>\n\0]/.test(v);
    if (!Object.values(who).every(plain) || message.includes("\0")) return undefined;
    const now = new Date();
    const offset = -now.getTimezoneOffset();
    const zone = `${offset < 0 ? "-" : "+"}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, "0")}${String(Math.abs(offset) % 60).padStart(2, "0")}`;
    const when = `${Math.floor(now.getTime() / 1000)} ${zone}`;
    const head = [
      `tree ${tree}`,
      ...parents.map((p) => `parent ${p}`),
      `author ${who.GIT_AUTHOR_NAME} <${who.GIT_AUTHOR_EMAIL}> ${when}`,
      `committer ${who.GIT_COMMITTER_NAME} <${who.GIT_COMMITTER_EMAIL}> ${when}`,
    ];
    const text = `${head.join("\n")}\n\n${message}`;
    const sha = await this.writeObject("commit", Buffer.from(text, "utf8"));
    // Parsed from the text just written: no git process to read back what this process made.
    this.commits.set(sha, this.parseCommit(sha, text));
    return sha;
  }

  /** Commits are immutable: each is read from git once (a ledger lists the same commits on every read). */
  private readonly commits = new Map<string, GitCommit>();

  async getCommit(sha: string): Promise<GitCommit> {
    const known = this.commits.get(sha);
    if (known) return { ...known, verification: this.verifications.get(sha) ?? known.verification };
    const c = await this.readCommit(sha);
    this.commits.set(sha, c);
    return c;
  }

  private async readCommit(sha: string): Promise<GitCommit> {
    if ((await this.types.type(sha)) !== "commit") throw new GitDataError(404, "Not Found");
    return this.parseCommit(sha, (await git(this.gitDir, ["cat-file", "commit", sha])).toString());
  }

  private parseCommit(sha: string, raw: string): GitCommit {
    const head = raw.slice(0, raw.indexOf("\n\n"));
    const field = (k: string) => head.split("\n").filter((l) => l.startsWith(`${k} `)).map((l) => l.slice(k.length + 1));
    const person = (line: string) => {
      const m = /^(.*) <(.*)> (\d+) ([+-]\d{4})$/.exec(line)!;
      return { name: m[1]!, email: m[2]!, date: new Date(Number(m[3]) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z") };
    };
    return {
      sha,
      node_id: Buffer.from(`C_${sha}`).toString("base64"),
      url: `${this.api}/git/commits/${sha}`,
      html_url: `${this.api.replace("/repos/", "/")}/commit/${sha}`,
      author: person(field("author")[0]!),
      committer: person(field("committer")[0]!),
      message: raw.slice(raw.indexOf("\n\n") + 2),
      tree: { sha: field("tree")[0]!, url: `${this.api}/git/trees/${field("tree")[0]!}` },
      parents: field("parent").map((p) => ({ sha: p, url: `${this.api}/git/commits/${p}`, html_url: `${this.api.replace("/repos/", "/")}/commit/${p}` })),
      verification: this.verifications.get(sha) ?? { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
    };
  }

  verification(sha: string): Verification | undefined {
    return this.verifications.get(sha);
  }

  /** Whether `sha` descends from `ancestor`, from the commits already read (undefined: not known without git). */
  private async descendsFrom(sha: string, ancestor: string): Promise<boolean | undefined> {
    const seen = new Set<string>();
    const queue = [sha];
    while (queue.length) {
      const next = queue.pop()!;
      if (next === ancestor) return true;
      if (seen.has(next)) continue;
      seen.add(next);
      const c = this.commits.get(next);
      if (!c) return undefined;
      queue.push(...c.parents.map((p) => p.sha));
    }
    return false;
  }

  private async refSha(ref: string): Promise<string | undefined> {
    // A loose ref naming a known commit is read from its file (git writes it atomically, by rename):
    // compare-and-swap writers ask for the ledger's head every round, and a git process each time is
    // most of what the fake costs them. Anything else (packed, symbolic, a tag to peel) asks git.
    const loose = !/^refs\/[\w./-]+$/.test(ref) || ref.split("/").some((p) => p === "" || p.startsWith(".")) ? undefined : await readFile(path.join(this.gitDir, ref), "utf8").then((t) => t.trim(), () => undefined);
    if (loose && SHA.test(loose) && (await this.types.type(loose)) === "commit") return loose;
    // Neither a loose file nor a line of packed-refs: the ref does not exist (readers ask before the ledger's first write).
    if (loose === undefined && /^refs\/[\w./-]+$/.test(ref)) {
      const packed = await readFile(path.join(this.gitDir, "packed-refs"), "utf8").catch(() => "");
      if (!packed.split("\n").some((l) => l.endsWith(` ${ref}`))) return undefined;
    }
    return run("git", ["--git-dir", this.gitDir, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`]).then(
      (r) => r.stdout.trim(),
      (e: unknown) => answerIfCommandSaidNo(e, undefined),
    );
  }

  private renderRef(ref: string, sha: string): GitRef {
    return { ref, node_id: Buffer.from(`REF_${ref}`).toString("base64"), url: `${this.api}/git/${ref}`, object: { type: "commit", sha, url: `${this.api}/git/commits/${sha}` } };
  }

  /** `GET …/git/ref/{ref}` (`ref` without `refs/`). */
  async getRef(shortRef: string): Promise<GitRef> {
    const ref = `refs/${shortRef}`;
    const sha = await this.refSha(ref);
    if (!sha) throw new GitDataError(404, "Not Found");
    return this.renderRef(ref, sha);
  }

  /**
   * One page of the commits from `head`, when the commits already read make a straight line (one
   * parent each) through the page: rev-list's order is then the parents' order. Undefined: ask git.
   */
  private knownLine(head: string, skip: number, max: number): string[] | undefined {
    const out: string[] = [];
    let sha: string | undefined = head;
    for (let i = 0; sha !== undefined && out.length < max; i++) {
      const c = this.commits.get(sha);
      if (!c || c.parents.length > 1) return undefined;
      if (i >= skip) out.push(sha);
      sha = c.parents[0]?.sha;
    }
    return out;
  }

  /** `GET …/commits?sha=`: the commits reachable from `sha`, newest first (git's default order), one page. */
  async listCommits(sha: string, page: number, perPage: number): Promise<CommitListItem[]> {
    const head = SHA.test(sha) ? sha : await this.refSha(sha.startsWith("refs/") ? sha : `refs/heads/${sha}`);
    if (!head || (await this.types.type(head)) !== "commit") throw new GitDataError(404, "Not Found");
    const shas =
      this.knownLine(head, (page - 1) * perPage, perPage) ??
      (await git(this.gitDir, ["rev-list", `--skip=${(page - 1) * perPage}`, `--max-count=${perPage}`, head])).toString().split("\n").filter(Boolean);
    return Promise.all(
      shas.map(async (s) => {
        const c = await this.getCommit(s);
        const login = /^(.*\[bot\]|[A-Za-z0-9-]+)$/.test(c.author.name ?? "") ? c.author.name : undefined;
        const account = login ? { login, id: 1, node_id: "U_1", avatar_url: "", gravatar_id: null, url: "", html_url: "", followers_url: "", following_url: "", gists_url: "", starred_url: "", subscriptions_url: "", organizations_url: "", repos_url: "", events_url: "", received_events_url: "", type: login.endsWith("[bot]") ? "Bot" : "User", site_admin: false } : null;
        return {
          sha: s,
          node_id: c.node_id,
          url: `${this.api}/commits/${s}`,
          html_url: c.html_url,
          comments_url: `${this.api}/commits/${s}/comments`,
          commit: {
            url: c.url,
            author: c.author,
            committer: c.committer,
            message: c.message.replace(/\n$/, ""),
            comment_count: 0,
            tree: c.tree,
            verification: c.verification,
          },
          author: account,
          committer: account,
          parents: c.parents.map((p) => ({ sha: p.sha, url: p.url, html_url: p.html_url })),
        } satisfies CommitListItem;
      }),
    );
  }

  async createRef(body: Record<string, unknown>): Promise<GitRef> {
    return this.serialized(() => this.createRefNow(body));
  }

  private async createRefNow(body: Record<string, unknown>): Promise<GitRef> {
    const { ref, sha } = body as { ref?: unknown; sha?: unknown };
    // GitHub takes any fully qualified name with at least two slashes (refs/heads/x, refs/agent-runner/ledger).
    if (typeof ref !== "string" || !/^refs\/[^/]+\/.+/.test(ref) || ref.split("/").some((p) => p === "")) throw new GitDataError(422, "Reference name is invalid");
    if (typeof sha !== "string" || (await this.types.type(sha)) !== "commit") throw new GitDataError(422, "Object does not exist");
    if (await this.refSha(ref)) throw new GitDataError(422, "Reference already exists");
    // `update-ref <ref> <sha> ""` refuses a ref that exists by now: two creations at once, one wins (as GitHub's).
    await git(this.gitDir, ["update-ref", ref, sha, ""]).catch((e: unknown) => {
      throw answerIfCommandSaidNo(e, new GitDataError(422, "Reference already exists"));
    });
    return this.renderRef(ref, sha);
  }

  /** `PATCH …/git/refs/{ref}` (`ref` without `refs/`): fast-forward only unless `force`. */
  async updateRef(shortRef: string, body: Record<string, unknown>): Promise<GitRef> {
    return this.serialized(() => this.updateRefNow(shortRef, body));
  }

  private async updateRefNow(shortRef: string, body: Record<string, unknown>): Promise<GitRef> {
    const ref = `refs/${shortRef}`;
    const { sha, force } = body as { sha?: unknown; force?: unknown };
    const current = await this.refSha(ref);
    if (!current) throw new GitDataError(422, "Reference does not exist");
    if (typeof sha !== "string" || (await this.types.type(sha)) !== "commit") throw new GitDataError(422, "Object does not exist");
    if (force !== true) {
      const ff = (await this.descendsFrom(sha, current)) ?? (await run("git", ["--git-dir", this.gitDir, "merge-base", "--is-ancestor", current, sha]).then(
        () => true,
        (e: unknown) => answerIfCommandSaidNo(e, false),
      ));
      if (!ff) throw new GitDataError(422, "Update is not a fast forward");
    }
    await git(this.gitDir, ["update-ref", ref, sha, current]);
    return this.renderRef(ref, sha);
  }
}
