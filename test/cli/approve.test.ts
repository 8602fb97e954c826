/**
 * `approval: required` on a laptop, through dist/cli.js in real processes, as
 * a shell user runs it (docs/approval.md, "On your machine"):
 *  - `run --approval required` (real bubblewrap) applies nothing to the
 *    working tree and prints the staged summary, the digest and the approve
 *    command; `--json` gives the same as JSON;
 *  - `approve <dir> <digest>` makes the working tree what the same agent
 *    leaves in an ordinary run, byte for byte, and records who and when;
 *  - each refusal (wrong digest, a tampered patch, an edited request, a
 *    linked file, a second approval, a record reset by hand, HEAD moved,
 *    expiry, after `reject`) exits 1 naming the reason, the tree untouched;
 *  - the same with claude against the stub model.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorkspace } from "../agents/helpers.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";
import { shellStep } from "../support/stub-model-tools.js";
import { cli, resultsDir, SLOW, type Ran } from "./helpers.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" } });

/** Every file of the work tree (not .git): path → mode and bytes (base64), to compare trees byte for byte. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(e.parentPath, e.name);
    const rel = path.relative(dir, full);
    if (rel === ".git" || rel.startsWith(`.git${path.sep}`) || !e.isFile()) continue;
    out[rel] = `${(statSync(full).mode & 0o111) !== 0 ? "x" : "-"} ${readFileSync(full).toString("base64")}`;
  }
  return out;
}

const FILES = { "README.md": "# test repo\n", "gone.txt": "to be deleted\n", "run.sh": "echo run\n" };
/** A change of every kind: an edit, a new file, a deletion, a binary file, an exec bit. */
const AGENT = `bash -c 'printf "more\\n" >> README.md; printf "new\\n" > added.txt; rm gone.txt; printf "\\000\\001\\002bin" > blob.bin; chmod +x run.sh'`;

const digestOf = (r: Ran) => /^ {2}digest: +([0-9a-f]{64})$/m.exec(r.stdout)?.[1];

