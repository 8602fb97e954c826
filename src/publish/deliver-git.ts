/**
 * Git for delivery, in a private bare repository under the run's temp dir:
 * fetch the target branch, apply patch.diff to a private index, write a
 * commit, push. It needs only the patch and the remote, so it works the same
 * in a later `phase: publish` job. The workspace's repository is deliberately
 * not used: the agent could have rewritten its config (url.insteadOf, hooks)
 * or planted objects whose content does not match their name, smuggling
 * changes past the patch checks. Fetches are shallow to stay small.
 * The token reaches git through the environment of each call (gitAuthEnv).
 * The tree a commit is made of passes the patch rules (patch-rules.ts)
 * against the parent it is committed on: the validated patch, merged onto a
 * branch that moved, is a different tree.
 */
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { ExecError } from "../errors.js";
import { Git } from "../git/git.js";
import { initBare } from "../git/bare.js";
import { isBranchName } from "../git/ref-name.js";
import { checkTree, type TreeCheck, type TreePolicy } from "./patch-rules.js";

export interface Identity {
  name: string;
  email: string;
}

/** The identity GitHub shows for commits made with the workflow token. */
export const BOT_IDENTITY: Identity = {
  name: "github-actions[bot]",
  email: "41898282+github-actions[bot]@users.noreply.github.com",
};

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** A value for a git config file, quoted as git writes one (a URL has no control characters; one that does is refused). */
function configValue(value: string): string {
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new Error(`The remote URL has a control character: ${JSON.stringify(value)}.`);
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

export type ApplyResult = { ok: true; tree: string } | { ok: false; detail: string };
export type PushResult = { ok: true } | { ok: false; rejected: boolean; detail: string };

export class DeliveryRepo {
  private constructor(
    readonly git: Git,
    private readonly dir: string,
  ) {}

  /** `env`: the runner's git environment with the push credentials (gitAuthEnv) added. */
  static async create(opts: { dir: string; remoteUrl: string; env: Record<string, string> }): Promise<DeliveryRepo> {
    await rm(opts.dir, { recursive: true, force: true });
    await mkdir(opts.dir, { recursive: true });
    // The repository and its remote written as `git init --bare` and `git remote add` would: two processes fewer.
    await initBare(opts.dir, `[remote "origin"]\n\turl = ${configValue(opts.remoteUrl)}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`);
    return new DeliveryRepo(new Git(opts.dir, opts.env), opts.dir);
  }

  /** The branch's tip on the remote without fetching it; undefined when the branch does not exist. */
  async remoteTip(branch: string): Promise<string | undefined> {
    const ls = await this.git.text(["ls-remote", "--heads", "origin", `refs/heads/${branch}`]);
    const line = ls.split("\n").find((l) => l.endsWith(`\trefs/heads/${branch}`));
    return line?.split("\t")[0];
  }

  /** The branch's tip on the remote, fetched; undefined when the branch does not exist. */
  async fetchBranch(branch: string): Promise<string | undefined> {
    // The usual case, a branch that is there, costs one process: only a failed fetch asks whether it exists at all.
    const args = ["fetch", "--no-tags", "--quiet", "--depth=1", "origin", `+refs/heads/${branch}:refs/remotes/origin/${branch}`];
    const fetched = await this.git.exec(args, { okCodes: [1, 128] });
    if (fetched.exitCode === 0) return this.fetchedTip();
    if (!(await this.remoteTip(branch))) return undefined;
    throw new ExecError(`git ${args.join(" ")}`, fetched.exitCode, fetched.stderr);
  }

  /**
   * What the last fetch of one branch got, read from FETCH_HEAD (`<id>\t\tbranch '…' of <url>`): this
   * private repository is written by us alone, so its file is as good an answer as a `rev-parse` process.
   */
  private async fetchedTip(): Promise<string> {
    const id = (await readFile(path.join(this.dir, "FETCH_HEAD"), "utf8")).split("\t", 1)[0]!;
    if (!OBJECT_ID.test(id)) throw new Error(`FETCH_HEAD of ${this.dir} names no object ('${id.slice(0, 80)}').`);
    return id;
  }

  async hasCommit(sha: string): Promise<boolean> {
    return (await this.git.exec(["cat-file", "-e", `${sha}^{commit}`], { okCodes: [1, 128] })).exitCode === 0;
  }

  /** Best effort: the objects a 3-way apply needs (the agent's starting commit). */
  async ensureCommit(sha: string): Promise<boolean> {
    if (await this.hasCommit(sha)) return true;
    await this.git.exec(["fetch", "--no-tags", "--quiet", "--depth=1", "origin", sha], { okCodes: [1, 128] });
    return this.hasCommit(sha);
  }

  /**
   * Apply the patch on top of `parent` in a private index. A plain apply
   * first; if the target moved under the patch, a 3-way apply (needs the
   * patch's preimage blobs, i.e. the agent's starting commit).
   */
  /** `threeWay: false` (an approved patch): it applies as it is, or not at all. */
  async apply(parent: string, patchPath: string, baseCommit?: string, opts: { threeWay?: boolean } = {}): Promise<ApplyResult> {
    const index = path.join(this.dir, `index-${Date.now()}`);
    const env = { GIT_INDEX_FILE: index };
    try {
      await this.git.exec(["read-tree", parent], { env });
      const plain = await this.git.exec(["apply", "--cached", "--binary", "--whitespace=nowarn", patchPath], { env, okCodes: [1, 128] });
      if (plain.exitCode !== 0 && opts.threeWay === false) return { ok: false, detail: "the approved patch does not apply as it is (no merge is attempted for an approved patch)" };
      if (plain.exitCode !== 0) {
        if (baseCommit) await this.ensureCommit(baseCommit);
        await this.git.exec(["read-tree", parent], { env });
        const threeWay = await this.git.exec(["apply", "--cached", "--binary", "--3way", "--whitespace=nowarn", patchPath], {
          env,
          okCodes: [1, 128],
        });
        if (threeWay.exitCode !== 0) {
          const conflicted = await this.git.exec(["diff", "--cached", "--name-only", "--diff-filter=U"], { env, okCodes: [1, 128] });
          const files = conflicted.stdout.split("\n").filter(Boolean);
          return { ok: false, detail: files.length ? `conflicts in ${files.join(", ")}` : "the patch does not apply" };
        }
      }
      return { ok: true, tree: await this.git.text(["write-tree"], { env }) };
    } finally {
      await rm(index, { force: true });
    }
  }

  async treeOf(commit: string): Promise<string> {
    return this.git.text(["rev-parse", `${commit}^{tree}`], { byObjectIds: true });
  }

  /** What `tree` changes on top of `parent`, and what the patch rules refuse in it. */
  async check(parent: string, tree: string, policy: TreePolicy): Promise<TreeCheck> {
    return checkTree(this.git, await this.treeOf(parent), tree, policy, this.dir);
  }

  async commit(tree: string, parent: string | undefined, message: string, author: Identity, committer: Identity = author): Promise<string> {
    return this.git.text(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-F", "-"], {
      input: message,
      env: {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_COMMITTER_NAME: committer.name,
        GIT_COMMITTER_EMAIL: committer.email,
      },
    });
  }

  /** Push a commit to a branch. `expect`: the tip the push may replace (a lease), for force pushes. */
  async push(sha: string, branch: string, opts: { force: boolean; expect?: string | null }): Promise<PushResult> {
    const args = ["push", "--porcelain", "--no-verify", "origin"];
    if (opts.force) args.push(opts.expect !== undefined ? `--force-with-lease=refs/heads/${branch}:${opts.expect ?? ""}` : "--force");
    args.push(`${sha}:refs/heads/${branch}`);
    const r = await this.git.exec(args, { okCodes: [1, 128] });
    if (r.exitCode === 0) return { ok: true };
    const text = `${r.stdout}\n${r.stderr}`;
    const rejected = /\[rejected\]|non-fast-forward|fetch first|stale info/.test(text);
    const detail = text.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("To ") && l !== "Done").join(" ").slice(0, 500);
    return { ok: false, rejected, detail };
  }
}

/**
 * Replace a ref outside refs/heads (the checkpoint ref, git/checkpoint.ts) with `sha`, or delete it (`sha` null).
 * Hooks never run (`--no-verify`, core.hooksPath off in Git).
 */
export async function pushRef(repo: DeliveryRepo, sha: string | null, ref: string): Promise<PushResult> {
  const r = await repo.git.exec(["push", "--porcelain", "--no-verify", "--force", "origin", `${sha ?? ""}:${ref}`], { okCodes: [1, 128] });
  if (r.exitCode === 0) return { ok: true };
  const detail = `${r.stdout}\n${r.stderr}`.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("To ") && l !== "Done").join(" ").slice(0, 500);
  return { ok: false, rejected: false, detail };
}

/** Whether git accepts `name` as a branch name (git's rules, in-process: git/ref-name.ts). */
export function validBranchName(name: string): boolean {
  return isBranchName(name);
}
