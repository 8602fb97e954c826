/**
 * What a reader of a rendered GitHub comment sees: the text the trigger phrase is matched on.
 * Apart from sanitize.ts because it needs the Markdown and HTML parsers, which only a step
 * started by a comment loads.
 */
import type { Nodes } from "mdast";
import { applyEdits, childrenOf, parseHtml, parseMarkdown, rangeOf, type Edit, type HtmlNode } from "../markdown.js";
import { sanitizeUntrusted } from "./sanitize.js";

/** Elements whose content a reader never sees (GitHub drops them). */
const UNSEEN_ELEMENTS = new Set(["script", "style", "template", "noscript"]);

/** The text a reader sees in raw HTML: text nodes only, never attributes (`alt`, `title`) or comments. */
function htmlText(html: string): string {
  let text = "";
  const walk = (n: HtmlNode): void => {
    if (n.nodeName === "#text" && "value" in n) text += n.value;
    if (UNSEEN_ELEMENTS.has(n.nodeName)) return;
    if ("childNodes" in n) for (const c of n.childNodes) walk(c);
  };
  walk(parseHtml(html));
  return text;
}

/**
 * Markdown reduced to what the rendered page shows: raw HTML becomes its
 * text (attributes such as `<img alt>` and `<a title>` go), images go (their
 * alt text shows only when the image is broken), links keep their text but
 * lose destination and title, reference definitions and footnotes nothing
 * refers to go. Code stays as
 * written. The trigger phrase is matched on this, so a phrase only a parser
 * sees cannot start a run.
 */
export function visibleText(text: string | null | undefined): string {
  const clean = sanitizeUntrusted(text);
  const root = parseMarkdown(clean);
  const footnotesUsed = new Set<string>();
  const collect = (n: Nodes): void => {
    if (n.type === "footnoteReference") footnotesUsed.add(n.identifier);
    for (const c of childrenOf(n)) collect(c);
  };
  collect(root);
  const edits: Edit[] = [];
  const walk = (n: Nodes): void => {
    const r = rangeOf(n);
    switch (n.type) {
      case "html":
        if (r) edits.push({ ...r, text: htmlText(n.value) });
        return;
      case "image":
      case "imageReference":
      case "definition":
        if (r) edits.push({ ...r, text: "" });
        return;
      case "footnoteDefinition":
        // GitHub shows a footnote only when the text refers to it.
        if (!footnotesUsed.has(n.identifier)) {
          if (r) edits.push({ ...r, text: "" });
          return;
        }
        break;
      case "link":
      case "linkReference": {
        const kids = childrenOf(n);
        const first = kids[0] ? rangeOf(kids[0]) : undefined;
        const last = kids.at(-1) ? rangeOf(kids.at(-1)!) : undefined;
        if (!r) return;
        if (!first || !last) {
          edits.push({ ...r, text: "" });
          return;
        }
        // Keep the link text (walked below); drop `[`, `](url "title")`, `<`, `>`.
        edits.push({ start: r.start, end: first.start, text: "" }, { start: last.end, end: r.end, text: "" });
        break;
      }
      case "code":
      case "inlineCode":
        return;
    }
    for (const c of childrenOf(n)) walk(c);
  };
  walk(root);
  return applyEdits(clean, edits).trim();
}
