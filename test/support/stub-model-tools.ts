/**
 * Script steps for the common tool calls, in the exact name and argument shape each CLI
 * declares in its requests (measured with claude 2.1.197, codex 0.171.0 with model gpt-5.5,
 * gemini 0.61.0, opencode 1.18.33).
 */
import path from "node:path";
import type { StubStep } from "./stub-model.js";
import type { CliName } from "./stub-model-clis.js";

/** A tool call that creates `absPath` with `content`. Paths must be absolute (claude, gemini, opencode insist). */
export function writeFileStep(cli: CliName, absPath: string, content: string): StubStep {
  if (!path.isAbsolute(absPath)) throw new Error(`writeFileStep needs an absolute path, got ${absPath}`);
  switch (cli) {
    case "claude":
      return { tool: "Write", args: { file_path: absPath, content } };
    case "codex":
      // codex has no write tool: apply_patch is a freeform ("custom") tool, the stub answers it
      // with a `custom_tool_call` whose `input` is the patch text.
      return { tool: "apply_patch", args: { input: addFilePatch(absPath, content) } };
    case "gemini":
      return { tool: "write_file", args: { file_path: absPath, content } };
    case "opencode":
      return { tool: "write", args: { filePath: absPath, content } };
  }
}

/** A tool call that runs `command` in the CLI's shell (cwd = the CLI's working directory). */
export function shellStep(cli: CliName, command: string, description = "run a command"): StubStep {
  switch (cli) {
    case "claude":
      return { tool: "Bash", args: { command, description } };
    case "codex":
      return { tool: "exec_command", args: { cmd: command } };
    case "gemini":
      return { tool: "run_shell_command", args: { command, description } };
    case "opencode":
      return { tool: "bash", args: { command, description } };
  }
}

/** A tool call that reads a file. */
export function readFileStep(cli: CliName, absPath: string): StubStep {
  switch (cli) {
    case "claude":
      return { tool: "Read", args: { file_path: absPath } };
    case "codex":
      return { tool: "exec_command", args: { cmd: `cat ${JSON.stringify(absPath)}` } };
    case "gemini":
      return { tool: "read_file", args: { file_path: absPath } };
    case "opencode":
      return { tool: "read", args: { filePath: absPath } };
  }
}

/** apply_patch text that adds one file (every line prefixed with `+`). */
export function addFilePatch(filePath: string, content: string): string {
  const lines = content.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return ["*** Begin Patch", `*** Add File: ${filePath}`, ...lines.map((l) => "+" + l), "*** End Patch", ""].join("\n");
}
