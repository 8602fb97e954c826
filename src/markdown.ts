/**
 * Markdown the way GitHub reads it (CommonMark + GFM: tables, autolinked bare
 * URLs, footnotes), parsed with source positions so a caller can rewrite
 * exact ranges of the original text, and raw HTML parsed the way an HTML5
 * parser (GitHub's, a browser's) tokenizes it. Parsers, not regexes: what
 * counts as a link, an image, a code span or a tag is decided by the same
 * rules GitHub's renderer follows, so nesting and escaping cannot hide one.
 */
import type { Definition, Nodes, Root } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";
import type * as Parse5 from "parse5";
import type { DefaultTreeAdapterTypes } from "parse5";

export type HtmlNode = DefaultTreeAdapterTypes.Node;
export type HtmlElement = DefaultTreeAdapterTypes.Element;

/**
 * `exact`: every node keeps its source position. mdast's GFM support links
 * some bare URLs in a pass after parsing (find and replace in text nodes),
 * and the nodes it adds have no position; `exact` leaves that pass out, for
 * callers that rewrite ranges and decide what links by themselves.
 */
export function parseMarkdown(text: string, options: { exact?: boolean } = {}): Root {
  const mdast = options.exact ? gfmFromMarkdown().map(({ transforms: _, ...rest }) => rest) : [gfmFromMarkdown()];
  return fromMarkdown(text, { extensions: [gfm()], mdastExtensions: mdast });
}

/** A node's range in the source it was parsed from (UTF-16 offsets, end exclusive). */
export function rangeOf(node: Nodes): { start: number; end: number } | undefined {
  const s = node.position?.start.offset;
  const e = node.position?.end.offset;
  return s === undefined || e === undefined ? undefined : { start: s, end: e };
}

export function childrenOf(node: Nodes): Nodes[] {
  return "children" in node ? (node.children as Nodes[]) : [];
}

