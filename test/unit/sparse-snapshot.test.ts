/**
 * Snapshots of a sparse checkout (src/git/sparse.ts, src/git/snapshot.ts),
 * through the host's private repository as the runner makes it: what the
 * checkout left out is never deleted, what the agent writes there counts,
 * what the patch changes there is named, and a folder the agent turned into
 * a link is not read through.
 */
import { mkdir, mkdtemp, readFile, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gitEnv } from "../../src/config/host.js";
import { HostRepo } from "../../src/git/host-repo.js";
import { collectChanges, takeBaseline } from "../../src/git/snapshot.js";
import { cloneRepo, createRepo, git, type GitRepoFixture } from "../support/git-fixtures.js";

let repo: GitRepoFixture | undefined;
afterEach(async () => {
  await repo?.cleanup();
  repo = undefined;
});

async function sparseWorkspace(): Promise<{ ws: string; host: HostRepo; scratch: string }> {
  repo = await createRepo({ files: { "top.txt": "top\n", "in/a.txt": "a\n", "out/b.txt": "b\n", "out/c.txt": "c\n", "far/d.txt": "d\n" } });
  const ws = await cloneRepo(repo.origin, { dir: path.join(repo.root, "ws") });
  await git(ws, ["sparse-checkout", "set", "--cone", "in"]);
  const scratch = await mkdtemp(path.join(os.tmpdir(), "sparse-scratch-"));
  const host = await HostRepo.create({ cwd: ws, dir: path.join(scratch, "host-git"), env: gitEnv() });
  return { ws, host, scratch };
}

describe("snapshots of a sparse checkout", () => {
  it("keeps what the checkout left out, and counts a new file and a file written over a left-out one", async () => {
    const { ws, host, scratch } = await sparseWorkspace();
    const base = await takeBaseline(host, scratch);
    expect(base.tree).toBe(await host.git.text(["rev-parse", `${base.commit}^{tree}`]));
    await writeFile(path.join(ws, "in/a.txt"), "a2\n");
    await mkdir(path.join(ws, "out"));
    await writeFile(path.join(ws, "out/b.txt"), "written blind\n");
    await writeFile(path.join(ws, "out/new.txt"), "new\n");
    const patch = path.join(scratch, "patch.diff");
    const collected = await collectChanges(host, base, scratch, patch);
    expect(collected.changedFiles).toEqual(["in/a.txt", "out/b.txt", "out/new.txt"]);
    expect(collected.changedOutsideSparse).toEqual(["out/b.txt"]);
    expect(await readFile(patch, "utf8")).not.toContain("deleted file");
  });

  it("a link the agent puts in place of a left-out folder is not read through: it replaces the folder, and the deletion is named", async () => {
    const { ws, host, scratch } = await sparseWorkspace();
    const base = await takeBaseline(host, scratch);
    await mkdir(path.join(ws, "elsewhere"));
    await writeFile(path.join(ws, "elsewhere/d.txt"), "through a link\n");
    await symlink("elsewhere", path.join(ws, "far"));
    const collected = await collectChanges(host, base, scratch, path.join(scratch, "patch.diff"));
    // As git commits it: `far` is now a link, so far/d.txt (left out, never seen) goes; its content is never read through the link.
    expect(collected.changedFiles).toEqual(["elsewhere/d.txt", "far", "far/d.txt"]);
    expect(collected.changedOutsideSparse).toEqual(["far/d.txt"]);
    expect(await host.git.text(["ls-tree", collected.endTree, "--", "far"])).toMatch(/^120000 blob [0-9a-f]+\tfar$/);
  });
});