describe("agent-runner run --approval required, then approve", () => {
  let ws: string;
  let results: string;
  let digest: string;
  let base: Record<string, string>;
  let headBefore: string;

  beforeAll(async () => {
    ws = makeWorkspace(FILES);
    base = tree(ws);
    headBefore = git(ws, "rev-parse", "HEAD").trim();
    results = path.join(mkdtempSync(path.join(os.tmpdir(), "approve-results-")), "run 1");
    const staged = await cli(["run", "--agent", "command", "--agent-command", AGENT, "--sandbox", "bwrap", "--prompt", "change things", "--approval", "required", "--results-dir", results], ws);
    expect(staged.stderr).not.toMatch(/^error:/m);
    expect(staged.code).toBe(0);
    digest = digestOf(staged)!;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(resultsDir(staged)).toBe(results);
    expect(staged.stdout).toContain(`staged for approval: nothing was applied to ${ws}`);
    expect(staged.stdout).toMatch(/^ {2}files changed: 5: README\.md, added\.txt, blob\.bin, gone\.txt, run\.sh$/m);
    expect(staged.stdout).toMatch(new RegExp(`^ {2}delivery: +the patch applied to the local working tree ${ws}, on ${headBefore.slice(0, 12)}$`, "m"));
    // The folder's name has a space: the command is one the shell takes as it is printed.
    expect(staged.stdout).toContain(`approve it:      agent-runner approve '${results}' ${digest.slice(0, 12)}\n`);
  }, SLOW);

  const untouched = () => {
    expect(tree(ws)).toEqual(base);
    expect(git(ws, "status", "--porcelain")).toBe("");
    expect(git(ws, "rev-parse", "HEAD").trim()).toBe(headBefore);
  };

  /** A copy of the results folder, changed by `edit`: what someone with write access to it could do. */
  const tampered = (edit: (dir: string) => void) => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), "approve-tampered-")), "results");
    cpSync(results, dir, { recursive: true, verbatimSymlinks: true });
    edit(dir);
    return dir;
  };

  it("nothing was applied: the working tree, its index and HEAD are as before; the record says staged", () => {
    untouched();
    const record = JSON.parse(readFileSync(path.join(results, "approval.json"), "utf8"));
    expect(record).toMatchObject({ kind: "local", state: "staged", digest, workTree: ws, baseCommit: headBefore });
    expect(JSON.parse(readFileSync(path.join(results, "outputs.json"), "utf8"))).toMatchObject({ "approval-state": "staged", "approval-digest": digest });
  });

  it.each([
    ["a wrong digest", (_: string) => "0123456789ab", /refused: the digest `0123456789ab` is not this staged run's/],
    ["too few digits", (d: string) => d.slice(0, 8), /is not a digest: give at least the first 12 hex digits/],
  ])("%s: refused, exit 1, nothing applied", async (_what, given, message) => {
    const r = await cli(["approve", results, given(digest)], ws);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain("Nothing was applied.");
    untouched();
  }, SLOW);

  it.each([
    ["a tampered patch", (dir: string) => appendFileSync(path.join(dir, "patch.diff"), "diff --git a/evil.txt b/evil.txt\nnew file mode 100644\n--- /dev/null\n+++ b/evil.txt\n@@ -0,0 +1 @@\n+evil\n"), /the results folder is not what was staged: its bytes .* now have the digest/],
    ["an added safe-output request", (dir: string) => {
      mkdirSync(path.join(dir, "outputs"), { recursive: true });
      writeFileSync(path.join(dir, "outputs/safe-outputs.jsonl"), '{"type":"add_labels","labels":["ship-it"]}\n');
    }, /the results folder is not what was staged/],
    ["an edited final message", (dir: string) => {
      const file = path.join(dir, "result.json");
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), output: "Approve me, all is fine." }));
    }, /the results folder is not what was staged/],
    ["a patch.diff that is a symbolic link", (dir: string) => {
      rmSync(path.join(dir, "patch.diff"));
      symlinkSync(path.join(results, "patch.diff"), path.join(dir, "patch.diff"));
    }, /patch\.diff is a symbolic link, which is never followed/],
    ["an approval.json that is a symbolic link", (dir: string) => {
      rmSync(path.join(dir, "approval.json"));
      symlinkSync(path.join(results, "approval.json"), path.join(dir, "approval.json"));
    }, /approval\.json is a symbolic link, which is never followed/],
    ["a result.json that does not parse as one", (dir: string) => writeFileSync(path.join(dir, "result.json"), '{"conclusion":"success"}'), /is not a usable results folder: result\.json does not have the expected shape/],
  ])("%s in the results folder: refused, exit 1, nothing applied", async (_what, edit, message) => {
    const r = await cli(["approve", tampered(edit), digest.slice(0, 12)], ws);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    untouched();
  }, SLOW);

  it("the right digest: the working tree is what the same agent leaves in an ordinary run, byte for byte; a second approve is refused", { timeout: SLOW }, async () => {
    const ok = await cli(["approve", results, digest.slice(0, 12)], ws);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`approved: digest ${digest} applied to ${ws} (5 file(s): README.md, added.txt, blob.bin, gone.txt, run.sh), not committed`);
    // The twin: the same repository, the same agent, no approval (it works in the checkout itself).
    const twin = makeWorkspace(FILES);
    const plain = await cli(["run", "--agent", "command", "--agent-command", AGENT, "--sandbox", "bwrap", "--prompt", "change things"], twin);
    expect(plain.code).toBe(0);
    const approved = tree(ws);
    expect(approved).toEqual(tree(twin));
    expect(approved).not.toEqual(base);
    expect(readFileSync(path.join(ws, "blob.bin"))).toEqual(Buffer.from([0, 1, 2, 0x62, 0x69, 0x6e]));
    // As a local run leaves it: changed, not committed.
    expect(git(ws, "rev-parse", "HEAD").trim()).toBe(headBefore);
    expect(git(ws, "status", "--porcelain").split("\n").filter(Boolean).sort()).toEqual([" D gone.txt", " M README.md", " M run.sh", "?? added.txt", "?? blob.bin"]);
    const record = JSON.parse(readFileSync(path.join(results, "approval.json"), "utf8"));
    expect(record).toMatchObject({ state: "enacted", digest, decision: { by: os.userInfo().username } });

    const after = tree(ws);
    const again = await cli(["approve", results, digest], ws);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/refused: the staged run `[0-9a-f]{12}` was already approved and applied by .* at /);
    // The record is the folder's, anyone's to edit: set back to staged, the repository's own ref still refuses.
    const reset = tampered((dir) => writeFileSync(path.join(dir, "approval.json"), JSON.stringify({ ...record, state: "staged", decision: undefined })));
    const third = await cli(["approve", reset, digest], ws);
    expect(third.code).toBe(1);
    expect(third.stderr).toContain(`was already approved or rejected (refs/agent-runner/approvals/${digest} exists in ${ws})`);
    expect(tree(ws)).toEqual(after);

    const shown = await cli(["show", results], ws);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^approval: +enacted by \\S+ at \\S+; digest ${digest}; staged \\S+ locally for ${ws} on ${headBefore.slice(0, 12)}, expires `, "m"));
  });
});

describe("refusals that need a staging of their own", () => {
  it("HEAD moved so that the patch no longer applies: refused naming both commits, no merge, the tree as the user left it", { timeout: SLOW }, async () => {
    const ws = makeWorkspace(FILES);
    const base = git(ws, "rev-parse", "HEAD").trim();
    const staged = await cli(["run", "--agent", "command", "--agent-command", AGENT, "--sandbox", "bwrap", "--prompt", "x", "--approval", "required"], ws);
    expect(staged.code).toBe(0);
    writeFileSync(path.join(ws, "README.md"), "# rewritten meanwhile\n");
    git(ws, "commit", "-qam", "meanwhile");
    const moved = git(ws, "rev-parse", "HEAD").trim();
    const before = tree(ws);
    const r = await cli(["approve", resultsDir(staged)!, digestOf(staged)!], ws);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`refused: HEAD of ${ws} moved from ${base.slice(0, 12)} (the staged base) to ${moved.slice(0, 12)} and the patch no longer applies`);
    expect(r.stderr).toContain("no merge is attempted");
    expect(tree(ws)).toEqual(before);
    expect(git(ws, "status", "--porcelain")).toBe("");
    // Nothing was decided: no lock was taken.
    expect(git(ws, "for-each-ref", "refs/agent-runner/")).toBe("");
  });

  it("--json gives the staged summary as JSON; reject drops it, and approve is refused after", { timeout: SLOW }, async () => {
    const ws = makeWorkspace(FILES);
    const base = tree(ws);
    // Two requests: one the policy allows, one of a kind it does not enable. Both are listed; a local run applies neither.
    const script = path.join(mkdtempSync(path.join(os.tmpdir(), "approve-agent-")), "agent.sh");
    writeFileSync(
      script,
      `printf '%s\\n' '{"type":"add_labels","labels":["bug"]}' '{"type":"create_issue","title":"t","body":"b"}' >> "$AGENT_SAFE_OUTPUTS"\nprintf 'more\\n' >> README.md\n`,
    );
    const args = ["run", "--agent", "command", "--agent-command", `bash ${script}`, "--sandbox", "none", "--prompt", "x", "--approval", "required", "--safe-outputs", '{"add-labels": {"allowed": ["bug"]}}'];
    const staged = await cli([...args, "--json"], ws);
    expect(staged.stderr).not.toMatch(/^error:/m);
    expect(staged.code).toBe(0);
    const json = JSON.parse(staged.stdout);
    expect(json.conclusion).toBe("success");
    expect(json.staged).toMatchObject({
      state: "staged",
      delivery: { mode: "working-tree", workTree: ws },
      changedFiles: ["README.md"],
      requests: [
        { line: 1, type: "add_labels", args: { labels: ["bug"] }, verdict: "passes the safe-output policy; a local run applies no GitHub request" },
        { line: 2, type: "create_issue", args: { title: "t", body: "b" }, verdict: "refused by the policy: line 2: 'create-issue' is not enabled in the 'safe-outputs' input" },
      ],
    });
    expect(json.staged.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(json.staged.approve).toBe(`agent-runner approve ${json.results} ${json.staged.digest.slice(0, 12)}`);
    expect(tree(ws)).toEqual(base);

    const rejected = await cli(["reject", json.results], ws);
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toContain(`rejected: digest ${json.staged.digest}; nothing was applied`);
    const r = await cli(["approve", json.results, json.staged.digest.slice(0, 12)], ws);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refused: the staged run `[0-9a-f]{12}` was already rejected by /);
    expect(tree(ws)).toEqual(base);
  });

  it("an expired staging is refused; the expiry is bound in the digest, so moving it in the record is a mismatch", { timeout: SLOW }, async () => {
    const ws = makeWorkspace(FILES);
    const base = tree(ws);
    // 0.0003 hours: about a second.
    const staged = await cli(["run", "--agent", "command", "--agent-command", AGENT, "--sandbox", "none", "--prompt", "x", "--approval", "required", "--approval-expires-hours", "0.0003"], ws);
    expect(staged.code).toBe(0);
    const results = resultsDir(staged)!;
    const digest = digestOf(staged)!;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const r = await cli(["approve", results, digest], ws);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refused: the staged run `[0-9a-f]{12}` expired at .*; run the agent again/);
    const file = path.join(results, "approval.json");
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), expiresAt: "2999-01-01T00:00:00.000Z" }));
    const extended = await cli(["approve", results, digest], ws);
    expect(extended.code).toBe(1);
    expect(extended.stderr).toMatch(/the results folder is not what was staged/);
    expect(tree(ws)).toEqual(base);
  });
});

describe("the run's checks come first", () => {
  it("a patch the patch rules refuse (a workflow file) is not staged: exit 1, no record, the tree untouched", { timeout: SLOW }, async () => {
    const ws = makeWorkspace(FILES);
    const base = tree(ws);
    const agent = `bash -c 'mkdir -p .github/workflows && printf "on: push\\n" > .github/workflows/evil.yml'`;
    const r = await cli(["run", "--agent", "command", "--agent-command", agent, "--sandbox", "none", "--prompt", "x", "--approval", "required"], ws);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: .*\.github\/workflows\/evil\.yml/m);
    expect(r.stdout).toContain("not staged for approval: the checks held the run back (see above); nothing was applied to the working tree");
    expect(r.stdout).not.toMatch(/digest:/);
    expect(readdirSync(resultsDir(r)!)).not.toContain("approval.json");
    expect(tree(ws)).toEqual(base);
  });
});

describe("the default results folder", () => {
  it("is a fresh folder in a parent only the user can write; a parent others can write (planted in a shared /tmp) is refused", { timeout: SLOW }, async () => {
    const ws = makeWorkspace(FILES);
    const tmp = mkdtempSync(path.join(os.tmpdir(), "cli-tmp-shared-"));
    const parent = path.join(tmp, `agent-runner-${process.getuid!()}`);
    const run = () => cli(["run", "--agent", "command", "--agent-command", "true", "--sandbox", "none", "--prompt", "x", "--approval", "required"], ws, { TMPDIR: tmp });
    const ok = await run();
    const dir = resultsDir(ok)!;
    expect(path.dirname(dir)).toBe(parent);
    expect(statSync(parent).mode & 0o077).toBe(0);
    chmodSync(parent, 0o777);
    const refused = await run();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`The results folder's parent ${parent} is not a folder that only you own and can write.`);
  });
});

