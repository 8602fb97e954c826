/**
 * The secret scan on text built to be slow, and the allowlists held to what
 * gitleaks means by them (SECURITY.md's M1 and L1 rows). JavaScript's regex
 * engine backtracks: curl-auth-user is quadratic on one long line of
 * `curl -u `, so each regex runs on bounded windows, and the whole scan has a
 * time budget whose overrun is a `scan-incomplete` finding that holds the run.
 */
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { scanForSecrets } from "../../src/publish/threats/secret-scan.js";
import { gitleaksMatches, type ScanMeter } from "../../src/publish/threats/gitleaks.js";
import data from "../../src/publish/threats/gitleaks-rules.json" with { type: "json" };

const never = () => false;
const meter = (): ScanMeter => ({ deadline: 0, overran: false, execs: 0, longestInput: 0 });
/** The largest window a rule's regex runs on (32 KB) and one character of context each side. */
const LONGEST_WINDOW = 32 * 1024 + 2;

async function scan(text: string, budgetMs?: number, m?: ScanMeter) {
  return scanForSecrets([{ where: "patch", file: "hostile.txt", text }], never, budgetMs, m);
}

describe("hostile text: every regex sees a bounded window", () => {
  it("one 256 KB line of `curl -u ` (quadratic for curl-auth-user): finishes, no regex sees more than a window", { timeout: 120_000 }, async () => {
    const text = "curl -u ".repeat((256 * 1024) / 8);
    const m = meter();
    const findings = await scan(text, undefined, m);
    expect(m.overran).toBe(false);
    expect(findings.map((f) => f.kind)).not.toContain("scan-incomplete");
    expect(m.longestInput).toBeGreaterThan(0);
    expect(m.longestInput).toBeLessThanOrEqual(LONGEST_WINDOW);
    // Executions grow with the text (windows × rules, plus one per match), not with its square.
    const windows = Math.ceil(text.length / (4 * 1024 - 1024));
    expect(m.execs).toBeLessThan(windows * data.rules.length * 4);
  });

  it("every rule's keyword on a 1 MB run of `-` (slow for every keyword rule): stops at the budget with scan-incomplete", { timeout: 120_000 }, async () => {
    const keywords = [...new Set(data.rules.flatMap((r) => r.keywords))].join("-");
    const text = (keywords + "-".repeat(4096)).repeat(Math.ceil((1024 * 1024) / (keywords.length + 4096))).slice(0, 1024 * 1024);
    const m = meter();
    const findings = await scan(text, 500, m);
    expect(m.overran).toBe(true);
    expect(findings).toContainEqual({ kind: "scan-incomplete", where: "patch", file: "hostile.txt", detail: expect.stringContaining("ran out of its") });
    expect(m.longestInput).toBeLessThanOrEqual(LONGEST_WINDOW);
  });

  it("a budget already spent is a scan-incomplete finding, never a clean scan (fail closed)", async () => {
    const findings = await scan("const harmless = 1;\n".repeat(100), 0);
    expect(findings.map((f) => f.kind)).toEqual(["scan-incomplete"]);
  });
});

describe("windows do not cut secrets", () => {
  const PAT = "ghp_Zq8vT2kLm9XyR4pW7nB3cF6hJ1sD5gA0eU8i";
  const filler = (n: number) => "x = compute(a, b); // ordinary code line\n".repeat(Math.ceil(n / 41)).slice(0, n);
  for (const at of [4096 - 30, 4096 - 1, 3 * 1024 - 20, 6 * 1024 - 10, 16 * 1024 - 20, 24 * 1024 - 20, 100_000]) {
    it(`a GitHub token at ${at} of a 200 KB file, on its own line and inside one long line`, () => {
      const lines = filler(at) + `token = ${PAT}\n` + filler(200_000);
      expect(gitleaksMatches(lines).map((f) => f.rule)).toContain("github-pat");
      const oneLine = "y".repeat(at) + ` ${PAT} ` + "z".repeat(200_000);
      expect(gitleaksMatches(oneLine).map((f) => f.rule)).toContain("github-pat");
    });
  }

  it("a 4096-bit private key across a window boundary", () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 4096, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
    const text = filler(24 * 1024 - 1000) + privateKey + filler(50_000);
    expect(gitleaksMatches(text).map((f) => f.rule)).toContain("private-key");
  });

  it("one finding per secret, not one per window that holds it", () => {
    const text = filler(4000) + `token = ${PAT}\n` + filler(4000);
    expect(gitleaksMatches(text).filter((f) => f.rule === "github-pat")).toHaveLength(1);
  });
});

describe("allowlists no broader than gitleaks means them", () => {
  const FIREBASE_EXAMPLE = "AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs";

  it("a real private key with Google's published Firebase example inside it is still found", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
    const lines = privateKey.split("\n");
    lines.splice(5, 0, FIREBASE_EXAMPLE);
    const findings = await scan(lines.join("\n"));
    expect(findings.map((f) => f.detail)).toContain("private-key");
  });

  it("the published example alone is still no finding; the example with more after it is one", async () => {
    expect(await scan(`apiKey: "${FIREBASE_EXAMPLE}"`)).toEqual([]);
    expect((await scan(`api_key = "${FIREBASE_EXAMPLE}Qm7Rt2Wx"`)).map((f) => f.detail)).toContain("generic-api-key");
  });

  it('`api_key="<real secret>false"` is found; `api_key="false"` is not', async () => {
    expect((await scan(`api_key="Hx9kT2mQ7vP4wR8nZq8vLm3false"`)).map((f) => f.detail)).toContain("generic-api-key");
    expect((await scan(`api_key="nullHx9kT2mQ7vP4wR8nZq8vLm3"`)).map((f) => f.detail)).toContain("generic-api-key");
    expect(await scan(`api_key="false"`)).toEqual([]);
    expect(await scan(`api_key = null`)).toEqual([]);
  });
});
