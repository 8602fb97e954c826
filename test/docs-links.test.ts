/**
 * The front page stays short and the docs hold together: README.md is at most
 * 2,500 words (counted as `wc -w` counts them), every relative link in
 * README.md, docs/*.md and SECURITY.md names a file of this checkout, and every #anchor
 * names a heading of its page by the slug GitHub gives it. External links are
 * not fetched: this runs without a network.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Nodes } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";
import { describe, expect, it } from "vitest";
import { docFiles } from "./support/docs.js";
import { REPO_ROOT } from "./support/harness.js";

const MAX_README_WORDS = 2500;

/** `wc -w`: runs of characters between whitespace. */
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/**
 * GitHub's heading slug (as github-slugger makes it): lower case; drop every
 * character that is not a letter, a mark, a decimal or letter number,
 * connector punctuation, `-` or a space (Alphabetic symbols stay); each space
 * becomes `-`. Nothing is trimmed or collapsed.
 */
function slug(heading: string): string {
  return [...heading.toLowerCase()]
    .filter((c) => c === " " || c === "-" || /[\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc}\p{Alphabetic}]/u.test(c))
    .join("")
    .replace(/ /g, "-");
}

/** A page's anchors, in order: a repeated slug gets `-1`, `-2`, … as GitHub numbers them. */
function uniqueSlugs(headings: string[]): string[] {
  const seen = new Map<string, number>();
  return headings.map((h) => {
    const base = slug(h);
    let result = base;
    while (seen.has(result)) {
      const n = seen.get(base)! + 1;
      seen.set(base, n);
      result = `${base}-${n}`;
    }
    seen.set(result, 0);
    return result;
  });
}

/** The text a heading renders: its text and inline code, without the Markdown around them. */
function plainText(node: Nodes): string {
  if ("value" in node && node.type !== "html") return node.value;
  if ("children" in node) return (node.children as Nodes[]).map(plainText).join("");
  return "";
}

interface Page {
  headings: string[];
  /** Link targets as written: links, images, reference definitions and HTML `href`/`src`. */
  links: string[];
  /** Anchors HTML in the page declares itself (`id="…"`, `name="…"`). */
  htmlAnchors: string[];
}

function readPage(markdown: string): Page {
  const tree = fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  const page: Page = { headings: [], links: [], htmlAnchors: [] };
  const walk = (node: Nodes): void => {
    if (node.type === "heading") page.headings.push(plainText(node));
    if (node.type === "link" || node.type === "image" || node.type === "definition") page.links.push(node.url);
    if (node.type === "html") {
      for (const m of node.value.matchAll(/\b(?:href|src)="([^"]*)"/g)) page.links.push(m[1]!);
      for (const m of node.value.matchAll(/\b(?:id|name)="([^"]*)"/g)) page.htmlAnchors.push(m[1]!);
    }
    if ("children" in node) for (const child of node.children as Nodes[]) walk(child);
  };
  walk(tree);
  return page;
}

const anchorsCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorsCache.get(file);
  if (!anchors) {
    const page = readPage(readFileSync(file, "utf8"));
    anchors = new Set([...uniqueSlugs(page.headings), ...page.htmlAnchors]);
    anchorsCache.set(file, anchors);
  }
  return anchors;
}

