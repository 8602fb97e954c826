/**
 * The run's own secret in the shapes an agent can trivially produce, and the
 * provider tokens gitleaks' rules find that the old scanner (secretlint's
 * recommended preset) missed: each row is one attack of SECURITY.md's table.
 * Checked through the same path threat detection takes: scanForSecrets with
 * the run's redactor as `holdsRunSecret`, and the patch's name targets.
 */
import { describe, expect, it } from "vitest";
import { Redactor } from "../../src/shared/redact.js";
import { patchPaths, splitPatch } from "../../src/shared/patch-pieces.js";
import { scanForSecrets } from "../../src/publish/threats/secret-scan.js";

const SECRET = "Zq8vT2kLm9XyR4pW7nB3cF6hJ1sD5gA0";
const redactor = new Redactor([SECRET]);
const holds = (text: string) => redactor.holdsSecretValue(text);

const base32 = (bytes: Buffer) => {
  const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const b of bytes) bits += b.toString(2).padStart(8, "0");
  return (bits.match(/.{1,5}/g) ?? []).map((c) => A[parseInt(c.padEnd(5, "0"), 2)]).join("");
};

async function kinds(text: string, file?: string): Promise<string[]> {
  const findings = await scanForSecrets([{ where: "patch", ...(file ? { file } : {}), text }], holds);
  return findings.map((f) => (f.kind === "run-secret" ? "run-secret" : f.detail));
}

describe("the run's own secret, disguised", () => {
  const shapes: Record<string, string> = {
    "hex, lower case": `const k = "${Buffer.from(SECRET).toString("hex")}";`,
    "hex, upper case": `K=${Buffer.from(SECRET).toString("hex").toUpperCase()}`,
    "every byte URL-encoded": `?k=${Buffer.from(SECRET).toString("hex").replace(/../g, "%$&")}`,
    reversed: `const k = "${[...SECRET].reverse().join("")}";`,
    "split across two string literals": `const k = "${SECRET.slice(0, 13)}" + "${SECRET.slice(13)}";`,
    "split across lines": `const k = '${SECRET.slice(0, 9)}' +\n  '${SECRET.slice(9)}';`,
    "a 16-character piece": `partial: ${SECRET.slice(7, 23)}`,
  };
  for (const [offset, prefix] of ["", "a", "ab"].entries()) {
    const bytes = Buffer.from(`${prefix}${SECRET}!`);
    shapes[`base64 at offset ${offset}`] = `data = "${bytes.toString("base64")}"`;
    shapes[`base64url at offset ${offset}`] = `data = "${bytes.toString("base64url")}"`;
  }
  for (const prefix of ["", "a", "ab", "abc", "abcd"]) {
    shapes[`base32 at offset ${prefix.length}`] = `otp = "${base32(Buffer.from(`${prefix}${SECRET}`))}"`;
    shapes[`base32, lower case, at offset ${prefix.length}`] = `otp = "${base32(Buffer.from(`${prefix}${SECRET}`)).toLowerCase()}"`;
  }
  for (const [shape, text] of Object.entries(shapes)) {
    it(`${shape}: a run-secret finding`, async () => {
      expect(text).not.toContain(SECRET);
      expect(await kinds(text, "src/leak.ts")).toContain("run-secret");
    });
  }

  it("text that holds no piece of it, or only a short one, is no finding", async () => {
    expect(await kinds(`const a = "${SECRET.slice(0, 12)}"; // a twelve-character piece`, "src/ok.ts")).toEqual([]);
    expect(await kinds("hex 5a71387654326b4c, base64 WnE4dlQya0xtOVh5Ug, plain words", "src/ok.ts")).toEqual([]);
  });
});

