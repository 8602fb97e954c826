/**
 * Runs dist/main.js and dist/post.js the way the GitHub runner does: a child
 * process with INPUT_* (hyphens kept, action.yml defaults applied), fresh
 * per-step GITHUB_OUTPUT / GITHUB_STATE / GITHUB_STEP_SUMMARY / GITHUB_ENV /
 * GITHUB_PATH files, GITHUB_EVENT_PATH, RUNNER_TEMP, cwd = GITHUB_WORKSPACE.
 * Returns what the step wrote, with the log masked as the runner masks it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, existsSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/**
 * Where the action under test lives (its action.yml and dist/): this checkout, or
 * AGENT_RUNNER_ACTION_ROOT, to run a test against another build (an older commit's
 * dist/, to see that a new attack test fails there).
 */
export const ACTION_ROOT = process.env.AGENT_RUNNER_ACTION_ROOT ? path.resolve(process.env.AGENT_RUNNER_ACTION_ROOT) : REPO_ROOT;
/** Whether the action under test is this checkout's build (under `npm test`, the snapshot test/dist-snapshot.ts took of it). */
const TESTING_THIS_CHECKOUT = path.resolve(process.env.AGENT_RUNNER_ACTION_SNAPSHOT_OF ?? ACTION_ROOT) === REPO_ROOT;

interface ActionYml {
  inputs: Record<string, { default?: string; required?: boolean }>;
  runs: { using: string; main: string; post?: string };
}

/** action.yml parsed once per version of the file: every step parsed its YAML twice (its defaults, its entry), a tenth of the test process's CPU in ledger-runs. */
let parsedActionYml: { mtimeMs: number; size: number; action: ActionYml } | undefined;

export function loadActionYml(): ActionYml {
  const file = path.join(ACTION_ROOT, "action.yml");
  const { mtimeMs, size } = statSync(file);
  if (parsedActionYml?.mtimeMs !== mtimeMs || parsedActionYml.size !== size) parsedActionYml = { mtimeMs, size, action: YAML.parse(readFileSync(file, "utf8")) as ActionYml };
  // A copy: a caller may change what it was given.
  return structuredClone(parsedActionYml.action);
}

export interface StepOptions {
  /** Inputs as a workflow's `with:` gives them. */
  inputs: Record<string, string>;
  workspace: string;
  /** Extra runner env (GITHUB_TOKEN, ACTIONS_RUNTIME_TOKEN, fake service URLs…). */
  env?: Record<string, string>;
  event?: { name: string; payload: unknown };
  runnerTemp?: string;
  /** State saved by the main step (for post). */
  state?: Record<string, string>;
  timeoutMs?: number;
  /** Cancel the job as the runner does: send `signal` (default SIGINT) once the log shows `when`. */
  interrupt?: { when: string; signal?: NodeJS.Signals };
  /** The `github.token` the runner substitutes into `${{ github.token }}` defaults. */
  githubToken?: string;
}

export interface StepResult {
  exitCode: number | null;
  /** Raw stdout of the step, before masking. */
  rawStdout: string;
  /** The log as the runner shows it: ::add-mask:: values replaced by ***. */
  log: string;
  stderr: string;
  outputs: Record<string, string>;
  state: Record<string, string>;
  summary: string;
  masks: string[];
  runnerTemp: string;
  durationMs: number;
}

/** Parse a file-command file: `name<<delim\nvalue\ndelim` or `name=value` lines. */
export function parseFileCommand(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line) continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, name, delim] = heredoc;
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== delim; i++) value.push(lines[i]!);
      out[name!] = value.join("\n");
    } else {
      const eq = line.indexOf("=");
      if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
    }
  }
  return out;
}

function applyDefaults(inputs: Record<string, string>, githubToken: string): Record<string, string> {
  const action = loadActionYml();
  const env: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs)) {
    let value = inputs[name] ?? spec.default ?? "";
    value = value.replace(/\$\{\{\s*github\.token\s*\}\}/g, githubToken);
    // The runner sets every declared input, empty when neither given nor defaulted.
    env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] = value;
  }
  // An older build (AGENT_RUNNER_ACTION_ROOT) does not know newer inputs: the runner would warn and drop them.
  for (const name of Object.keys(inputs))
    if (!(name in action.inputs) && TESTING_THIS_CHECKOUT) throw new Error(`harness: input '${name}' is not declared in action.yml`);
  return env;
}