const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/** What is wrong with one link of `from`, or undefined when it resolves. */
function brokenLink(from: string, url: string): string | undefined {
  if (EXTERNAL.test(url)) return undefined;
  const hash = url.indexOf("#");
  const target = decodeURIComponent(hash < 0 ? url : url.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(url.slice(hash + 1));
  const file = target === "" ? from : target.startsWith("/") ? path.join(REPO_ROOT, target) : path.resolve(path.dirname(from), target);
  if (path.relative(REPO_ROOT, file).startsWith("..")) return `${url}: leaves the repository`;
  if (!existsSync(file)) return `${url}: no file ${path.relative(REPO_ROOT, file)}`;
  if (anchor === undefined) return undefined;
  if (!file.endsWith(".md")) return /^L\d+(-L\d+)?$/.test(anchor) ? undefined : `${url}: an anchor in a file that has no headings`;
  return anchorsOf(file).has(anchor) ? undefined : `${url}: ${path.relative(REPO_ROOT, file)} has no heading '#${anchor}'`;
}

const files = docFiles();
/** SECURITY.md stays at the top and links into docs/: its links are checked too. */
const checked = [...files, path.join(REPO_ROOT, "SECURITY.md")];

describe("README length", () => {
  it(`README.md is at most ${MAX_README_WORDS} words`, () => {
    const n = words(readFileSync(path.join(REPO_ROOT, "README.md"), "utf8"));
    expect(n).toBeGreaterThan(500); // the front page is still there
    expect(n).toBeLessThanOrEqual(MAX_README_WORDS);
  });

  it("counts words as wc -w does", () => {
    expect(words("  two\twords\n")).toBe(2);
    expect(words("`max-cost-usd` | **required** |")).toBe(4);
  });
});

describe("links in README.md and docs/", () => {
  it.each(checked.map((f) => [path.relative(REPO_ROOT, f), f]))("%s: every relative link and #anchor resolves", (_name, file) => {
    const { links } = readPage(readFileSync(file, "utf8"));
    expect(links.map((l) => brokenLink(file, l)).filter(Boolean)).toEqual([]);
  });

  it("finds the links: the checker reads a real number of them", () => {
    const all = checked.flatMap((f) => readPage(readFileSync(f, "utf8")).links.filter((l) => !EXTERNAL.test(l)));
    expect(all.length).toBeGreaterThan(40);
    expect(all.filter((l) => l.includes("#")).length).toBeGreaterThan(10);
  });

  it("every docs/ page is linked from README.md", () => {
    const readme = path.join(REPO_ROOT, "README.md");
    const linked = new Set(
      readPage(readFileSync(readme, "utf8"))
        .links.filter((l) => !EXTERNAL.test(l))
        .map((l) => path.resolve(REPO_ROOT, decodeURIComponent(l.split("#")[0]!))),
    );
    expect(files.slice(1).filter((f) => !linked.has(f)).map((f) => path.relative(REPO_ROOT, f))).toEqual([]);
  });
});

describe("the link checker", () => {
  it("slugs headings as GitHub does", () => {
    expect(uniqueSlugs(["Quickstart (30 seconds)", "Shallow, sparse and LFS checkouts", "`agent` is missing", "Two jobs, read-only agent"])).toEqual([
      "quickstart-30-seconds",
      "shallow-sparse-and-lfs-checkouts",
      "agent-is-missing",
      "two-jobs-read-only-agent",
    ]);
    // github-slugger's own examples: repeats are numbered, emoji dropped, other scripts kept.
    expect(uniqueSlugs(["foo", "foo", "bar", "foo"])).toEqual(["foo", "foo-1", "bar", "foo-2"]);
    expect(uniqueSlugs(["😄 emoji", "Привет non-latin 你好", "a.b c_d –e"])).toEqual(["-emoji", "привет-non-latin-你好", "ab-c_d-e"]);
  });

  it("reads headings and links from Markdown, not from code blocks", () => {
    const page = readPage("# Title `x`\n\nSee [a](other.md#part) and ![i](img.png).\n\n```md\n## Not a heading [b](nowhere.md)\n```\n\n[ref]: ref.md\n");
    expect(page.headings).toEqual(["Title x"]);
    expect(page.links).toEqual(["other.md#part", "img.png", "ref.md"]);
  });

  it("reports a missing file, a missing anchor and a link out of the repository, and accepts external links", () => {
    const readme = path.join(REPO_ROOT, "README.md");
    expect(brokenLink(readme, "docs/no-such-page.md")).toMatch(/no file docs\/no-such-page\.md/);
    expect(brokenLink(readme, "docs/budgets.md#no-such-heading")).toMatch(/has no heading '#no-such-heading'/);
    expect(brokenLink(readme, "#no-such-heading")).toMatch(/has no heading/);
    expect(brokenLink(readme, "../outside.md")).toMatch(/leaves the repository/);
    expect(brokenLink(readme, "docs/budgets.md#what-a-run-costs")).toBeUndefined();
    expect(brokenLink(readme, "https://example.invalid/never-fetched")).toBeUndefined();
  });
});
