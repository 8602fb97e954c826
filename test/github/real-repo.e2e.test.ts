/**
 * Issue #20: a real repository. git/git at a pinned commit (or, on a machine
 * without its mirror, the synthetic twin of test/support/real-repo.ts), in a
 * bare origin, checked out depth-1 as actions/checkout does; dist/main.js run
 * through the harness on an `@agent` issue comment with `agent: command`.
 *
 * - a mixed change (CRLF `.bat` under `eol=crlf`, a C edit, a binary file, a
 *   deletion, a rename, +x, a symlink, a non-ASCII name, a CRLF file with no
 *   attribute) is delivered exactly: patch.diff applies to a fresh depth-1
 *   clone and gives the agent's tree byte for byte, `changed-files` lists
 *   exactly what changed, and the pushed branch holds that same tree;
 * - a Git LFS pointer the agent rewrites is refused with a message naming
 *   it; deleting or moving pointers unchanged is delivered;
 * - in a sparse (cone) checkout the files left out are never deleted, a new
 *   file outside the cone is delivered, and so is a file the agent writes
 *   over one the checkout left out (as git itself would commit it).
 */
import { execFileSync } from "node:child_process";
import { appendFile, chmod, lstat, mkdtemp, readFile, readdir, readlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import { startFakeGitHub } from "../support/fake-github.js";
import { git } from "../support/git-fixtures.js";
import { runStep, type StepResult } from "../support/harness.js";
import { checkoutDepth1, createRealRepo, removeCheckout, type RealRepo } from "../support/real-repo.js";
import { TOKEN } from "./scenario.js";

const LFS_POINTER = (n: number) => `version https://git-lfs.github.com/spec/v1\noid sha256:${String(n).repeat(64).slice(0, 64)}\nsize ${1000 + n}\n`;
const CRLF_NOTES = "first line\r\nsecond line\r\n";
const BRANCH = "agent/7-typo-in-readme";

let real: RealRepo;
const checkouts: string[] = [];

beforeAll(async () => {
  real = await createRealRepo({
    extra: {
      // CRLF in the blob itself: no attribute converts *.txt.
      "contrib/windows-notes.txt": CRLF_NOTES,
      "assets/logo.psd": LFS_POINTER(1),
      "assets/old.psd": LFS_POINTER(2),
      "assets/moved.psd": LFS_POINTER(3),
    },
    prepare: (dir) => appendFile(path.join(dir, ".gitattributes"), "*.psd filter=lfs diff=lfs merge=lfs -text\n"),
  });
  console.log(`real repository: ${real.source}`);
}, 300_000);
afterAll(() => real?.cleanup());
afterEach(async () => {
  for (const dir of checkouts.splice(0)) await removeCheckout(dir);
});

async function checkout(sparse?: string[]): Promise<string> {
  const dir = await checkoutDepth1(real, sparse ? { sparse } : {});
  checkouts.push(dir);
  return dir;
}

/** The action's main step on `workspace` for an `@agent` comment on issue #7, the agent a bash script. */
async function runAgent(workspace: string, body: string): Promise<StepResult> {
  const gh = await startFakeGitHub({ token: TOKEN, repo: { fullName: FIXTURE_REPO, gitDir: real.origin, collaborators: { alice: "write" } } });
  try {
    const ev = buildEvent("issue_comment.issue", {});
    gh.seedEvent(ev);
    const scratch = await mkdtemp(path.join(os.tmpdir(), "real-repo-agent-"));
    const script = path.join(scratch, "agent.sh");
    await writeFile(script, `#!/bin/bash\nset -e\ncat > /dev/null\n${body}\necho "Done."\n`);
    await chmod(script, 0o755);
    const { env } = await writeEvent(scratch, ev);
    return await runStep("main", {
      workspace,
      inputs: { agent: "command", "agent-command": script, sandbox: "none" },
      githubToken: TOKEN,
      env: { ...env, GITHUB_API_URL: gh.url, GITHUB_SERVER_URL: gh.serverUrl, GITHUB_RUN_ID: "4242" },
      timeoutMs: 180_000,
    });
  } finally {
    await gh.close();
  }
}

type Entry = { kind: "file"; exec: boolean; bytes: Buffer } | { kind: "link"; target: string };

/** Every file and symlink of a work tree (outside .git), as bytes, exec bit and link target. */
async function readTree(dir: string): Promise<Map<string, Entry>> {
  const out = new Map<string, Entry>();
  for (const d of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(d.parentPath, d.name);
    const rel = path.relative(dir, full);
    if (rel === ".git" || rel.startsWith(`.git${path.sep}`)) continue;
    if (d.isSymbolicLink()) out.set(rel, { kind: "link", target: await readlink(full) });
    else if (d.isFile()) out.set(rel, { kind: "file", exec: ((await lstat(full)).mode & 0o100) !== 0, bytes: await readFile(full) });
  }
  return out;
}

/** Paths where two trees differ (missing on one side, kind, exec bit, bytes or target). */
function treeDifferences(a: Map<string, Entry>, b: Map<string, Entry>): string[] {
  const diffs: string[] = [];
  for (const p of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(p);
    const y = b.get(p);
    if (!x || !y) diffs.push(`${p}: only in ${x ? "the agent's tree" : "the patched clone"}`);
    else if (x.kind !== y.kind) diffs.push(`${p}: ${x.kind} vs ${y.kind}`);
    else if (x.kind === "link" && y.kind === "link" && x.target !== y.target) diffs.push(`${p}: link target ${x.target} vs ${y.target}`);
    else if (x.kind === "file" && y.kind === "file" && (x.exec !== y.exec || !x.bytes.equals(y.bytes))) diffs.push(`${p}: ${x.exec !== y.exec ? "mode" : "bytes"} differ`);
  }
  return diffs.sort();
}

const gitOrder = (paths: string[]) => [...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

/** Apply patch.diff to a fresh depth-1 clone as a user would (`git apply --check`, then `git apply`). */
async function applyToFreshClone(patchPath: string): Promise<string> {
  const fresh = await checkout();
  execFileSync("git", ["apply", "--check", patchPath], { cwd: fresh });
  execFileSync("git", ["apply", patchPath], { cwd: fresh });
  return fresh;
}

/** Tree of a work tree's files as git would commit them (a private index, HEAD's untouched). */
async function worktreeTree(dir: string): Promise<string> {
  const env = { GIT_INDEX_FILE: path.join(dir, ".git", "index-compare") };
  await git(dir, ["read-tree", "HEAD"], { env });
  await git(dir, ["add", "-A"], { env });
  return (await git(dir, ["write-tree"], { env })).trim();
}

const MIXED_CHANGE = [
  // CRLF file under `*.bat text eol=crlf`: one more CRLF line.
  `printf 'echo edited by the agent\\r\\n' >> compat/vcbuild/find_vs_env.bat`,
  // A C edit in the middle of the file.
  `sed -i '2i /* edited by the agent */' git.c`,
  // A binary file (NUL bytes, every byte value).
  `node -e 'process.stdout.write(Buffer.from(Array.from({length: 4096}, (_, i) => (i * 7919) % 256)))' > t/agent-data.bin`,
  `rm README.md`,
  `mv Documentation/SubmittingPatches Documentation/SubmittingPatches.md`,
  `chmod +x contrib/completion/git-completion.bash`,
  `ln -s Documentation/SubmittingPatches.md submitting-patches`,
  `printf 'Grüße aus dem Agenten\\n' > 'Documentation/ünïcødé-名前.adoc'`,
  // CRLF in the blob, no attribute: the new line keeps its CR too.
  `printf 'third line\\r\\n' >> contrib/windows-notes.txt`,
].join("\n");

describe(`a real repository (git/git, depth-1 checkout)`, () => {
  it("a mixed change (CRLF .bat, C edit, binary, deletion, rename, +x, symlink, non-ASCII name, CRLF without attribute): patch.diff gives the agent's tree byte for byte on a fresh depth-1 clone, changed-files is exact, the pushed branch holds the same tree", async () => {
    const ws = await checkout();
    expect((await git(ws, ["rev-parse", "--is-shallow-repository"])).trim()).toBe("true");
    const r = await runAgent(ws, MIXED_CHANGE);
    expect(r.exitCode, r.log).toBe(0);
    expect(r.outputs.conclusion).toBe("success");

    expect(JSON.parse(r.outputs["changed-files"]!)).toEqual(
      gitOrder([
        "Documentation/SubmittingPatches",
        "Documentation/SubmittingPatches.md",
        "Documentation/ünïcødé-名前.adoc",
        "README.md",
        "compat/vcbuild/find_vs_env.bat",
        "contrib/completion/git-completion.bash",
        "contrib/windows-notes.txt",
        "git.c",
        "submitting-patches",
        "t/agent-data.bin",
      ]),
    );
    const patch = await readFile(r.outputs["patch-path"]!, "utf8");
    expect(patch).toContain("rename from Documentation/SubmittingPatches\nrename to Documentation/SubmittingPatches.md");
    expect(patch).toContain("old mode 100644\nnew mode 100755");
    expect(patch).toContain("new file mode 120000");
    expect(patch).toContain("GIT binary patch");
    expect(patch).toContain("+third line\r\n");

    const fresh = await applyToFreshClone(r.outputs["patch-path"]!);
    expect(treeDifferences(await readTree(ws), await readTree(fresh))).toEqual([]);
    // The .bat is CRLF on disk on both sides (eol=crlf), the notes keep their CRs.
    expect((await readFile(path.join(fresh, "compat/vcbuild/find_vs_env.bat"), "latin1")).endsWith("echo edited by the agent\r\n")).toBe(true);
    expect(await readFile(path.join(fresh, "contrib/windows-notes.txt"), "latin1")).toBe(`${CRLF_NOTES}third line\r\n`);

    // What was pushed is that tree, on top of the commit the checkout had.
    expect(r.outputs.branch).toBe(BRANCH);
    const pushed = (await git(real.origin, ["rev-parse", `refs/heads/${BRANCH}^{tree}`])).trim();
    expect(pushed).toBe(await worktreeTree(fresh));
    expect((await git(real.origin, ["rev-parse", `refs/heads/${BRANCH}^`])).trim()).toBe(real.head);
  }, 300_000);

  it("Git LFS: a pointer the agent rewrites is refused, naming the file and Git LFS; nothing is pushed and the patch is kept", async () => {
    const ws = await checkout();
    const before = await git(real.origin, ["for-each-ref"]);
    const r = await runAgent(ws, `printf 'version https://git-lfs.github.com/spec/v1\\noid sha256:${"f".repeat(64)}\\nsize 99\\n' > assets/logo.psd\nprintf 'more\\n' >> git.c`);
    expect(r.exitCode).toBe(1);
    expect(r.rawStdout).toMatch(/::error::.*'assets\/logo\.psd' is stored with Git LFS \('filter=lfs' in \.gitattributes\)/);
    expect(r.rawStdout).not.toMatch(/::error::.*'git\.c'/);
    expect(await git(real.origin, ["for-each-ref"])).toBe(before);
    expect(JSON.parse(r.outputs["changed-files"]!)).toEqual(["assets/logo.psd", "git.c"]);
    expect(await readFile(r.outputs["patch-path"]!, "utf8")).toContain(`+oid sha256:${"f".repeat(64)}`);
  }, 300_000);

  it("Git LFS: deleting a pointer, moving one unchanged and a new file that is not LFS-tracked are delivered", async () => {
    const ws = await checkout();
    const r = await runAgent(ws, `rm assets/old.psd\nmkdir -p art\nmv assets/moved.psd art/moved.psd\nprintf 'notes\\n' > assets/NOTES.md`);
    expect(r.exitCode, r.log).toBe(0);
    expect(JSON.parse(r.outputs["changed-files"]!)).toEqual(["art/moved.psd", "assets/NOTES.md", "assets/moved.psd", "assets/old.psd"]);
    const files = await git(real.origin, ["ls-tree", "-r", "--name-only", `refs/heads/${BRANCH}`, "--", "assets", "art"]);
    expect(files.split("\n").filter(Boolean)).toEqual(["art/moved.psd", "assets/NOTES.md", "assets/logo.psd"]);
    expect(await git(real.origin, ["show", `refs/heads/${BRANCH}:art/moved.psd`])).toBe(LFS_POINTER(3));
  }, 300_000);

  it("sparse checkout (cone): the files left out are kept; a new file outside the cone and a file written over one left out are delivered", async () => {
    const ws = await checkout(["Documentation", "compat"]);
    const headFiles = (await git(ws, ["ls-tree", "-r", "--name-only", "HEAD"])).split("\n").filter(Boolean);
    const present = (await readTree(ws)).size;
    expect(present).toBeLessThan(headFiles.length / 2);
    const agent = [
      `printf 'one more line\\n' >> Documentation/SubmittingPatches`,
      `mkdir -p t contrib/completion`,
      `printf '#!/bin/sh\\necho new test\\n' > t/t9999-agent.sh`,
      `printf '# rewritten by the agent\\n' > contrib/completion/git-completion.bash`,
    ].join("\n");
    const r = await runAgent(ws, agent);
    expect(r.exitCode, r.log).toBe(0);
    expect(JSON.parse(r.outputs["changed-files"]!)).toEqual(["Documentation/SubmittingPatches", "contrib/completion/git-completion.bash", "t/t9999-agent.sh"]);
    expect(r.rawStdout).toMatch(/::warning::The patch changes or deletes 1 file\(s\) the sparse checkout had left out, which the agent never saw: contrib\/completion\/git-completion\.bash\n/);
    const patch = await readFile(r.outputs["patch-path"]!, "utf8");
    expect(patch).not.toContain("deleted file mode");
    const pushed = (await git(real.origin, ["ls-tree", "-r", "--name-only", `refs/heads/${BRANCH}`])).split("\n").filter(Boolean);
    expect(pushed).toEqual(gitOrder([...headFiles, "t/t9999-agent.sh"]));
    expect(await git(real.origin, ["show", `refs/heads/${BRANCH}:contrib/completion/git-completion.bash`])).toBe("# rewritten by the agent\n");
    // The patch applies to a full depth-1 clone as well.
    const fresh = await applyToFreshClone(r.outputs["patch-path"]!);
    expect(await readFile(path.join(fresh, "t/t9999-agent.sh"), "utf8")).toBe("#!/bin/sh\necho new test\n");
  }, 300_000);
});
