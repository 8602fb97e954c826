/**
 * Protected files: paths whose change can run code on a maintainer's or CI's
 * machine, or steer later agents, without looking like much in a diff
 * (dependency manifests and locks, CI and build config, build wrappers, git
 * hook managers, task runners and tool managers, editor and container tasks,
 * package-manager config, agent instruction and settings files, CODEOWNERS).
 * `protected-files` decides what a change to them gets: `review` (a draft
 * pull request that names them), `block` (refused) or `allow`.
 * `protected-paths` edits the list with globs: `glob` adds, `!glob` exempts.
 *
 * Judged on the tree the patch makes, links included (protectedInTree): a
 * path is protected when any name it has in that tree is. `.cargo` committed
 * as a symlink to `tools/cargo` makes `tools/cargo/config.toml` the file cargo
 * reads as `.cargo/config.toml`, so both the link and the file are protected;
 * so is a link that leads into a protected place (`tools/x` → `.husky`), one
 * that leads out of the repository, and a submodule (gitlink).
 *
 * Names are compared folded (case as upper-cased then lower-cased, so `ſ` is
 * `s` and `ı` is `i`; canonical Unicode normalization; HFS-ignored code
 * points; NTFS trailing dots): the same tree is checked out on macOS and Windows runners, where
 * `.CARGO/Config.toml` is `.cargo/config.toml`.
 */
import path from "node:path";
import type { Git } from "../../git/git.js";
import { foldCase, folded, GITLINK_MODE, MAX_ALIAS_STEPS, MAX_ALIASES, MAX_LINK_HOPS, SYMLINK_MODE, treeChanges, treeLinks, type Change } from "../patch-rules.js";

/** A bare name matches at any depth; a name with `/` matches those last segments at any depth. */
const PROTECTED_NAMES = [
  // JavaScript / TypeScript (package.json also holds simple-git-hooks' and husky v4's hook commands)
  "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "pnpm-workspace.yaml", "bun.lock", "bun.lockb", "bunfig.toml", "deno.json", "deno.jsonc",
  ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".pnpmfile.mjs",
  // Python
  "requirements*.txt", "Pipfile", "Pipfile.lock", "pyproject.toml", "poetry.lock", "uv.lock", "uv.toml", "setup.py", "setup.cfg", "tox.ini", "noxfile.py", "conftest.py", "pip.conf", "pip.ini", ".pypirc",
  // Ruby, Go, Rust, PHP, Elixir, Swift
  "Gemfile", "Gemfile.lock", "*.gemspec", "Rakefile", "go.mod", "go.sum", "go.work", "Cargo.toml", "Cargo.lock", "build.rs", "rust-toolchain", "rust-toolchain.toml", "composer.json", "composer.lock", "mix.exs", "mix.lock", "Package.swift", "Package.resolved", "Podfile", "Podfile.lock",
  // JVM and .NET, build wrappers
  "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradle.properties", "gradlew", "gradlew.bat", "mvnw", "mvnw.cmd", "*.csproj", "*.fsproj", "*.vbproj", "*.sln", "packages.lock.json", "Directory.Build.props", "Directory.Build.targets", "Directory.Packages.props", "NuGet.config",
  // Build and CI
  "Makefile", "GNUmakefile", "*.mk", "CMakeLists.txt", "*.cmake", "meson.build", "BUILD", "BUILD.bazel", "WORKSPACE", "MODULE.bazel", "*.bzl", ".bazelrc", "Jenkinsfile", ".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", ".gitattributes", ".gitmodules", ".envrc",
  // Git hook managers (husky's, lefthook's and pre-commit's folders are below)
  ".pre-commit-config.yaml", "lefthook*.yml", "lefthook*.yaml", "lefthook*.json", "lefthook*.jsonc", "lefthook*.toml", ".lefthook*", ".simple-git-hooks*", "simple-git-hooks.*", ".huskyrc", ".huskyrc.*", ".overcommit.yml", ".lintstagedrc*", "lint-staged.config.*",
  // Task runners and tool managers
  "mise.toml", "mise.*.toml", ".mise.toml", ".mise.*.toml", "mise/config.toml", ".tool-versions", "Taskfile*.yml", "Taskfile*.yaml", "justfile", ".justfile", "*.just",
  // Containers and dev containers
  "Dockerfile", "Dockerfile.*", "*.Dockerfile", "Containerfile", "docker-compose*.yml", "docker-compose*.yaml", "compose.yml", "compose.yaml", ".dockerignore", ".devcontainer.json",
  // Agent instructions and settings (every supported agent's)
  "AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md", ".cursorrules", "copilot-instructions.md", "opencode.json", "opencode.jsonc", "agent-runner.yml", ".mcp.json",
  // Ownership
  "CODEOWNERS",
];

