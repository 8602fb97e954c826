/**
 * Issue #22, a fast start: what the built action loads before it does anything, held by construction
 * (speed itself is measured by `npm run bench`, never asserted here). Reads the build:
 * `node scripts/build.mjs` first (npm test does).
 *  - the code every step loads at start (dist/main.js, the action chunk and their static imports)
 *    stays small, and holds none of the packages that load on first use;
 *  - no file of dist/ imports `node:http`, `node:tls` or `node:crypto` as an ES module (an ES import
 *    runs every lazy getter of the builtin: `node:http`'s would load Node's internal undici);
 *  - the packages bundled into files of their own load and expose what their stand-ins call;
 *  - numbers and sort orders without ICU say what ICU would.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import path from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { byCodeUnits, groupDigits } from "../../src/shared/plain-format.js";
import { ACTION_ROOT } from "../support/harness.js";

const DIST = path.join(ACTION_ROOT, "dist");
/** Builtins whose lazy getters cost a start (scripts/build/plugins.mjs loads them with require()). */
const COSTLY_GETTERS = /^(node:)?(http|tls|crypto)$/;
const read = (file: string) => readFileSync(path.join(DIST, file), "utf8");

/** dist/ files reached from `roots` by static imports (dynamic `import(…)` is not followed). */
function staticClosure(roots: string[]): string[] {
  const seen = new Set<string>();
  const todo = [...roots];
  const STATIC = /import\s*(?:[\w${},\s*]+?from\s*)?"(\.\.?\/[^"]+)"/g;
  while (todo.length) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of read(file).matchAll(STATIC)) if (read(file)[m.index - 1] !== "(") todo.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)));
  }
  return [...seen];
}

const chunks = () => readdirSync(path.join(DIST, "chunks"));
const actionChunk = () => `chunks/${chunks().find((f) => f.startsWith("action-"))!}`;

describe("what a step loads at start", () => {
  it("main.js and the action chunk with their static imports: under 350 KB, none of the packages loaded on first use", () => {
    const files = staticClosure(["main.js", actionChunk()]);
    const bytes = files.reduce((n, f) => n + Buffer.byteLength(read(f)), 0);
    // 2.1 MB before issue #22 (undici, classic zod, the Markdown stack, diff2html …); 0.3 MB after.
    expect(bytes, `start-up closure is ${bytes} bytes: ${files.join(", ")}`).toBeLessThan(350 * 1024);
    const markers = {
      undici: "UND_ERR_",
      diff2html: "matchWordsThreshold",
      parse5: "parseFragment",
      "classic zod": '"ZodString"',
      micromark: "micromark",
      "gitleaks rules": "1password-service-account-token",
      "@actions/artifact": "ArtifactClient",
    };
    for (const [name, marker] of Object.entries(markers)) expect(files.filter((f) => read(f).includes(marker)), name).toEqual([]);
  });

  it("post.js with its static imports: @actions/core and the names only; what an unfinished main needs loads on demand", () => {
    // Post runs after every job's main step; only a main that did not finish needs the process table,
    // the inputs and the GitHub client (274 KB at start before, 59 KB after).
    const files = staticClosure(["post.js"]);
    const bytes = files.reduce((n, f) => n + Buffer.byteLength(read(f)), 0);
    expect(bytes, `post's start-up closure is ${bytes} bytes: ${files.join(", ")}`).toBeLessThan(100 * 1024);
    const markers = { zod: "safeParse", "the runner's context (src/config/host.ts)": "GITHUB_API_URL" };
    for (const [name, marker] of Object.entries(markers)) expect(files.filter((f) => read(f).includes(marker)), name).toEqual([]);
  });

  it("no file of dist/ imports http, tls or crypto as an ES module (whose lazy getters an ES import runs)", async () => {
    const files = [...readdirSync(DIST).filter((f) => f.endsWith(".js")), ...chunks().filter((f) => f.endsWith(".js")).map((f) => `chunks/${f}`)]
      // Its own bundle, run inside the sandbox, where start-up is the CLI's.
      .filter((f) => f !== "safe-outputs-mcp.js");
    // esbuild parses each file (a script inside a string is not an import) and lists its imports.
    const { metafile } = await build({
      entryPoints: files.map((f) => path.join(DIST, f)),
      bundle: true,
      external: ["*"],
      platform: "node",
      format: "esm",
      write: false,
      metafile: true,
      outdir: "/nonexistent",
      logLevel: "silent",
    });
    const offenders = Object.entries(metafile.inputs).flatMap(([file, input]) =>
      input.imports.filter((i) => i.kind === "import-statement" && COSTLY_GETTERS.test(i.path)).map((i) => `${file}: ${i.path}`),
    );
    expect(offenders).toEqual([]);
    // The check does see builtins: the banner imports one in every file.
    const main = Object.entries(metafile.inputs).find(([file]) => file.endsWith("dist/main.js"))?.[1];
    expect(main?.imports.filter((i) => i.kind === "import-statement" && isBuiltin(i.path)).map((i) => i.path)).toContain("node:module");
  });

  it("undici, parse5, diff2html and the unified HTML libraries sit in files of their own and give their stand-ins what they call", () => {
    const load = createRequire(path.join(DIST, "chunks", "x.js"));
    const undici = load("./undici.cjs") as { ProxyAgent: unknown; fetch: unknown };
    expect(typeof undici.ProxyAgent).toBe("function");
    expect(typeof undici.fetch).toBe("function");
    const parse5 = load("./parse5.cjs") as { parseFragment: (html: string) => { childNodes: { nodeName: string }[] } };
    expect(parse5.parseFragment("<b>x</b>").childNodes[0]!.nodeName).toBe("b");
    const diff2html = load("./diff2html.cjs") as { html: (patch: string) => string };
    expect(diff2html.html("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n")).toContain("d2h-file");
    const { toHast } = load("./mdast-util-to-hast.cjs") as { toHast: (tree: unknown) => unknown };
    const { sanitize } = load("./hast-util-sanitize.cjs") as { sanitize: (tree: unknown) => unknown };
    const { toHtml } = load("./hast-util-to-html.cjs") as { toHtml: (tree: unknown) => string };
    const tree = { type: "root", children: [{ type: "paragraph", children: [{ type: "strong", children: [{ type: "text", value: "x" }] }] }] };
    expect(toHtml(sanitize(toHast(tree)))).toBe("<p><strong>x</strong></p>");
    // Each is loaded by a stand-in in the bundle, never bundled again.
    for (const marker of ["UND_ERR_", "matchWordsThreshold", "xLinkActuate"]) expect(chunks().filter((f) => f.endsWith(".js") && read(`chunks/${f}`).includes(marker)), marker).toEqual([]);
  });
});

describe("numbers and orders without ICU", () => {
  it("groupDigits writes what toLocaleString('en-US') writes for whole numbers, and rounds like it", () => {
    for (const n of [0, 7, 999, 1000, 12_345, 1_234_567, -1234, 2.5, 999.6, 123_456_789_012, Number.MAX_SAFE_INTEGER])
      expect(groupDigits(n)).toBe(Math.round(n).toLocaleString("en-US"));
    expect(groupDigits(Number.NaN)).toBe("NaN");
  });

  it("byCodeUnits sorts names and paths the same on every machine", () => {
    expect(["b", "a/c", "B", "a", "a/b", "_x"].sort(byCodeUnits)).toEqual(["B", "_x", "a", "a/b", "a/c", "b"]);
    expect(byCodeUnits("x", "x")).toBe(0);
  });
});
