/**
 * How to run each real agent CLI headless against the stub model: isolated HOME, config files,
 * env, argv, and parsers for the session id / final text / usage in their JSON output.
 * Everything here is the measured recipe written up in test/support/agent-recipes.md.
 */
import { spawn } from "node:child_process";
import { mkdtemp, mkdir, writeFile, rm } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export type CliName = "claude" | "codex" | "gemini" | "opencode";
export const CLIS: CliName[] = ["claude", "codex", "gemini", "opencode"];

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const binDir = path.join(repoRoot, "node_modules/.bin");

/** Model names sent to the stub (the stub accepts anything). */
export const STUB_MODELS: Record<CliName, string> = {
  claude: "claude-sonnet-4-5",
  codex: "gpt-5.5",
  gemini: "gemini-2.5-pro",
  opencode: "stub/stub-model",
};

export const STUB_API_KEY = "sk-stub-test-key-0123456789";

export interface Sandbox {
  root: string;
  home: string;
  /** A git repository with one commit, the CLI's cwd. */
  work: string;
  cleanup(): Promise<void>;
}

export async function makeSandbox(prefix = "stub-e2e-"): Promise<Sandbox> {
  const root = await mkdtemp(path.join(os.tmpdir(), prefix));
  const home = path.join(root, "home");
  const work = path.join(root, "work");
  await mkdir(home, { recursive: true });
  await mkdir(work, { recursive: true });
  await writeFile(path.join(work, "README.md"), "# test repo\n");
  const gitEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.invalid",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.invalid",
  };
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: work, env: gitEnv });
  execFileSync("git", ["add", "-A"], { cwd: work, env: gitEnv });
  execFileSync("git", ["commit", "-q", "-m", "init"], { cwd: work, env: gitEnv });
  return { root, home, work, cleanup: () => rm(root, { recursive: true, force: true }) };
}

export interface SetupOptions {
  sandbox: Sandbox;
  /** Stub base URL, `http://127.0.0.1:PORT` (no /v1). */
  stubUrl: string;
  /** Extra env merged last (proxy tripwire variables, retry limits…). */
  extraEnv?: Record<string, string>;
  apiKey?: string;
  /**
   * Cap the CLI's own retries of failed model calls (fast error tests). Undefined: CLI defaults.
   * claude: CLAUDE_CODE_MAX_RETRIES; codex: request_max_retries / stream_max_retries;
   * gemini: settings general.maxAttempts = retries + 1. opencode has no knob (5 session retries,
   * 2 s doubling) but honours `retry-after-ms` / `retry-after` response headers.
   */
  retries?: number;
}