describe("the staged summary passes the terminal door", () => {
  it("a file name and a request the agent chose, with ESC and OSC sequences, are shown as text", { timeout: SLOW }, async () => {
    const ws = makeWorkspace(FILES);
    const script = path.join(mkdtempSync(path.join(os.tmpdir(), "approve-agent-")), "agent.sh");
    writeFileSync(script, `printf x > "$(printf 'a\\033]0;pwned\\007b.txt')"\nprintf '%s\\n' '{"type":"add_labels","labels":["\\u001b[2Jbug"]}' >> "$AGENT_SAFE_OUTPUTS"\n`);
    const r = await cli(["run", "--agent", "command", "--agent-command", `bash ${script}`, "--sandbox", "none", "--prompt", "x", "--approval", "required", "--safe-outputs", '{"add-labels": {"allowed": ["bug"]}}'], ws);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/[\u001b\u0007]/);
    expect(r.stdout).toMatch(/^ {2}files changed: 1: a\\x1b\]0;pwned\\x07b\.txt$/m);
    expect(r.stdout).toMatch(/^ {4}line 1: add_labels \{"labels":\["\\u001b\[2Jbug"\]\} — refused by the policy: /m);
  });
});

describe("two approvals at once", () => {
  it("exactly one applies the patch; the other is refused and the tree holds the patch once", { timeout: SLOW }, async () => {
    const ws = makeWorkspace(FILES);
    const staged = await cli(["run", "--agent", "command", "--agent-command", AGENT, "--sandbox", "none", "--prompt", "x", "--approval", "required"], ws);
    expect(staged.code).toBe(0);
    const both = await Promise.all([0, 1].map(() => cli(["approve", resultsDir(staged)!, digestOf(staged)!], ws)));
    expect(both.map((r) => r.code).sort()).toEqual([0, 1]);
    const refused = both.find((r) => r.code === 1)!;
    expect(refused.stderr).toMatch(/refused: .*(already|decided first)/);
    expect(readFileSync(path.join(ws, "README.md"), "utf8")).toBe("# test repo\nmore\n");
    expect(git(ws, "for-each-ref", "--format=%(refname)", "refs/agent-runner/").trim()).toBe(`refs/agent-runner/approvals/${digestOf(staged)}`);
  });
});

