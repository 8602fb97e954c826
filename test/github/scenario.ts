/**
 * One GitHub-triggered run as the runner would do it: a repository with a
 * bare origin (git-fixtures), the fake GitHub API seeded from an event
 * fixture, and dist/main.js run through the harness with the command agent
 * (a bash script that records its stdin and edits files) and sandbox none.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildEvent, type BuiltEvent, type EventFixture, type EventTweaks, writeEvent, FIXTURE_REPO } from "../support/events.js";
import { startFakeGitHub, type FakeGitHub, type Permission } from "../support/fake-github.js";
import { createRepo, type FileTree, type GitRepoFixture } from "../support/git-fixtures.js";
import type { FakeActionsResults } from "../support/fake-actions-results.js";
import { runStep, type StepOptions, type StepResult } from "../support/harness.js";

export interface ScenarioOptions {
  fixture: EventFixture;
  tweaks?: EventTweaks;
  files?: FileTree;
  /** Branches pushed to origin (name → files changed on top of main). */
  branches?: Record<string, FileTree>;
  /** Files of the fork PR's head (pushed to origin as refs/pull/<n>/head, as GitHub does). */
  forkHead?: FileTree;
  /** bash run as the agent in the workspace, after its stdin was saved to $CAPTURE/prompt.txt ($CAPTURE is set). */
  agent?: string;
  collaborators?: Record<string, Permission | null>;
  /**
   * What the workflow checked out before the step: `event` (default) the PR's head on PR
   * events, `default-branch` what `actions/checkout` with no `ref` gives an issue_comment run.
   */
  checkout?: "event" | "default-branch";
  /** An earlier workflow step: called on the fresh checkout, before the action's step starts. */
  beforeStep?: (workspace: string) => void | Promise<void>;
  /** The results fake whose artifacts the fake GitHub's REST API serves (cross-run downloads). */
  results?: FakeActionsResults;
}

export interface Scenario {
  repo: GitRepoFixture;
  gh: FakeGitHub;
  ev: BuiltEvent;
  /** Folder the agent script writes into (prompt.txt, runs.log). */
  capture: string;
  /** Run the main step; the workspace is reset to the event's checkout first. */
  run(inputs?: Record<string, string>, extraEnv?: Record<string, string>, step?: Pick<StepOptions, "interrupt" | "runnerTemp">): Promise<StepResult>;
  /** The post step after `main`, with its state, as the runner runs it. */
  post(main: StepResult, inputs?: Record<string, string>, extraEnv?: Record<string, string>): Promise<StepResult>;
  /** The task the agent received on its last run. */
  prompt(): string;
  /** How many times the agent ran. */
  agentRuns(): number;
  close(): Promise<void>;
}

// Random-looking, as a real token is: a 16-character piece of a run secret is redacted wherever it appears (a fixture sha like 0123456789abcdef… would be).
export const TOKEN = "ghs_scenarioTokenQ7vLk2Zp9XwRt4NbYhMcJ";