/** Minimal env every CLI gets: no inherited secrets, Node 24 first on PATH. */
export function baseEnv(home: string): Record<string, string> {
  return {
    PATH: [path.dirname(process.execPath), binDir, "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
    HOME: home,
    USER: "runner",
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    TMPDIR: os.tmpdir(),
    CI: "true",
  };
}

/** Writes the CLI's config files under HOME and returns the env for it. */
export async function setupCli(cli: CliName, o: SetupOptions): Promise<Record<string, string>> {
  const { home } = o.sandbox;
  const key = o.apiKey ?? STUB_API_KEY;
  const env = baseEnv(home);
  switch (cli) {
    case "claude":
      Object.assign(env, {
        ANTHROPIC_BASE_URL: o.stubUrl,
        ANTHROPIC_API_KEY: key,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        // --dangerously-skip-permissions refuses to run as root without it.
        IS_SANDBOX: "1",
      });
      if (o.retries !== undefined) env.CLAUDE_CODE_MAX_RETRIES = String(o.retries);
      break;
    case "codex": {
      const codexHome = path.join(home, ".codex");
      await mkdir(codexHome, { recursive: true });
      await writeFile(
        path.join(codexHome, "config.toml"),
        [
          `model = "${STUB_MODELS.codex}"`,
          `model_provider = "stub"`,
          ``,
          `[model_providers.stub]`,
          `name = "stub"`,
          `base_url = "${o.stubUrl}/v1"`,
          `env_key = "STUB_API_KEY"`,
          `wire_api = "responses"`,
          ...(o.retries !== undefined ? [`request_max_retries = ${o.retries}`, `stream_max_retries = ${o.retries}`] : []),
          ``,
          `[analytics]`,
          `enabled = false`,
          ``,
          `[features]`,
          `plugins = false`,
          ``,
        ].join("\n"),
      );
      Object.assign(env, { CODEX_HOME: codexHome, STUB_API_KEY: key });
      break;
    }
    case "gemini": {
      const dir = path.join(home, ".gemini");
      await mkdir(dir, { recursive: true });
      await writeFile(
        path.join(dir, "settings.json"),
        JSON.stringify(
          {
            security: { auth: { selectedType: "gemini-api-key" } },
            privacy: { usageStatisticsEnabled: false },
            ...(o.retries !== undefined ? { general: { maxAttempts: Math.max(1, o.retries + 1) } } : {}),
          },
          null,
          2,
        ),
      );
      Object.assign(env, {
        GOOGLE_GEMINI_BASE_URL: o.stubUrl,
        GEMINI_API_KEY: key,
        GEMINI_CLI_TRUST_WORKSPACE: "true",
        GEMINI_CLI_NO_RELAUNCH: "true",
      });
      break;
    }
    case "opencode": {
      const config = path.join(home, ".config");
      const dir = path.join(config, "opencode");
      await mkdir(dir, { recursive: true });
      await writeFile(
        path.join(dir, "opencode.json"),
        JSON.stringify(
          {
            $schema: "https://opencode.ai/config.json",
            model: STUB_MODELS.opencode,
            small_model: STUB_MODELS.opencode,
            autoupdate: false,
            share: "disabled",
            permission: { edit: "allow", bash: "allow", webfetch: "deny" },
            provider: {
              stub: {
                npm: "@ai-sdk/openai-compatible",
                name: "Stub",
                options: { baseURL: `${o.stubUrl}/v1`, apiKey: key },
                models: { "stub-model": { name: "Stub model", tool_call: true, limit: { context: 200000, output: 8192 } } },
              },
            },
          },
          null,
          2,
        ),
      );
      // opencode starts a background `npm install @opencode-ai/plugin` in every config dir unless
      // node_modules/ exists and package-lock.json's root package already lists every dependency
      // (its Npm.install "checkDirty" rule). Pre-make both so it never goes to the registry.
      await mkdir(path.join(dir, "node_modules"), { recursive: true });
      await writeFile(
        path.join(dir, "package-lock.json"),
        JSON.stringify({ name: "opencode-config", lockfileVersion: 3, requires: true, packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } } }, null, 2),
      );
      Object.assign(env, {
        XDG_CONFIG_HOME: config,
        XDG_DATA_HOME: path.join(home, ".local/share"),
        XDG_CACHE_HOME: path.join(home, ".cache"),
        XDG_STATE_HOME: path.join(home, ".local/state"),
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      });
      break;
    }
  }
  return { ...env, ...(o.extraEnv ?? {}) };
}

export interface ArgsOptions {
  prompt: string;
  /** Resume this session id. */
  resume?: string;
  /** Fork the resumed session into a new id (claude, codex, opencode; gemini has no fork). */
  fork?: boolean;
}

export interface Invocation {
  /** argv without the binary. */
  args: string[];
  /** Written to stdin, then stdin is closed. Undefined: stdin is /dev/null. */
  stdin?: string;
}

/** argv (and stdin) for one headless run. */
export function cliArgs(cli: CliName, o: ArgsOptions): Invocation {
  switch (cli) {
    case "claude":
      return {
        args: [
          "-p",
          o.prompt,
          "--output-format",
          "stream-json",
          "--verbose",
          "--model",
          STUB_MODELS.claude,
          "--dangerously-skip-permissions",
          ...(o.resume ? ["--resume", o.resume] : []),
          ...(o.resume && o.fork ? ["--fork-session"] : []),
        ],
      };
    case "codex": {
      const flags = ["--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"];
      if (!o.resume) return { args: ["exec", ...flags, o.prompt] };
      return { args: ["exec", ...flags, o.fork ? "fork" : "resume", o.resume, o.prompt] };
    }
    case "gemini":
      return { args: ["-p", o.prompt, "--output-format", "stream-json", "-m", STUB_MODELS.gemini, "--yolo", ...(o.resume ? ["--resume", o.resume] : [])] };
    case "opencode":
      // The prompt goes on stdin: `opencode run` wraps every argv word that contains a space in
      // literal double quotes before sending it to the model ("fix it" → "\"fix it\"").
      return {
        args: [
          "run",
          "--format",
          "json",
          "--pure",
          "--title",
          "stub run",
          ...(o.resume ? ["--session", o.resume] : []),
          ...(o.resume && o.fork ? ["--fork"] : []),
        ],
        stdin: o.prompt,
      };
  }
}