/** Folders protected with everything under them (and themselves), at any depth. */
const PROTECTED_DIRS = [
  ".github", ".circleci", ".devcontainer", ".vscode", ".idea",
  // build wrappers and package managers
  "gradle/wrapper", ".mvn", ".cargo", ".yarn",
  // git hooks
  ".husky", ".lefthook", ".lefthook-local", ".githooks",
  // tool managers and their tasks
  ".mise", "mise/tasks", "mise-tasks", ".mise-tasks", ".config/mise",
  // agents
  ".claude", ".codex", ".gemini", ".opencode", ".cursor", ".agents",
];

const foldPath = (p: string) => p.split("/").map(folded);

/** Matched by folded path segments rather than globs: `**` in Node's glob skips dot folders, and `.tools/Makefile` or `.github/.x` must match. */
const NAME_PATTERNS = PROTECTED_NAMES.map((n) => foldPath(n).map((seg) => new RegExp(`^${seg.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`)));
const DIR_SEGMENTS = PROTECTED_DIRS.map(foldPath);

function protectedByDefault(file: string): boolean {
  const segments = foldPath(file);
  // A name: its segments end the path.
  if (NAME_PATTERNS.some((name) => name.length <= segments.length && name.every((re, j) => re.test(segments[segments.length - name.length + j]!)))) return true;
  // A protected folder: the path is it, or lies under it.
  return DIR_SEGMENTS.some((dir) => segments.some((_, i) => i + dir.length <= segments.length && dir.every((s, j) => segments[i + j] === s)));
}

export interface ProtectedPaths {
  /** `protected-paths` globs that add a path to the defaults. */
  protect: readonly string[];
  /** `!glob` lines of `protected-paths`: paths they match are never protected. */
  exempt: readonly string[];
}

/** `protected-paths` lines: `glob` adds to the defaults, `!glob` exempts. */
export function protectedPaths(lines: readonly string[]): ProtectedPaths {
  const add = lines.filter((l) => !l.startsWith("!"));
  const exempt = lines.filter((l) => l.startsWith("!")).map((l) => l.slice(1));
  return { protect: add, exempt };
}

/** A glob of `protected-paths`, as written or folded (the checkout may fold case). */
const matchesGlob = (file: string, globs: readonly string[]) =>
  globs.some((g) => path.posix.matchesGlob(file, g) || path.posix.matchesGlob(foldPath(file).join("/"), foldCase(g)));

/** One name of a path: protected by the defaults or an added glob, unless a `!glob` exempts that name. */
function isProtected(name: string, rules: ProtectedPaths): boolean {
  return (protectedByDefault(name) || matchesGlob(name, rules.protect)) && !matchesGlob(name, rules.exempt);
}

/** The changed paths a rule protects by their own names (no tree to resolve links in), in the order given. */
export function protectedChanges(changedFiles: readonly string[], rules: ProtectedPaths): string[] {
  return changedFiles.filter((f) => isProtected(f, rules));
}

// --- Links: the post-image tree as a checkout would see it.

type Resolved = { kind: "ok"; path: string } | { kind: "escapes" | "absolute" | "loop" | "unreadable" };

/**
 * A tree's symlinks, looked up folded. Every path is resolved inside the
 * tree's own objects, never on the host's filesystem.
 */
export class LinkTree {
  private readonly byFolded = new Map<string, string>();
  private readonly unreadable = new Set<string>();
  /** Links that resolve, keyed by where they lead (folded): the other names of what lies there. */
  private byTarget?: Map<string, string[]>;
  /** Alias-walk steps spent on this tree so far (see `MAX_ALIAS_STEPS`). */
  private spent = 0;

