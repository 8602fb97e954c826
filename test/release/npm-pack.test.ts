/**
 * The CLI as npm publishes it: `npm pack` of this checkout, installed from the tarball into an empty
 * prefix with no network (`--offline`, a fresh cache: it has no dependencies to fetch), then run from
 * there, in folders outside this checkout, with a PATH that holds only Node and the system's tools:
 * `agent-runner --help` and a local `agent: command` run in the default sandbox.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COORDINATES, INPUTS } from "../../src/constants.js";
import { REPO_ROOT } from "../support/harness.js";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Ran> {
  const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "npm-pack-"));
const prefix = path.join(tmp, "prefix");
const bin = path.join(prefix, "bin", COORDINATES.bin);
const installed = path.join(prefix, "lib", "node_modules", ...COORDINATES.npmPackage.split("/"));
/** Node (the one running the tests: the package's runtime) and the system's tools; nothing of this checkout's node_modules/.bin. */
const userEnv = (home: string): NodeJS.ProcessEnv => ({
  PATH: [path.dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
  HOME: home,
  LANG: "C.UTF-8",
});
let packed: { filename: string; files: { path: string }[] };

beforeAll(async () => {
  // npm's own settings (the machine's npmrc, its cafile) stay; nothing here needs the registry.
  const npmEnv = { ...process.env, npm_config_update_notifier: "false" };
  const pack = await run("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: REPO_ROOT, env: npmEnv });
  expect(pack.code, pack.stderr).toBe(0);
  packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;
  const empty = mkdtempSync(path.join(tmp, "empty-"));
  const tarball = path.join(tmp, packed.filename);
  const args = ["install", "--global", "--prefix", prefix, "--offline", "--cache", path.join(tmp, "cache"), "--no-audit", "--no-fund", tarball];
  const install = await run("npm", args, { cwd: empty, env: npmEnv });
  expect(install.code, install.stdout + install.stderr).toBe(0);
}, 180_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("the npm package", () => {
  it("holds dist/ and the notices only, and installs with no dependencies", () => {
    const files = packed.files.map((f) => f.path);
    expect(files.filter((f) => !f.startsWith("dist/") && !["package.json", "README.md", "LICENSE", "CHANGELOG.md"].includes(f))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(["dist/cli.js", "dist/main.js", "dist/post.js", "dist/safe-outputs-mcp.js", "LICENSE", "CHANGELOG.md", "README.md"]));
    const manifest = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8")) as { name: string; bin: Record<string, string>; dependencies?: object };
    expect(manifest.name).toBe(COORDINATES.npmPackage);
    expect(manifest.bin).toEqual({ [COORDINATES.bin]: "dist/cli.js" });
    expect(manifest.dependencies).toBeUndefined();
    // Nothing but the package itself was installed.
    expect(existsSync(path.join(installed, "node_modules"))).toBe(false);
    expect(readdirSync(path.join(prefix, "lib", "node_modules"))).toEqual([COORDINATES.npmPackage.split("/")[0]]);
  });

  it("agent-runner --help lists every action input as a flag", async () => {
    const home = mkdtempSync(path.join(tmp, "home-"));
    const help = await run(bin, ["run", "--help"], { cwd: home, env: userEnv(home) });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain("Usage: agent-runner run");
    const missing = Object.keys(INPUTS).filter((name) => !help.stdout.includes(`--${name} `));
    expect(missing).toEqual([]);
    const top = await run(bin, ["--help"], { cwd: home, env: userEnv(home) });
    expect(top.code, top.stderr).toBe(0);
    expect(top.stdout).toContain("Usage: agent-runner");
  });

  it("runs an agent: command locally on a git repository, in the sandbox, and writes its results", async () => {
    const home = mkdtempSync(path.join(tmp, "home-"));
    const repo = mkdtempSync(path.join(tmp, "repo-"));
    const git = (args: string[]) => run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: repo, env: userEnv(home) });
    writeFileSync(path.join(repo, "README.md"), "demo\n");
    expect((await git(["init", "-q"])).code).toBe(0);
    expect((await git(["add", "."])).code).toBe(0);
    expect((await git(["commit", "-qm", "init"])).code).toBe(0);
    const results = path.join(tmp, "results");
    const out = await run(bin, ["run", "--agent", "command", "--agent-command", 'bash -c "cat > TASK.md"', "--prompt", "Write the task down", "--results-dir", results], {
      cwd: repo,
      env: userEnv(home),
    });
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stderr).toContain("in sandbox 'bwrap'");
    expect(out.stdout).toContain("conclusion: success");
    expect(out.stdout).toContain("changed files: TASK.md");
    // What the agent did, in the repository and in the results folder.
    expect(readFileSync(path.join(repo, "TASK.md"), "utf8")).toBe("Write the task down");
    expect(readFileSync(path.join(results, "patch.diff"), "utf8")).toMatch(/^\+\+\+ b\/TASK\.md\n[\s\S]*^\+Write the task down$/m);
    const outputs = JSON.parse(readFileSync(path.join(results, "outputs.json"), "utf8")) as Record<string, string>;
    expect(outputs.conclusion).toBe("success");
    expect(JSON.parse(outputs["changed-files"]!)).toEqual(["TASK.md"]);
    expect(existsSync(path.join(results, "trace.jsonl"))).toBe(true);
  });
});