export interface CliRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout lines that parsed as JSON. */
  events: Array<Record<string, unknown>>;
  durationMs: number;
  timedOut: boolean;
}

export function runCli(
  cli: CliName,
  invocation: Invocation,
  opts: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<CliRun> {
  const { args, stdin } = invocation;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(binDir, cli), args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: true, // own process group, so a timeout kills the CLI's children too
    });
    if (stdin !== undefined && child.stdin) {
      child.stdin.on("error", () => {});
      child.stdin.end(stdin);
    }
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, opts.timeoutMs ?? 240_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      const events: Array<Record<string, unknown>> = [];
      for (const line of stdout.split("\n")) {
        const t = line.trim();
        if (!t.startsWith("{")) continue;
        try {
          events.push(JSON.parse(t));
        } catch {
          /* not JSON */
        }
      }
      resolve({ exitCode, signal, stdout, stderr, events, durationMs: Date.now() - started, timedOut });
    });
  });
}

export interface ParsedRun {
  sessionId?: string;
  finalText?: string;
  usage?: { inputTokens: number; outputTokens: number; cachedTokens: number };
  isError: boolean;
}

const rec = (v: unknown): Record<string, any> => (v && typeof v === "object" ? (v as Record<string, any>) : {});

/** Session id, final text and usage from a CLI's JSON event stream (test-grade, not the backend parsers). */
export function parseRun(cli: CliName, events: Array<Record<string, unknown>>): ParsedRun {
  const out: ParsedRun = { isError: false };
  switch (cli) {
    case "claude":
      for (const e of events) {
        if (typeof e.session_id === "string") out.sessionId ??= e.session_id;
        if (e.type === "result") {
          out.finalText = typeof e.result === "string" ? e.result : undefined;
          out.isError = e.is_error === true;
          const u = rec(e.usage);
          out.usage = { inputTokens: u.input_tokens ?? 0, outputTokens: u.output_tokens ?? 0, cachedTokens: u.cache_read_input_tokens ?? 0 };
        }
      }
      break;
    case "codex": {
      let lastText: string | undefined;
      for (const e of events) {
        if (e.type === "thread.started") out.sessionId = String(e.thread_id);
        const item = rec(e.item);
        if (e.type === "item.completed" && item.type === "agent_message") lastText = String(item.text);
        if (e.type === "turn.completed") {
          const u = rec(e.usage);
          out.usage = { inputTokens: u.input_tokens ?? 0, outputTokens: u.output_tokens ?? 0, cachedTokens: u.cached_input_tokens ?? 0 };
        }
        if (e.type === "turn.failed" || e.type === "error") out.isError = true;
      }
      out.finalText = lastText;
      break;
    }
    case "gemini": {
      let text = "";
      for (const e of events) {
        if (e.type === "init") out.sessionId = String(e.session_id);
        if (e.type === "message" && e.role === "assistant") text += String(e.content ?? "");
        if (e.type === "tool_use") text = ""; // keep only the text after the last tool call
        if (e.type === "result") {
          out.isError = e.status !== "success";
          const s = rec(e.stats);
          out.usage = { inputTokens: s.input_tokens ?? 0, outputTokens: s.output_tokens ?? 0, cachedTokens: s.cached ?? 0 };
        }
        if (e.type === "error") out.isError = true;
      }
      out.finalText = text || undefined;
      break;
    }
    case "opencode": {
      let lastText: string | undefined;
      let input = 0,
        output = 0,
        cached = 0;
      for (const e of events) {
        if (typeof e.sessionID === "string") out.sessionId ??= e.sessionID;
        const part = rec(e.part);
        if (e.type === "text" && typeof part.text === "string") lastText = part.text;
        if (e.type === "step_finish") {
          const t = rec(part.tokens);
          input += t.input ?? 0;
          output += t.output ?? 0;
          cached += rec(t.cache).read ?? 0;
        }
        if (e.type === "error") out.isError = true;
      }
      out.finalText = lastText;
      out.usage = { inputTokens: input, outputTokens: output, cachedTokens: cached };
      break;
    }
  }
  return out;
}