  constructor(
    readonly links: ReadonlyMap<string, string>,
    unreadable: readonly string[] = [],
    /** Steps the alias walks of all changed files may take together; past it every name is incomplete (protected). */
    private readonly stepBudget = MAX_ALIAS_STEPS,
  ) {
    for (const [p, target] of links) this.byFolded.set(foldPath(p).join("/"), target);
    for (const p of unreadable) this.unreadable.add(foldPath(p).join("/"));
  }

  /** Alias-walk steps taken so far: map look-ups plus names found. */
  get steps(): number {
    return this.spent;
  }

  isLink(p: string): boolean {
    const key = foldPath(p).join("/");
    return this.byFolded.has(key) || this.unreadable.has(key);
  }

  /** Where `p` leads with every link on the way followed, the last component too. */
  resolve(p: string): Resolved {
    const resolved: string[] = [];
    let queue = p.split("/");
    let hops = 0;
    while (queue.length) {
      const comp = queue.shift()!;
      if (comp === "" || comp === ".") continue;
      if (comp === "..") {
        if (!resolved.length) return { kind: "escapes" };
        resolved.pop();
        continue;
      }
      resolved.push(comp);
      const key = foldPath(resolved.join("/")).join("/");
      if (this.unreadable.has(key)) return { kind: "unreadable" };
      const target = this.byFolded.get(key);
      if (target === undefined) continue;
      if (++hops > MAX_LINK_HOPS) return { kind: "loop" };
      // `/x`, `C:x`, `\\server\x`: leaves the repository on some system.
      if (/^([/\\]|[A-Za-z]:)/.test(target)) return { kind: "absolute" };
      resolved.pop();
      // Windows reads `\` in a target as a separator.
      queue = [...target.split(/[/\\]/), ...queue];
    }
    return { kind: "ok", path: resolved.join("/") };
  }

  /** Where the entry `p` itself lies: its folder resolved, its own name kept (a link is not followed). */
  location(p: string): Resolved {
    const slash = p.lastIndexOf("/");
    if (slash < 0) return { kind: "ok", path: p };
    const dir = this.resolve(p.slice(0, slash));
    return dir.kind === "ok" ? { kind: "ok", path: dir.path ? `${dir.path}/${p.slice(slash + 1)}` : p.slice(slash + 1) } : dir;
  }

  /** Links by the folded path they lead to, built once per tree. */
  private linksByTarget(): Map<string, string[]> {
    if (this.byTarget) return this.byTarget;
    const index = new Map<string, string[]>();
    for (const link of this.links.keys()) {
      const r = this.resolve(link);
      if (r.kind !== "ok") continue;
      const key = foldPath(r.path).join("/");
      index.set(key, [...(index.get(key) ?? []), link]);
    }
    return (this.byTarget = index);
  }

  /**
   * Every other name `p` is reachable by through the tree's links
   * (`tools/cargo/config.toml` is `.cargo/config.toml` when `.cargo` →
   * `tools/cargo`). A chain of links uses each link once: a link to a folder
   * above it (`x` → `.`) would otherwise give names without end, none of
   * which a checkout reaches by another route. `complete` is false when there
   * were too many to list, for this path or for the whole tree.
   *
   * Only the links that lead to one of the path's own folders can give it
   * another name, so they are looked up by each of its prefixes (a path
   * `a/b/c` costs four look-ups, however many links the tree has).
   */
  aliases(p: string): { names: string[]; complete: boolean } {
    const byTarget = this.linksByTarget();
    const seen = new Map([[foldPath(p).join("/"), p]]);
    if (!byTarget.size) return { names: [], complete: true };
    let complete = true;
    let found = 0;
    const step = (): boolean => {
      if (++this.spent > this.stepBudget) complete = false;
      return complete;
    };
    const walk = (q: string, used: ReadonlySet<string>): void => {
      const parts = q.split("/");
      const fparts = foldPath(q);
      for (let i = 0; i <= parts.length && complete; i++) {
        if (!step()) return;
        for (const link of byTarget.get(fparts.slice(0, i).join("/")) ?? []) {
          if (used.has(link)) continue;
          if (++found > MAX_ALIASES || !step()) {
            complete = false;
            return;
          }
          const under = parts.slice(i).join("/");
          const alias = under ? `${link}/${under}` : link;
          const key = foldPath(alias).join("/");
          if (!seen.has(key)) seen.set(key, alias);
          walk(alias, new Set([...used, link]));
          if (!complete) return;
        }
      }
    };
    walk(p, new Set());
    return { names: [...seen.values()].slice(1), complete };
  }
}

