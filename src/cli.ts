#!/usr/bin/env node
/**
 * `agent-runner run …`: the action's pipeline on a laptop. Every action input
 * is a flag of the same name; results land in a folder like the action's.
 * `agent-runner show` and `agent-runner logs` read past runs (src/cli/).
 */
import { lstatSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { terminalJson, writeBlock, writeLines } from "./cli/terminal.js";
import type { RawInputs } from "./config/parse.js";
import type { RunResult } from "./result.js";
import { INPUTS, NPX_COMMAND, type InputName, type InputSpec, type OutputName } from "./constants.js";
import { ConfigurationError, errorMessage, isConfigurationError } from "./errors.js";
import { MODEL_KEY_NAMES } from "./shared/agents.js";
import { didYouMean } from "./shared/did-you-mean.js";
import { consoleLogger } from "./logger.js";

const EXTRA_FLAGS = {
  "results-dir": { type: "string" },
  "state-dir": { type: "string" },
  verbose: { type: "boolean" },
  json: { type: "boolean" },
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
    "Model keys come from the environment, as exported in your shell:",
    ...Object.entries(MODEL_KEY_NAMES)
      .filter(([, names]) => names.length)
      .map(([agent, names]) => `  ${agent.padEnd(10)}export ${names[0]}=…${names.length > 1 ? ` (or ${names.slice(1).join(", ")})` : ""}`),
    "With --provider bedrock, vertex or azure, the cloud's own variables (AWS_*, GOOGLE_*, AZURE_* …) are read by the model gateway; the agent never holds them.",
    "",
    "CLI only:",
    `  --${"results-dir".padEnd(width)}Folder for the results (default: a new folder under ${os.tmpdir()}/agent-runner-<uid>, which only you can write).`,
    `  --${"state-dir".padEnd(width)}Folder that keeps session state between runs, so --session continue resumes the last run's session (default: none; each run starts fresh).`,
    `  --${"verbose".padEnd(width)}Print debug lines.`,
    `  --${"json".padEnd(width)}Print the run's summary (and with --approval required, what was staged) as JSON.`,
    `  --${"help".padEnd(width)}Show this help.`,
    "",
    "With --approval required the agent works in a copy of the checkout and nothing is applied: the run prints",
    "what it staged (files, safe-output requests, delivery, digest); agent-runner approve <results folder> <digest>",
    "then applies exactly that patch to the working tree.",
    "",
    "Example:",
    `  ${NPX_COMMAND} run --agent command --agent-command 'bash -c \"cat > TASK.md\"' --prompt 'Write the task down'`,
  ].join("\n");
}

const COMMANDS = [
  "Commands:",
  "  run    Run a coding agent on this repository, like the action (agent-runner run --help).",
  "  show   Print a past run's summary from its artifact zip or results folder, and its transcript (agent-runner show --help).",
  "  logs   List a repository's recent runs from their artifacts, with totals (agent-runner logs --help).",
  "  ledger Print the budget ledger (refs/agent-runner/ledger) of this clone per day, workflow and pool (agent-runner ledger --help).",
  "  approve Apply a run staged with --approval required to its working tree, after checking its digest (agent-runner approve --help).",
  "  reject  Drop a run staged with --approval required: it can no longer be approved (agent-runner approve --help).",
].join("\n");

