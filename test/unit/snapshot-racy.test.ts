/**
 * Git's racy-entry rule, kept through our index copies (src/git/files.ts
 * copyIndex). An agent that rewrites a file with the same size within the
 * second the checkout recorded it leaves stat data git cannot tell apart; git
 * then compares content only because the entry is not older than the index
 * file. Our private repository copies the workspace's index (and the snapshot
 * copies that): stamped "now", the copy made the entry look settled, and the
 * change was left out of the patch. It showed once in CI as a fix round that
 * never ran: round 0's wrong `add.js` was not in the patch, so the check
 * passed on the base commit.
 *
 * The write has to land in the same wall-clock second as the commit, so each
 * try starts at the top of a second and is retried if the machine was too
 * slow for that; a try that crossed the second proves nothing and is not counted.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, onTestFinished } from "vitest";
import { HostRepo } from "../../src/git/host-repo.js";
import { collectChanges, takeBaseline } from "../../src/git/snapshot.js";

const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C" };
const GIT_ENV = { ...ENV, HOME: os.tmpdir(), GIT_CONFIG_GLOBAL: "/dev/null", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" };
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" });
const second = (ms: number) => Math.floor(ms / 1000);

/** One try: commit, baseline, same-size rewrite, then the patch a second later. Undefined when the write missed the commit's second. */
async function tryOnce(): Promise<{ changedFiles: string[]; patch: string } | undefined> {
  const root = mkdtempSync(path.join(os.tmpdir(), "snapshot-racy-"));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const ws = path.join(root, "ws");
  mkdirSync(ws);
  git(ws, "init", "-q", "-b", "main");
  // Start at the top of a second: the rest of the try has most of it.
  await sleep(1000 - (Date.now() % 1000) + 5);
  writeFileSync(path.join(ws, "add.js"), "module.exports = (a, b) => a + b;\n");
  git(ws, "add", "-A");
  git(ws, "commit", "-qm", "base");
  const repo = await HostRepo.create({ cwd: ws, dir: path.join(root, "host-git"), env: ENV });
  const scratch = path.join(root, "scratch");
  mkdirSync(scratch);
  const baseline = await takeBaseline(repo, scratch);
  // The agent: the same size, another byte.
  writeFileSync(path.join(ws, "add.js"), "module.exports = (a, b) => a - b;\n");
  const written = statSync(path.join(ws, "add.js"));
  const recorded = statSync(path.join(ws, ".git", "index"));
  if (second(written.ctimeMs) !== second(recorded.mtimeMs)) return undefined;
  // The patch is made later, as after a real agent run: any index made now is stamped a later second.
  await sleep(1100);
  const patchPath = path.join(root, "patch.diff");
  const { changedFiles } = await collectChanges(repo, baseline, scratch, patchPath);
  return { changedFiles, patch: readFileSync(patchPath, "utf8") };
}

describe("a same-size write in the checkout's second", () => {
  it("is in the patch: the index copies keep git's racy-entry guard", async () => {
    let result: Awaited<ReturnType<typeof tryOnce>>;
    for (let i = 0; i < 10 && !result; i++) result = await tryOnce();
    expect(result, "no try wrote within the commit's second (machine too slow); rerun").toBeDefined();
    expect(result!.changedFiles).toEqual(["add.js"]);
    expect(result!.patch).toContain("+module.exports = (a, b) => a - b;");
  }, 60_000);
});
