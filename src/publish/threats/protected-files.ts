/**
 * Protected files: paths whose change can run code on a maintainer's or CI's
 * machine, or steer later agents, without looking like much in a diff
 * (dependency manifests and locks, CI and build config, container files,
 * agent instruction files, CODEOWNERS). `protected-files` decides what a
 * change to them gets: `review` (a draft pull request that names them),
 * `block` (refused) or `allow`. `protected-paths` edits the list with globs:
 * `glob` adds, `!glob` exempts.
 */
import path from "node:path";

/** A bare name matches at any depth. */
const PROTECTED_NAMES = [
  // JavaScript / TypeScript
  "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "pnpm-workspace.yaml", "bun.lock", "bun.lockb", ".npmrc", ".yarnrc", ".yarnrc.yml",
  // Python
  "requirements*.txt", "Pipfile", "Pipfile.lock", "pyproject.toml", "poetry.lock", "uv.lock", "setup.py", "setup.cfg", "tox.ini", "noxfile.py", "conftest.py",
  // Ruby, Go, Rust, PHP, Elixir, Swift
  "Gemfile", "Gemfile.lock", "*.gemspec", "Rakefile", "go.mod", "go.sum", "go.work", "Cargo.toml", "Cargo.lock", "build.rs", "composer.json", "composer.lock", "mix.exs", "mix.lock", "Package.swift", "Package.resolved", "Podfile", "Podfile.lock",
  // JVM and .NET
  "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradle.properties", "gradlew", "gradlew.bat", "*.csproj", "*.fsproj", "*.vbproj", "*.sln", "packages.lock.json", "Directory.Build.props", "Directory.Build.targets", "Directory.Packages.props", "NuGet.config", "nuget.config",
  // Build and CI
  "Makefile", "makefile", "GNUmakefile", "*.mk", "CMakeLists.txt", "*.cmake", "meson.build", "BUILD", "BUILD.bazel", "WORKSPACE", "MODULE.bazel", "*.bzl", "Jenkinsfile", ".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", ".pre-commit-config.yaml", ".gitattributes", ".gitmodules", ".envrc",
  // Containers
  "Dockerfile", "Dockerfile.*", "*.Dockerfile", "Containerfile", "docker-compose*.yml", "docker-compose*.yaml", "compose.yml", "compose.yaml", ".dockerignore",
  // Agent instructions and settings
  "AGENTS.md", "CLAUDE.md", "GEMINI.md", ".cursorrules", "copilot-instructions.md", "opencode.json", "agent-runner.yml", ".mcp.json",
  // Ownership
  "CODEOWNERS",
];

/** Folders protected with everything under them, at any depth. */
const PROTECTED_DIRS = [".github", ".circleci", ".devcontainer", ".husky", ".claude", ".codex", ".gemini", ".opencode", ".cursor", ".vscode", "gradle/wrapper", ".mvn", ".cargo", ".yarn"];

/**
 * The defaults, matched by path segments rather than globs: `**` in Node's
 * glob skips dot folders, and `.tools/Makefile` or `.github/.x` must match.
 */
const NAME_PATTERNS = PROTECTED_NAMES.map((n) => new RegExp(`^${n.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`));
const DIR_SEGMENTS = PROTECTED_DIRS.map((d) => d.split("/"));

function protectedByDefault(file: string): boolean {
  const segments = file.split("/");
  if (NAME_PATTERNS.some((re) => re.test(segments.at(-1)!))) return true;
  // A protected folder anywhere above the file.
  return DIR_SEGMENTS.some((dir) => segments.slice(0, -1).some((_, i) => dir.every((s, j) => segments[i + j] === s) && i + dir.length < segments.length));
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

/** The changed paths a rule protects, in the order given. */
export function protectedChanges(changedFiles: readonly string[], rules: ProtectedPaths): string[] {
  const matches = (file: string, globs: readonly string[]) => globs.some((g) => path.posix.matchesGlob(file, g));
  return changedFiles.filter((f) => (protectedByDefault(f) || matches(f, rules.protect)) && !matches(f, rules.exempt));
}
