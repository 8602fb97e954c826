/**
 * The shortcut of the posting door and of attachments (src/markdown.ts `htmlMayHaveAttributes`): raw
 * HTML it says needs no parse must hold no element with an attribute when an HTML5 parser (parse5,
 * the door's own) reads it. Checked on hand-picked tricks, on 20,000 fragments built from the
 * pieces a tokenizer treats specially and on 20,000 tag-shaped ones (each set catches a shortcut
 * that lets whitespace or `/` into a tag name); then through the door, whose rewrites stay.
 */
import { describe, expect, it } from "vitest";
import * as parse5 from "parse5";
import { htmlEndsClosed, htmlEndsClosedByParser, htmlMayHaveAttributes, parseHtml, startTagsAnywhere, walkHtml, type HtmlNode } from "../../src/markdown.js";
import { neutralizeForGitHub } from "../../src/publish/post-text.js";

/** Every attribute of every element parse5 builds from `html`, as `element attr`. */
function attributesParsed(html: string): string[] {
  const found: string[] = [];
  walkHtml(parseHtml(html), (n: HtmlNode) => {
    if ("attrs" in n) for (const a of n.attrs) found.push(`${n.nodeName} ${a.name}`);
  });
  return found;
}

/** A small seeded generator (mulberry32) and a pick from it: the same fragments on every run. */
function random(seed: number): { next: () => number; pick: <T>(xs: readonly T[]) => T } {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, pick: (xs) => xs[Math.floor(next() * xs.length)]! };
}

/** Pieces an HTML tokenizer treats specially: tag and comment openers, the characters that end a tag name, quotes, NUL, case, non-ASCII look-alikes. */
const PIECES = ["<", ">", "/", " ", "\t", "\n", "\r", "\f", "\0", "=", '"', "'", "`", "a", "B", "img", "IMG", "src", "on", "x", "1", "-", "!", "?", "&", "#", ";", "</", "<!--", "-->", "--!>", "<!", "<?", "svg", "math", "template", "table", "td", "select", "textarea", "script", "é", "\u017f", "\u212a", "\u00a0"];

describe("htmlMayHaveAttributes: no false 'no'", () => {
  it.each([
    ["our own tags", "<details><summary>Patch</summary>", false],
    ["closing tags", "</details>\n</sub>", false],
    ["a line break and a comment", '<br><!-- agent-runner:sticky:abc k=1 -->', false],
    ["text with a lone angle bracket", "a < b and c > d", false],
    ["an attribute", "<details open>", true],
    ["a tab before the attribute", "<a\thref=x>", true],
    ["a slash before the attribute", "<svg/onload=x>", true],
    ["a form feed before the attribute", "<img\fsrc=x>", true],
    ["upper case", "<IMG SRC=x>", true],
    ["self-closing without attributes (kept conservative)", "<br/>", true],
    ["a tag inside a comment (kept conservative)", "<!-- <img src=x> -->", true],
    ["a NUL in the tag name", "<a\0 href=x>", true],
    ["a tag cut off at the end", "<img", true],
  ])("%s", (_, html, may) => {
    expect(htmlMayHaveAttributes(html)).toBe(may);
    if (!may) expect(attributesParsed(html)).toEqual([]);
  });

  it("20,000 generated fragments: wherever it says 'no', parse5 finds no attribute", () => {
    const { next, pick } = random(0x5eed);
    let shortcuts = 0;
    for (let i = 0; i < 20_000; i++) {
      const length = 1 + Math.floor(next() * 14);
      let html = "";
      for (let j = 0; j < length; j++) html += pick(PIECES);
      if (htmlMayHaveAttributes(html)) continue;
      shortcuts++;
      expect(attributesParsed(html), JSON.stringify(html)).toEqual([]);
    }
    // The shortcut is taken often enough for the check to mean something.
    expect(shortcuts).toBeGreaterThan(5_000);
  });

  it("20,000 generated tags: `<`, a name, then separators, names and values in any order", () => {
    const { next, pick } = random(0x7a65);
    const NAMES = ["a", "B", "img", "x1", "svg", "é", "\u017f", "1"];
    const BETWEEN = [" ", "\t", "\n", "\r", "\f", "/", "\0", "=", '"', "'", "", "", "<", "-"];
    let shortcuts = 0;
    for (let i = 0; i < 20_000; i++) {
      let html = "<" + pick(NAMES);
      for (let j = Math.floor(next() * 4); j > 0; j--) html += pick(BETWEEN) + pick(NAMES);
      html += pick([">", ">", "/>", "", " >", "\f>"]);
      if (htmlMayHaveAttributes(html)) continue;
      shortcuts++;
      expect(attributesParsed(html), JSON.stringify(html)).toEqual([]);
    }
    expect(shortcuts).toBeGreaterThan(2_000);
  });
});