/** A changed path that is protected, and why. */
export interface ProtectedChange {
  file: string;
  /** Why, naming the protected path it is when that is another name. */
  detail: string;
  /**
   * Protected through a link or a submodule: a link at a protected path, one
   * that leads into a protected place or out of the repository, a file that
   * is a protected path only through a link. A diff hides what such a change
   * does (CODEOWNERS and path rules see `tools/cargo/config.toml`, cargo reads
   * `.cargo/config.toml`), so `review` holds it rather than asking a reviewer.
   */
  linked: boolean;
}

const NOT_OK: Record<Exclude<Resolved["kind"], "ok">, string> = {
  escapes: "leads out of the repository",
  absolute: "has an absolute target (outside the repository)",
  loop: "is part of an endless chain of links",
  unreadable: "has a name or target that is not UTF-8 text (where it leads cannot be checked)",
};

/** One change judged: undefined when no name of it is protected. */
export function judgeChange(c: Pick<Change, "path" | "oldMode" | "newMode">, tree: LinkTree, rules: ProtectedPaths): ProtectedChange | undefined {
  const { path: file } = c;
  const linked = (detail: string): ProtectedChange => ({ file, detail, linked: true });
  if (c.oldMode === GITLINK_MODE || c.newMode === GITLINK_MODE) return linked("a submodule (gitlink): code from another repository");
  const isLink = c.newMode === SYMLINK_MODE;
  if (isProtected(file, rules)) {
    if (!isLink) return { file, detail: "a protected file", linked: false };
    // `CLAUDE.md` → `AGENTS.md` hides nothing: a reviewer sees both names protected. `.cargo` → `tools/cargo` does.
    const target = tree.resolve(file);
    return { file, detail: `a symlink at a protected path, ${leadsTo(target)}`, linked: !(target.kind === "ok" && isProtected(target.path, rules)) };
  }
  const where = tree.location(file);
  if (where.kind !== "ok") return linked(`it lies beyond a symlink that ${NOT_OK[where.kind]}`);
  if (where.path !== file && isProtected(where.path, rules)) return linked(`it is the protected path '${where.path}' through a symlink above it`);
  if (isLink) {
    const target = tree.resolve(file);
    if (target.kind !== "ok") return linked(`a symlink that ${NOT_OK[target.kind]}`);
    if (isProtected(target.path, rules)) return linked(`a symlink to the protected path '${target.path}'`);
  }
  const aliases = tree.aliases(file);
  const alias = aliases.names.find((n) => isProtected(n, rules));
  if (alias !== undefined) return linked(`it is the protected path '${alias}' through a symlink`);
  if (!aliases.complete) return linked("it has too many names through symlinks to check them all");
  return undefined;
}

const leadsTo = (r: Resolved) => (r.kind === "ok" ? `to '${r.path || "."}'` : `that ${NOT_OK[r.kind]}`);

/**
 * The protected changes between `baseTree` and `tree` (the tree the patch
 * makes), every name judged as the links of `tree` make it. `namedFiles`: the
 * patch's own names, judged by name where the trees do not list them.
 */
export async function protectedInTree(
  git: Git,
  trees: { baseTree: string; tree: string },
  namedFiles: readonly string[],
  rules: ProtectedPaths,
  scratchDir: string,
): Promise<ProtectedChange[]> {
  const changes = await treeChanges(git, trees.baseTree, trees.tree);
  const links = await treeLinks(git, trees.tree, scratchDir);
  const tree = new LinkTree(links.links, links.unreadable);
  const judged = changes.map((c) => judgeChange(c, tree, rules));
  const listed = new Set(changes.map((c) => c.path));
  const byName = protectedChanges(namedFiles.filter((f) => !listed.has(f)), rules).map((file): ProtectedChange => ({ file, detail: "a protected file", linked: false }));
  return [...judged.filter((j): j is ProtectedChange => j !== undefined), ...byName];
}
