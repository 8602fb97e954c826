/**
 * Issue #10, part 2: sessions resume from any step, job or schedule, for all
 * four CLIs, each really run against the stub model through dist/main.js,
 * with the artifact client talking to the fake Actions results service and
 * the REST lookups to the fake GitHub. One chain of four runs per CLI, on a
 * nightly `schedule` workflow (no issue or PR):
 *
 *   run A, job a, step 1  session: continue → nothing yet, a new session S (a shell tool call)
 *   run A, job a, step 2  session: S        → from this job's temp folder: S again, run 1's tool call in the history
 *   run A, job b          session: S, fork-session: true → from the artifact agent-session-id-S: a new id F, same history
 *   run B (next night)    session: continue → this workflow's last session (F, from agent-session-workflow-…)
 *
 * And a session id that exists nowhere: exit 1 with one error naming
 * `session`, the id and where it looked, before any CLI starts.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentBackendName } from "../../src/config/schema.js";
import { sessionIdKey, workflowIdentity, workflowSessionKey } from "../../src/session/thread.js";
import { errors, git, makeRepo } from "../artifacts/helpers.js";
import { AGENT_PATH } from "../agents/helpers.js";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { runStep, type StepResult } from "../support/harness.js";
import type { CliName } from "../support/stub-model-clis.js";
import { shellStep } from "../support/stub-model-tools.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";

const TOKEN = "ghs_sessionsContinueToken0123456789abcdEF";
/** Each CLI's chain is its own nightly workflow, so one CLI never finds another's last session. */
const workflowRef = (name: string) => `${FIXTURE_REPO}/.github/workflows/${name}.yml@refs/heads/main`;
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{5,199}$/;

let results: FakeActionsResults;
let gh: FakeGitHub;
let stub: StubModel;
let eventEnv: Record<string, string>;

beforeAll(async () => {
  results = await startFakeActionsResults({ repository: FIXTURE_REPO });
  gh = await startFakeGitHub({ token: TOKEN, results, repo: { fullName: FIXTURE_REPO, collaborators: {} } });
  stub = await startStubModel([]);
  ({ env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "event-")), buildEvent("schedule")));
});
afterAll(async () => {
  await stub?.close();
  await gh?.close();
  await results?.close();
});

const BACKENDS: Array<{ cli: CliName & AgentBackendName; inputs: () => Record<string, string> }> = [
  { cli: "claude", inputs: () => ({ agent: "claude", model: "claude-sonnet-4-5", "base-url": stub.url, secrets: "ANTHROPIC_API_KEY=sk-ant-test-key-continuing-0123456789" }) },
  { cli: "codex", inputs: () => ({ agent: "codex", model: "gpt-5.5", "base-url": `${stub.url}/v1`, secrets: "OPENAI_API_KEY=sk-openai-test-key-continuing-0123" }) },
  { cli: "gemini", inputs: () => ({ agent: "gemini", model: "gemini-2.5-flash", "base-url": stub.url, secrets: "GEMINI_API_KEY=gemini-test-key-continuing-0123" }) },
  { cli: "opencode", inputs: () => ({ agent: "opencode", model: "gpt-5.5", "base-url": `${stub.url}/v1`, secrets: "OPENAI_API_KEY=sk-openai-test-key-continuing-0123" }) },
];

interface Step {
  runId: number;
  job: string;
  /** The job's RUNNER_TEMP: steps of one job share it. */
  runnerTemp: string;
  workspace: string;
  agent: Record<string, string>;
  prompt: string;
  session: string;
  fork?: boolean;
  /** Each step's run artifact needs its own name within a workflow run. */
  artifactName: string;
  workflow: string;
}

/** One step of the nightly workflow, as the runner runs it. */
function nightlyStep(s: Step): Promise<StepResult> {
  // On GitHub each job checks out into the same path; the CLIs key sessions by it.
  git(s.workspace, "reset", "-q", "--hard");
  git(s.workspace, "clean", "-qfdx");
  return runStep("main", {
    workspace: s.workspace,
    githubToken: TOKEN,
    runnerTemp: s.runnerTemp,
    inputs: {
      ...s.agent,
      "agent-version": "preinstalled",
      sandbox: "none",
      prompt: s.prompt,
      session: s.session,
      ...(s.fork ? { "fork-session": "true" } : {}),
      deliver: "none",
      comment: "none",
      "artifact-name": s.artifactName,
    },
    env: {
      ...eventEnv,
      ...results.runtimeEnv({ runId: s.runId, job: s.job, repository: FIXTURE_REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: s.workspace }),
      GITHUB_WORKFLOW: s.workflow,
      GITHUB_WORKFLOW_REF: workflowRef(s.workflow),
      PATH: AGENT_PATH,
    },
    timeoutMs: 120_000,
  });
}

const temp = () => mkdtempSync(path.join(os.tmpdir(), "runner-temp-"));

/** The history the model received on the first request of the last run. */
function historySince(before: number): string {
  const first = stub.modelRequests()[before];
  expect(first, "the run made no model request").toBeDefined();
  return JSON.stringify(first!.body);
}

