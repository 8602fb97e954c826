/**
 * transcript.html shows the change and reads like a conversation (issue 16):
 * assistant text and the final message are Markdown rendered safely (no raw
 * HTML, no images, no script links), and the patch is a diff (diff2html) with
 * a file list that jumps to each file. Checked in headless Chromium: it
 * renders, makes no request but for the file itself, and runs nothing injected.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunResult } from "../../src/result.js";
import { Redactor } from "../../src/shared/redact.js";
import { readTranscriptPatch, writeTranscriptFiles } from "../../src/trace/transcript-files.js";
import { markdownToSafeHtml } from "../../src/trace/markdown-html.js";

const OUT_DIR = resolve(import.meta.dirname, "../../test-output/transcript-view");
const CHROMIUM = inject("chromium");
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const HOSTILE = `<script>window.__pwned = 1</script><img src="https://evil.example/beacon.png" onerror="window.__pwned = 2">`;
const ASSISTANT = [
  "## Plan",
  "",
  "I will fix **`add`** in `src/math.ts` and add a test:",
  "",
  "1. change the operator",
  "2. run `npm test`",
  "",
  "| file | change |",
  "|---|---|",
  "| src/math.ts | `-` → `+` |",
  "",
  `Raw HTML stays text: ${HOSTILE}`,
  "",
  "![tracking pixel](https://evil.example/pixel.gif) [bad link](javascript:window.__pwned=3) [docs](https://example.com/docs)",
].join("\n");
const FINAL = "Fixed `add`.\n\n- tests: **12 passed**\n- see [the diff](#changes)";

const PATCH = [
  "diff --git a/src/math.ts b/src/math.ts",
  "index 1111111..2222222 100644",
  "--- a/src/math.ts",
  "+++ b/src/math.ts",
  "@@ -1,3 +1,3 @@",
  " export function add(a: number, b: number): number {",
  "-  return a - b;",
  "+  return a + b;",
  " }",
  `diff --git a/test/"><img src=x onerror=alert(1)>.ts b/test/"><img src=x onerror=alert(1)>.ts`,
  "new file mode 100644",
  "index 0000000..3333333",
  "--- /dev/null",
  `+++ b/test/"><img src=x onerror=alert(1)>.ts`,
  "@@ -0,0 +1,2 @@",
  `+// ${HOSTILE}`,
  "+expect(add(1, 2)).toBe(3);",
  "",
].join("\n");
const FILES = ["src/math.ts", `test/"><img src=x onerror=alert(1)>.ts`];

function resultFor(dir: string): RunResult {
  return {
    conclusion: "success",
    agentName: "claude",
    agentBackend: "claude",
    model: "claude-sonnet-4-5",
    sandboxBackend: "bwrap",
    command: ["claude"],
    returncode: 0,
    output: FINAL,
    stdoutPath: join(dir, "raw/stdout.jsonl"),
    stderrPath: join(dir, "raw/stderr.log"),
    tracePath: join(dir, "trace.jsonl"),
    eventCount: 4,
    toolCalls: 1,
    numTurns: 2,
    permissionDenials: [],
    networkBlocked: 0,
    usage: { inputTokens: 300, outputTokens: 60, cachedTokens: 120, costUsd: 0.0123 },
    startedAt: "2026-12-01T10:00:00.000Z",
    durationMs: 12_345,
    diff: { baseCommit: "a".repeat(40), baseTree: "b".repeat(40), patchPath: join(dir, "patch.diff"), changedFiles: FILES, agentCommits: [] },
    artifacts: [],
    metadata: {},
  };
}

function traceLines(): string {
  const ev = [
    { ts: "2026-12-01T10:00:01.000Z", type: "session", sessionId: "sess-1", model: "claude-sonnet-4-5" },
    { ts: "2026-12-01T10:00:02.000Z", type: "text", text: ASSISTANT },
    { ts: "2026-12-01T10:00:03.000Z", type: "tool_call", id: "t1", name: "Edit", input: { file_path: "src/math.ts" } },
    { ts: "2026-12-01T10:00:04.000Z", type: "tool_result", id: "t1", output: "ok", isError: false },
    { ts: "2026-12-01T10:00:05.000Z", type: "result", text: FINAL, isError: false },
  ];
  return ev.map((e) => JSON.stringify(e)).join("\n") + "\n";
}

let dir: string;
let fileUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "transcript-view-"));
  writeFileSync(join(dir, "trace.jsonl"), traceLines());
  writeFileSync(join(dir, "patch.diff"), PATCH);
  await writeTranscriptFiles(dir, resultFor(dir), { prompt: "Fix add()", redactor: new Redactor([]) });
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(join(OUT_DIR, "transcript.html"), readFileSync(join(dir, "transcript.html")));
  writeFileSync(join(OUT_DIR, "transcript.md"), readFileSync(join(dir, "transcript.md")));
  fileUrl = pathToFileURL(join(OUT_DIR, "transcript.html")).href;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("Markdown, safely", () => {
  it("renders GitHub Markdown, shows raw HTML as text, turns images into links and drops script links", () => {
    const html = markdownToSafeHtml(ASSISTANT);
    expect(html).toContain("<h2>Plan</h2>");
    expect(html).toContain("<strong><code>add</code></strong>");
    expect(html).toContain("<table>");
    expect(html).not.toMatch(/<script|<img|href="javascript:/i);
    expect(html).toContain("&#x3C;script>window.__pwned = 1&#x3C;/script>");
    expect(html).toContain('<a href="https://evil.example/pixel.gif" rel="noopener noreferrer nofollow">image: tracking pixel</a>');
    expect(html).toContain("<a>bad link</a>");
  });

  it("the patch is read with a cap, cut at a line end", async () => {
    const p = await readTranscriptPatch(join(dir, "patch.diff"), FILES, 100);
    expect(p?.truncated).toBe(true);
    expect(p?.text.endsWith("\n")).toBe(true);
    expect(Buffer.byteLength(p!.text)).toBeLessThanOrEqual(100);
    expect(p?.totalBytes).toBe(Buffer.byteLength(PATCH));
    expect(await readTranscriptPatch(join(dir, "missing.diff"), [])).toBeUndefined();
  });

  it("transcript.md lists the changed files and holds the diff in a fence", () => {
    const md = readFileSync(join(dir, "transcript.md"), "utf8");
    expect(md).toContain("## Changes (2 files)");
    expect(md).toContain("- `src/math.ts`");
    expect(md).toMatch(/```diff\ndiff --git a\/src\/math.ts/);
  });
});

describe("transcript.html with Markdown and the patch, in headless Chromium", () => {
  it("renders the Markdown and the diff, the file list jumps to each file, no request, nothing injected runs", async () => {
    const pw = await import("playwright-core");
    const profile = mkdtempSync(join(tmpdir(), "chromium-profile-"));
    const context = await pw.chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1100, height: 700 },
      colorScheme: "light",
    });
    try {
      const requests: string[] = [];
      const problems: string[] = [];
      context.on("request", (r) => requests.push(r.url()));
      await context.route("**/*", (route) => (route.request().url() === fileUrl ? route.continue() : route.abort()));
      const page = context.pages()[0] ?? (await context.newPage());
      page.on("console", (m) => {
        if (m.type() === "error" || m.type() === "warning") problems.push(`console.${m.type()}: ${m.text()}`);
      });
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      await page.goto(fileUrl, { waitUntil: "load" });
      await page.waitForTimeout(200);

      // Markdown became structure.
      const assistant = page.locator(".assistant .md");
      expect(await assistant.locator("h2").textContent()).toBe("Plan");
      expect(await assistant.locator("ol > li").count()).toBe(2);
      expect(await assistant.locator("table td").first().textContent()).toBe("src/math.ts");
      expect(await page.locator(".result .md li strong").textContent()).toBe("12 passed");
      // …and hostile markup stayed text: no image, no script of its own, nothing ran.
      expect(await assistant.textContent()).toContain("<script>window.__pwned = 1</script>");
      expect(await page.locator("img, iframe, object, embed, link, video, audio").count()).toBe(0);
      expect(await page.locator("script").count()).toBe(1);
      expect(await page.evaluate("typeof globalThis.__pwned")).toBe("undefined");
      expect(await assistant.locator('a[href^="javascript"]').count()).toBe(0);
      expect(await assistant.locator('a[href="https://evil.example/pixel.gif"]').textContent()).toBe("image: tracking pixel");

      // The patch as a diff: the header links to it, the file list to each file.
      expect(await page.locator('[data-field="changes"] a').getAttribute("href")).toBe("#changes");
      const changes = page.locator("section.changes#changes");
      expect(await changes.getAttribute("data-files")).toBe("2");
      const links = changes.locator(".d2h-file-list a.d2h-file-name");
      expect(await links.allTextContents()).toEqual(FILES);
      const files = changes.locator(".d2h-file-wrapper");
      expect(await files.count()).toBe(2);
      expect(await changes.locator(".d2h-ins .d2h-code-line-ctn").first().textContent()).toContain("return a + b;");
      expect(await changes.locator(".d2h-del .d2h-code-line-ctn").first().textContent()).toContain("return a - b;");
      expect(await changes.locator(".d2h-ins", { hasText: "<script>window.__pwned = 1</script>" }).count()).toBe(1);
      for (let i = 0; i < 2; i++) {
        const href = await links.nth(i).getAttribute("href");
        expect(href).toMatch(/^#d2h-\d+$/);
        await links.nth(i).click();
        const target = page.locator(href!);
        expect(await target.count()).toBe(1);
        expect(await target.locator(".d2h-file-name").first().textContent()).toBe(FILES[i]);
        const box = await target.boundingBox();
        expect(box && box.y >= -1 && box.y < 700).toBe(true);
      }
      await page.screenshot({ path: join(OUT_DIR, "transcript-view.png"), fullPage: true });

      expect(problems).toEqual([]);
      expect(requests).toEqual([fileUrl]);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});
