/**
 * Issue #20: a hand-written two-job workflow, as a user writes it:
 *
 *   jobs:
 *     agent:   { steps: [checkout, { uses: agent-runner, with: { agent: command, agent-command: ./agent.sh, prompt: …, phase: run } }] }
 *     publish: { needs: agent, steps: [checkout, { uses: agent-runner, with: { agent: command, phase: publish } }] }
 *
 * The publish job runs no agent, so it must not ask for `agent-command`
 * (nor `prompt`, nor a `docker-image` for a sandbox it never starts).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLoopbackServer, sendJson, type LoopbackServer } from "../support/fake-github-http.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { agentScript, cloneRepo, errors, git, makeRepo, RUN_ID, runJob } from "./helpers.js";

let results: FakeActionsResults;
let api: LoopbackServer;
beforeAll(async () => {
  results = await startFakeActionsResults({ repository: "octo/repo" });
  api = await startLoopbackServer(({ res }) => {
    sendJson(res, 404, { message: "Not Found" });
    return 404;
  });
});
afterAll(async () => {
  await results?.close();
  await api?.close();
});

describe("phase publish asks only for what publishing needs", () => {
  it("run job with agent-command, publish job with only agent and phase: the publish job delivers the run's patch", async () => {
    const origin = makeRepo({ "edit.txt": "one\n" });
    const env = { GITHUB_API_URL: api.url };
    const runWs = cloneRepo(origin);
    const run = await runJob({
      results,
      workspace: runWs,
      runtime: { runId: RUN_ID + 40, job: "agent" },
      env,
      inputs: { agent: "command", "agent-command": agentScript('echo "two" >> edit.txt\necho edited'), prompt: "edit", sandbox: "none", phase: "run" },
    });
    expect(errors(run), run.log + run.stderr).toEqual([]);
    expect(run.exitCode).toBe(0);

    const publishWs = cloneRepo(origin);
    const publish = await runJob({
      results,
      workspace: publishWs,
      runtime: { runId: RUN_ID + 40, job: "publish" },
      env,
      inputs: { agent: "command", phase: "publish", sandbox: "docker" },
    });
    expect(errors(publish), publish.log + publish.stderr).toEqual([]);
    expect(publish.exitCode, publish.log + publish.stderr).toBe(0);
    expect(publish.log).not.toContain("agent-command");
    expect(publish.log).toMatch(/applies cleanly to [0-9a-f]{12}/);
    expect(JSON.parse(publish.outputs["changed-files"]!)).toEqual(["edit.txt"]);
    expect(publish.outputs["final-message"]).toBe("edited");
    git(publishWs, "apply", publish.outputs["patch-path"]!);
    expect(readFileSync(`${publishWs}/edit.txt`, "utf8")).toBe("one\ntwo\n");
  });

  it("a run job still needs agent-command", async () => {
    const ws = makeRepo({ "edit.txt": "one\n" });
    const run = await runJob({ results, workspace: ws, runtime: { runId: RUN_ID + 41, job: "agent" }, inputs: { agent: "command", prompt: "edit", sandbox: "none", phase: "run" } });
    expect(run.exitCode).toBe(1);
    expect(errors(run).join("\n")).toContain("Input 'agent-command': is required when agent is 'command'");
  });
});