/** Every node of a tree in document order (parents first), without recursion: nesting depth is the input's to choose. */
export function eachNode(root: Nodes, visit: (n: Nodes) => void): void {
  const stack: Nodes[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    visit(n);
    const children = childrenOf(n);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

/** Link reference definitions by identifier; the first definition of an identifier wins, as in CommonMark. */
export function definitionsOf(root: Root): Map<string, Definition> {
  const defs = new Map<string, Definition>();
  eachNode(root, (n) => {
    if (n.type === "definition" && !defs.has(n.identifier)) defs.set(n.identifier, n);
  });
  return defs;
}

/** A replacement of `text.slice(start, end)`; edits given to applyEdits must not overlap. */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

export function applyEdits(text: string, edits: readonly Edit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  let out = "";
  let at = 0;
  for (const e of sorted) {
    if (e.start < at) throw new Error(`overlapping markdown edits at ${e.start}`);
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

let parse5: typeof Parse5 | undefined;

/**
 * A start tag with room for attributes: a letter after `<`, then anything but letters and digits up
 * to a `>`. An HTML tokenizer ends a tag name only at whitespace, `/` or `>`, and only a start tag
 * gives an element attributes (the tree builder copies a tag's own, never adds any).
 */
const TAG_WITH_ROOM_FOR_ATTRIBUTES = /<[a-z](?![a-z0-9]*>)/i;

/**
 * Whether an element of this raw HTML could have attributes. When not (`<sub>`, `</details>`, a
 * comment, text), a caller that looks only at attributes needs no parse, and no HTML parser loaded.
 */
export function htmlMayHaveAttributes(html: string): boolean {
  return TAG_WITH_ROOM_FOR_ATTRIBUTES.test(html);
}

/** A start tag as an HTML tokenizer reads it: lower-case name, attributes with character references decoded. */
export interface HtmlStartTag {
  name: string;
  attrs: { name: string; value: string }[];
}

/** `<` and a letter: where every start tag begins, in any tokenizer state that reads tags. */
const TAG_OPEN = /<[a-z]/gi;
/** A start tag that surely has no attributes (`<sub>`): nothing to read. */
const BARE_TAG = /<[a-z][a-z0-9]*>/iy;

/**
 * Every start tag an HTML parser could read in this raw HTML, whatever state it is in. A tag begins at a
 * `<` and a letter, and how it reads from there depends only on the text after it; a comment, raw text,
 * CDATA or a tree builder can only hide or drop tags, and parsers differ on which (a fragment parse
 * drops `<body background=…>`, parse5 drops what `<select>` holds, a browser's newer parser keeps it).
 * A check that passes on all of them holds for every parser. Undefined when a tag never closes, or when
 * reading from every `<` would cost more than a few passes over the text (the caller treats it as unsafe).
 */
export function startTagsAnywhere(html: string): HtmlStartTag[] | undefined {
  const tags: HtmlStartTag[] = [];
  let budget = 8 * html.length + 4096;
  for (const m of html.matchAll(TAG_OPEN)) {
    BARE_TAG.lastIndex = m.index;
    if (BARE_TAG.test(html)) continue;
    const read = readStartTag(html.slice(m.index));
    if (!read) return undefined;
    budget -= read.length;
    if (budget < 0) return undefined;
    tags.push(read.tag);
  }
  return tags;
}

/** The start tag `text` begins with, read by parse5's tokenizer alone (no tree builder to change its state). */
function readStartTag(text: string): { tag: HtmlStartTag; length: number } | undefined {
  parse5 ??= require("parse5") as typeof Parse5;
  let read: { tag: HtmlStartTag; length: number } | undefined;
  const stop = () => tokenizer.pause();
  const tokenizer = new parse5.Tokenizer(
    { sourceCodeLocationInfo: true },
    {
      onStartTag: (t) => {
        read = { tag: { name: t.tagName, attrs: t.attrs.map((a) => ({ name: a.name, value: a.value })) }, length: t.location?.endOffset ?? text.length };
        stop();
      },
      onEndTag: stop,
      onComment: stop,
      onDoctype: stop,
      onCharacter: stop,
      onNullCharacter: stop,
      onWhitespaceCharacter: stop,
      onEof: stop,
    },
  );
  tokenizer.write(text, true);
  return read;
}

/** At a `<!`: a comment that surely ends at its `-->` (no `--`, `<` or `>` inside; not `<!-->` or `<!--->`). */
const PLAIN_COMMENT = /<!--(?!-?>)(?:(?!--)[^<>])*-->/y;
/**
 * Start tags after which what follows is not read as it would be alone: raw text, RCDATA and plaintext
 * (script, style, textarea…), select and template, and foreign content (svg, math: CDATA sections).
 */
const CHANGES_WHAT_FOLLOWS = /<(?:script|style|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext|select|template|svg|math)/i;
const HTML_NAMESPACE = "http://www.w3.org/1999/xhtml";
/** An element no document has, appended to see whether it is still read as one. */
const END_PROBE = "agent-runner-end-probe";

/**
 * Where an HTML tokenizer is at the end of `html`, when a scan can tell: true in plain text, false
 * inside a tag; undefined when only the parser can (a quote inside a tag, `<!` other than a plain
 * comment, `<?`, or an element that changes how what follows is read).
 */
function endsInTextByScan(html: string): boolean | undefined {
  if (CHANGES_WHAT_FOLLOWS.test(html)) return undefined;
  let inTag = false;
  for (let i = 0; i < html.length; i++) {
    const c = html[i];
    if (inTag) {
      // Without quotes, every tag state ends at the next `>`.
      if (c === ">") inTag = false;
      else if (c === '"' || c === "'") return undefined;
    } else if (c === "<") {
      const next = html[i + 1] ?? "";
      if (/[A-Za-z/]/.test(next)) {
        inTag = true;
        i++;
      } else if (next === "!") {
        PLAIN_COMMENT.lastIndex = i;
        const comment = PLAIN_COMMENT.exec(html);
        if (!comment) return undefined;
        i += comment[0].length - 1;
      } else if (next === "?") return undefined;
    }
  }
  return !inTag;
}

/**
 * Whether what follows this raw HTML is read on its own. GitHub renders consecutive HTML blocks as one
 * text, so a block that ends inside a tag gives the next block's text to that tag: `<div`, a blank
 * line, then `<!-- style=… -->` is one `<div <!-- style=…>`; one that leaves `<svg>` open makes the next
 * block's `<![CDATA[` a real CDATA section. When a scan cannot tell, the HTML parser is asked whether an
 * element appended after it is still one, in HTML, outside any svg or math and outside template content.
 */
export function htmlEndsClosed(html: string): boolean {
  return endsInTextByScan(html) ?? htmlEndsClosedByParser(html);
}

/** htmlEndsClosed's answer from the HTML parser alone (exported for the test that holds the scan to it). */
export function htmlEndsClosedByParser(html: string): boolean {
  const root = parseHtml(`${html}<${END_PROBE}>`);
  let probe: HtmlNode | undefined;
  walkHtml(root, (n) => void (n.nodeName === END_PROBE && (probe = n)));
  // Up to the fragment itself: a template's content has no parent, and would hide an svg around the template.
  let top: HtmlNode | undefined;
  for (let n: HtmlNode | null | undefined = probe; n; n = "parentNode" in n ? n.parentNode : undefined) {
    if ("namespaceURI" in n && n.namespaceURI !== HTML_NAMESPACE) return false;
    top = n;
  }
  return top === root;
}

/** Raw HTML (an `html` node's value) as an HTML5 fragment, with source offsets. */
export function parseHtml(html: string): DefaultTreeAdapterTypes.DocumentFragment {
  // require(), not import: esbuild bundles parse5 as a module evaluated here, on the first text that
  // holds raw HTML, not on every step that writes a summary.
  parse5 ??= require("parse5") as typeof Parse5;
  return parse5.parseFragment(html, { sourceCodeLocationInfo: true });
}

/** Every node of an HTML fragment, `<template>` contents included, in document order and without recursion. */
export function walkHtml(node: HtmlNode, visit: (n: HtmlNode) => void): void {
  const stack: HtmlNode[] = [node];
  while (stack.length) {
    const n = stack.pop()!;
    visit(n);
    const next: HtmlNode[] = "childNodes" in n ? [...n.childNodes] : [];
    if (n.nodeName === "template" && "content" in n) next.push(n.content);
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]!);
  }
}