function agentScript(capture: string, body: string): string {
  const file = path.join(capture, "agent.sh");
  writeFileSync(
    file,
    `#!/bin/bash\nset -e\nCAPTURE=${JSON.stringify(capture)}\ncat > "$CAPTURE/prompt.txt"\necho run >> "$CAPTURE/runs.log"\n${body}\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

export async function scenario(opts: ScenarioOptions): Promise<Scenario> {
  const repo = await createRepo({
    files: opts.files ?? { "README.md": "# Demo\n\nTeh demo project.\n", "src/app.js": "console.log('hello');\n" },
    ...(opts.branches ? { branches: opts.branches } : {}),
  });
  // Branches are made off main and leave it where it was: its tip is the initial commit unless one of them is main.
  const main = opts.branches?.["main"] ? (await repo.git(["rev-parse", "main"])).trim() : repo.initialSha;
  let ev = buildEvent(opts.fixture, opts.tweaks ?? {});
  const pr = ev.payload["pull_request"] as Record<string, any> | undefined;
  const prNumber: number | undefined = pr?.number ?? (ev.payload["issue"]?.pull_request ? ev.payload["issue"].number : undefined);
  const headRef: string | undefined = pr?.head?.ref ?? ev.pull?.headRef;
  const isFork = pr ? pr.head.repo.full_name !== ev.payload["repository"].full_name : ev.pull?.headRepo !== undefined && ev.pull.headRepo !== FIXTURE_REPO;

  // The PR head in origin: a branch for same-repo PRs, refs/pull/<n>/head for forks.
  let headSha: string | undefined;
  let checkout = "main";
  const eventCheckout = opts.checkout !== "default-branch";
  if (prNumber !== undefined && headRef) {
    if (isFork) {
      headSha = await repo.commit(opts.forkHead ?? { "FORK.md": "from the fork\n" }, "Fork change", { branch: `fork-${prNumber}` });
      await repo.git(["push", "-q", "origin", `${headSha}:refs/pull/${prNumber}/head`]);
      if (eventCheckout) checkout = headSha;
    } else {
      if (!opts.branches?.[headRef]) await repo.commit({ "GREETING.md": "hello\n" }, "Greeting", { branch: headRef, push: true });
      headSha = (await repo.git(["rev-parse", headRef])).trim();
      if (eventCheckout) checkout = headRef;
    }
    const sha = headSha;
    // The fake reads a same-repo PR's files from origin; a fork's head is elsewhere, so list them.
    const files = isFork ? Object.keys(opts.forkHead ?? { "FORK.md": "" }).map((filename) => ({ filename, status: "added" as const, additions: 1, deletions: 0 })) : undefined;
    ev = { ...ev, pull: { ...(ev.pull ?? {}), ...(ev.pull ? { headSha: sha, baseSha: main } : {}), ...(files ? { files } : {}) } };
    if (pr) {
      pr.head.sha = sha;
      pr.base.sha = main;
    }
  }

  const gh = await startFakeGitHub({
    token: TOKEN,
    repo: { fullName: FIXTURE_REPO, gitDir: repo.origin, collaborators: opts.collaborators ?? { alice: "write" } },
    ...(opts.results ? { results: opts.results } : {}),
  });
  gh.seedEvent(ev);
  const capture = mkdtempSync(path.join(os.tmpdir(), "agent-capture-"));
  const script = agentScript(capture, opts.agent ?? "echo done");
  const eventDir = mkdtempSync(path.join(os.tmpdir(), "event-"));
  const { env: eventEnv } = await writeEvent(eventDir, ev);

  const stepOptions = (inputs: Record<string, string>, extraEnv: Record<string, string>): StepOptions => ({
    workspace: repo.dir,
    inputs: { agent: "command", "agent-command": script, sandbox: "none", ...inputs },
    githubToken: TOKEN,
    env: {
      ...eventEnv,
      GITHUB_API_URL: gh.url,
      GITHUB_SERVER_URL: gh.serverUrl,
      GITHUB_RUN_ID: "4242",
      ...extraEnv,
    },
  });

  let resetting: Promise<void> = Promise.resolve();
  return {
    repo,
    gh,
    ev,
    capture,
    async run(inputs = {}, extraEnv = {}, step = {}) {
      // A fresh checkout of what the runner would have: the event's commit, clean. Runs started at once
      // (Promise.all) take turns here: two resets of one working copy race for its index.lock.
      const turn = resetting.then(async () => {
        await repo.git(["checkout", "-q", "--detach", checkout]);
        await repo.git(["reset", "-q", "--hard"]);
        await repo.git(["clean", "-qfdx"]);
        await opts.beforeStep?.(repo.dir);
      });
      resetting = turn.catch(() => {});
      await turn;
      return runStep("main", { ...stepOptions(inputs, extraEnv), ...step });
    },
    post: (main, inputs = {}, extraEnv = {}) =>
      runStep("post", { ...stepOptions(inputs, extraEnv), runnerTemp: main.runnerTemp, state: main.state }),
    prompt: () => readFileSync(path.join(capture, "prompt.txt"), "utf8"),
    agentRuns: () => (existsSync(path.join(capture, "runs.log")) ? readFileSync(path.join(capture, "runs.log"), "utf8").split("\n").filter(Boolean).length : 0),
    async close() {
      await gh.close();
      await repo.cleanup();
    },
  };
}
