/**
 * Verified commits (#24), through dist/ and comment-triggered: with
 * `commit-method: api` (the default) the change goes through GitHub's Git
 * Data API with no author or committer, so GitHub signs it; the fake writes
 * real objects into its bare origin. Checked: the commit's tree is exactly
 * the base plus the patch (text, binary, deletion, rename, executable,
 * symlink, non-ASCII name, CRLF file), modes kept, the Co-authored-by
 * trailer kept, verification read back into `commit-verified`, secondary
 * rate limits waited out, too-large changes refused unless
 * `allow-unsigned-commits`, and `commit-method: git` still pushes.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { git, listBranches, readBranchLog, revParse } from "../support/git-fixtures.js";
import { scenario, type Scenario } from "./scenario.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const FILES = {
  "README.md": "# Demo\n\nTeh demo project.\n",
  "src/app.js": "console.log('hello');\n",
  "old-name.txt": "to be renamed\n",
  "gone.txt": "to be deleted\n",
  "win.bat": "@echo off\r\necho one\r\n",
  "run.sh": "#!/bin/sh\necho run\n",
};

/** Every kind of change a tree can carry, CRLF line ends kept. */
const MIXED = [
  `sed -i 's/Teh/The/' README.md`,
  `printf 'echo two\\r\\n' >> win.bat`,
  `printf '\\000\\001\\002\\377binary\\000' > data.bin`,
  `git rm -q gone.txt`,
  `git mv old-name.txt new-name.txt`,
  `chmod +x run.sh`,
  `ln -s src/app.js link-to-app`,
  `printf 'grüße\\n' > 'naïve-ünïcode.txt'`,
  `echo 'Made a mixed change.'`,
].join("\n");

