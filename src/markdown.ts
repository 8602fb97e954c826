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
import { parseFragment, type DefaultTreeAdapterTypes } from "parse5";

export type HtmlNode = DefaultTreeAdapterTypes.Node;
export type HtmlElement = DefaultTreeAdapterTypes.Element;

export function parseMarkdown(text: string): Root {
  return fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
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

/** Link reference definitions by identifier; the first definition of an identifier wins, as in CommonMark. */
export function definitionsOf(root: Root): Map<string, Definition> {
  const defs = new Map<string, Definition>();
  const walk = (n: Nodes): void => {
    if (n.type === "definition" && !defs.has(n.identifier)) defs.set(n.identifier, n);
    for (const c of childrenOf(n)) walk(c);
  };
  walk(root);
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

/** Raw HTML (an `html` node's value) as an HTML5 fragment, with source offsets. */
export function parseHtml(html: string): DefaultTreeAdapterTypes.DocumentFragment {
  return parseFragment(html, { sourceCodeLocationInfo: true });
}

/** Every node of an HTML fragment, `<template>` contents included. */
export function walkHtml(node: HtmlNode, visit: (n: HtmlNode) => void): void {
  visit(node);
  if ("childNodes" in node) for (const c of node.childNodes) walkHtml(c, visit);
  if (node.nodeName === "template" && "content" in node) walkHtml(node.content, visit);
}
