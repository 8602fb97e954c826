/**
 * Secret scanning of what is about to be published, with secretlint's
 * recommended preset (maintained rules for cloud, VCS, model-provider and
 * private keys, each with a checked prefix or checksum so that ordinary code
 * does not match), plus the run's own secret values, which no rule knows.
 * A finding names the rule and where it was found, never the value.
 */
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import type { ThreatFinding } from "./types.js";

/** Text scanned per piece: larger pieces are scanned in their first and last part (a patch is bounded upstream). */
const MAX_SCAN_CHARS = 8 * 1024 * 1024;

export interface ScanTarget {
  /** Where the text goes: "patch", "safe output 2 (add-comment)", "final message". */
  where: string;
  /** The repository path, for patch pieces. */
  file?: string;
  text: string;
}

/**
 * `holdsRunSecret` is the run's redactor asked whether it would change the
 * text: it knows every form the run's secrets take once encoded.
 */
export async function scanForSecrets(targets: readonly ScanTarget[], holdsRunSecret: (text: string) => boolean): Promise<ThreatFinding[]> {
  const findings: ThreatFinding[] = [];
  const config = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }] };
  for (const target of targets) {
    const text = target.text.length > MAX_SCAN_CHARS ? target.text.slice(0, MAX_SCAN_CHARS / 2) + "\n" + target.text.slice(-MAX_SCAN_CHARS / 2) : target.text;
    const seen = new Set<string>();
    const result = await lintSource({
      source: { filePath: target.file ?? "message.txt", content: text, contentType: "text" },
      options: { config, maskSecrets: true, noPhysicFilePath: true },
    });
    for (const m of result.messages) {
      const rule = m.messageId || m.ruleId;
      if (seen.has(rule)) continue;
      seen.add(rule);
      findings.push(finding("secret", target, `${rule} (line ${m.loc.start.line})`));
    }
    if (holdsRunSecret(text)) findings.push(finding("run-secret", target, "a value given in secrets, a model key or a token"));
  }
  return findings;
}

function finding(kind: ThreatFinding["kind"], target: ScanTarget, rule: string): ThreatFinding {
  return { kind, where: target.where, ...(target.file !== undefined ? { file: target.file } : {}), detail: rule };
}
