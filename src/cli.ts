#!/usr/bin/env node
/**
 * `agent-runner run …`: the action's pipeline on a laptop. Every action input
 * is a flag of the same name; results land in a folder like the action's.
 */
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { runAction } from "./action.js";
import { readHostContext } from "./config/host.js";
import type { RawInputs } from "./config/parse.js";
import { INPUTS, type InputName, type InputSpec, type OutputName } from "./constants.js";
import { consoleLogger } from "./logger.js";

const EXTRA_FLAGS = {
  "results-dir": { type: "string" },
  "state-dir": { type: "string" },
  verbose: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

function usage(): string {
  const width = Math.max(...Object.keys(INPUTS).map((n) => n.length)) + 4;
  const lines = Object.entries(INPUTS as Record<string, InputSpec>).map(([name, spec]) => {
    const def = spec.default && !spec.default.includes("${{") ? ` [default: ${spec.default}]` : "";
    return `  --${name.padEnd(width)}${spec.description.replace(/`/g, "")}${def}`;
  });
  return [
    "Usage: agent-runner run --agent <name> [--agent-command '<cmd>'] --prompt '<task>' [options]",
    "",
    "Runs a coding agent on the git repository in the current directory (or --working-directory),",
    "the same pipeline as the GitHub Action, and writes result.json, patch.diff and the trace",
    "to a results folder.",
    "",
    "Options (the action's inputs):",
    ...lines,
    "",
    "CLI only:",
    `  --${"results-dir".padEnd(width)}Folder for the results (default: a new folder under ${os.tmpdir()}/agent-runner).`,
    `  --${"state-dir".padEnd(width)}Folder that keeps session state between runs, so --session continue resumes the last run's session (default: none; each run starts fresh).`,
    `  --${"verbose".padEnd(width)}Print debug lines.`,
    `  --${"help".padEnd(width)}Show this help.`,
    "",
    "Example:",
    "  npx agent-runner run --agent command --agent-command 'bash -c \"cat > TASK.md\"' --prompt 'Write the task down'",
  ].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(usage() + "\n");
    return command ? 0 : 2;
  }
  if (command !== "run") {
    process.stderr.write(`Unknown command '${command}'. Use: agent-runner run --help\n`);
    return 2;
  }
  const options = Object.fromEntries(Object.keys(INPUTS).map((n) => [n, { type: "string" as const }]));
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { ...options, ...EXTRA_FLAGS }, allowPositionals: false, strict: true });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\nUse: agent-runner run --help\n`);
    return 2;
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) {
    process.stdout.write(usage() + "\n");
    return 0;
  }
  const inputs: RawInputs = {};
  for (const name of Object.keys(INPUTS) as InputName[]) {
    const v = values[name];
    if (typeof v === "string") inputs[name] = v;
  }
  // Locally there is no workflow token, and the agent never gets one anyway.
  inputs["github-token"] ??= "";

  // The CLI runs the pipeline on its own: inside a workflow it does not act on the
  // workflow's event (no trigger check, no comments, no delivery).
  const { eventName: _eventName, eventPath: _eventPath, ...host } = readHostContext();
  const resultsDir = path.resolve(
    typeof values["results-dir"] === "string"
      ? values["results-dir"]
      : path.join(os.tmpdir(), "agent-runner", new Date().toISOString().replace(/[:.]/g, "-")),
  );
  await mkdir(resultsDir, { recursive: true });
  const outputs: Partial<Record<OutputName, string>> = {};
  let failed: string | undefined;
  // Ctrl-C stops the agent's whole tree; the results folder is still written.
  const cancel = new AbortController();
  process.once("SIGINT", () => {
    process.stderr.write("Stopping the agent (results are still written)…\n");
    cancel.abort();
  });
  const result = await runAction({
    signal: cancel.signal,
    inputs,
    host: { ...host, workspace: process.cwd(), runnerTemp: path.join(resultsDir, "..") },
    resultsDir,
    ...(typeof values["state-dir"] === "string" ? { stateDir: path.resolve(values["state-dir"]) } : {}),
    log: consoleLogger({ verbose: values.verbose === true }),
    setSecret: () => {},
    setOutput: (name, value) => {
      outputs[name] = value;
    },
    saveState: () => {},
    appendSummary: (md) => writeFile(path.join(resultsDir, "summary.md"), md),
    setFailed: (m) => {
      failed = m;
    },
  });
  if (result) {
    await writeFile(path.join(resultsDir, "outputs.json"), JSON.stringify(outputs, null, 2) + "\n");
    process.stdout.write(
      [
        `conclusion: ${result.conclusion}${result.reason ? ` (${result.reason})` : ""}`,
        `changed files: ${result.diff.changedFiles.length ? result.diff.changedFiles.join(", ") : "none"}`,
        `final message: ${outputs["final-message"] ?? ""}`,
        `results: ${resultsDir}`,
      ].join("\n") + "\n",
    );
  }
  if (failed) process.stderr.write(`error: ${failed}\n`);
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