function approveUsage(): string {
  const flag = (name: string, text: string) => `  --${name.padEnd(8)}${text}`;
  return [
    "Usage: agent-runner approve <results folder> <digest>   (the first 12 hex digits or all 64)",
    "       agent-runner reject <results folder>",
    "",
    "agent-runner run --approval required runs the agent in a copy of the checkout, checks its work like any",
    "run, applies nothing and prints the staged summary with its digest. approve reads the results folder again",
    "(nothing in it is trusted), recomputes the digest from its bytes, and only when it is the one given, the run",
    "was neither approved nor rejected before (a ref refs/agent-runner/approvals/<digest> in the working tree's",
    "repository), has not expired and its patch still applies (no merge is attempted), applies exactly that",
    "patch to the working tree it was staged for (uncommitted, as a local run leaves it) and records who and",
    "when in approval.json (agent-runner show prints it). Safe-output requests are listed; a local run applies none.",
    "reject takes the same decision without applying anything.",
    "",
    "Options:",
    flag("json", "Print the outcome as JSON."),
    flag("help", "Show this help."),
    "",
    "Example:",
    `  ${NPX_COMMAND} run --agent claude --prompt 'fix the failing test' --approval required --results-dir run1`,
    `  ${NPX_COMMAND} approve run1 0123456789ab`,
  ].join("\n");
}

/** `agent-runner approve <dir> <digest>` and `agent-runner reject <dir>` (publish/approval/local.ts). */
async function decide(verb: "approve" | "reject", args: string[]): Promise<number> {
  const parsed = parseFlags(args, { json: { type: "boolean" }, help: { type: "boolean", short: "h" } }, verb, true);
  if (!parsed) return 2;
  if (parsed.values.help) {
    process.stdout.write(approveUsage() + "\n");
    return 0;
  }
  const want = verb === "approve" ? 2 : 1;
  if (parsed.positionals.length !== want) {
    process.stderr.write(`${verb === "approve" ? "Give the results folder and the digest" : "Give the results folder"}.\nUse: agent-runner ${verb} --help\n`);
    return 2;
  }
  const [dir, digest] = parsed.positionals as [string, string | undefined];
  try {
    const [local, { approvedLines, localUser }, { readHostContext }] = await Promise.all([import("./publish/approval/local.js"), import("./cli/approve.js"), import("./config/host.js")]);
    const opts = { gitEnv: readHostContext().gitEnv, by: localUser() };
    if (verb === "reject") {
      const record = await local.rejectLocally(dir, opts);
      if (parsed.values.json) process.stdout.write(terminalJson({ approval: record }));
      else writeLines(process.stdout, [`rejected: digest ${record.digest}; nothing was applied, and it can no longer be approved`]);
      return 0;
    }
    const approved = await local.approveLocally(dir, digest!, opts);
    if (parsed.values.json) process.stdout.write(terminalJson({ approval: approved.record, workTree: approved.workTree, changedFiles: approved.files, ...(approved.movedTo ? { movedTo: approved.movedTo } : {}) }));
    else writeLines(process.stdout, approvedLines(approved, path.resolve(dir)));
    return 0;
  } catch (e) {
    return reportError(e);
  }
}

/** What a run staged with --approval required, read back the way `approve` reads it (the same digest). */
async function stagedSummary(resultsDir: string): Promise<import("./cli/approve.js").StagedView> {
  const [{ withStagedFolder }, { stagedView }] = await Promise.all([import("./publish/approval/local.js"), import("./cli/approve.js")]);
  return withStagedFolder(resultsDir, async (staged) => {
    // What approve will recompute must be what the run staged: else something wrote into the folder meanwhile.
    if (staged.digest !== staged.record.digest)
      throw new ConfigurationError(`the results folder changed after the run staged it (digest ${staged.record.digest} staged, ${staged.digest} now): run again.`);
    return stagedView(staged);
  });
}

function showUsage(): string {
  const flag = (name: string, text: string) => `  --${name.padEnd(12)}${text}`;
  return [
    "Usage: agent-runner show <artifact.zip | results folder> [options]",
    "",
    "Prints a past run's summary (conclusion, agent, model, duration, cost, tools, changed files,",
    "delivery) from a run artifact (agent-run-<run id>-<attempt>, downloaded as a zip) or a results",
    "folder, and writes transcript.html next to it (rendered again from trace.jsonl when missing).",
    "",
    "Options:",
    flag("out DIR", `Folder to extract a zip into (default: a new folder under ${os.tmpdir()}).`),
    flag("open", "Open transcript.html in the default browser."),
    flag("json", "Print the summary as JSON."),
    flag("help", "Show this help."),
    "",
    "Example:",
    `  gh run download 1234 -n agent-run-1234-1 -D run && ${NPX_COMMAND} show run`,
    `  ${NPX_COMMAND} show ~/Downloads/agent-run-1234-1.zip --open`,
  ].join("\n");
}

