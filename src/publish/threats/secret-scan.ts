/**
 * Secret scanning of what is about to be published, with gitleaks' rules
 * (./gitleaks.ts: maintained, one per provider, measured against gitleaks'
 * own samples in test/security/secret-corpus.test.ts), plus the run's own
 * secret values, which no rule knows. A finding names the rule and where it
 * was found, never the value.
 */
import { FILE_NAME, type ScanTarget } from "../../shared/patch-pieces.js";
import { gitleaksMatches, type ScanMeter } from "./gitleaks.js";
import type { ThreatFinding } from "./types.js";

/**
 * Text scanned per call; neighbouring chunks overlap (as much as the rules' longest windows do)
 * so that a secret on a chunk boundary is whole in one. The scan yields between chunks: a
 * quarter megabyte keeps the event loop (a cancel, a timer) waiting seconds at most, not minutes.
 */
const CHUNK_CHARS = 256 * 1024;
const CHUNK_OVERLAP = 8 * 1024;

/**
 * The whole scan's time. Each regex runs on a bounded window (./gitleaks.ts), but text built
 * to be slow (every rule's keyword on every line) still costs far more than code does; past
 * this the scan stops and says so with a `scan-incomplete` finding, which holds the run like
 * a secret would: an unscanned rest is never published.
 */
export const SCAN_BUDGET_MS = 120_000;

export type { ScanTarget };

/**
 * Where one string literal ends and the next begins in a concatenation:
 * `"abc" + "def"`, `'abc' . 'def'`, `"abc" .. "def"`, `"abc" "def"`, also across a line break.
 * Taken out, the pieces of a split secret are one string again.
 */
const LITERAL_JOINT = /(["'`])[ \t]*(?:\+|\.\.?|\|\||&)?[ \t]*\\?\r?\n?[ \t]*(?:\+|\.\.?|\|\||&)?[ \t]*\1/g;

/** The text with string concatenations joined: what a split value reads as once the program runs. */
export function joinLiterals(text: string): string {
  return text.replace(LITERAL_JOINT, "");
}

/**
 * `holdsRunSecret` is the run's redactor asked whether the text holds one of
 * the run's secret values: it knows every form they take once encoded.
 */
export async function scanForSecrets(targets: readonly ScanTarget[], holdsRunSecret: (text: string) => boolean, budgetMs = SCAN_BUDGET_MS, meter?: ScanMeter): Promise<ThreatFinding[]> {
  const findings: ThreatFinding[] = [];
  const spent = meter ?? { deadline: 0, overran: false, execs: 0, longestInput: 0 };
  spent.deadline = performance.now() + budgetMs;
  for (const target of targets) {
    const seen = new Set<string>();
    // A name is shown wherever the finding is: the secret in it is masked there.
    const shown = target.where === FILE_NAME ? { ...target, file: maskedName(target.text) } : target;
    // Every part of the text, in overlapping chunks: a secret in the middle of a large file is found too.
    for (let start = 0; start === 0 || start < target.text.length; start += CHUNK_CHARS) {
      const text = target.text.slice(start, start + CHUNK_CHARS + CHUNK_OVERLAP);
      for (const m of gitleaksMatches(text, target.file, spent)) {
        if (seen.has(m.rule)) continue;
        seen.add(m.rule);
        findings.push(finding("secret", shown, m.rule));
      }
      if (!seen.has("run-secret") && holdsRunSecretJoined(text, holdsRunSecret)) {
        seen.add("run-secret");
        findings.push(finding("run-secret", shown, "a value given in secrets, a model key or a token"));
      }
      if (performance.now() > spent.deadline) spent.overran = true;
      if (spent.overran) {
        findings.push(finding("scan-incomplete", shown, `the secret scan ran out of its ${Math.round(budgetMs / 1000)} s before the end of this text`));
        return findings;
      }
      // Between chunks too: a cancel or a timer is heard while a large text is scanned.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    // Yield between targets: a large patch does not hold the event loop for its whole scan.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return findings;
}

/** The name with every secret the rules find in it replaced by `***`. */
export function maskedName(name: string): string {
  const spans = gitleaksMatches(name).sort((a, b) => b.index - a.index);
  let out = name;
  for (const m of spans) if (m.length) out = out.slice(0, m.index) + "***" + out.slice(Math.min(out.length, m.index + m.length));
  return out;
}

function holdsRunSecretJoined(text: string, holdsRunSecret: (text: string) => boolean): boolean {
  if (holdsRunSecret(text)) return true;
  const joined = joinLiterals(text);
  return joined !== text && holdsRunSecret(joined);
}

function finding(kind: ThreatFinding["kind"], target: ScanTarget, rule: string): ThreatFinding {
  return { kind, where: target.where, ...(target.file !== undefined ? { file: target.file } : {}), detail: rule };
}
