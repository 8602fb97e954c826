/**
 * The secret scanner judged on a public corpus nobody here wrote: gitleaks'
 * per-rule true and false samples (test/fixtures/gitleaks-corpus.json, MIT,
 * extracted by scripts/gitleaks-corpus.mjs with the commit recorded). Every
 * sample goes through scanForSecrets as a piece of a patch would, all rules
 * at once. Reports recall per provider family and the false-positive rate,
 * and fails below the goal.
 *
 * A false sample is written to say "rule R must not fire here", not "there
 * is no secret here": several are another rule's true samples (Cloudflare's
 * three rules, Anthropic's two). So a false sample counts as a false
 * positive when any rule flags it, unless the same text is a true sample of
 * the corpus; the rate of the sample's own rule firing is reported too.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { scanForSecrets } from "../../src/publish/threats/secret-scan.js";

interface Sample {
  rule: string;
  kind: "tp" | "fp";
  generated?: boolean;
  path?: string;
  text: string;
}
const corpus = JSON.parse(readFileSync(new URL("../fixtures/gitleaks-corpus.json", import.meta.url), "utf8")) as {
  source: { commit: string; version: string };
  samples: Sample[];
};

/** The providers the goal names, by gitleaks rule id. */
const FAMILIES: Record<string, RegExp> = {
  AWS: /^aws-/,
  GitHub: /^github-/,
  GitLab: /^gitlab-/,
  Slack: /^slack-/,
  Stripe: /^stripe-/,
  OpenAI: /^openai-/,
  Anthropic: /^anthropic-/,
  Google: /^gcp-/,
  Azure: /^azure-/,
  npm: /^npm-/,
  PyPI: /^pypi-/,
  "private keys": /^private-key/,
  JWT: /^jwt/,
  "Hugging Face": /^huggingface-/,
};

/** The rules that flag the sample. */
async function flaggedBy(sample: Sample): Promise<Set<string>> {
  const findings = await scanForSecrets([{ where: "patch", file: sample.path ?? "sample.txt", text: sample.text }], () => false);
  return new Set(findings.map((f) => f.detail));
}
const trueTexts = new Set(corpus.samples.filter((s) => s.kind === "tp").map((s) => s.text));

interface Tally {
  found: number;
  total: number;
}
const rate = (t: Tally) => (t.total ? t.found / t.total : 1);
const pct = (t: Tally) => `${(100 * rate(t)).toFixed(1)} % (${t.found}/${t.total})`;

describe(`secret scanner on gitleaks' samples (${corpus.source.version}, ${corpus.source.commit.slice(0, 12)})`, () => {
  it("recall ≥ 0.95 on the literal samples and on each listed provider, ≥ 0.90 overall; false positives ≤ 3 % (own rule), < 4 % (any rule)", { timeout: 240_000 }, async () => {
    const overall: Tally = { found: 0, total: 0 };
    const literal: Tally = { found: 0, total: 0 };
    const falsePositives: Tally = { found: 0, total: 0 };
    const ownRule: Tally = { found: 0, total: 0 };
    const families = new Map<string, Tally>(Object.keys(FAMILIES).map((f) => [f, { found: 0, total: 0 }]));
    const missedRules = new Map<string, number>();
    const flaggedFalse: string[] = [];
    for (const sample of corpus.samples) {
      const rules = await flaggedBy(sample);
      const hit = rules.size > 0;
      if (sample.kind === "fp") {
        ownRule.total++;
        if (rules.has(sample.rule)) ownRule.found++;
        if (trueTexts.has(sample.text)) continue;
        falsePositives.total++;
        if (hit) {
          falsePositives.found++;
          flaggedFalse.push(`${sample.rule} (by ${[...rules].join(", ")})`);
        }
        continue;
      }
      const tallies = [overall, ...(sample.generated ? [] : [literal])];
      for (const [family, pattern] of Object.entries(FAMILIES)) if (pattern.test(sample.rule)) tallies.push(families.get(family)!);
      for (const t of tallies) {
        t.total++;
        if (hit) t.found++;
      }
      if (!hit) missedRules.set(sample.rule, (missedRules.get(sample.rule) ?? 0) + 1);
    }
    const report = [
      `recall, all true samples: ${pct(overall)}`,
      `recall, literal true samples: ${pct(literal)}`,
      `false positives, any rule: ${pct(falsePositives)}${flaggedFalse.length ? ` (samples of ${[...new Set(flaggedFalse)].join("; ")})` : ""}`,
      `false positives, the sample's own rule: ${pct(ownRule)}`,
      ...[...families].map(([f, t]) => `  ${f}: ${pct(t)}`),
      `missed, by rule: ${[...missedRules].map(([r, n]) => `${r} ×${n}`).join(", ") || "none"}`,
    ].join("\n");
    console.log(report);
    expect(rate(literal), report).toBeGreaterThanOrEqual(0.95);
    expect(rate(overall), report).toBeGreaterThanOrEqual(0.9);
    for (const [family, t] of families) {
      expect(t.total, `${family} has samples`).toBeGreaterThan(0);
      expect(rate(t), `${family}\n${report}`).toBeGreaterThanOrEqual(0.95);
    }
    expect(rate(ownRule), report).toBeLessThanOrEqual(0.03);
    expect(rate(falsePositives), report).toBeLessThanOrEqual(0.04);
  });
});
