/**
 * The secret scanner's speed (issue #32): a 50 MB patch (BENCH_SECRET_MB) of
 * code-like added lines over 500 files, with a few real-shaped tokens and
 * the names of the files, scanned as threat detection scans it (gitleaks'
 * rules and the run's own values through the redactor). Prints MB/s, the
 * median of BENCH_SECRET_RUNS runs.
 */
import { patchPieces } from "../../src/shared/patch-pieces.js";
import { Redactor } from "../../src/shared/redact.js";
import { scanForSecrets } from "../../src/publish/threats/secret-scan.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const MB = Number(process.env.BENCH_SECRET_MB ?? 50);
const RUNS = Number(process.env.BENCH_SECRET_RUNS ?? 3);
const FILES = 500;

const LINES = [
  "  const result = await client.request({ method: 'GET', url: `/repos/${owner}/${repo}/pulls`, token: options.token });",
  "  if (config.apiKey === undefined) throw new Error('missing api key: set API_KEY in the environment');",
  "export function parseSecretName(name: string): string { return name.trim().toLowerCase().replace(/[^a-z0-9_]/g, '_'); }",
  "    password_hash = hashlib.sha256(salt + password.encode()).hexdigest()  # 64 hex characters",
  "// The access key id and the secret are read from the credentials file, never from arguments.",
  '    "integrity": "sha512-3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",',
];

function patchText(bytes: number): string {
  const perFile = Math.ceil(bytes / FILES);
  const out: string[] = [];
  for (let f = 0; f < FILES; f++) {
    const lines: string[] = [];
    let size = 0;
    for (let i = 0; size < perFile; i++) {
      const line = `+${LINES[(f + i) % LINES.length]} // ${f}:${i}`;
      lines.push(line);
      size += line.length + 1;
    }
    if (f % 100 === 7) lines.push(`+const slack = "xoxb-730191371696-7301913716961-Ry8Tq2Lm9Xv4Pw7Nb3Cf6Hj${f}";`);
    out.push(`diff --git a/src/m${f}/file${f}.ts b/src/m${f}/file${f}.ts`, "new file mode 100644", "--- /dev/null", `+++ b/src/m${f}/file${f}.ts`, `@@ -0,0 +1,${lines.length} @@`, ...lines);
  }
  return out.join("\n") + "\n";
}

const dir = mkdtempSync(path.join(os.tmpdir(), "bench-secrets-"));
const patchPath = path.join(dir, "patch.diff");
const text = patchText(MB * 1024 * 1024);
writeFileSync(patchPath, text);
const redactor = new Redactor(["ghs_Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", "sk-ant-api03-Zq8vT2kLm9XyR4pW7nB3cF6hJ1sD5gA0eU8iO2wQ", "own-secret-9f8e7d6c5b4a"]);
const times: number[] = [];
let found = 0;
for (let run = 0; run < RUNS; run++) {
  const started = performance.now();
  const targets = await patchPieces(patchPath);
  found = (await scanForSecrets(targets, (t) => redactor.holdsSecretValue(t))).length;
  times.push(performance.now() - started);
}
rmSync(dir, { recursive: true, force: true });
const ms = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
const size = Buffer.byteLength(text) / 1024 / 1024;
console.log(`\n## Secret scan (#32): a ${size.toFixed(0)} MB patch, ${FILES} files`);
console.log(`median of ${RUNS}: ${(ms / 1000).toFixed(2)} s, ${(size / (ms / 1000)).toFixed(1)} MB/s (${found} findings)`);
