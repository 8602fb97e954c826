/**
 * src/publish/deliver-git.ts fetchBranch: a branch that is on the remote is
 * fetched with one git process (no ls-remote first); only a fetch that fails
 * asks the remote whether the branch exists: absent is `undefined`, any other
 * failure (an unreachable remote) is thrown. git is reached through a shim on
 * PATH that logs every spawn.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryRepo } from "../../src/publish/deliver-git.js";
import { createRepo, gitCallLog, type GitRepoFixture } from "../support/git-fixtures.js";

let repo: GitRepoFixture;
let calls: () => string[];
let env: Record<string, string>;

beforeAll(async () => {
  repo = await createRepo({ files: { "a.txt": "a\n" } });
  ({ env, calls } = gitCallLog());
});
afterAll(() => repo.cleanup());

const delivery = (remoteUrl: string) => DeliveryRepo.create({ dir: path.join(mkdtempSync(path.join(os.tmpdir(), "delivery-")), "repo.git"), remoteUrl, env });

describe("delivery: fetching a branch", () => {
  it("a branch on the remote: its tip, fetched with one process", async () => {
    const d = await delivery(repo.origin);
    const before = calls().length;
    expect(await d.fetchBranch("main")).toBe(repo.initialSha);
    const spawned = calls().slice(before);
    expect(spawned).toHaveLength(1);
    expect(spawned[0]).toContain("fetch --no-tags --quiet --depth=1 origin +refs/heads/main:refs/remotes/origin/main");
    expect(await d.hasCommit(repo.initialSha)).toBe(true);
  });

  it("a branch the remote does not have: undefined, after the remote was asked", async () => {
    const d = await delivery(repo.origin);
    const before = calls().length;
    expect(await d.fetchBranch("no-such-branch")).toBeUndefined();
    expect(calls().slice(before).map((c) => c.split(" ").find((w) => w === "fetch" || w === "ls-remote"))).toEqual(["fetch", "ls-remote"]);
  });

  it("a remote that cannot be reached: an error, not an absent branch", async () => {
    const d = await delivery(path.join(os.tmpdir(), "no-such-remote-dir", "repo.git"));
    await expect(d.fetchBranch("main")).rejects.toThrow(/ls-remote/);
  });
});
