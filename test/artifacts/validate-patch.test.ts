/** The patch validator against real git repositories. */
import { chmodSync, mkdtempSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitEnv } from "../../src/config/host.js";
import { Git } from "../../src/git/git.js";
import { checkTree } from "../../src/publish/patch-rules.js";
import { pathProblem, symlinkVerdict } from "../../src/publish/patch-rules.js";
import { validatePatch, PatchRefusedError } from "../../src/publish/validate-patch.js";
import { git, makeRepo } from "./helpers.js";

const scratch = () => mkdtempSync(path.join(os.tmpdir(), "validate-scratch-"));

/** Make changes in a copy of `repo`, return the patch (as collectChanges writes it) and the base commit. */
function patchFrom(repo: string, change: (dir: string) => void): { patch: string; base: string } {
  const work = mkdtempSync(path.join(os.tmpdir(), "validate-work-"));
  git(work, "clone", "-q", repo, ".");
  const base = git(work, "rev-parse", "HEAD").trim();
  change(work);
  git(work, "add", "-A");
  const file = path.join(scratch(), "patch.diff");
  writeFileSync(file, git(work, "diff", "--cached", "--binary", "--full-index", "-M", base));
  return { patch: file, base };
}

const policy = { allowWorkflowChanges: false };
const opts = () => ({ source: "test", scratchDir: scratch() });

describe("pathProblem", () => {
  it("accepts ordinary paths and refuses .git, .. and absolute ones", () => {
    expect(pathProblem("src/a.ts")).toBeUndefined();
    expect(pathProblem(".github/x.yml")).toBeUndefined();
    expect(pathProblem(".gitignore")).toBeUndefined();
    expect(pathProblem(".git/config")).toMatch(/inside a \.git folder/);
    expect(pathProblem("sub/.GIT/hooks/pre-commit")).toMatch(/inside a \.git folder/);
    expect(pathProblem(".git./hooks/x")).toMatch(/inside a \.git folder/);
    expect(pathProblem("GIT~1/config")).toMatch(/inside a \.git folder/);
    expect(pathProblem("a/../../etc/passwd")).toMatch(/climbs out/);
    expect(pathProblem("/etc/passwd")).toMatch(/absolute/);
  });
});

describe("symlinkVerdict", () => {
  const links = (o: Record<string, string>) => new Map(Object.entries(o));
  it("follows chains of links", () => {
    expect(symlinkVerdict("docs/readme", links({ "docs/readme": "../README.md" }))).toBe("ok");
    expect(symlinkVerdict("up", links({ up: ".." }))).toBe("escapes");
    expect(symlinkVerdict("abs", links({ abs: "/etc" }))).toBe("escapes");
    expect(symlinkVerdict("cfg", links({ cfg: "sub/../.git/config" }))).toBe("git");
    // a/b → .. is the root (fine), but c → a/b/.. goes one above it.
    const chain = links({ "a/b": "..", c: "a/b/.." });
    expect(symlinkVerdict("a/b", chain)).toBe("ok");
    expect(symlinkVerdict("c", chain)).toBe("escapes");
    expect(symlinkVerdict("x", links({ x: "y", y: "x" }))).toBe("loop");
    expect(symlinkVerdict("docs/wf", links({ "docs/wf": "../.github/workflows" }))).toBe("github");
    expect(symlinkVerdict("d/l", links({ "d/l": "../.GitHub" }))).toBe("github");
  });
});