function logsUsage(): string {
  const flag = (name: string, text: string) => `  --${name.padEnd(16)}${text}`;
  return [
    "Usage: agent-runner logs --repo <owner/name> [--workflow <file>] [--limit <n>] [--json]",
    "",
    "Lists recent runs of a repository from their run artifacts, through the GitHub REST API:",
    "one row per run (conclusion, agent, model, duration, cost, tools, changed files, delivery),",
    "then totals (runs, success rate, cost). The token comes from GH_TOKEN or GITHUB_TOKEN",
    "(it needs read access to Actions); the API from GITHUB_API_URL (default https://api.github.com).",
    "",
    "Options:",
    flag("repo OWNER/NAME", "Repository to read (required)."),
    flag("workflow FILE", "Only runs of this workflow (file name such as agent.yml, or its id)."),
    flag("limit N", `Newest N runs (default ${DEFAULT_LOGS_LIMIT}, at most ${MAX_LOGS_LIMIT}).`),
    flag("name PREFIX", "Artifact name prefix of the run artifacts (default agent-run-; set it when the workflow sets artifact-name)."),
    flag("json", "Print rows and totals as JSON."),
    flag("verbose", "Print debug lines."),
    flag("help", "Show this help."),
    "",
    "Example:",
    `  GH_TOKEN=$(gh auth token) ${NPX_COMMAND} logs --repo octo/repo --workflow agent.yml --limit 20`,
  ].join("\n");
}

/** `cost: $0.4210 of the $5.00 cap (the default max-cost-usd)`: what a model-backed run spent, against its cap. */
function costLine(result: RunResult): string[] {
  const spent = result.usage.costUsd;
  const cap = result.costCap;
  if (spent === undefined && !cap) return [];
  const shown = spent !== undefined ? `$${spent.toFixed(4)}` : "unknown (a model without a price)";
  if (!cap) return [`cost: ${shown} (no cap)`];
  return [`cost: ${shown} of the $${cap.maxUsd.toFixed(2)} cap${cap.isDefault ? " (the default max-cost-usd; --max-cost-usd none turns it off)" : ""}`];
}

const DEFAULT_LOGS_LIMIT = 10;
const MAX_LOGS_LIMIT = 100;

/**
 * parseArgs' own message, and for an unknown flag the known one it is closest
 * to: `Unknown option '--promt'. Did you mean '--prompt'?`.
 */
function flagError(e: unknown, options: Record<string, unknown>, command: string): string {
  const message = (e as Error).message;
  const unknown = /Unknown option '--?([^']+)'/.exec(message)?.[1];
  const hint = unknown ? didYouMean(unknown.split("=")[0]!, Object.keys(options), "--") : "";
  return `${message}${hint && !message.endsWith(".") ? "." : ""}${hint}\nUse: agent-runner ${command} --help\n`;
}

/** Flags of `show`/`logs`, parsed strictly; a usage error prints the command's help hint. */
type FlagSpec = Record<string, { type: "string" | "boolean"; short?: string }>;

function parseFlags(
  args: string[],
  options: FlagSpec,
  command: string,
  positionals: boolean,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } | undefined {
  try {
    const parsed = parseArgs({ args, options, allowPositionals: positionals, strict: true });
    return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
  } catch (e) {
    process.stderr.write(flagError(e, options, command));
    return undefined;
  }
}

