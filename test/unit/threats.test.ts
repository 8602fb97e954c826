import { describe, expect, it } from "vitest";
import { splitPatch } from "../../src/shared/patch-pieces.js";
import { protectedChanges, protectedPaths } from "../../src/publish/threats/protected-files.js";
import { scanForSecrets } from "../../src/publish/threats/secret-scan.js";

const PATCH = [
  "diff --git a/src/a.js b/src/a.js",
  "--- a/src/a.js",
  "+++ b/src/a.js",
  "@@ -1,2 +1,2 @@",
  '-const old = "xoxb-000000000000-0000000000000-removedremovedremovedremo";',
  "+const a = 1;\r",
  "++++ b/not-a-header",
  'diff --git "a/we ird\\tname" "b/we ird\\tname"',
  "new file mode 100644",
  "--- /dev/null",
  '+++ "b/we ird\\tname"',
  "@@ -0,0 +1 @@",
  "+hello",
  "diff --git a/gone.txt b/gone.txt",
  "deleted file mode 100644",
  "--- a/gone.txt",
  "+++ /dev/null",
  "@@ -1 +0,0 @@",
  "-bye",
  "",
].join("\n");

describe("threat detection, the pieces", () => {
  it("splits a patch into each file's added lines: removed lines, deletions and hunk text that looks like a header are not files", () => {
    expect(splitPatch(PATCH)).toEqual([
      { where: "patch", file: "src/a.js", text: "const a = 1;\n+++ b/not-a-header" },
      { where: "patch", file: "we ird\tname", text: "hello" },
    ]);
  });

  it("added lines count even when the patch (a hostile artifact's) names no `+++ b/` file", () => {
    expect(splitPatch("diff --git a/x.txt b/x.txt\n@@ -0,0 +1 @@\n+hidden\n")).toEqual([{ where: "patch", file: "x.txt", text: "hidden" }]);
    expect(splitPatch("diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ c/x.txt\n@@ -0,0 +1 @@\n+hidden\n")).toEqual([{ where: "patch", file: "x.txt", text: "hidden" }]);
  });

  it("scans the middle of a large text too", async () => {
    const token = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
    const filler = "x\n".repeat(1_500_000);
    const findings = await scanForSecrets([{ where: "patch", file: "big.txt", text: `${filler}${token}\n${filler}` }], () => false);
    expect(findings).toEqual([{ kind: "secret", where: "patch", file: "big.txt", detail: "slack-bot-token" }]);
  });

  it("finds a provider token by rule, never returning the value; a removed token is not a finding", async () => {
    const token = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
    const findings = await scanForSecrets(
      [...splitPatch(PATCH), { where: "final message", text: `use ${token}` }],
      () => false,
    );
    expect(findings).toEqual([{ kind: "secret", where: "final message", detail: "slack-bot-token" }]);
    expect(JSON.stringify(findings)).not.toContain("AbCdEf");
    const own = await scanForSecrets([{ where: "final message", text: "my value" }], (t) => t.includes("my value"));
    expect(own).toEqual([{ kind: "run-secret", where: "final message", detail: expect.any(String) }]);
  });

  it("protects manifests, CI, containers, agent instructions and CODEOWNERS at any depth; `glob` adds and `!glob` exempts", () => {
    const dotted = [".tools/Makefile", "a/.ci/Dockerfile", ".config/.github/x", ".github/.x", ".mcp.json", ".yarn/releases/yarn.cjs"];
    expect(protectedChanges([...dotted, ".tools/readme.md", "src/github/x.ts"], protectedPaths([]))).toEqual(dotted);
    const changed = ["src/index.ts", "package.json", "web/package-lock.json", ".github/workflows/ci.yml", "docs/CODEOWNERS", "AGENTS.md", "svc/Dockerfile", "README.md", "docs/guide.md"];
    expect(protectedChanges(changed, protectedPaths([]))).toEqual(["package.json", "web/package-lock.json", ".github/workflows/ci.yml", "docs/CODEOWNERS", "AGENTS.md", "svc/Dockerfile"]);
    expect(protectedChanges(changed, protectedPaths(["!**/package.json", "docs/*.md"]))).toEqual([
      "web/package-lock.json",
      ".github/workflows/ci.yml",
      "docs/CODEOWNERS",
      "AGENTS.md",
      "svc/Dockerfile",
      "docs/guide.md",
    ]);
  });
});
