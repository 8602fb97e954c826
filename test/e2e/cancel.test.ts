/** A cancelled job (the runner sends SIGINT) stops the agent's tree and still reports. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentScript, makeRepo } from "../artifacts/helpers.js";
import { runStep } from "../support/harness.js";
import { scenario } from "../github/scenario.js";

describe("job cancellation", () => {
  it("SIGINT stops the agent and its children; conclusion incomplete (work kept as a checkpoint), partial patch and stdout kept", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const marker = `cancel-sleeper-${process.pid}-${Date.now()}`;
    const agent = agentScript(["echo partial > partial.txt", "echo started", `setsid bash -c 'exec -a ${marker} sleep 1000' </dev/null >/dev/null 2>&1 &`, "sleep 1000"].join("\n"));
    const step = await runStep("main", {
      workspace: ws,
      inputs: { agent: "command", "agent-command": agent, prompt: "hang", sandbox: "none" },
      interrupt: { when: "started" },
    });
    // The step ended by itself on the one SIGINT (the harness sends no follow-up SIGTERM, as the runner
    // would 7.5 s later): an exit code, not a signal. Events, not a wall-clock limit a loaded machine misses.
    expect(step.exitCode).toBe(1);
    expect(step.outputs.conclusion).toBe("incomplete");
    expect(JSON.parse(step.outputs["changed-files"]!)).toEqual(["partial.txt"]);
    expect(readFileSync(path.join(path.dirname(step.outputs["patch-path"]!), "raw/stdout.jsonl"), "utf8")).toContain("started");
    expect(execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).split("\n").filter((l) => l.includes(marker))).toEqual([]);
  });

  it("a cancelled run on an issue finishes its sticky comment as cancelled, with a checkpoint to continue from", async () => {
    const s = await scenario({
      fixture: "issue_comment.issue",
      tweaks: { body: "@agent take your time", author: "alice" },
      agent: "echo started\nsleep 1000",
    });
    try {
      const step = await s.run({}, {}, { interrupt: { when: "started" } });
      expect(step.outputs.conclusion).toBe("incomplete");
      const comments = s.gh.issueComments(s.ev.payload["issue"].number as number).filter((c) => c.body.includes("agent-runner:sticky"));
      expect(comments).toHaveLength(1);
      expect(comments[0]!.body).not.toMatch(/working/i);
      expect(comments[0]!.body).toMatch(/cancel/i);
      expect(comments[0]!.body).toContain("continue");
      expect(step.outputs.checkpoint).toMatch(/^refs\/agent-runner\/checkpoints\/\d+$/);
    } finally {
      await s.close();
    }
  });

  it("a job killed outright leaves the comment to the post step, which marks it stopped", async () => {
    const s = await scenario({
      fixture: "issue_comment.issue",
      tweaks: { body: "@agent take your time", author: "alice" },
      agent: `echo started\nexec -a killed-main-agent-${process.pid} sleep 1000`,
    });
    try {
      const main = await s.run({}, {}, { interrupt: { when: "started", signal: "SIGKILL" } });
      expect(main.exitCode).toBe(null);
      const sticky = () => s.gh.issueComments(s.ev.payload["issue"].number as number).filter((c) => c.body.includes("agent-runner:sticky"));
      expect(sticky()[0]!.body).toMatch(/working/i);
      const agentAlive = () => execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).includes(`killed-main-agent-${process.pid}`);
      expect(agentAlive()).toBe(true);
      const post = await s.post(main);
      expect(post.exitCode).toBe(0);
      expect(agentAlive()).toBe(false);
      expect(sticky()).toHaveLength(1);
      expect(sticky()[0]!.body).toContain("The job stopped before the agent finished");
    } finally {
      await s.close();
    }
  });

  it("a run that finished leaves its comment alone in the post step", async () => {
    const s = await scenario({ fixture: "issue_comment.issue", tweaks: { body: "@agent say hi", author: "alice" }, agent: "echo hi" });
    try {
      const main = await s.run();
      const before = s.gh.issueComments(s.ev.payload["issue"].number as number).map((c) => c.body);
      await s.post(main);
      expect(s.gh.issueComments(s.ev.payload["issue"].number as number).map((c) => c.body)).toEqual(before);
    } finally {
      await s.close();
    }
  });
});