/** A user's mistake is one line; anything else is a bug and keeps its stack. */
function reportError(e: unknown): number {
  // Messages can quote what a run wrote (a path, a reason): through the terminal door too.
  writeBlock(process.stderr, isConfigurationError(e) ? `error: ${e.message}` : `error: ${errorMessage(e)}\n${(e as Error).stack ?? ""}`);
  return 1;
}

function ledgerUsage(): string {
  const flag = (name: string, text: string) => `  --${name.padEnd(14)}${text}`;
  return [
    "Usage: agent-runner ledger [--dir <clone>] [--remote <name>] [--no-fetch] [--json]",
    "",
    "Fetches the budget ledger (refs/agent-runner/ledger) into a local clone with plain git and prints",
    "it per UTC day and workflow, and per fan-out pool: runs, settled cost, what is reserved and not",
    "settled, tokens. Entries that fail the checks are listed and counted as spent.",
    "",
    "Options:",
    flag("dir DIR", "The clone (default: the current directory)."),
    flag("remote NAME", "The remote to fetch from (default: origin)."),
    flag("no-fetch", "Read what the clone already has."),
    flag("json", "Print the table as JSON."),
    flag("help", "Show this help."),
  ].join("\n");
}

async function ledger(args: string[]): Promise<number> {
  const parsed = parseFlags(args, { dir: { type: "string" }, remote: { type: "string" }, "no-fetch": { type: "boolean" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } }, "ledger", false);
  if (!parsed) return 2;
  if (parsed.values.help) {
    process.stdout.write(ledgerUsage() + "\n");
    return 0;
  }
  try {
    const [{ readLocalLedger, ledgerTable, ledgerLines }, { readHostContext }] = await Promise.all([import("./cli/ledger.js"), import("./config/host.js")]);
    const read = await readLocalLedger({
      dir: typeof parsed.values.dir === "string" ? parsed.values.dir : process.cwd(),
      remote: typeof parsed.values.remote === "string" ? parsed.values.remote : "origin",
      fetch: parsed.values["no-fetch"] !== true,
      env: readHostContext().gitEnv,
    });
    const table = ledgerTable(read);
    if (parsed.values.json) process.stdout.write(terminalJson(table));
    else writeLines(process.stdout, ledgerLines(table));
    return 0;
  } catch (e) {
    return reportError(e);
  }
}

async function show(args: string[]): Promise<number> {
  const parsed = parseFlags(args, { out: { type: "string" }, open: { type: "boolean" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } }, "show", true);
  if (!parsed) return 2;
  if (parsed.values.help) {
    process.stdout.write(showUsage() + "\n");
    return 0;
  }
  if (parsed.positionals.length !== 1) {
    process.stderr.write("Give one artifact zip or results folder.\nUse: agent-runner show --help\n");
    return 2;
  }
  try {
    const { showRun, showLinesOf } = await import("./cli/show.js");
    const shown = await showRun({
      target: parsed.positionals[0]!,
      ...(typeof parsed.values.out === "string" ? { out: parsed.values.out } : {}),
      open: parsed.values.open === true,
    });
    if (parsed.values.json) process.stdout.write(terminalJson({ ...shown.row, transcript: shown.transcript, results: shown.dir, ...(shown.approval ? { approval: shown.approval } : {}) }));
    else writeLines(process.stdout, showLinesOf(shown));
    return 0;
  } catch (e) {
    return reportError(e);
  }
}

