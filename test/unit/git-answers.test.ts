/**
 * src/git/git.ts `byObjectIds`: a call named only by full object ids is run once per
 * repository in a process; anything naming a ref, or another repository or
 * environment, is asked of git every time, with the door's hardening on each spawn.
 * git is reached through a shim on PATH that logs every spawn's arguments.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Git } from "../../src/git/git.js";
import { createRepo, gitCallLog, type GitRepoFixture } from "../support/git-fixtures.js";

let repo: GitRepoFixture;
let calls: () => string[];
let env: Record<string, string>;

beforeAll(async () => {
  repo = await createRepo({ files: { "a.txt": "a\n" } });
  ({ env, calls } = gitCallLog());
});
afterAll(() => repo.cleanup());


describe("git answers by object ids", () => {
  it("the same call by ids is spawned once, with the hardening; a ref is asked every time and sees the ref move", async () => {
    const git = new Git(repo.dir, env);
    const tree = `${repo.initialSha}^{tree}`;
    const before = calls().length;
    const first = await git.text(["rev-parse", tree], { byObjectIds: true });
    const second = await git.text(["rev-parse", tree], { byObjectIds: true });
    expect(second).toBe(first);
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    const spawned = calls().slice(before);
    expect(spawned).toHaveLength(1);
    expect(spawned[0]).toContain("core.hooksPath=/dev/null");
    expect(spawned[0]).toContain(`rev-parse ${tree}`);

    // HEAD is a ref: never answered from an earlier call, even when asked byObjectIds.
    const headBefore = await git.text(["rev-parse", "HEAD^{tree}"], { byObjectIds: true });
    await repo.commit({ "b.txt": "b\n" }, "second");
    const headAfter = await git.text(["rev-parse", "HEAD^{tree}"], { byObjectIds: true });
    expect(headBefore).toBe(first);
    expect(headAfter).not.toBe(headBefore);
    expect(calls().slice(before).filter((c) => c.endsWith("rev-parse HEAD^{tree}"))).toHaveLength(2);
  });

  it("another repository, or the same one with another environment, is asked again", async () => {
    const other = await createRepo({ files: { "a.txt": "a\n" } });
    try {
      const tree = `${repo.initialSha}^{tree}`;
      await new Git(repo.dir, env).text(["rev-parse", tree], { byObjectIds: true });
      const before = calls().length;
      await new Git(other.dir, env).text(["rev-parse", tree], { byObjectIds: true });
      await new Git(repo.dir, { ...env, LANG: "C" }).text(["rev-parse", tree], { byObjectIds: true });
      expect(calls().slice(before)).toHaveLength(2);
    } finally {
      await other.cleanup();
    }
  });

  it("a failure is not remembered: the object fetched later is found", async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), "git-empty-"));
    const git = new Git(empty, env);
    await git.exec(["init", "-q", "--bare"]);
    const ask = () => git.exec(["cat-file", "-t", repo.initialSha], { byObjectIds: true, okCodes: [128] });
    expect((await ask()).exitCode).toBe(128);
    await git.exec(["fetch", "-q", repo.origin, "main"]);
    // An exit code allowed by okCodes resolves, but the object's absence is not an answer to keep.
    const again = await ask();
    expect(again.exitCode).toBe(0);
    expect(again.stdout.trim()).toBe("commit");
  });
});
