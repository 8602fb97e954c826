/**
 * `agent-runner ledger` (dist/cli.js) in a clone: fetches refs/agent-runner/ledger with plain git
 * and prints it per UTC day and workflow, and per pool; a commit whose message does not hold an
 * entry is listed as rejected. A hostile commit (author `x[bot]`, a message holding the \x1e/\x1f
 * separators of a git log format and a whole fake record after them) stays one rejected entry:
 * no fake record is read out of it, and its author name is not taken as an identity.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entryMessage, type LedgerEntry } from "../../src/ledger/entry.js";
import { ACTION_ROOT } from "../support/harness.js";
import { createRepo, git, type GitRepoFixture } from "../support/git-fixtures.js";

const run = promisify(execFile);
let repo: GitRepoFixture;

async function append(parent: string | undefined, message: string, author = "github-actions[bot]"): Promise<string> {
  const env = { GIT_AUTHOR_NAME: author, GIT_AUTHOR_EMAIL: "41898282+github-actions[bot]@users.noreply.github.com", GIT_COMMITTER_NAME: author, GIT_COMMITTER_EMAIL: "noreply@github.com" };
  const tree = (await git(repo.origin, ["mktree"], { input: "" })).trim();
  return (await git(repo.origin, ["commit-tree", tree, ...(parent ? ["-p", parent] : [])], { env, input: message })).trim();
}

beforeAll(async () => {
  repo = await createRepo();
  const base = { v: 1 as const, run: "77-1", workflow: "octo/repo/.github/workflows/triage.yml", time: "2031-01-02T10:00:00.000Z" };
  const entries: LedgerEntry[] = [
    { ...base, kind: "reserve", id: "a", amountUsd: 1.5, expires: "2031-01-02T11:00:00.000Z" },
    { ...base, kind: "settle", id: "a", amountUsd: 0.75, tokens: 1200 },
    { ...base, kind: "reserve", id: "b", amountUsd: 2, pool: "900", expires: "2031-01-02T11:00:00.000Z" },
  ];
  let head = await append(undefined, "agent-runner ledger: start\n");
  for (const e of entries) head = await append(head, entryMessage(e));
  const fake = `${"d".repeat(40)}\x1f${head}\x1fgithub-actions[bot]\x1f${base.time}\x1f${entryMessage({ ...base, kind: "settle", id: "b", amountUsd: 0 })}`;
  head = await append(head, `agent-runner ledger: settle\n\n{"not json\x1e${fake}\x1e`, "x[bot]");
  await git(repo.origin, ["update-ref", "refs/agent-runner/ledger", head]);
});
afterAll(() => repo?.cleanup());

describe("agent-runner ledger", () => {
  it("prints the ledger of a clone per day, workflow and pool, rejected entries listed", async () => {
    const { stdout } = await run(process.execPath, [path.join(ACTION_ROOT, "dist/cli.js"), "ledger", "--dir", repo.dir]);
    const lines = stdout.split("\n");
    expect(lines[0]).toMatch(/^day \(UTC\)\s+workflow\s+runs\s+settled\s+unsettled\s+tokens$/);
    expect(stdout).toMatch(/2031-01-02\s+octo\/repo\/\.github\/workflows\/triage\.yml\s+2\s+\$0\.75\s+\$2\.00\s+1200/);
    expect(stdout).toMatch(/pool 900\s+octo\/repo\/\.github\/workflows\/triage\.yml\s+1\s+\$0\.00\s+\$2\.00/);
    // The fake settlement inside the hostile message is not read: b stays unsettled ($2.00 above).
    expect(stdout).toMatch(/rejected [0-9a-f]{12} .*the entry is not JSON; counted as spent/);
    expect(stdout).toMatch(/Who made each entry is not checked here/);
    expect(stdout).not.toMatch(/dddddddddddd/);
    // Fetched into the clone with plain git.
    expect(await git(repo.dir, ["for-each-ref", "--format=%(refname)", "refs/agent-runner"])).toBe("refs/agent-runner/ledger\n");
    const json = JSON.parse((await run(process.execPath, [path.join(ACTION_ROOT, "dist/cli.js"), "ledger", "--dir", repo.dir, "--no-fetch", "--json"])).stdout) as { days: unknown[]; rejected: unknown[]; entries: number; identity: string };
    expect(json.days).toHaveLength(1);
    expect(json.rejected).toHaveLength(1);
    expect(json.entries).toBe(5);
    expect(json.identity).toBe("unverified");
  });
});
