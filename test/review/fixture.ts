/**
 * The pull request the review tests review, and the agent that reviews it:
 * made once per test file. A PR of `files` generated files × `lines` added
 * lines, in one commit on `feature`, on the fake GitHub with a bare origin
 * and the fake Actions results service; and a `command` agent (a bash
 * script, outside any checkout: the sandbox hides checkouts under /tmp) that
 * records the task it got, fails on shard $FAIL_SHARD, and otherwise asks
 * for a review with one comment on its first diff file, one (forged) on
 * another shard's file and one outside the diff.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { FIXTURE_REPO } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { createRepo, git, type GitRepoFixture } from "../support/git-fixtures.js";
import { patchHunks } from "../../src/safe-outputs/diff-lines.js";

export interface BigPullRequest {
  repo: GitRepoFixture;
  results: FakeActionsResults;
  gh: FakeGitHub;
  /** The pull request's files, in path order. */
  files: string[];
  close(): Promise<void>;
}

export async function bigPullRequest(o: { token: string; number: number; files: number; lines: number }): Promise<BigPullRequest> {
  const repo = await createRepo({ files: { "README.md": "# Demo\n" } });
  const tree: Record<string, string> = {};
  for (let i = 0; i < o.files; i++)
    tree[`pkg${String(i % 8)}/mod${String(Math.floor(i / 8) % 5)}/file${String(i).padStart(3, "0")}.ts`] =
      Array.from({ length: o.lines }, (_, l) => `export const v${l} = ${i * 1000 + l};`).join("\n") + "\n";
  await repo.commit(tree, "A big change", { branch: "feature", push: true });
  const results = await startFakeActionsResults({ repository: FIXTURE_REPO });
  const gh = await startFakeGitHub({ token: o.token, results, repo: { fullName: FIXTURE_REPO, gitDir: repo.origin, collaborators: { alice: "write" } } });
  // Its file list seeded (the fake would otherwise run git per file on every read of the pull request); the review reads local git.
  const files = Object.keys(tree).sort();
  gh.addPull({
    files: files.map((filename) => ({ filename, status: "added" as const, additions: o.lines, deletions: 0 })),
    number: o.number,
    title: "A big change",
    body: "PR-DESCRIPTION-MARK: please review carefully",
    user: "alice",
    head: { ref: "feature" },
    base: { ref: "main" },
  });
  return {
    repo,
    results,
    gh,
    files,
    async close() {
      await gh.close();
      await results.close();
      await repo.cleanup();
    },
  };
}

export interface ReviewAgent {
  script: string;
  /** The tasks the agent was given, by shard, newest last. */
  tasks(): Map<number, string>;
  /** File names of the recorded tasks (to tell later ones apart). */
  recorded(): string[];
  read(name: string): string;
  cleanup(): void;
}

export function reviewAgent(): ReviewAgent {
  const dir = mkdtempSync(path.join(os.tmpdir(), "review-agent-"));
  const recordDir = mkdtempSync(path.join(os.tmpdir(), "review-record-"));
  const script = path.join(dir, "agent.sh");
  writeFileSync(
    script,
    [
      "#!/bin/bash",
      "set -e",
      "task=$(cat)",
      'shard=$(printf "%s" "$task" | grep -o "shard [0-9]* of" | head -1 | grep -o "[0-9]*" || echo 1)',
      `printf "%s" "$task" > "${recordDir}/task-$shard-$(date +%s%N).txt"`,
      'if [ "$shard" = "$FAIL_SHARD" ]; then echo "boom" >&2; exit 3; fi',
      "file=$(printf '%s' \"$task\" | grep -m1 '^+++ b/' | cut -c7-)",
      "other=$(printf '%s' \"$task\" | grep -m1 '^  +' | cut -f2 || true)",
      'other=${other:-not/in/this/pr.ts}',
      'printf \'{"type":"create_pull_request_review","body":"Shard %s summary","event":"COMMENT","comments":[{"path":"%s","line":2,"body":"Check this in shard %s%s","severity":"major"},{"path":"%s","line":1,"body":"forged","severity":"critical"},{"path":"%s","line":999,"body":"outside the diff","severity":"critical"}]}\\n\' "$shard" "$file" "$shard" "${NOTE:-}" "$other" "$file" >> "$AGENT_SAFE_OUTPUTS"',
      'echo "reviewed shard $shard"',
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  return {
    script,
    tasks() {
      const out = new Map<number, string>();
      for (const f of readdirSync(recordDir).sort()) out.set(Number(/^task-(\d+)-/.exec(f)![1]), readFileSync(path.join(recordDir, f), "utf8"));
      return out;
    },
    recorded: () => readdirSync(recordDir),
    read: (name) => readFileSync(path.join(recordDir, name), "utf8"),
    cleanup() {
      for (const d of [recordDir, dir]) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** The hunks of one file of the PR's diff, as GitHub shows it (`base...head`). */
export async function diffHunks(repoDir: string, from: string, to: string, file: string) {
  const text = await git(repoDir, ["diff", `${from}...${to}`, "--", file]);
  return patchHunks(text.slice(text.indexOf("@@")));
}

/** The files the task marks as this shard's. */
export function shardFilesOf(task: string): string[] {
  return task.split("\n").filter((l) => l.startsWith("* ")).map((l) => l.split("\t")[1]!);
}