describe("provider tokens the old preset missed", () => {
  const b64 = (n: number, seed: string) => Buffer.from(seed.repeat(Math.ceil(n / seed.length))).toString("base64").replace(/=/g, "").slice(0, n);
  const rows: Array<[string, string, string]> = [
    ["an AWS access key id alone (AKIA)", `aws_key = "AKIAQX4ZR2VJ7NDKW3PL"`, "aws-access-token"],
    ["an AWS temporary key id alone (ASIA)", `ASIAY7K3QF5ZT2XRW4NM`, "aws-access-token"],
    ["an Amazon Bedrock API key (ABSK)", `BEDROCK=ABSK${b64(130, "Bedrock key 7f3a9c!")}`, "aws-amazon-bedrock-api-key-long-lived"],
    ["an Azure AD client secret (…8Q~…)", `AZURE_CLIENT_SECRET=aB38Q~Tk2mV9pL4xR7nW1qZ8cF5hJ0sD3gY6uE`, "azure-ad-client-secret"],
    ["a GitLab runner token (glrt-)", `token: glrt-Ab3dE6gH9jK2mN5pQ8sT`, "gitlab-runner-authentication-token"],
    ["a GitLab pipeline trigger token (glptt-)", `glptt-0a1b2c3d4e5f60718293a4b5c6d7e8f901234567`, "gitlab-ptt"],
    ["a GitLab deploy token (gldt-)", `gldt-Xy7Zq2Wv5Ut8Sr1Qp4On`, "gitlab-deploy-token"],
    ["a GitLab CI/CD job token (glcbt-)", `CI_JOB_TOKEN=glcbt-64_Ab3dE6gH9jK2mN5pQ8sT`, "gitlab-cicd-job-token"],
    ["a PyPI upload token", `password = pypi-AgEIcHlwaS5vcmc${b64(70, "pypi macaroon 42 ")}`, "pypi-upload-token"],
    ["a DigitalOcean token (dop_v1_)", `DO_TOKEN=dop_v1_${"3f9a1c7e5b2d8f40".repeat(4)}`, "digitalocean-pat"],
    ["a Heroku API key (HRKU-)", `HEROKU_API_KEY=HRKU-AA${b64(58, "heroku 9x key ")}`, "heroku-api-key-v2"],
    ["a Sentry user token (sntryu_)", `SENTRY_AUTH_TOKEN=sntryu_${"7c4e1a9f3b6d2e80".repeat(4)}`, "sentry-user-token"],
    ["a Twilio API key (SK…)", `twilio_key = "SK${"9f3b6d2e807c4e1a".repeat(2)}"`, "twilio-api-key"],
    ["a Cloudflare API key", `cloudflare_api_key = "Xk9mQ2vR7tL4pW8nB3cF6hJ1sD5gA0eU8iO2wQzY"`, "cloudflare-api-key"],
    ["a 1Password service account token (ops_)", `OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ${b64(260, "1password sa token 5 ")}`, "1password-service-account-token"],
    ["an Age secret key", `AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MU`, "age-secret-key"],
    ["curl -u user:password", `curl -u deploy:Hx9kT2mQ7vP4wR8n https://api.example.com/releases`, "curl-auth-user"],
  ];
  for (const [name, text, rule] of rows) {
    it(`${name}: found by ${rule}`, async () => {
      expect(await kinds(text, "deploy/env.sh")).toContain(rule);
    });
  }

  it("placeholders and published examples are no finding", async () => {
    const placeholders = [
      `SLACK_BOT_TOKEN=xoxb-xxxxxxxxxxxx-xxxxxxxxxxxxx-xxxxxxxxxxxxxxxxxxxxxxxx`,
      `GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`,
      `aws_access_key_id = AKIAIOSFODNN7EXAMPLE`,
      // Firebase's documented sample key (gitleaks lists Google's published examples).
      `apiKey: "AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs"`,
    ];
    for (const text of placeholders) expect(await kinds(text, "docs/setup.md"), text).toEqual([]);
  });
});

describe("names, link targets and empty files", () => {
  const SLACK = "xoxb-730191371696-7301913716961-Ry8Tq2Lm9Xv4Pw7Nb3Cf6Hj1";
  const patch = [
    `diff --git a/${SLACK} b/${SLACK}`,
    "new file mode 100644",
    "index 0000000..e69de29",
    "diff --git a/link b/link",
    "new file mode 120000",
    "index 0000000..1234567",
    "--- /dev/null",
    "+++ b/link",
    "@@ -0,0 +1 @@",
    `+../${SLACK}`,
    "\\ No newline at end of file",
    "diff --git a/gone.txt b/gone.txt",
    "deleted file mode 100644",
    "index 1234567..0000000",
    "--- a/gone.txt",
    "+++ /dev/null",
    "@@ -1 +0,0 @@",
    "-bye",
    "",
  ].join("\n");

  it("a token as the name of an empty file is a target; so is a symlink's target; a deleted file's name is not", async () => {
    expect(patchPaths(patch)).toEqual([SLACK, "link"]);
    const targets = [...splitPatch(patch), ...patchPaths(patch).map((file) => ({ where: "file name", file, text: file }))];
    const findings = await scanForSecrets(targets, () => false);
    expect(findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "secret", where: "file name", detail: "slack-bot-token" }),
        expect.objectContaining({ kind: "secret", where: "patch", file: "link", detail: "slack-bot-token" }),
      ]),
    );
    expect(findings.some((f) => f.file === "gone.txt")).toBe(false);
  });
});