describe("htmlEndsClosed: raw HTML left open takes what follows", () => {
  it.each([
    ["our own blocks", "<details><summary>Patch (1 KB)</summary>", true],
    ["our markers", "<!-- agent-runner:sticky:0123456789abcdef0123 -->\n<details open><summary>Latest activity</summary>", true],
    ["a tag left open", "<div", false],
    ["a tag left open after a closed one", "<p>x</p><div title=a", false],
    ["a quoted value left open", "<div alt='x>", false],
    ["a `>` inside quotes does not close the tag", '<div alt=">"', false],
    ["a comment left open", "<!-- x", false],
    ["a comment with `--` inside, left open", "<!-- a -- b --", false],
    ["a raw-text element left open", "<textarea>", false],
    ["a script closed", "<script>x</script>", true],
    ["text with a lone angle bracket", "a < b", true],
    // An attacker review: `<!--` after a tag name is an attribute name, not a comment, so its quote opens a value.
    ["a quote inside what looks like a comment inside a tag", '<div <!-- b="--> x>', false],
    ["svg left open (the next block's CDATA would be real)", "<svg>", false],
    ["svg closed", "<svg></svg>", true],
    // A third review: template content has no parent in the tree, which hid the svg around it.
    ["svg, foreignObject and a template left open", "<svg>\n<foreignObject>\n<template>\n", false],
    ["math, mi and a template left open", "<math><mi><template>", false],
    ["a template closed", "<template><b>x</b></template>", true],
    ["an end tag at the very end", "x</", false],
  ])("%s", (_, html, closed) => {
    expect(htmlEndsClosed(html)).toBe(closed);
    expect(htmlEndsClosedByParser(html)).toBe(closed);
  });

  it("60,000 generated fragments and tags: its answer is the HTML parser's", () => {
    const { next, pick } = random(0xc105e);
    // Otherwise tag-shaped: `<` and a name, then any run of names, separators, quotes and comment pieces in any order.
    const TOKENS = ["a", "div", "x1", "textarea", "svg", "math", "template", "foreignObject", "mi", "é", " ", "\t", "\n", "/", "=", '"', "'", "<", "-", "--", ">", "<!--", "-->", "</", "<!", "<?", "![CDATA[", "]]>", "b"];
    for (let i = 0; i < 60_000; i++) {
      let html = "";
      if (i % 3 === 0) for (let j = 1 + Math.floor(next() * 12); j > 0; j--) html += pick(PIECES);
      else if (i % 3 === 1) {
        // What looks like a comment where the tokenizer is inside a tag: `<!--` as an attribute name.
        html = "<" + pick(["a", "div", "svg"]) + pick([" ", "\t", "/", ""]) + "<!--";
        for (let j = Math.floor(next() * 6); j > 0; j--) html += pick([" b", "=", '"', "'", "-->", ">", " x", "<!--"]);
        html += pick(["-->", "", ">", ' x>']);
      } else {
        html = pick(["<", "<", "</", "<!--", "x "]) + pick(["a", "div", "svg", "img"]);
        for (let j = Math.floor(next() * 9); j > 0; j--) html += pick(TOKENS);
      }
      expect(htmlEndsClosed(html), JSON.stringify(html)).toBe(htmlEndsClosedByParser(html));
    }
  });
});

describe("the posting door with the shortcut", () => {
  const P = { serverUrl: "https://github.com", allowedDomains: [], keepMentions: [] };
  it.each([
    ["our summary's HTML stays as written", "<details><summary>Patch (1 KB)</summary>\n\ntext\n\n</details>\n\n<sub>Generated by Agent Runner.</sub>\n", "<details><summary>Patch (1 KB)</summary>\n\ntext\n\n</details>\n\n<sub>Generated by Agent Runner.</sub>\n"],
    ["a mention in a bare HTML block is still broken", "<sub>\n@octocat\n</sub>", "<sub>\n@\u200boctocat\n</sub>"],
    ["an outside URL in a comment is still code", "<!-- https://attacker.example/x -->", "` <!-- https://attacker.example/x --> `"],
    ["an attribute pointing outside is still code", '<a href="https://attacker.example/">x</a>', '` <a href="https://attacker.example/"> `x</a>'],
    ["an attribute only the HTML parser decodes is still code", '<img src="https:&#47;&#47;attacker.example/x">', '` <img src="https:&#47;&#47;attacker.example/x"> `'],
    // Before: both passed unchanged, and cmark-gfm renders them as one `<div …>` whose attributes are the comment's text.
    ["a block left open: the next block's comment would be its attributes", "<div\n\n<!-- style=background:url(https:&#47;&#47;attacker.example/d.png) -->", "` <div `\n\n<!-- style=background:url(https:&#47;&#47;attacker.example/d.png) -->"],
    ["a quoted value left open across blocks", "<div alt='\n\n<!-- ' srcset=https:&#47;&#47;attacker.example/p.png -->", "` <div alt=' `\n\n<!-- ' srcset=https:&#47;&#47;attacker.example/p.png -->"],
    ["a quote hidden in a comment-like attribute name", '<div <!-- b="--> x>\n\n<!-- " style="background:url(https:&#47;&#47;attacker.example/x)" -->', '` <div <!-- b="--> x> `\n\n<!-- " style="background:url(https:&#47;&#47;attacker.example/x)" -->'],
    ["svg and a template left open, then a CDATA section after both close", "<svg>\n<foreignObject>\n<template>\n\n</template>\n</foreignObject>\n<![CDATA[><x y=']]><div style=\"background: url(\\2f\\2f attacker.example/s.png)\">'>]]>", "` <svg> <foreignObject> <template> `\n\n` </template> </foreignObject> <![CDATA[><x y=']]><div style=\"background: url(\\2f\\2f attacker.example/s.png)\">'>]]> `"],
    // Since every tag any parser state could read is checked, the CDATA block is code on its own account too.
    ["svg left open, then a CDATA section", "<svg>\n\n<![CDATA[><x y=']]><div style=\"background: url(\\2f\\2f attacker.example/x)\">'>]]>", "` <svg> `\n\n` <![CDATA[><x y=']]><div style=\"background: url(\\2f\\2f attacker.example/x)\">'>]]> `"],
  ])("%s", (_, text, expected) => {
    expect(neutralizeForGitHub(text, P)).toBe(expected);
  });
});

