/**
 * Secret scanning of what is about to be published, with secretlint's
 * recommended preset (maintained rules for cloud, VCS, model-provider and
 * private keys, each with a checked prefix or checksum so that ordinary code
 * does not match), plus the run's own secret values, which no rule knows.
 * A finding names the rule and where it was found, never the value.
 */
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import type { ScanTarget } from "../../shared/patch-pieces.js";
import type { ThreatFinding } from "./types.js";

/** Text scanned per call; neighbouring chunks overlap so that a secret on a chunk boundary is whole in one. */
const CHUNK_CHARS = 1024 * 1024;
const CHUNK_OVERLAP = 8 * 1024;

export type { ScanTarget };

/**
 * `holdsRunSecret` is the run's redactor asked whether it would change the
 * text: it knows every form the run's secrets take once encoded.
 */
export async function scanForSecrets(targets: readonly ScanTarget[], holdsRunSecret: (text: string) => boolean): Promise<ThreatFinding[]> {
  const findings: ThreatFinding[] = [];
  const config = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }] };
  for (const target of targets) {
    const seen = new Set<string>();
    // Every part of the text, in overlapping chunks: a secret in the middle of a large file is found too.
    for (let start = 0; start === 0 || start < target.text.length; start += CHUNK_CHARS) {
      const text = target.text.slice(start, start + CHUNK_CHARS + CHUNK_OVERLAP);
      const result = await lintSource({
        source: { filePath: target.file ?? "message.txt", content: text, contentType: "text" },
        options: { config, maskSecrets: true, noPhysicFilePath: true },
      });
      for (const m of result.messages) {
        const rule = m.messageId || m.ruleId;
        if (seen.has(rule)) continue;
        seen.add(rule);
        findings.push(finding("secret", target, rule));
      }
      if (!seen.has("run-secret") && holdsRunSecret(text)) {
        seen.add("run-secret");
        findings.push(finding("run-secret", target, "a value given in secrets, a model key or a token"));
      }
    }
  }
  return findings;
}

function finding(kind: ThreatFinding["kind"], target: ScanTarget, rule: string): ThreatFinding {
  return { kind, where: target.where, ...(target.file !== undefined ? { file: target.file } : {}), detail: rule };
}