describe("validatePatch", () => {
  const repo = makeRepo({ "a.txt": "a\n", "docs/guide.md": "g\n" });

  it("accepts an ordinary patch with new, deleted, binary and in-repo symlink changes", async () => {
    const { patch, base } = patchFrom(repo, (d) => {
      writeFileSync(path.join(d, "new.txt"), "n\n");
      writeFileSync(path.join(d, "bin.dat"), Buffer.from([0, 1, 2, 3, 255]));
      symlinkSync("../a.txt", path.join(d, "docs/link"));
      git(d, "rm", "-q", "docs/guide.md");
    });
    const v = await validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts());
    expect([...v.changedFiles].sort()).toEqual(["bin.dat", "docs/guide.md", "docs/link", "new.txt"]);
    // Nothing in the repository moved.
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("refuses a symlink chain that leaves the repository", async () => {
    const { patch, base } = patchFrom(repo, (d) => {
      mkdirSync(path.join(d, "a"), { recursive: true });
      symlinkSync("..", path.join(d, "a/b"));
      symlinkSync("a/b/..", path.join(d, "c"));
    });
    await expect(validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts())).rejects.toThrow(/symlink 'c' → 'a\/b\/\.\.' points outside the repository/);
  });

  it("refuses an absolute symlink and one into .git", async () => {
    const { patch, base } = patchFrom(repo, (d) => {
      symlinkSync("/etc/passwd", path.join(d, "abs"));
      symlinkSync(".git/config", path.join(d, "cfg"));
    });
    const e = await validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PatchRefusedError);
    expect((e as Error).message).toContain("symlink 'abs' → '/etc/passwd' points outside the repository");
    expect((e as Error).message).toContain("symlink 'cfg' → '.git/config' points into .git");
  });

  it("keeps an escaping symlink the repository already had, unchanged", async () => {
    const withLink = makeRepo({ "a.txt": "a\n" });
    symlinkSync("/usr/share", path.join(withLink, "share"));
    git(withLink, "add", "-A");
    git(withLink, "commit", "-qm", "link");
    const { patch, base } = patchFrom(withLink, (d) => writeFileSync(path.join(d, "a.txt"), "b\n"));
    await expect(validatePatch(new Git(withLink, gitEnv()), patch, base, policy, opts())).resolves.toMatchObject({ changedFiles: ["a.txt"] });
  });

  it("refuses workflow changes unless allowed, and patches over the size limit", async () => {
    const { patch, base } = patchFrom(repo, (d) => {
      mkdirSync(path.join(d, ".github/workflows"), { recursive: true });
      writeFileSync(path.join(d, ".github/workflows/ci.yml"), "on: push\n");
    });
    await expect(validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts())).rejects.toThrow(/changes workflow files \(\.github\/workflows\/ci\.yml\)/);
    await expect(validatePatch(new Git(repo, gitEnv()), patch, base, { allowWorkflowChanges: true }, opts())).resolves.toMatchObject({
      changedFiles: [".github/workflows/ci.yml"],
    });
    await expect(validatePatch(new Git(repo, gitEnv()), patch, base, { allowWorkflowChanges: true, maxBytes: 10 }, opts())).rejects.toThrow(/it is \d+ bytes, over the 10 bytes limit/);
    // A refusal names the files the patch touches once git could read it: what the outputs report.
    const refused = await validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts()).catch((x: unknown) => x);
    expect(refused).toBeInstanceOf(PatchRefusedError);
    expect((refused as PatchRefusedError).namedFiles).toEqual([".github/workflows/ci.yml"]);
    const tooBig = await validatePatch(new Git(repo, gitEnv()), patch, base, { allowWorkflowChanges: true, maxBytes: 10 }, opts()).catch((x: unknown) => x);
    expect((tooBig as PatchRefusedError).namedFiles).toEqual([]);
  });

  it("a rename names both sides: its source is in what a refusal names and in what is delivered (git apply's numstat names only the target)", async () => {
    const moved = makeRepo({ ".github/workflows/ci.yml": "on: push\njobs: {}\n", "a.txt": "a file with enough lines\nto be seen as renamed\n" });
    const { patch, base } = patchFrom(moved, (d) => {
      git(d, "mv", ".github/workflows/ci.yml", "ci.yml");
      git(d, "mv", "a.txt", "b.txt");
    });
    expect(readFileSync(patch, "utf8")).toContain("rename from .github/workflows/ci.yml");
    const refused = await validatePatch(new Git(moved, gitEnv()), patch, base, policy, opts()).catch((x: unknown) => x);
    expect(refused).toBeInstanceOf(PatchRefusedError);
    expect(String((refused as Error).message)).toMatch(/changes workflow files \(\.github\/workflows\/ci\.yml\)/);
    expect([...(refused as PatchRefusedError).namedFiles].sort()).toEqual([".github/workflows/ci.yml", "a.txt", "b.txt", "ci.yml"]);
    const allowed = await validatePatch(new Git(moved, gitEnv()), patch, base, { allowWorkflowChanges: true }, opts());
    expect([...allowed.changedFiles].sort()).toEqual([".github/workflows/ci.yml", "a.txt", "b.txt", "ci.yml"]);
  });

  it("with the base tree already read (phase all: the runner's baseline), the same answer without asking git for it", async () => {
    const { patch, base } = patchFrom(repo, (d) => {
      writeFileSync(path.join(d, "a.txt"), "b\n");
      writeFileSync(path.join(d, "bin.dat"), Buffer.from([0, 1, 2, 3, 255]));
    });
    const shim = mkdtempSync(path.join(os.tmpdir(), "git-shim-"));
    const calls = path.join(shim, "calls.log");
    writeFileSync(calls, "");
    writeFileSync(path.join(shim, "git"), `#!/bin/sh\nprintf '%s\\n' "$*" >> ${JSON.stringify(calls)}\nexec /usr/bin/git "$@"\n`);
    chmodSync(path.join(shim, "git"), 0o755);
    const baseTree = git(repo, "rev-parse", `${base}^{tree}`).trim();
    const asked = await validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts());
    const given = await validatePatch(new Git(repo, { ...gitEnv(), PATH: `${shim}:/usr/bin:/bin` }), patch, base, policy, { ...opts(), baseTree });
    expect(given).toEqual(asked);
    expect(given.postImage).toMatchObject({ baseTree, binaryFiles: ["bin.dat"] });
    const spawned = readFileSync(calls, "utf8").split("\n").filter(Boolean);
    expect(spawned.some((c) => c.includes("write-tree"))).toBe(true);
    expect(spawned.filter((c) => c.includes("rev-parse"))).toEqual([]);
  });

  it("with the base tree known, names and apply come from one git apply: every verdict and message is the same as without", async () => {
    const { patch: ordinary, base } = patchFrom(repo, (d) => {
      writeFileSync(path.join(d, "a.txt"), "b\n");
      git(d, "mv", "docs/guide.md", "docs/moved.md");
    });
    const dir = scratch();
    const at = (name: string, text: string) => {
      writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const newFile = (file: string) => `diff --git a/${file} b/${file}\nnew file mode 100644\nindex 0000000..78981922613b2afb6025042ff6bd878ac1994e85\n--- /dev/null\n+++ b/${file}\n@@ -0,0 +1 @@\n+a\n`;
    const cases = {
      ordinary,
      // Names .git/: refused by its names, whether or not git would apply it.
      intoGit: at("git.diff", newFile(".git/hooks/pre-commit")),
      climbing: at("up.diff", newFile("../outside.txt")),
      // A change to a line the base commit does not have.
      stale: at("stale.diff", "diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-not this\n+b\n"),
      garbage: at("garbage.diff", "diff --git a/a.txt b/a.txt\n@@ nonsense @@\n"),
    };
    const baseTree = git(repo, "rev-parse", `${base}^{tree}`).trim();
    const verdict = (p: string, known?: string) =>
      validatePatch(new Git(repo, gitEnv()), p, base, policy, { ...opts(), ...(known ? { baseTree: known } : {}) }).then(
        (v) => ({ ok: v.changedFiles }),
        (e: unknown) => ({ refused: e instanceof PatchRefusedError ? [e.message, e.namedFiles] : String(e) }),
      );
    for (const [name, p] of Object.entries(cases)) expect([name, await verdict(p, baseTree)]).toEqual([name, await verdict(p)]);
    expect(await verdict(ordinary, baseTree)).toEqual({ ok: ["a.txt", "docs/guide.md", "docs/moved.md"] });
    expect(JSON.stringify(await verdict(cases.intoGit, baseTree))).toMatch(/inside a \.git folder/);
    expect(JSON.stringify(await verdict(cases.stale, baseTree))).toMatch(/does not apply cleanly to the base commit/);
    expect(JSON.stringify(await verdict(cases.garbage, baseTree))).toMatch(/git cannot read it as a patch/);
  });

  it("explains a base commit the workspace does not have", async () => {
    const { patch } = patchFrom(repo, (d) => writeFileSync(path.join(d, "a.txt"), "b\n"));
    const e = await validatePatch(new Git(repo, gitEnv()), patch, "f".repeat(40), policy, opts()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PatchRefusedError);
    expect((e as Error).message).toMatch(/made against commit f{40}, which is not in the workspace/);
    expect((e as PatchRefusedError).namedFiles).toEqual(["a.txt"]);
  });

  it("accepts an empty patch without looking further", async () => {
    const empty = path.join(scratch(), "patch.diff");
    writeFileSync(empty, "");
    await expect(validatePatch(new Git(repo, gitEnv()), empty, "f".repeat(40), policy, opts())).resolves.toEqual({ changedFiles: [], bytes: 0 });
  });
});

