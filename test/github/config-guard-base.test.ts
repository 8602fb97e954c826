/**
 * The base commit of a pull request is resolved once, by the trigger stage
 * that reads the settings from it; the agent-config guard takes that commit
 * as it is (no second lookup or fetch), so settings and agent config are the
 * same commit's. The repository's top folder, found by the trigger stage from
 * the same folder, is taken as it is too (no second `rev-parse --show-toplevel`).
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Git } from "../../src/git/git.js";
import type { Logger } from "../../src/logger.js";
import { guardAgentConfig } from "../../src/trigger/config-guard.js";
import { createRepo, type GitRepoFixture } from "../support/git-fixtures.js";

let repo: GitRepoFixture | undefined;
afterEach(async () => {
  await repo?.cleanup();
  repo = undefined;
});

function recorder(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const push = (m: string) => void lines.push(m);
  return { lines, debug: push, info: push, warning: push, error: push, group: (_t, fn) => fn() };
}

describe("agent-config guard with the trigger stage's base commit", () => {
  const BASE_MCP = '{"mcpServers":{"docs":{"command":"base"}}}\n';
  const PR_MCP = '{"mcpServers":{"evil":{"command":"pr"}}}\n';

  async function prCheckout(): Promise<{ base: string; dir: string }> {
    repo = await createRepo({ files: { "README.md": "# r\n", ".mcp.json": BASE_MCP }, withOrigin: false });
    await repo.commit({ ".mcp.json": PR_MCP }, "The pull request's change");
    return { base: repo.initialSha, dir: repo.dir };
  }

  it("puts back the base's agent config from the commit it is given, without resolving the PR's base sha again", async () => {
    const { base, dir } = await prCheckout();
    const log = recorder();
    // A base sha that is nowhere (and no origin to fetch from): only the commit passed on can serve.
    const guard = await guardAgentConfig({
      git: new Git(dir, {}),
      workspace: dir,
      baseSha: "0".repeat(40),
      baseRef: "main",
      isFork: false,
      asideDir: await mkdtemp(path.join(tmpdir(), "guard-aside-")),
      authEnv: {},
      baseCommit: base,
      log,
    });
    expect(guard.baseCommit).toBe(base);
    expect(guard.replaced).toEqual([".mcp.json"]);
    expect(readFileSync(path.join(dir, ".mcp.json"), "utf8")).toBe(BASE_MCP);
    expect(log.lines.join("\n")).not.toContain("Could not fetch the base commit");
  });

  it("without it, looks the base sha up itself (and removes the PR's config when it cannot be found)", async () => {
    const { dir } = await prCheckout();
    const log = recorder();
    const guard = await guardAgentConfig({
      git: new Git(dir, {}),
      workspace: dir,
      baseSha: "0".repeat(40),
      baseRef: "main",
      isFork: false,
      asideDir: await mkdtemp(path.join(tmpdir(), "guard-aside-")),
      authEnv: {},
      log,
    });
    expect(guard.baseCommit).toBeUndefined();
    expect(log.lines.join("\n")).toContain("Could not fetch the base commit");
    expect(() => readFileSync(path.join(dir, ".mcp.json"), "utf8")).toThrow();
  });

  it("takes the top folder it is given: no `rev-parse --show-toplevel` of its own, the workspace's folder guarded below it", async () => {
    repo = await createRepo({ files: { "README.md": "# r\n", "app/.mcp.json": BASE_MCP }, withOrigin: false });
    await repo.commit({ "app/.mcp.json": PR_MCP }, "The pull request's change");
    const shim = await mkdtemp(path.join(tmpdir(), "git-shim-"));
    const calls = path.join(shim, "calls.log");
    writeFileSync(calls, "");
    writeFileSync(path.join(shim, "git"), `#!/bin/sh\nprintf '%s\\n' "$*" >> ${JSON.stringify(calls)}\nexec /usr/bin/git "$@"\n`);
    chmodSync(path.join(shim, "git"), 0o755);
    const workspace = path.join(repo.dir, "app");
    const guard = await guardAgentConfig({
      git: new Git(workspace, { PATH: `${shim}:/usr/bin:/bin` }),
      workspace,
      baseSha: repo.initialSha,
      baseRef: "main",
      isFork: false,
      asideDir: await mkdtemp(path.join(tmpdir(), "guard-aside-")),
      authEnv: {},
      baseCommit: repo.initialSha,
      root: repo.dir,
      log: recorder(),
    });
    expect(guard.replaced).toEqual(["app/.mcp.json"]);
    expect(readFileSync(path.join(workspace, ".mcp.json"), "utf8")).toBe(BASE_MCP);
    const spawned = readFileSync(calls, "utf8").split("\n").filter(Boolean);
    expect(spawned.some((c) => c.includes("ls-tree"))).toBe(true);
    expect(spawned.filter((c) => c.includes("rev-parse"))).toEqual([]);
  });
});
