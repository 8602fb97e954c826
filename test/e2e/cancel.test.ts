/** A cancelled job (the runner sends SIGINT) stops the agent's tree and still reports. */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadActionYml, parseFileCommand, REPO_ROOT } from "../support/harness.js";
import { agentScript, makeRepo } from "../artifacts/helpers.js";

describe("job cancellation", () => {
  it("SIGINT stops the agent and its children; conclusion cancelled, partial patch and stdout kept", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const marker = `cancel-sleeper-${process.pid}-${Date.now()}`;
    const agent = agentScript(["echo partial > partial.txt", "echo started", `setsid bash -c 'exec -a ${marker} sleep 1000' </dev/null >/dev/null 2>&1 &`, "sleep 1000"].join("\n"));
    const temp = mkdtempSync(path.join(os.tmpdir(), "cancel-runner-"));
    const files = { GITHUB_OUTPUT: "output", GITHUB_STATE: "state", GITHUB_STEP_SUMMARY: "summary" };
    for (const f of Object.values(files)) writeFileSync(path.join(temp, f), "");
    const defaults = Object.fromEntries(
      Object.entries(loadActionYml().inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, (v.default ?? "").replace(/\$\{\{.*\}\}/, "")]),
    );
    const child = spawn(process.execPath, [path.join(REPO_ROOT, "dist/main.js")], {
      cwd: ws,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        RUNNER_TEMP: temp,
        GITHUB_WORKSPACE: ws,
        ...Object.fromEntries(Object.entries(files).map(([k, f]) => [k, path.join(temp, f)])),
        ...defaults,
        INPUT_AGENT: "command",
        "INPUT_AGENT-COMMAND": agent,
        INPUT_PROMPT: "hang",
        INPUT_SANDBOX: "none",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (log += d));
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (log.includes("started")) {
          clearInterval(poll);
          resolve();
        }
      }, 50);
    });
    const sent = Date.now();
    child.kill("SIGINT");
    const code = await new Promise<number | null>((r) => child.on("close", r));
    expect(Date.now() - sent).toBeLessThan(7_500); // before the runner's SIGTERM
    expect(code).toBe(1);
    const outputs = parseFileCommand(readFileSync(path.join(temp, "output"), "utf8"));
    expect(outputs.conclusion).toBe("cancelled");
    expect(JSON.parse(outputs["changed-files"]!)).toEqual(["partial.txt"]);
    expect(readFileSync(path.join(path.dirname(outputs["patch-path"]!), "raw/stdout.jsonl"), "utf8")).toContain("started");
    expect(execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).split("\n").filter((l) => l.includes(marker))).toEqual([]);
  });
});