/** The refusal message validatePatch gives for a change made in a clone of `repo` (undefined: accepted). */
async function refusalFor(repo: string, change: (dir: string) => void, allowWorkflowChanges = false): Promise<string | undefined> {
  const { patch, base } = patchFrom(repo, change);
  try {
    await validatePatch(new Git(repo, gitEnv()), patch, base, { allowWorkflowChanges }, opts());
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(PatchRefusedError);
    return (e as Error).message;
  }
}

const write = (d: string, file: string, content: string) => {
  mkdirSync(path.dirname(path.join(d, file)), { recursive: true });
  writeFileSync(path.join(d, file), content);
};

describe("validatePatch: submodules, attributes, .github (issue 17 item 8)", () => {
  const repo = makeRepo({
    "a.txt": "a\n",
    ".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n*.sh text eol=lf\n",
    "sub/keep.txt": "k\n",
    ".github/actions/setup/action.yml": "runs: { using: node20, main: x.js }\n",
  });

  it("refuses a submodule gitlink the agent adds, and one it removes", async () => {
    const added = await refusalFor(repo, (d) => {
      git(d, "init", "-q", "vendor/lib");
      git(path.join(d, "vendor/lib"), "commit", "-q", "--allow-empty", "-m", "x");
    });
    expect(added).toMatch(/it adds the submodule \(gitlink\) 'vendor\/lib'; Agent Runner never delivers submodule changes \(no input allows it\)/);

    const withLink = makeRepo({ "a.txt": "a\n" });
    git(withLink, "update-index", "--add", "--cacheinfo", `160000,${git(withLink, "rev-parse", "HEAD").trim()},lib`);
    git(withLink, "commit", "-qm", "gitlink");
    expect(await refusalFor(withLink, (d) => git(d, "rm", "-q", "--cached", "lib"))).toMatch(/it removes the submodule \(gitlink\) 'lib'/);
  });

  it("refuses any .gitmodules and .lfsconfig, at any depth and in any spelling a checkout treats the same", async () => {
    expect(await refusalFor(repo, (d) => write(d, ".gitmodules", '[submodule "x"]\n\tpath = x\n\turl = https://evil.example/x\n'))).toMatch(
      /it changes '\.gitmodules', which says where submodules are fetched from; Agent Runner never delivers it \(no input allows it\)/,
    );
    expect(await refusalFor(repo, (d) => write(d, "sub/.GITMODULES.", "x\n"))).toMatch(/'sub\/\.GITMODULES\.'/);
    expect(await refusalFor(repo, (d) => write(d, ".lfsconfig", "[lfs]\n\turl = https://evil.example/lfs\n"))).toMatch(/'\.lfsconfig', which says which server git-lfs talks to/);
  });

  it("refuses .gitattributes lines that add filter, diff or merge drivers (also through a macro), and allows the rest", async () => {
    expect(await refusalFor(repo, (d) => write(d, ".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n*.sh text eol=lf\n* filter=evil\n"))).toMatch(
      /it adds '\* filter=evil' to '\.gitattributes': filter, diff and merge drivers run commands in every later git that has them configured; Agent Runner never delivers them \(no input allows it\)/,
    );
    expect(await refusalFor(repo, (d) => write(d, "sub/.gitattributes", "*.txt diff=exif\n"))).toMatch(/it adds '\*\.txt diff=exif' to 'sub\/\.gitattributes'/);
    expect(await refusalFor(repo, (d) => write(d, "sub/.gitattributes", '"a b.txt" merge=ours\n'))).toMatch(/'"a b\.txt" merge=ours'/);
    // A new macro that assigns a driver, and a line that sets a macro the root file already defines.
    expect(await refusalFor(repo, (d) => write(d, ".gitattributes", "[attr]evil filter=evil\n* evil\n"))).toMatch(/it adds '\[attr\]evil filter=evil', '\* evil'/);
    const macroRepo = makeRepo({ ".gitattributes": "[attr]lfsish filter=lfs diff=lfs\n", "a.txt": "a\n" });
    expect(await refusalFor(macroRepo, (d) => write(d, "docs/.gitattributes", "*.pdf lfsish\n"))).toMatch(/it adds '\*\.pdf lfsish' to 'docs\/\.gitattributes'/);
    // A .gitattributes that is a symlink cannot be read line by line.
    expect(await refusalFor(repo, (d) => symlinkSync("a.txt", path.join(d, "sub/.gitattributes")))).toMatch(/'sub\/\.gitattributes' is a symlink; a \.gitattributes must be a plain file/);
    // Not refused: conversions, export and linguist attributes, unsetting a driver, and lines the file already had.
    expect(
      await refusalFor(repo, (d) =>
        write(d, ".gitattributes", "*.bin   filter=lfs diff=lfs merge=lfs -text\n*.sh text eol=lf\n*.ps1 working-tree-encoding=UTF-16LE eol=crlf\n/dist export-ignore linguist-generated\n*.min.js -diff binary\n"),
      ),
    ).toBeUndefined();
    expect(await refusalFor(repo, (d) => git(d, "rm", "-q", ".gitattributes"))).toBeUndefined();
  });

  it("refuses symlinks at or into .github, and .github/actions changes unless allow-workflow-changes", async () => {
    const dotGithub = makeRepo({ "a.txt": "a\n", "docs/workflows/ci.yml": "on: push\n" });
    expect(await refusalFor(dotGithub, (d) => symlinkSync("docs", path.join(d, ".github")), true)).toMatch(
      /'\.github' is a symlink in \.github: it would make files outside \.github count as workflows or actions \(no input allows it\)/,
    );
    expect(
      await refusalFor(dotGithub, (d) => {
        mkdirSync(path.join(d, ".github"));
        symlinkSync("../docs/workflows", path.join(d, ".github/workflows"));
      }, true),
    ).toMatch(/'\.github\/workflows' is a symlink in \.github/);
    expect(await refusalFor(repo, (d) => symlinkSync("../.github/actions", path.join(d, "sub/actions")))).toMatch(
      /symlink 'sub\/actions' → '\.\.\/\.github\/actions' points into \.github/,
    );
    const edit = (d: string) => write(d, ".github/actions/setup/action.yml", "runs: { using: node20, main: evil.js }\n");
    expect(await refusalFor(repo, edit)).toMatch(
      /it changes workflow files \(\.github\/actions\/setup\/action\.yml\); set 'allow-workflow-changes: true' to deliver changes to \.github\/workflows\/ and \.github\/actions\//,
    );
    expect(await refusalFor(repo, edit, true)).toBeUndefined();
    // Spellings a Windows or macOS checkout folds onto the same folders and files.
    expect(await refusalFor(repo, (d) => write(d, ".GitHub./Actions/y/action.yml", "x\n"))).toMatch(/changes workflow files \(\.GitHub\.\/Actions\/y\/action\.yml\)/);
    expect(await refusalFor(repo, (d) => write(d, ".git\u200cattributes", "* filter=evil\n"))).toMatch(/it adds '\* filter=evil' to '\.git\u200cattributes'/);
  });

  it("refuses a symlink whose target is not UTF-8 (it could not be matched against the other links)", async () => {
    expect(await refusalFor(repo, (d) => symlinkSync(Buffer.from([0x2e, 0x2e, 0x2f, 0xff]), path.join(d, "odd")))).toMatch(
      /the name or target of symlink 'odd' is not UTF-8 text, so where it leads cannot be checked/,
    );
  });

  it("lists every problem of one patch, each naming its file", async () => {
    const message = await refusalFor(repo, (d) => {
      write(d, ".gitmodules", "x\n");
      write(d, "sub/.gitattributes", "* filter=evil\n");
      write(d, ".github/actions/x/action.yml", "x\n");
    });
    expect(message).toMatch(/^The patch from test was refused:\n  - /);
    for (const f of [".gitmodules", "sub/.gitattributes", ".github/actions/x/action.yml"]) expect(message).toContain(f);
  });
});