/** Every attribute an HTML parser gives an element of `html`, in a fragment and in a whole page (which merges `<html>` and `<body>` attributes into its own), as `name=value`. */
function attributesBuilt(html: string): Set<string> {
  const found = new Set<string>();
  const add = (n: HtmlNode) => {
    if ("attrs" in n) for (const a of n.attrs) found.add(`${a.prefix ? `${a.prefix}:` : ""}${a.name}`.toLowerCase() + "=" + a.value);
  };
  walkHtml(parseHtml(html), add);
  walkHtml(parse5.parse(html), add);
  return found;
}

function attributesRead(html: string): Set<string> | undefined {
  const tags = startTagsAnywhere(html);
  return tags && new Set(tags.flatMap((t) => t.attrs.map((a) => `${a.name}=${a.value}`)));
}

describe("startTagsAnywhere: every attribute any parser state could build", () => {
  it.each([
    ["a comment in a style element hides an image from a tokenizer alone", "<style><!--</style><img src=x>", ["src=x"]],
    ["what select holds (parse5 drops it, a browser's newer parser keeps it)", "<select><img src=x></select>", ["src=x"]],
    ["body and html attributes", '<body background="y"><html lang=en>', ["background=y", "lang=en"]],
    ["a tag inside an attribute value", "<a title='<img src=x>'>", ["title=<img src=x>", "src=x"]],
    // A tokenizer alone reads one tag here; a parser reads style's raw text, then the image.
    ["raw text hides the quote a tag opens", "<style><a title='</style><img src=x>'>", ["title=</style><img src=x>", "src=x"]],
    ["inside CDATA, inside a comment", "<svg><![CDATA[<img src=a>]]></svg><!-- <b c=d> -->", ["src=a", "c=d"]],
    ["character references decoded", '<a href="&#104;ttp&colon;x">', ["href=http:x"]],
    ["tags without attributes need no read", "<sub><b></b></sub>", []],
  ])("%s", (_, html, attrs) => {
    expect([...attributesRead(html)!].sort()).toEqual([...attrs].sort());
  });

  it("a tag that never closes, or text that would cost too much to read from every `<`, has no answer", () => {
    expect(startTagsAnywhere('<p>ok <img src="x')).toBeUndefined();
    const started = process.cpuUsage();
    expect(startTagsAnywhere(`<a x=">${"<a".repeat(30_000)}">`)).toBeUndefined();
    const used = process.cpuUsage(started);
    expect((used.user + used.system) / 1000).toBeLessThan(5_000);
  });

  it("30,000 generated fragments: every attribute parse5 builds, in a fragment or a page, is one it reads", () => {
    const { next, pick } = random(0x7a95);
    const TOKENS = ["a", "img", "body", "html", "select", "style", "textarea", "svg", "math", "template", "table", "td", "noscript", "title", "script", " src=x", " b='<c d=e>'", ' f="-->"', " g=h", "=", '"', "'", "<", "</", ">", "/", "-->", "<!--", "<!", "![CDATA[", "]]>", " ", "\n", "&lt;", "&#60;"];
    let answered = 0;
    for (let i = 0; i < 30_000; i++) {
      let html = pick(["<", "<", "</", "<!--", "x "]) + pick(["a", "img", "select", "style", "svg", "body"]);
      for (let j = 1 + Math.floor(next() * 10); j > 0; j--) html += pick(TOKENS);
      const read = attributesRead(html);
      if (!read) continue;
      answered++;
      for (const a of attributesBuilt(html)) expect(read.has(a), `${JSON.stringify(html)} builds ${a}`).toBe(true);
    }
    expect(answered).toBeGreaterThan(10_000);
  });
});
