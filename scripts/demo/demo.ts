/**
 * The key-free demo: a maintainer comments "@agent …" on an issue; the real
 * action (dist/main.js) runs the real Claude Code CLI inside bubblewrap
 * against a scripted model, pushes a branch, opens a draft pull request on a
 * fake GitHub, and uploads its artifact to a fake Actions service. Prints what
 * a user would see.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../../test/support/events.js";
import { startFakeActionsResults } from "../../test/support/fake-actions-results.js";
import { startFakeGitHub } from "../../test/support/fake-github.js";
import { createRepo } from "../../test/support/git-fixtures.js";
import { REPO_ROOT, runActionSteps } from "../../test/support/harness.js";
import { startStubModel } from "../../test/support/stub-model.js";
import { shellStep, writeFileStep } from "../../test/support/stub-model-tools.js";

const TOKEN = "ghs_demoWorkflowToken0123456789abcdefABCD";
const DEMO_KEY = "sk-ant-demo-key-never-enters-the-sandbox";
const started = Date.now();
const say = (s = "") => process.stdout.write(s + "\n");
const rule = (title: string) => say(`\n━━━ ${title} ${"━".repeat(Math.max(0, 70 - title.length))}`);

const repo = await createRepo({
  files: {
    "README.md": "# greeter\n\nSays hello.\n",
    "greet.sh": '#!/bin/sh\necho "hello, $1"\n',
  },
});
const workspace = repo.dir;

// The scripted model: what a real model would answer to this task.
const model = await startStubModel([
  { tool: "Read", args: { file_path: path.join(workspace, "greet.sh") }, text: "Let me look at the script." },
  { ...writeFileStep("claude", path.join(workspace, "greet.sh"), '#!/bin/sh\nname="${1:-world}"\necho "hello, $name"\n'), text: "I'll give the name a default." },
  shellStep("claude", "sh greet.sh && sh greet.sh Ada", "try it"),
  { text: "`greet.sh` now greets the world when no name is given:\n\n- `sh greet.sh` → `hello, world`\n- `sh greet.sh Ada` → `hello, Ada`" },
]);

const results = await startFakeActionsResults({ repository: FIXTURE_REPO });
const github = await startFakeGitHub({
  token: TOKEN,
  repo: { fullName: FIXTURE_REPO, gitDir: repo.origin, collaborators: { alice: "write" } },
  results,
});
const event = buildEvent("issue_comment.issue", {
  number: 7,
  title: "greet.sh prints 'hello, ' without a name",
  author: "alice",
  authorAssociation: "MEMBER",
  body: "@agent make greet.sh default to 'world' when no name is given",
});
github.seedEvent(event);
const { env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "demo-event-")), event);

rule("The trigger");
say(`alice commented on ${FIXTURE_REPO}#7: "${String(event.payload.comment.body)}"`);
say("Running dist/main.js as the GitHub runner would (agent: claude, sandbox: auto, model: scripted stub)…");

const { main } = await runActionSteps({
  workspace,
  githubToken: TOKEN,
  inputs: {
    agent: "claude",
    "agent-version": "preinstalled",
    model: "claude-sonnet-4-5",
    "base-url": model.url,
    secrets: `ANTHROPIC_API_KEY=${DEMO_KEY}`,
  },
  env: {
    ...eventEnv,
    ...results.runtimeEnv({ runId: 4242, github }),
    GITHUB_API_URL: github.url,
    GITHUB_RUN_ID: "4242",
    PATH: `${path.join(REPO_ROOT, "node_modules/.bin")}:${process.env.PATH ?? ""}`,
  },
  timeoutMs: 120_000,
});

rule("The action's log (tail)");
say(main.log.split("\n").filter((l) => l.trim() && !l.startsWith("::")).slice(-14).join("\n"));

rule("The comment on issue #7");
for (const c of github.issueComments(7)) say(`— ${c.user}:\n${c.body}\n`);

rule("The pull request");
for (const pr of github.pulls()) {
  say(`#${pr.number} ${pr.title}${pr.draft ? " (draft)" : ""}  ${pr.head.ref} → ${pr.base.ref}`);
  say(String(pr.body ?? ""));
}

rule("Artifacts");
for (const a of results.artifacts()) {
  say(`${a.name} (${a.size} bytes)`);
  for (const f of results.artifactFiles(a.id)) say(`  ${f}`);
}

rule("Outputs");
for (const name of ["conclusion", "pull-request-url", "branch", "commit-sha", "session-id", "usage", "changed-files"])
  say(`${name}: ${main.outputs[name] ?? ""}`);
const resultsDir = path.dirname(main.outputs["patch-path"] ?? ".");
const transcript = path.join(resultsDir, "transcript.html");
say(`\nOpen the transcript in a browser: ${transcript}`);
writeFileSync(path.join(os.tmpdir(), "agent-runner-demo-last.txt"), transcript + "\n");
const keyAtModel = model.modelRequests().every((r) => r.headers["x-api-key"] === DEMO_KEY);
say(`Model requests: ${model.modelRequests().length}. The agent only held a placeholder key; the gateway added the real one on the way out: ${keyAtModel}.`);
say(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s.`);

await Promise.all([model.close(), github.close(), results.close()]);
await repo.cleanup();
process.exitCode = main.outputs.conclusion === "success" ? 0 : 1;