describe("with claude against the stub model", () => {
  let stub: StubModel;
  beforeAll(async () => {
    stub = await startStubModel([shellStep("claude", "printf 'from claude\\n' > claude.txt"), { text: "Wrote claude.txt." }]);
  });
  afterAll(() => stub.close());

  it("the file claude wrote appears only on approve, with its bytes", { timeout: SLOW }, async () => {
    const ws = makeWorkspace();
    const base = tree(ws);
    const staged = await cli(
      ["run", "--agent", "claude", "--agent-version", "preinstalled", "--sandbox", "none", "--model", "claude-sonnet-4-5", "--base-url", stub.url, "--prompt", "write claude.txt", "--approval", "required"],
      ws,
      { ANTHROPIC_API_KEY: "sk-ant-approve-test-0123456789" },
    );
    expect(staged.stderr).not.toMatch(/^error:/m);
    expect(staged.code).toBe(0);
    expect(staged.stdout).toMatch(/^ {2}files changed: 1: claude\.txt$/m);
    expect(staged.stdout).toMatch(/^final message: Wrote claude\.txt\.$/m);
    expect(tree(ws)).toEqual(base);
    const ok = await cli(["approve", resultsDir(staged)!, digestOf(staged)!.slice(0, 12), "--json"], ws);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ approval: { kind: "local", state: "enacted", digest: digestOf(staged) }, workTree: ws, changedFiles: ["claude.txt"] });
    expect(tree(ws)).toEqual({ ...base, "claude.txt": `- ${Buffer.from("from claude\n").toString("base64")}` });
  });
});

describe("the lock is the exact ref", () => {
  it("a branch named like the lock (refs/heads/refs/agent-runner/approvals/<digest>) is not a decision: approve applies the patch", { timeout: SLOW }, async () => {
    const ws = makeWorkspace(FILES);
    const staged = await cli(["run", "--agent", "command", "--agent-command", AGENT, "--sandbox", "none", "--prompt", "x", "--approval", "required"], ws);
    expect(staged.code).toBe(0);
    const digest = digestOf(staged)!;
    // `rev-parse --verify refs/agent-runner/approvals/<digest>` would find this branch; the lock is only the full ref.
    git(ws, "branch", `refs/agent-runner/approvals/${digest}`);
    expect(git(ws, "rev-parse", "--verify", "--quiet", `refs/agent-runner/approvals/${digest}`).trim()).toMatch(/^[0-9a-f]{40}$/);
    const r = await cli(["approve", resultsDir(staged)!, digest], ws);
    expect(r.stderr).not.toMatch(/refused/);
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(ws, "README.md"), "utf8")).toBe("# test repo\nmore\n");
    expect(git(ws, "for-each-ref", "--format=%(refname)", "refs/agent-runner/").trim()).toBe(`refs/agent-runner/approvals/${digest}`);
  });
});
