/**
 * What an adversarial agent run left in its results: the \`REPORT key=value\`
 * lines the attacker script printed, and the blocked network attempts the
 * trace recorded. Shared by the sandbox and security attack tests.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

function resultsDir(main: { outputs: Record<string, string>; log?: string; stderr?: string }): string {
  const patch = main.outputs["patch-path"];
  if (!patch) throw new Error(`the run wrote no results:\n${main.log ?? ""}\n${main.stderr ?? ""}`);
  return path.dirname(patch);
}

/** The attacker's \`REPORT key=value\` lines from raw/stdout.jsonl. */
export function attackReport(main: { outputs: Record<string, string>; log?: string; stderr?: string }): Record<string, string> {
  const stdout = readFileSync(path.join(resultsDir(main), "raw/stdout.jsonl"), "utf8");
  return Object.fromEntries([...stdout.matchAll(/^REPORT (\w+)=(\S*)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** The network_blocked events of the run's trace. */
export function blockedAttempts(main: { outputs: Record<string, string> }): { type: string; host?: string; detail?: string }[] {
  return readFileSync(path.join(resultsDir(main), "trace.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; host?: string; detail?: string })
    .filter((e) => e.type === "network_blocked");
}