export async function runStep(entry: "main" | "post", opts: StepOptions): Promise<StepResult> {
  const runnerTemp = opts.runnerTemp ?? mkdtempSync(path.join(os.tmpdir(), "runner-temp-"));
  const stepDir = mkdtempSync(path.join(runnerTemp, "_runner_file_commands-"));
  const files = {
    GITHUB_OUTPUT: path.join(stepDir, "output"),
    GITHUB_STATE: path.join(stepDir, "state"),
    GITHUB_STEP_SUMMARY: path.join(stepDir, "summary"),
    GITHUB_ENV: path.join(stepDir, "env"),
    GITHUB_PATH: path.join(stepDir, "path"),
  };
  for (const f of Object.values(files)) writeFileSync(f, "");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/root",
    LANG: "C.UTF-8",
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_WORKSPACE: opts.workspace,
    RUNNER_TEMP: runnerTemp,
    RUNNER_TOOL_CACHE: path.join(runnerTemp, "_tool"),
    RUNNER_OS: "Linux",
    GITHUB_REPOSITORY: "octo/repo",
    GITHUB_RUN_ID: "1001",
    GITHUB_RUN_ATTEMPT: "1",
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_API_URL: "https://api.github.com",
    GITHUB_ACTOR: "octocat",
    ...files,
    ...applyDefaults(opts.inputs, opts.githubToken ?? "ghs_defaultWorkflowToken000000000000000"),
    ...Object.fromEntries(Object.entries(opts.state ?? {}).map(([k, v]) => [`STATE_${k}`, v])),
    ...runCompileCache(),
    ...opts.env,
  };
  if (opts.event) {
    const eventPath = path.join(stepDir, "event.json");
    writeFileSync(eventPath, JSON.stringify(opts.event.payload));
    env.GITHUB_EVENT_NAME = opts.event.name;
    env.GITHUB_EVENT_PATH = eventPath;
  }
  mkdirSync(env.RUNNER_TOOL_CACHE!, { recursive: true });

  const action = loadActionYml();
  const script = entry === "main" ? action.runs.main : action.runs.post!;
  const started = Date.now();
  const child = spawn(process.execPath, [path.join(ACTION_ROOT, script)], { cwd: opts.workspace, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let interrupted = false;
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
    if (opts.interrupt && !interrupted && stdout.includes(opts.interrupt.when)) {
      interrupted = true;
      child.kill(opts.interrupt.signal ?? "SIGINT");
    }
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const timeout = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 300_000);
  const exitCode = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timeout);

  const masks = [...stdout.matchAll(/^::add-mask::(.*)$/gm)].map((m) => m[1]!).filter(Boolean);
  let log = stdout.replace(/^::add-mask::.*\n?/gm, "");
  for (const m of [...masks].sort((a, b) => b.length - a.length)) log = log.split(m).join("***");
  const read = (f: string) => (existsSync(f) ? readFileSync(f, "utf8") : "");
  return {
    exitCode,
    rawStdout: stdout,
    log,
    stderr,
    outputs: parseFileCommand(read(files.GITHUB_OUTPUT)),
    state: parseFileCommand(read(files.GITHUB_STATE)),
    summary: read(files.GITHUB_STEP_SUMMARY),
    masks,
    runnerTemp,
    durationMs: Date.now() - started,
  };
}

/** main, then post with main's state, as the runner runs a step with `runs.post`. */
export async function runActionSteps(opts: StepOptions): Promise<{ main: StepResult; post: StepResult }> {
  const main = await runStep("main", opts);
  const post = await runStep("post", { ...opts, runnerTemp: main.runnerTemp, state: main.state });
  return { main, post };
}

/**
 * The run's V8 code cache (test/temp-folder.ts names it), for a dist/ process the tests start with an
 * environment of their own: the same files are compiled once per run instead of once per step (about 40 ms
 * of a step's CPU). Node checks each entry against a hash of the file's contents, so a changed file is compiled again, and
 * the cache changes no behaviour. Agents never see it: their environment is an allowlist (sandbox/env.ts).
 */
export function runCompileCache(): Record<string, string> {
  const dir = process.env.NODE_COMPILE_CACHE;
  return dir ? { NODE_COMPILE_CACHE: dir } : {};
}