describe("continuing a session in the next step, the next job and the next night", () => {
  BACKENDS.forEach((b, i) => {
    it(`${b.cli}: step → step (job temp folder), job → job (artifact, forked), night → night (session: continue)`, async () => {
      const workspace = makeRepo({ "README.md": `# nightly ${b.cli}\n` });
      const runA = 9100 + i * 10;
      const jobA = temp();
      const workflow = `nightly-${b.cli}`;
      const WORKFLOW_KEY = workflowSessionKey(workflowIdentity(workflowRef(workflow))!);
      const common = { workspace, agent: b.inputs(), workflow };
      // The call and its output differ (%s), so the history shows both the tool call and its result.
      const call = `printf 'TOOL-OUT-%s' ${b.cli}-42`;

      // Step 1: nothing to continue yet; a new session that runs a shell command.
      stub.setScript([shellStep(b.cli, call), { text: `Noted for ${b.cli}.` }]);
      const one = await nightlyStep({ ...common, runId: runA, job: "a", runnerTemp: jobA, prompt: `FIRST-${b.cli}: run the command`, session: "continue", artifactName: "run-step-1" });
      expect(errors(one), one.log + one.stderr).toEqual([]);
      expect(one.log).toContain(`Session: no saved session '${WORKFLOW_KEY}' found for this workflow. Starting a new session.`);
      const id = one.outputs["session-id"]!;
      expect(id).toMatch(SESSION_ID);
      expect(results.artifacts({ runId: runA }).map((a) => a.name).sort()).toEqual([sessionIdKey(id), WORKFLOW_KEY, "run-step-1"].sort());

      // Step 2, same job: the id from step 1's output, found in the job's temp folder.
      stub.setScript([{ text: `Resumed ${b.cli}.` }]);
      let before = stub.modelRequests().length;
      const two = await nightlyStep({ ...common, runId: runA, job: "a", runnerTemp: jobA, prompt: `SECOND-${b.cli}`, session: id, artifactName: "run-step-2" });
      expect(errors(two), two.log + two.stderr).toEqual([]);
      expect(two.log).toContain(`Session: restored the saved state from ${path.join(jobA, "agent-runner", "sessions", sessionIdKey(id))} to resume ${id}.`);
      let history = historySince(before);
      expect(history).toContain("TOOL-OUT-%s");
      expect(history).toContain(`TOOL-OUT-${b.cli}-42`);
      expect(history).toContain(`SECOND-${b.cli}`);
      expect(two.outputs["session-id"]).toBe(id);

      // Job b of the same workflow run: a fresh RUNNER_TEMP, so only the artifact has it; forked.
      stub.setScript([{ text: `Forked ${b.cli}.` }]);
      before = stub.modelRequests().length;
      const three = await nightlyStep({ ...common, runId: runA, job: "b", runnerTemp: temp(), prompt: `THIRD-${b.cli}`, session: id, fork: true, artifactName: "run-job-b" });
      expect(errors(three), three.log + three.stderr).toEqual([]);
      expect(three.log).toMatch(new RegExp(`Session: restored the saved state from artifact '${sessionIdKey(id)}' \\(id \\d+, workflow run ${runA}`));
      history = historySince(before);
      expect(history).toContain("TOOL-OUT-%s");
      expect(history).toContain(`THIRD-${b.cli}`);
      const forked = three.outputs["session-id"]!;
      expect(forked).toMatch(SESSION_ID);
      expect(forked).not.toBe(id);

      // The next night: a new workflow run; session: continue finds this workflow's last session, the fork.
      stub.setScript([{ text: `Next night ${b.cli}.` }]);
      before = stub.modelRequests().length;
      const four = await nightlyStep({ ...common, runId: runA + 1, job: "a", runnerTemp: temp(), prompt: `FOURTH-${b.cli}`, session: "continue", artifactName: "run-night-2" });
      expect(errors(four), four.log + four.stderr).toEqual([]);
      expect(four.log).toMatch(new RegExp(`Session: resuming ${forked} from artifact '${WORKFLOW_KEY}' \\(id \\d+, workflow run ${runA}`));
      history = historySince(before);
      expect(history).toContain("TOOL-OUT-%s");
      expect(history).toContain(`THIRD-${b.cli}`);
      expect(history).toContain(`FOURTH-${b.cli}`);
      expect(four.outputs["session-id"]).toBe(forked);
      console.info(`[${b.cli}] steps: ${[one, two, three, four].map((x) => x.durationMs).join(" ms, ")} ms`);
    }, 300_000);
  });
});

describe("a session that does not exist", () => {
  it("exit 1 with one error naming session, the id and where it looked; no CLI starts", async () => {
    const workspace = makeRepo({ "README.md": "# missing\n" });
    const before = stub.requests.length;
    const r = await nightlyStep({
      workspace,
      agent: BACKENDS[0]!.inputs(),
      runId: 9300,
      job: "a",
      runnerTemp: temp(),
      prompt: "resume it",
      session: "0badc0de-0000-4000-8000-000000000000",
      artifactName: "run-missing",
      workflow: "nightly-missing",
    });
    expect(r.exitCode, r.log + r.stderr).toBe(1);
    const errs = errors(r);
    expect(errs).toHaveLength(1);
    expect(errs[0]).toContain("Input 'session': no saved session '0badc0de-0000-4000-8000-000000000000' was found to resume.");
    expect(errs[0]).toContain("this job's temp folder");
    expect(errs[0]).toContain(`'${sessionIdKey("0badc0de-0000-4000-8000-000000000000")}' in the artifacts of ${FIXTURE_REPO}: not there`);
    expect(errs[0]).toContain("'permissions: actions: read'");
    expect(r.outputs["session-id"]).toBeUndefined();
    expect(stub.requests.length).toBe(before);
  });
});