describe("checkTree: the committed tree against its parent", () => {
  const tree = (repo: string, rev = "HEAD") => git(repo, "rev-parse", `${rev}^{tree}`).trim();
  const commitChange = (repo: string, change: (dir: string) => void) => {
    change(repo);
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "change");
  };

  it("a link that was harmless on the base escapes next to the tip's own link", async () => {
    const repo = makeRepo({ "d/sub/f.txt": "f\n", "a.txt": "a\n" });
    // The patch's change, on the base: d/link → sub/.. is d itself.
    commitChange(repo, (d) => symlinkSync("sub/..", path.join(d, "d/link")));
    const git_ = new Git(repo, gitEnv());
    expect((await checkTree(git_, tree(repo, "HEAD~1"), tree(repo), policy, scratch())).problems).toEqual([]);
    // The tip made d/sub a link to the root (harmless alone); with it, d/link leaves the repository.
    const tip = makeRepo({ "a.txt": "a\n" });
    mkdirSync(path.join(tip, "d"));
    symlinkSync("..", path.join(tip, "d/sub"));
    git(tip, "add", "-A");
    git(tip, "commit", "-qm", "tip");
    const tipGit = new Git(tip, gitEnv());
    expect((await checkTree(tipGit, tree(tip, "HEAD~1"), tree(tip), policy, scratch())).problems).toEqual([]);
    commitChange(tip, (d) => symlinkSync("sub/..", path.join(d, "d/link")));
    const { problems } = await checkTree(tipGit, tree(tip, "HEAD~1"), tree(tip), policy, scratch());
    expect(problems).toEqual([{ file: "d/link", message: "symlink 'd/link' → 'sub/..' points outside the repository" }]);
  });

  it("a file that is an action through a link the parent has in .github counts as a workflow change", async () => {
    const repo = makeRepo({ "tools/setup/action.yml": "a\n", "a.txt": "a\n" });
    mkdirSync(path.join(repo, ".github/actions"), { recursive: true });
    symlinkSync("../../tools/setup", path.join(repo, ".github/actions/setup"));
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "link");
    commitChange(repo, (d) => writeFileSync(path.join(d, "tools/setup/action.yml"), "evil\n"));
    const git_ = new Git(repo, gitEnv());
    const { problems } = await checkTree(git_, tree(repo, "HEAD~1"), tree(repo), policy, scratch());
    expect(problems).toEqual([
      { file: "tools/setup/action.yml", message: "'tools/setup/action.yml' is '.github/actions/setup/action.yml' through a symlink in .github", allowedBy: "allow-workflow-changes" },
    ]);
    expect((await checkTree(git_, tree(repo, "HEAD~1"), tree(repo), { allowWorkflowChanges: true }, scratch())).problems).toEqual([]);
  });
});

