import type { Logger } from "../logger.js";
import type { Agent, AgentBackendName, RunConfig } from "../config/schema.js";
import type { AgentEvent } from "../trace/events.js";
import type { SandboxLayout } from "../sandbox/types.js";

/** Which wire API a CLI speaks: decides the gateway's allowed paths and key header. */
export type ModelProvider = "anthropic" | "openai" | "gemini";

/** Where the agent sends model requests, as seen from inside the sandbox. */
export interface ModelEndpoint {
  /** Base URL in the form the provider's SDK takes (OpenAI-style ends in /v1). */
  baseUrl: string;
  /** The key the agent holds: a placeholder when the gateway injects the real one. */
  apiKey: string;
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

/** One attachment as the agent sees it. */
export interface AttachmentFile {
  /** Absolute path inside the sandbox (in the read-only attachments folder). */
  path: string;
  /** The copy's file name (our own, e.g. `01-screen.png`). */
  name: string;
  /** By content: images and PDFs go to the CLI natively where it can take them; text is listed in the prompt. */
  kind: "image" | "pdf" | "text";
  mediaType: string;
  bytes: number;
}

/** The attachments folder (AGENT_ATTACHMENTS_DIR) and its files, in the order the prompt lists them. */
export interface Attachments {
  dir: string;
  files: AttachmentFile[];
}

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
 * One file per backend implements this. Adding an agent = one file plus one
 * line in registry.ts.
 */
export interface AgentBackend {
  readonly name: AgentBackendName;
  readonly npmPackage?: NpmPackage;
  readonly provider?: ModelProvider;
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
