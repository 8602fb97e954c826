/**
 * Issue #6: the run artifact. dist/main.js through the runner harness, the
 * real @actions/artifact client uploading to the fake results service.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { runStep } from "../support/harness.js";
import { agentScript, errors, makeRepo, REPOSITORY, RUN_ID, runJob } from "./helpers.js";

const SECRET = "pl4nted-Secret-Value-7781";
const GHP = `ghp_${"Z9y8X7w6V5u4T3s2R1q0".repeat(2)}`;

let results: FakeActionsResults;
beforeAll(async () => {
  results = await startFakeActionsResults({ repository: REPOSITORY });
});
afterAll(async () => {
  await results?.close();
});

describe("the run artifact", () => {
  it("holds every results file, redacted, with the agent's outputs under outputs/", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const agent = agentScript(
      [
        'echo "changed" >> a.txt',
        'echo "secret in a file: $MY_SECRET" > leaked.txt',
        `echo "the token is ${GHP}"`,
        'echo "plain $MY_SECRET and base64 $(printf %s "$MY_SECRET" | base64)"',
        `echo "stderr ${GHP} $MY_SECRET" >&2`,
        'mkdir -p "$AGENT_OUTPUT_DIR/sub"',
        'printf "# Report\\nAll good. secret=%s token=%s\\n" "$MY_SECRET" ' + GHP + ' > "$AGENT_OUTPUT_DIR/report.md"',
        'head -c 4096 /dev/urandom > "$AGENT_OUTPUT_DIR/sub/blob.bin"',
        'printf "\\0\\1binary %s tail" "$MY_SECRET" >> "$AGENT_OUTPUT_DIR/sub/blob.bin"',
        // A symlink to the runner's files must never be followed into the artifact.
        'ln -s /etc/passwd "$AGENT_OUTPUT_DIR/passwd-link"',
        "echo finished",
      ].join("\n"),
    );
    const main = await runJob({
      results,
      workspace: ws,
      inputs: { agent: "command", "agent-command": agent, prompt: "do it", sandbox: "none", secrets: `MY_SECRET=${SECRET}`, "retention-days": "5", "threat-detection": "none" },
    });
    expect(errors(main), main.log + main.stderr).toEqual([]);
    expect(main.exitCode, main.log + main.stderr).toBe(0);
    expect(main.outputs.conclusion).toBe("success");

    // One artifact, named after the run, with exactly the listed files.
    const all = results.artifacts({ runId: RUN_ID });
    expect(all.map((a) => a.name)).toEqual([`agent-run-${RUN_ID}-1`]);
    const artifact = all[0]!;
    expect(results.artifactFiles(artifact.id)).toEqual(
      [
        "outputs/report.md",
        "outputs/sub/blob.bin",
        "patch.diff",
        "raw/stderr.log",
        "raw/stdout.jsonl",
        "result.json",
        "trace.jsonl",
        "transcript.html",
        "transcript.md",
      ].sort(),
    );
    expect(main.outputs["artifact-id"]).toBe(String(artifact.id));
    expect(main.outputs["artifact-url"]).toBe(`https://github.com/${REPOSITORY}/actions/runs/${RUN_ID}/artifacts/${artifact.id}`);
    expect(main.log).toMatch(/left out what is not a regular file .*: outputs\/passwd-link/);
    const create = results.calls("CreateArtifact").at(-1)!;
    expect(create.body["expires_at"]).toBeTruthy();

    // No planted secret or token in any uploaded file, in any encoding.
    const b64 = Buffer.from(SECRET).toString("base64").slice(0, 20);
    for (const f of results.artifactFiles(artifact.id)) {
      const bytes = results.readArtifactFile(artifact.id, f);
      const text = bytes.toString("latin1");
      expect(text, f).not.toContain(SECRET);
      expect(text, f).not.toContain(GHP);
      expect(text, f).not.toContain(b64);
    }
    const report = results.readArtifactFile(artifact.id, "outputs/report.md").toString();
    expect(report).toContain("# Report\nAll good. secret=*** token=***");
    // Binary files keep their size: masked byte for byte.
    const blob = results.readArtifactFile(artifact.id, "outputs/sub/blob.bin");
    expect(blob.length).toBe(4096 + `\0\x01binary ${SECRET} tail`.length);
    expect(blob.toString("latin1")).toContain(`binary ${"*".repeat(SECRET.length)} tail`);

    const result = JSON.parse(results.readArtifactFile(artifact.id, "result.json").toString());
    expect(result.conclusion).toBe("success");
    expect(result.diff.changedFiles.sort()).toEqual(["a.txt", "leaked.txt"]);
    expect(results.readArtifactFile(artifact.id, "patch.diff").toString()).toContain("+secret in a file: ***");
    const md = results.readArtifactFile(artifact.id, "transcript.md").toString();
    expect(md).toContain("finished");
    expect(results.readArtifactFile(artifact.id, "transcript.html").toString()).toMatch(/^<!DOCTYPE html>/);

    // The job summary links the artifact and shows usage.
    expect(main.summary).toContain("### Usage");
    expect(main.summary).toContain(`[agent-run-${RUN_ID}-1](https://github.com/${REPOSITORY}/actions/runs/${RUN_ID}/artifacts/${artifact.id})`);
  });

  it("uploads when the agent crashes, with conclusion failure in result.json", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const agent = agentScript(['echo "half done" > partial.txt', 'echo "about to crash"', "kill -SEGV $$"].join("\n"));
    const main = await runJob({
      results,
      workspace: ws,
      runtime: { runId: RUN_ID + 1 },
      inputs: { agent: "command", "agent-command": agent, prompt: "crash", sandbox: "none" },
    });
    expect(main.exitCode).toBe(1);
    expect(main.outputs.conclusion).toBe("failure");
    const [artifact] = results.artifacts({ runId: RUN_ID + 1 });
    expect(artifact?.name).toBe(`agent-run-${RUN_ID + 1}-1`);
    const result = JSON.parse(results.readArtifactFile(artifact!.id, "result.json").toString());
    expect(result.conclusion).toBe("failure");
    expect(result.reason).toContain("SIGSEGV");
    expect(results.readArtifactFile(artifact!.id, "patch.diff").toString()).toContain("partial.txt");
    expect(results.readArtifactFile(artifact!.id, "transcript.html").toString()).toContain('data-conclusion="failure"');
    expect(main.outputs["artifact-id"]).toBe(String(artifact!.id));
  });

  it("uploads a timed-out run too, and honours artifact-name", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const main = await runJob({
      results,
      workspace: ws,
      runtime: { runId: RUN_ID + 2 },
      inputs: { agent: "command", "agent-command": agentScript("echo start\nsleep 600"), prompt: "hang", sandbox: "none", "timeout-minutes": "0.03", "artifact-name": "my-run" },
    });
    expect(main.outputs.conclusion).toBe("incomplete");
    const [artifact] = results.artifacts({ runId: RUN_ID + 2 });
    expect(artifact?.name).toBe("my-run");
    expect(JSON.parse(results.readArtifactFile(artifact!.id, "result.json").toString()).conclusion).toBe("incomplete");
  });

  it("skips the upload with upload-artifacts: false, and without an artifact service says so", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const off = await runJob({
      results,
      workspace: ws,
      runtime: { runId: RUN_ID + 3 },
      inputs: { agent: "command", "agent-command": "echo hi", prompt: "x", sandbox: "none", "upload-artifacts": "false" },
    });
    expect(off.exitCode).toBe(0);
    expect(off.log).toContain("not uploading (upload-artifacts is false)");
    expect(off.outputs["artifact-id"]).toBeUndefined();
    expect(results.artifacts({ runId: RUN_ID + 3 })).toEqual([]);

    const local = await runStep("main", { workspace: ws, inputs: { agent: "command", "agent-command": "echo hi", prompt: "x", sandbox: "none" } });
    expect(local.exitCode).toBe(0);
    expect(local.log).toContain("no Actions artifact service here (ACTIONS_RUNTIME_TOKEN is not set)");
    // The results folder still has the transcripts.
    const dir = path.dirname(local.outputs["patch-path"]!);
    expect(readFileSync(path.join(dir, "transcript.md"), "utf8")).toContain("hi");
  });

  it("refuses an artifact name the service would reject, before the agent starts", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const bad = await runJob({
      results,
      workspace: ws,
      runtime: { runId: RUN_ID + 4 },
      inputs: { agent: "command", "agent-command": "touch started", prompt: "x", sandbox: "none", "artifact-name": "a/b:c" },
    });
    expect(bad.exitCode).toBe(1);
    expect(errors(bad).join("\n")).toContain("Input 'artifact-name'");
  });
});