/** The tree git makes of base + patch.diff, in a fresh clone: what the API commit must equal. */
function expectedTree(origin: string, base: string, patchPath: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "expect-tree-"));
  try {
    execFileSync("git", ["clone", "-q", origin, dir]);
    execFileSync("git", ["-C", dir, "checkout", "-q", "--detach", base]);
    execFileSync("git", ["-C", dir, "apply", "--index", "--binary", patchPath]);
    return execFileSync("git", ["-C", dir, "write-tree"]).toString().trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function lsTree(origin: string, rev: string): Promise<string> {
  return git(origin, ["ls-tree", "-r", rev]);
}

describe("commit-method: api (verified commits)", () => {
  it("issue → draft PR: blobs, one tree, one unsigned-by-us commit that GitHub verifies; the tree is base + patch byte for byte", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: MIXED, files: FILES });
    const r = await s.run();
    expect(r.exitCode, r.log).toBe(0);
    expect(r.outputs["commit-verified"]).toBe("true");
    const branch = r.outputs.branch!;
    const sha = r.outputs["commit-sha"]!;
    expect(await revParse(s.repo.origin, `refs/heads/${branch}`)).toBe(sha);
    // Made through the API: blob and tree and commit requests, the commit carries no author or committer.
    const commits = s.gh.requestsTo("POST /repos/*/*/git/commits");
    expect(commits).toHaveLength(1);
    const body = commits[0]!.body as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["message", "parents", "tree"]);
    expect(body["parents"]).toEqual([s.repo.initialSha]);
    expect(s.gh.requestsTo("POST /repos/*/*/git/trees")).toHaveLength(1);
    expect(s.gh.requestsTo("POST /repos/*/*/git/blobs").length).toBeGreaterThanOrEqual(5);
    expect(s.gh.requestsTo("GET /repos/*/*/git/commits/*")).toHaveLength(1);
    // The tree is exactly what git applies from the patch, modes and CRs included.
    const tree = (await git(s.repo.origin, ["rev-parse", `${sha}^{tree}`])).trim();
    expect(tree).toBe(expectedTree(s.repo.origin, s.repo.initialSha, r.outputs["patch-path"]!));
    const ls = await lsTree(s.repo.origin, sha);
    expect(ls).toMatch(/^100755 blob [0-9a-f]+\trun\.sh$/m);
    expect(ls).toMatch(/^120000 blob [0-9a-f]+\tlink-to-app$/m);
    expect(ls).not.toMatch(/\tgone\.txt$/m);
    expect(ls).toMatch(/\tnew-name\.txt$/m);
    expect(await git(s.repo.origin, ["cat-file", "blob", `${sha}:win.bat`])).toBe("@echo off\r\necho one\r\necho two\r\n");
    expect(execFileSync("git", ["--git-dir", s.repo.origin, "cat-file", "blob", `${sha}:data.bin`])).toEqual(Buffer.from([0, 1, 2, 255, ...Buffer.from("binary"), 0]));
    const [c] = await readBranchLog(s.repo.origin, branch, { max: 1 });
    expect(c!.authorName).toBe("github-actions[bot]");
    expect(c!.body).toContain("Co-authored-by: alice");
    const pr = s.gh.pulls()[0]!;
    expect(pr.draft).toBe(true);
    expect(pr.head.ref).toBe(branch);
    expect(r.summary).toContain("(verified)");
  });

  it("same-repo PR → commit of 300 changed files: fast-forward of its branch through the API; one secondary rate limit on blobs is waited out", async () => {
    const many = `mkdir -p gen && for i in $(seq 1 291); do echo "generated $i" > gen/f$i.txt; done`;
    s = await scenario({ fixture: "issue_comment.pr", agent: `${many}\n${MIXED}`, files: FILES });
    const head = await revParse(s.repo.origin, "refs/heads/feature/greeting");
    const rule = s.gh.failNext("POST /repos/*/*/git/blobs", { kind: "secondary-rate-limit", retryAfter: 1 });
    const r = await s.run();
    expect(r.exitCode, r.log).toBe(0);
    expect(rule.hits).toBe(1);
    expect(JSON.parse(r.outputs["changed-files"]!)).toHaveLength(300);
    // Each blob once, plus the one answered with the rate limit and retried.
    expect(s.gh.requestsTo("POST /repos/*/*/git/blobs").length).toBeGreaterThanOrEqual(296);
    expect(r.log).toMatch(/rate limit on POST .*git\/blobs; retrying in 1 s/);
    expect(r.outputs["commit-verified"]).toBe("true");
    const [c] = await readBranchLog(s.repo.origin, "feature/greeting", { max: 1 });
    expect(c!.sha).toBe(r.outputs["commit-sha"]);
    expect(c!.parents).toEqual([head]);
    expect(s.gh.requestsTo("PATCH /repos/*/*/git/refs/**")).toHaveLength(1);
    expect((s.gh.requestsTo("PATCH /repos/*/*/git/refs/**")[0]!.body as { force?: boolean }).force).toBe(false);
    expect(s.gh.pulls()).toHaveLength(1);
  }, 300_000);

  it("a change too large for the API fails clearly unless allow-unsigned-commits, which pushes it with git", async () => {
    const many = `mkdir -p gen && for i in $(seq 1 3001); do echo $i > gen/f$i.txt; done\necho 'Generated.'`;
    s = await scenario({ fixture: "issue_comment.issue", agent: many });
    const refused = await s.run();
    expect(refused.exitCode).not.toBe(0);
    expect(refused.log).toContain("too large for GitHub's API");
    expect(refused.log).toContain("allow-unsigned-commits");
    expect(await listBranches(s.repo.origin)).toEqual(["main"]);
    expect(s.gh.requestsTo("POST /repos/*/*/git/blobs")).toEqual([]);

    const allowed = await s.run({ "allow-unsigned-commits": "true" });
    expect(allowed.exitCode, allowed.log).toBe(0);
    expect(allowed.outputs["commit-verified"]).toBeUndefined();
    expect(await revParse(s.repo.origin, `refs/heads/${allowed.outputs.branch!}`)).toBe(allowed.outputs["commit-sha"]);
  }, 300_000);

  it("commit-method: git pushes with git as before: no Git Data API calls, no commit-verified", async () => {
    s = await scenario({ fixture: "issue_comment.pr", agent: "echo 'test' > greeting.test.js\necho 'Added a test.'" });
    const r = await s.run({ "commit-method": "git" });
    expect(r.exitCode, r.log).toBe(0);
    expect(s.gh.requestsTo("POST /repos/*/*/git/**")).toEqual([]);
    expect(r.outputs["commit-verified"]).toBeUndefined();
    const [c] = await readBranchLog(s.repo.origin, "feature/greeting", { max: 1 });
    expect(c!.sha).toBe(r.outputs["commit-sha"]);
  });
});