describe("validatePatch: files a filter stores (Git LFS, git-crypt)", () => {
  const pointer = (oid: string) => `version https://git-lfs.github.com/spec/v1\noid sha256:${oid.repeat(64).slice(0, 64)}\nsize 12\n`;
  const attributes = "*.psd filter=lfs diff=lfs merge=lfs -text\n[attr]secret filter=git-crypt diff=git-crypt\nkeys/* secret\n";
  const repo = makeRepo({ ".gitattributes": attributes, "art/a.psd": pointer("a"), "art/b.psd": pointer("b"), "keys/k.txt": "cipher\n", "README.md": "r\n" });

  it("refuses a rewritten pointer, a new file under an LFS pattern and a file under a macro naming git-crypt, each named", async () => {
    const { patch, base } = patchFrom(repo, (d) => {
      writeFileSync(path.join(d, "art/a.psd"), pointer("c"));
      writeFileSync(path.join(d, "art/new.psd"), Buffer.from([0x38, 0x42, 0x50, 0x53, 0, 1]));
      writeFileSync(path.join(d, "keys/k.txt"), "plain text\n");
      writeFileSync(path.join(d, "README.md"), "r2\n");
    });
    const e = await validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PatchRefusedError);
    const message = (e as Error).message;
    expect(message).toContain("'art/a.psd' is stored with Git LFS ('filter=lfs' in .gitattributes)");
    expect(message).toContain("'art/new.psd' is stored with Git LFS");
    expect(message).toContain("'keys/k.txt' passes through the 'git-crypt' filter");
    expect(message).not.toContain("README.md");
  });

  it("delivers a deleted pointer, one moved unchanged and a mode change", async () => {
    const { patch, base } = patchFrom(repo, (d) => {
      git(d, "rm", "-q", "art/a.psd");
      git(d, "mv", "art/b.psd", "art/moved.psd");
      chmodSync(path.join(d, "keys/k.txt"), 0o755);
    });
    const v = await validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts());
    expect([...v.changedFiles].sort()).toEqual(["art/a.psd", "art/b.psd", "art/moved.psd", "keys/k.txt"]);
  });

  it("a plain file moved to an LFS path is not a pointer moved: refused", async () => {
    const { patch, base } = patchFrom(repo, (d) => git(d, "mv", "README.md", "art/readme.psd"));
    await expect(validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts())).rejects.toThrow(/'art\/readme\.psd' is stored with Git LFS/);
  });

  it("a filter the agent removes from .gitattributes in the same patch no longer holds the file", async () => {
    const { patch, base } = patchFrom(repo, (d) => {
      writeFileSync(path.join(d, ".gitattributes"), "");
      writeFileSync(path.join(d, "art/a.psd"), "now a plain file\n");
    });
    await expect(validatePatch(new Git(repo, gitEnv()), patch, base, policy, opts())).resolves.toMatchObject({ changedFiles: [".gitattributes", "art/a.psd"] });
  });
});
