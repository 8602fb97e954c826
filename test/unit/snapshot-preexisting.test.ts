/**
 * Issue #20, the snapshot rule on its own (src/git/snapshot.ts): the patch is
 * made against the base commit and leaves out every path an earlier step
 * changed before the agent started — new, modified, deleted, mode-changed, a
 * file turned into a folder — whatever the agent then did to it; what only
 * the agent touched is in it, and the patch applies to the base commit.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HostRepo } from "../../src/git/host-repo.js";
import { collectChanges, takeBaseline } from "../../src/git/snapshot.js";

const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C" };
const GIT_ENV = { ...ENV, HOME: os.tmpdir(), GIT_CONFIG_GLOBAL: "/dev/null", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" };
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" });
const write = (dir: string, file: string, text: string) => {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), text);
};

async function run(earlierStep: (ws: string) => void, agent: (ws: string) => void) {
  const root = mkdtempSync(path.join(os.tmpdir(), "snapshot-"));
  const ws = path.join(root, "ws");
  mkdirSync(ws);
  git(ws, "init", "-q", "-b", "main");
  for (const [f, t] of Object.entries({ "notes.md": "base notes\n", "gone.md": "gone\n", "run.sh": "echo\n", a: "a file\n", "src.txt": "src\n" })) write(ws, f, t);
  git(ws, "add", "-A");
  git(ws, "commit", "-qm", "base");
  const base = git(ws, "rev-parse", "HEAD").trim();
  earlierStep(ws);
  const repo = await HostRepo.create({ cwd: ws, dir: path.join(root, "host-git"), env: ENV });
  const scratch = path.join(root, "scratch");
  mkdirSync(scratch);
  const baseline = await takeBaseline(repo, scratch);
  agent(ws);
  const patchPath = path.join(root, "patch.diff");
  const collected = await collectChanges(repo, baseline, scratch, patchPath);
  // The patch applies to a clean checkout of the base commit.
  const clean = path.join(root, "clean");
  git(root, "clone", "-q", ws, clean);
  git(clean, "checkout", "-q", "--detach", base);
  git(clean, "apply", "--binary", patchPath);
  return { collected, clean, baseline, base };
}

describe("the patch leaves out what an earlier step changed", () => {
  it("new, modified, deleted, mode-changed and file-to-folder paths are left out, whatever the agent did; the agent's own paths are in", async () => {
    const { collected, clean, baseline, base } = await run(
      (ws) => {
        write(ws, "ctx.md", "context\n");
        write(ws, "notes.md", "earlier notes\n");
        rmSync(path.join(ws, "gone.md"));
        chmodSync(path.join(ws, "run.sh"), 0o755);
        rmSync(path.join(ws, "a"));
        write(ws, "a/b", "a folder now\n");
      },
      (ws) => {
        write(ws, "ctx.md", "context\nagent\n");
        write(ws, "gone.md", "the agent brought it back\n");
        write(ws, "src.txt", "src\nagent\n");
        write(ws, "new.txt", "agent only\n");
      },
    );
    expect(baseline.commit).toBe(base);
    expect(collected.excludedFiles).toEqual(["a", "a/b", "ctx.md", "gone.md", "notes.md", "run.sh"]);
    expect(collected.excludedTouched).toEqual(["ctx.md", "gone.md"]);
    expect(collected.changedFiles).toEqual(["new.txt", "src.txt"]);
    // Applied to the base: the agent's changes, and the earlier step's paths as the base commit has them.
    expect(git(clean, "status", "--porcelain").split("\n").filter(Boolean).sort()).toEqual(["?? new.txt", " M src.txt"].sort());
    expect(readFileSync(path.join(clean, "src.txt"), "utf8")).toBe("src\nagent\n");
    expect(readFileSync(path.join(clean, "a"), "utf8")).toBe("a file\n");
  });

  it("a clean workspace: nothing left out, the patch is the agent's whole change", async () => {
    const { collected, clean } = await run(
      () => undefined,
      (ws) => write(ws, "notes.md", "agent notes\n"),
    );
    expect(collected.excludedFiles).toEqual([]);
    expect(collected.changedFiles).toEqual(["notes.md"]);
    expect(readFileSync(path.join(clean, "notes.md"), "utf8")).toBe("agent notes\n");
  });
});
