/**
 * The base commit of a pull request is resolved once, by the trigger stage
 * that reads the settings from it; the agent-config guard takes that commit
 * as it is (no second lookup or fetch), so settings and agent config are the
 * same commit's.
 */
import { readFileSync } from "node:fs";
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
});
