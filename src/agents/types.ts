import type { Logger } from "../logger.js";
import type { Agent, AgentBackendName, RunConfig } from "../config/schema.js";
import type { AgentEvent } from "../shared/events.js";
import type { SandboxLayout } from "../sandbox/types.js";
import type { CloudSettings, ModelProvider, ProviderName } from "../shared/agents.js";
import type { Attachments } from "../shared/attachments.js";

export type { ModelProvider, ProviderName } from "../shared/agents.js";

/** Where the agent sends model requests, as seen from inside the sandbox. */
export interface ModelEndpoint {
  /** Base URL in the form the provider's SDK takes (OpenAI-style ends in /v1). */
  baseUrl: string;
  /** The key the agent holds: a placeholder when the gateway injects the real one. */
  apiKey: string;
  /** Where the gateway sends the requests (input `provider`; absent: the agent's own): the CLI's env switches depend on it (Claude Code's CLAUDE_CODE_USE_BEDROCK …). */
  provider?: ProviderName;
  /** The run's cloud settings (region, project), for CLIs that build cloud paths themselves. */
  cloud?: CloudSettings;
}

export interface AgentContext {
  agent: Agent;
  run: RunConfig;
  layout: SandboxLayout;
  /** Undefined for backends without a model (command). */
  endpoint?: ModelEndpoint;
  /** Text the runner prepends to the instructions (workspace, outputs folder, delivery rules). */
  runContext: string;
  log: Logger;
  /** Files attached to the task (config/attachments.ts), already in the read-only folder; absent when none. */
  attachments?: Attachments;
}

export type { AttachmentFile, Attachments } from "../shared/attachments.js";

export interface Materialised {
  /** Extra environment the CLI needs (config dirs, endpoint variables, telemetry switches). */
  env: Record<string, string>;
}

export interface AgentInvocation {
  file: string;
  args: string[];
  /** Written to the process's stdin, then closed. Omitted: stdin is closed at once. */
  stdin?: string;
}

/** Streaming parser: one instance per run, bounded memory. */
export interface EventParser {
  /** One line of the CLI's stdout (without newline) → zero or more events. */
  push(line: string): AgentEvent[];
  /** Called once after the process exits. */
  end(): AgentEvent[];
}

export interface NpmPackage {
  name: string;
  bin: string;
  /** The pinned, tested version used when `agent-version` is empty. */
  defaultVersion: string;
}

/** Where the CLI's binary was found or installed. */
export interface InstalledAgent {
  binPath: string;
  version: string;
  /** Folders to make readable inside the sandbox. */
  readOnlyPaths: string[];
  /** How the CLI was obtained and how long that took (for the log and result metadata). */
  install?: { source: "path" | "tool-cache" | "actions-cache" | "npm"; durationMs: number };
}

/**
 * One file per backend implements this. Adding an agent = its name in
 * shared/agents.ts, one file, and one line in registry.ts.
 */
export interface AgentBackend {
  readonly name: AgentBackendName;
  readonly npmPackage?: NpmPackage;
  readonly provider?: ModelProvider;
  /**
   * The providers this CLI can reach through the gateway (input `provider`),
   * each with the wire API it then speaks to the gateway; the first is its
   * own. Checked against the pinned CLI: a pair not listed is refused before
   * anything starts. Empty for backends without a model (command).
   */
  readonly providers: Partial<Record<ProviderName, ModelProvider>>;
  /** Secret names the backend takes its key from, first match wins. */
  readonly keyNames: string[];
  /** Options this backend cannot honour, as one message each naming the input. */
  unsupported(agent: Agent, run: RunConfig): string[];
  /** Write config files into the isolated HOME; never touch the user's repository. */
  materialise(ctx: AgentContext): Promise<Materialised>;
  command(ctx: AgentContext, installed: InstalledAgent): AgentInvocation;
  /** The run's context lets a parser know what was asked (e.g. an output schema to parse the answer against). */
  createParser(ctx: AgentContext): EventParser;
  /**
   * Files or folders under HOME (absolute, or relative to HOME) that make up
   * session state, for carrying sessions across runs. They need not exist.
   */
  sessionPaths(ctx: AgentContext): string[];
  /**
   * Optional: a one-line reason for a non-zero exit that left no failed
   * result event, from the CLI's documented exit codes and its stderr tail.
   */
  describeExit?(exitCode: number, stderrTail: string): string | undefined;
}