async function logs(args: string[]): Promise<number> {
  const parsed = parseFlags(
    args,
    {
      repo: { type: "string" },
      workflow: { type: "string" },
      limit: { type: "string" },
      name: { type: "string" },
      json: { type: "boolean" },
      verbose: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    "logs",
    false,
  );
  if (!parsed) return 2;
  const v = parsed.values;
  if (v.help) {
    process.stdout.write(logsUsage() + "\n");
    return 0;
  }
  const repo = typeof v.repo === "string" ? v.repo.trim() : "";
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo)) {
    process.stderr.write(`--repo: give the repository as owner/name${repo ? ` (not '${repo}')` : ""}.\nUse: agent-runner logs --help\n`);
    return 2;
  }
  const limit = typeof v.limit === "string" ? Number(v.limit) : DEFAULT_LOGS_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOGS_LIMIT) {
    process.stderr.write(`--limit: '${String(v.limit)}' is not a whole number from 1 to ${MAX_LOGS_LIMIT}.\nUse: agent-runner logs --help\n`);
    return 2;
  }
  // Each command loads only its own code: `--help` and `show` never load the pipeline or the API client.
  const [{ listRuns }, { tableLines, totalsLine }, { cliGitHubToken, readHostContext }] = await Promise.all([
    import("./cli/logs.js"),
    import("./cli/run-row.js"),
    import("./config/host.js"),
  ]);
  const token = cliGitHubToken();
  if (!token) {
    process.stderr.write("No token: set GH_TOKEN (for example GH_TOKEN=$(gh auth token)) or GITHUB_TOKEN to a token that can read the repository's Actions.\n");
    return 2;
  }
  try {
    const result = await listRuns({
      repo,
      ...(typeof v.workflow === "string" && v.workflow.trim() ? { workflow: v.workflow.trim() } : {}),
      limit,
      namePrefix: typeof v.name === "string" && v.name ? v.name : "agent-run-",
      token,
      apiUrl: readHostContext().apiUrl,
      log: consoleLogger({ verbose: v.verbose === true }),
    });
    writeLines(process.stderr, result.skipped.map((s) => `warning: artifact '${s.name}' skipped: ${s.reason}`));
    if (v.json) process.stdout.write(terminalJson({ runs: result.rows, totals: result.totals }));
    else if (!result.rows.length) writeLines(process.stdout, [`No run artifacts found in ${repo}${v.workflow ? ` for workflow ${String(v.workflow)}` : ""}.`, totalsLine(result.totals)]);
    else writeLines(process.stdout, [...tableLines(result.rows), "", totalsLine(result.totals)]);
    return 0;
  } catch (e) {
    return reportError(e);
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(`${usage()}\n\n${COMMANDS}\n`);
    return command ? 0 : 2;
  }
  if (command === "show") return show(rest);
  if (command === "logs") return logs(rest);
  if (command === "ledger") return ledger(rest);
  if (command === "approve" || command === "reject") return decide(command, rest);
  if (command !== "run") {
    process.stderr.write(`Unknown command '${command}'.${didYouMean(command, ["run", "show", "logs", "ledger", "approve", "reject"])}\n${COMMANDS}\n`);
    return 2;
  }
  const options = { ...Object.fromEntries(Object.keys(INPUTS).map((n) => [n, { type: "string" as const }])), ...EXTRA_FLAGS };
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: false, strict: true });
  } catch (e) {
    process.stderr.write(flagError(e, options, "run"));
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
  const [{ runAction }, { modelKeysFromEnv, readHostContext }] = await Promise.all([import("./action.js"), import("./config/host.js")]);
  const { eventName: _eventName, eventPath: _eventPath, ...host } = readHostContext();
  // A shell user's keys are exported variables: the parser takes the chosen agent's (config/parse.ts).
  const keyEnv = modelKeysFromEnv();
  const resultsDir = typeof values["results-dir"] === "string" ? path.resolve(values["results-dir"]) : await defaultResultsDir();
  await mkdir(resultsDir, { recursive: true });
  const outputs: Partial<Record<OutputName, string>> = {};
  let failed: string | undefined;
  // Ctrl-C stops the agent's whole tree; the results folder is still written.
  const cancel = new AbortController();
  process.once("SIGINT", () => {
    process.stderr.write("Stopping the agent (results are still written)…\n");
    cancel.abort();
  });
  // This invocation's own folder plays RUNNER_TEMP. Its record of the repositories an agent ran in
  // (git/touched.ts) is per job on Actions; here a job is one invocation, so the next run starts clean.
  const jobTemp = await mkdtemp(path.join(os.tmpdir(), "agent-runner-job-"));
  const result = await runAction({
    signal: cancel.signal,
    inputs,
    host: { ...host, workspace: process.cwd(), runnerTemp: jobTemp },
    resultsDir,
    keyEnv,
    // The folder may be any clone: its config file may not point the user's keys at another host.
    localConfig: true,
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
  }).finally(() => rm(jobTemp, { recursive: true, force: true }).catch(() => undefined));
  // A staged run's summary, read back as `approve` reads it; a number: it could not be (the error was printed).
  let staged: import("./cli/approve.js").StagedView | number | undefined;
  if (result) {
    // What the run came to, checks and delivery included (publish/verdict.ts), as its `conclusion` output says:
    // a patch the checks refused is a failure even when the agent succeeded.
    const conclusion = outputs.conclusion ?? result.conclusion;
    await writeFile(path.join(resultsDir, "outputs.json"), JSON.stringify(outputs, null, 2) + "\n");
    staged = outputs["approval-state"] === "staged" ? await stagedSummary(resultsDir).catch((e: unknown) => reportError(e)) : undefined;
    if (values.json) {
      process.stdout.write(
        terminalJson({
          conclusion,
          ...(result.reason ? { reason: result.reason } : {}),
          changedFiles: result.diff.changedFiles,
          ...(result.usage.costUsd !== undefined ? { costUsd: result.usage.costUsd } : {}),
          results: resultsDir,
          outputs,
          ...(typeof staged === "object" ? { staged } : {}),
        }),
      );
      if (failed) writeBlock(process.stderr, `error: ${failed}`);
      return failed || typeof staged === "number" ? 1 : 0;
    }
    writeLines(process.stdout, [
      `conclusion: ${conclusion}${result.reason ? ` (${result.reason})` : ""}`,
      `changed files: ${result.diff.changedFiles.length ? result.diff.changedFiles.join(", ") : "none"}`,
      ...costLine(result),
      ...(result.verify ? [`verified: ${result.verified ?? "not-run"} (${result.verify.runs.length} check(s), ${result.verify.fixRounds} fix round(s); logs in ${path.join(resultsDir, "verify")})`] : []),
      ...(result.attempts?.length
        ? [
            `attempts: ${result.attempts.map((a) => `${a.attempt} ${a.conclusion}, verify ${a.verified}, ${a.changedLines} line(s)${a.chosen ? " (chosen)" : ""}`).join("; ")}; each in ${path.join(resultsDir, "attempt-<n>")}; the workspace is unchanged (git apply the patch)`,
          ]
        : []),
      `results: ${resultsDir}`,
      ...(typeof staged === "object" ? (await import("./cli/approve.js")).stagedLines(staged) : []),
      // Held back or refused by the checks: the agent worked in a copy, and there is nothing to approve.
      ...(staged === undefined && inputs.approval?.trim() === "required" ? ["not staged for approval: the checks held the run back (see above); nothing was applied to the working tree"] : []),
    ]);
    // Last, so that its own lines cannot pass for ours above.
    writeBlock(process.stdout, `final message: ${outputs["final-message"] ?? ""}`);
  }
  if (failed) writeBlock(process.stderr, `error: ${failed}`);
  return failed || typeof staged === "number" ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));

/**
 * The default results folder: a fresh, unpredictable folder in a parent only this user owns and can write.
 * Another local user must not be able to swap a run's results (`approve` applies what the folder holds).
 */
async function defaultResultsDir(): Promise<string> {
  const uid = process.getuid?.() ?? 0;
  const parent = path.join(os.tmpdir(), `agent-runner-${uid}`);
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const st = lstatSync(parent);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0)
    throw new ConfigurationError(`The results folder's parent ${parent} is not a folder that only you own and can write. Remove it, or pass --results-dir.`);
  return mkdtemp(path.join(parent, `${new Date().toISOString().replace(/[:.]/g, "-")}-`));
}
