/**
 * The `safe-outputs` input: kind → limits. Only listed kinds are enabled;
 * `true` or `{}` means the kind's defaults. Parsed once by the input parser
 * into a normalized mapping (plain JSON, so it can be handed to the MCP
 * server), which each side turns into EnabledKinds with `enabledKinds`.
 */
import type { EnabledKind } from "./kind.js";
import { SAFE_OUTPUT_KINDS } from "./registry.js";

/** kind key → its limits, as checked and completed (max filled in). */
export type SafeOutputsConfig = Record<string, Record<string, unknown>>;

/** The MCP server's name: claude sees `mcp__agent-runner__<tool>`. */
export const SAFE_OUTPUTS_SERVER = "agent-runner";
/** In the agent's outputs folder (and so in the run artifact's outputs/). */
export const SAFE_OUTPUTS_FILE = "safe-outputs.jsonl";
/** For `agent: command`: the JSONL file to append requests to. */
export const SAFE_OUTPUTS_ENV = "AGENT_SAFE_OUTPUTS";

function kindByKey(key: string) {
  return SAFE_OUTPUT_KINDS.find((k) => k.key === key);
}

/** A mapping from the input (YAML/JSON already parsed) → the normalized config, or the problems, each a sentence. */
export function parseSafeOutputs(doc: unknown): { config: SafeOutputsConfig; problems: string[] } {
  const problems: string[] = [];
  const config: SafeOutputsConfig = {};
  if (doc === undefined || doc === null) return { config, problems };
  if (typeof doc !== "object" || Array.isArray(doc)) {
    problems.push(`must map kinds (${SAFE_OUTPUT_KINDS.map((k) => k.key).join(", ")}) to their limits, e.g. {add-comment: {max: 1}}.`);
    return { config, problems };
  }
  for (const [key, raw] of Object.entries(doc)) {
    const kind = kindByKey(key);
    if (!kind) {
      problems.push(`'${key}' is not a safe-output kind; use ${SAFE_OUTPUT_KINDS.map((k) => k.key).join(", ")}.`);
      continue;
    }
    // `false` leaves a kind off, as if it were not listed.
    if (raw === false) continue;
    const enabled = kind.enable(raw);
    if (enabled.ok) config[key] = enabled.kind.normalized;
    else problems.push(`'${key}' ${enabled.problem}.`);
  }
  return { config, problems };
}

/** The enabled kinds of a normalized config, in registry order. */
export function enabledKinds(config: SafeOutputsConfig | undefined): EnabledKind[] {
  if (!config) return [];
  const out: EnabledKind[] = [];
  for (const kind of SAFE_OUTPUT_KINDS) {
    if (!(kind.key in config)) continue;
    const enabled = kind.enable(config[kind.key]);
    // The config was checked when parsed; a kind that no longer parses stays off.
    if (enabled.ok) out.push(enabled.kind);
  }
  return out;
}

export function hasSafeOutputs(config: SafeOutputsConfig | undefined): boolean {
  return enabledKinds(config).length > 0;
}
