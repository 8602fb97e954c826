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

/** A comment that surely ends at its `-->`: no `--`, `<` or `>` inside, not `<!-->` or `<!--->`. */
const PLAIN_COMMENT = /<!--(?!-?>)(?:(?!--)[^<>])*-->/g;
/** Elements whose content is not read as tags (raw text, RCDATA, plaintext) or that drop most tags after them. */
const SWALLOWING_ELEMENT = /<(?:script|style|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext|select|template)/i;
/** An element no document has, appended to see whether it is still read as one. */
const END_PROBE = "agent-runner-end-probe";

/**
 * Whether what follows this raw HTML is read on its own. GitHub renders consecutive HTML blocks as one
 * text, so a block that ends inside a tag gives the next block's text to that tag: `<div`, a blank
 * line, then `<!-- style=… -->` is one `<div <!-- style=…>`. Without quotes, `<!`, `<?` or an element
 * that swallows what follows, a tag ends at the next `>`, so a last tag opener with a `>` after it
 * settles it; otherwise the HTML parser is asked whether an element appended after it still is one.
 */
export function htmlEndsClosed(html: string): boolean {
  const rest = html.replace(PLAIN_COMMENT, "");
  if (!/["']|<[!?]/.test(rest) && !SWALLOWING_ELEMENT.test(rest)) {
    const last = [...rest.matchAll(/<[a-z/]/gi)].at(-1);
    if (!last || rest.includes(">", last.index)) return true;
  }
  let seen = false;
  walkHtml(parseHtml(`${html}<${END_PROBE}>`), (n) => void (n.nodeName === END_PROBE && (seen = true)));
  return seen;
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
