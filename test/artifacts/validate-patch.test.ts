/** The patch validator against real git repositories. */
import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitEnv } from "../../src/config/host.js";
import { Git } from "../../src/git/git.js";
import { pathProblem, symlinkVerdict, validatePatch, PatchRefusedError } from "../../src/publish/validate-patch.js";
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
