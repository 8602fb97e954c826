/**
 * Issue #2 acceptance: dist/main.js run as the runner runs it, with the
 * command agent and sandbox none.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentScript, git, makeRepo } from "../artifacts/helpers.js";
import { runActionSteps, runStep } from "../support/harness.js";

describe("the action run by the runner harness", () => {
  it("collects new, edited, deleted, binary and committed files into a patch that reproduces the tree", async () => {
    const ws = makeRepo({ "edit.txt": "one\n", "delete.txt": "bye\n", "keep.txt": "k\n" });
    const agent = agentScript([
      'echo "new file" > created.txt',
      'echo "two" >> edit.txt',
      "rm delete.txt",
      "head -c 2048 /dev/urandom > blob.bin",
      'echo "committed" > committed.txt',
      "git add committed.txt",
      "git -c user.name=agent -c user.email=agent@example.com commit -qm 'agent commit'",
      "echo all done",
    ].join("\n"));
    const { main, post } = await runActionSteps({
      workspace: ws,
      inputs: { agent: "command", "agent-command": agent, prompt: "change things", sandbox: "none" },
    });
    expect(main.stderr).toBe("");
    expect(main.exitCode).toBe(0);
    expect(main.outputs.conclusion).toBe("success");
    expect(main.outputs["final-message"]).toBe("all done");
    expect(JSON.parse(main.outputs["changed-files"]!).sort()).toEqual(["blob.bin", "committed.txt", "created.txt", "delete.txt", "edit.txt"]);
    expect(main.summary).toContain("Agent Runner");
    expect(main.summary).toContain("created.txt");

    // The patch applied to a clean copy at the starting commit reproduces the agent's tree.
    const clean = mkdtempSync(path.join(os.tmpdir(), "clean-"));
    git(clean, "clone", "-q", ws, ".");
    git(clean, "checkout", "-q", "HEAD~1");
    git(clean, "apply", "--binary", main.outputs["patch-path"]!);
    for (const f of ["created.txt", "edit.txt", "blob.bin", "committed.txt", "keep.txt"])
      expect(readFileSync(path.join(clean, f)).equals(readFileSync(path.join(ws, f)))).toBe(true);
    expect(existsSync(path.join(clean, "delete.txt"))).toBe(false);

    const resultsDir = path.dirname(main.outputs["patch-path"]!);
    expect(readdirSync(resultsDir).sort()).toEqual(expect.arrayContaining(["patch.diff", "raw", "result.json", "trace.jsonl"]));
    expect(JSON.parse(readFileSync(path.join(resultsDir, "result.json"), "utf8")).conclusion).toBe("success");
    expect(post.exitCode).toBe(0);
  });

  it("keeps secrets out of outputs, summary, results and the log, and the agent never sees runner tokens", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const secret = "s3cr3t-Value-42";
    const agent = agentScript([
      'echo "plain: $MY_SECRET"',
      'printf \'{"json":"%s"}\\n\' "$MY_SECRET"',
      'echo "token=${GITHUB_TOKEN:-absent} runtime=${ACTIONS_RUNTIME_TOKEN:-absent} input=${INPUT_SECRETS:-absent}"',
      'echo "stderr: $MY_SECRET" >&2',
      'echo "$MY_SECRET" > leaked.txt',
    ].join("\n"));
    const { main } = await runActionSteps({
      workspace: ws,
      inputs: { agent: "command", "agent-command": agent, prompt: "print secrets", sandbox: "none", secrets: `MY_SECRET=${secret}`, "threat-detection": "none" },
      env: { GITHUB_TOKEN: "ghs_runnerToken1234567890abcdef", ACTIONS_RUNTIME_TOKEN: "runtime-token-xyz" },
    });
    expect(main.outputs.conclusion).toBe("success");
    expect(main.masks).toContain(secret);
    expect(main.outputs["final-message"]).toContain("token=absent runtime=absent input=absent");
    expect(main.outputs["final-message"]).toContain("plain: ***");

    const everything = [
      main.log,
      main.stderr,
      main.summary,
      ...Object.values(main.outputs),
      ...filesUnder(path.dirname(main.outputs["patch-path"]!)).map((f) => readFileSync(f, "utf8")),
    ].join("\n");
    expect(everything).not.toContain(secret);
    expect(everything).toContain("***");
  });

  it("kills the whole process tree on timeout, detached children included, and keeps the partial results", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const marker = `sleeper-${process.pid}-${Date.now()}`;
    const agent = agentScript([
      "echo partial > partial.txt",
      "echo working",
      `setsid bash -c 'exec -a ${marker} sleep 1000' </dev/null >/dev/null 2>&1 &`,
      `nohup bash -c 'exec -a ${marker}-2 sleep 1000' </dev/null >/dev/null 2>&1 &`,
      "sleep 1000",
    ].join("\n"));
    const { main } = await runActionSteps({
      workspace: ws,
      inputs: { agent: "command", "agent-command": agent, prompt: "hang", sandbox: "none", "timeout-minutes": "0.05" },
    });
    expect(main.outputs.conclusion).toBe("incomplete");
    expect(main.exitCode).toBe(1);
    expect(JSON.parse(main.outputs["changed-files"]!)).toEqual(["partial.txt"]);
    const resultsDir = path.dirname(main.outputs["patch-path"]!);
    expect(readFileSync(path.join(resultsDir, "raw/stdout.jsonl"), "utf8")).toContain("working");
    expect(readFileSync(main.outputs["patch-path"]!, "utf8")).toContain("partial.txt");
    const survivors = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).split("\n").filter((l) => l.includes(marker));
    expect(survivors).toEqual([]);
  });

  it("reports every invalid input at once and starts nothing", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const canary = path.join(ws, "started");
    const result = await runStep("main", {
      workspace: ws,
      inputs: { agent: "robot", permissions: "default: [unclosed", "timeout-minutes": "-5", prompt: `touch ${canary}` },
    });
    expect(result.exitCode).toBe(1);
    const errors = result.rawStdout.split("\n").filter((l) => l.startsWith("::error::"));
    expect(errors).toHaveLength(1);
    const message = decodeURIComponent(errors[0]!.replace(/%0A/g, "\n"));
    expect(message).toContain("Input 'agent': unknown agent 'robot'");
    expect(message).toContain("Input 'permissions'");
    expect(message).toContain("Input 'timeout-minutes'");
    expect(existsSync(canary)).toBe(false);

    const missing = await runStep("main", { workspace: ws, inputs: { agent: "command", prompt: "x" } });
    expect(missing.exitCode).toBe(1);
    expect(missing.rawStdout).toContain("Input 'agent-command': is required");
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name));
}
