/**
 * Agent text (assistant messages, the final answer) as HTML for
 * transcript.html: parsed as GitHub reads Markdown (src/markdown.ts), turned
 * into HTML by the unified libraries, then sanitized with GitHub's schema.
 * Agent text is untrusted, so on top of that schema:
 *  - raw HTML is shown as the text it is, never interpreted;
 *  - images become links (nothing is fetched when the page opens; the page's
 *    CSP also says img-src 'none');
 *  - links keep only http(s), mailto and in-page targets.
 */
import type { Element, Root as HastRoot } from "hast";
import type * as HastSanitize from "hast-util-sanitize";
import type * as HastToHtml from "hast-util-to-html";
import type { Nodes, Parent, PhrasingContent } from "mdast";
import type * as MdastToHast from "mdast-util-to-hast";
import { boundMarkdown } from "../markdown-bounds.js";
import { parseMarkdown } from "../markdown.js";

interface Renderers {
  toHast: typeof MdastToHast.toHast;
  sanitize: typeof HastSanitize.sanitize;
  toHtml: typeof HastToHtml.toHtml;
  schema: HastSanitize.Schema;
}
let renderers: Renderers | undefined;

/**
 * The unified libraries, evaluated on the first agent text to render: a transcript without any never
 * loads them (their property tables cost a step about 10 ms to build). require(), not import: each is
 * bundled into a file of its own (scripts/build/plugins.mjs) and read only then.
 */
function loadRenderers(): Renderers {
  if (renderers) return renderers;
  const { defaultSchema, sanitize } = require("hast-util-sanitize") as typeof HastSanitize;
  const { toHtml } = require("hast-util-to-html") as typeof HastToHtml;
  const { toHast } = require("mdast-util-to-hast") as typeof MdastToHast;
  const schema: HastSanitize.Schema = {
    ...defaultSchema,
    tagNames: (defaultSchema.tagNames ?? []).filter((t) => t !== "img" && t !== "picture" && t !== "source" && t !== "video" && t !== "audio"),
    protocols: { ...defaultSchema.protocols, href: ["http", "https", "mailto"], src: [] },
    // Ids are prefixed once, by toHast (idPrefix), so footnote links still find their targets.
    clobberPrefix: "",
  };
  return (renderers = { toHast, sanitize, toHtml, schema });
}

/** `idPrefix` keeps ids (footnotes) of several rendered texts on one page apart. */
export function markdownToSafeHtml(text: string, idPrefix = "md-"): string {
  const { toHast, sanitize, toHtml, schema } = loadRenderers();
  try {
    // Bounded first (src/markdown-bounds.ts): 8 KB of `>` must not overflow the stack.
    const tree = parseMarkdown(boundMarkdown(text));
    neutralise(tree);
    const hast = toHast(tree, { clobberPrefix: `user-content-${idPrefix}` }) as HastRoot;
    const clean = sanitize(hast, schema) as HastRoot;
    markLinks(clean);
    return toHtml(clean);
  } catch {
    // A renderer that gives up shows the text as it is, escaped: the rest of the page still renders.
    return `<pre class="plain">${toHtml({ type: "text", value: text })}</pre>`;
  }
}

/** Raw HTML becomes visible text; images become links to what they showed. */
function neutralise(node: Nodes): void {
  if (!("children" in node)) return;
  const parent = node as Parent;
  parent.children = parent.children.map((child) => {
    if (child.type === "html") {
      const text: PhrasingContent = { type: "text", value: child.value };
      return (flowParent(parent) ? { type: "paragraph", children: [text] } : text) as unknown as typeof child;
    }
    if (child.type === "image")
      return { type: "link", url: child.url, children: [{ type: "text", value: `image: ${child.alt || child.url}` }] } as PhrasingContent as typeof child;
    if (child.type === "imageReference")
      return {
        type: "linkReference",
        identifier: child.identifier,
        label: child.label,
        referenceType: "full",
        children: [{ type: "text", value: `image: ${child.alt || child.label || child.identifier}` }],
      } as PhrasingContent as typeof child;
    neutralise(child);
    return child;
  }) as typeof parent.children;
}

function flowParent(p: Parent): boolean {
  return p.type === "root" || p.type === "blockquote" || p.type === "listItem" || p.type === "footnoteDefinition";
}

/** Links leave the page without a referrer or an opener. */
function markLinks(node: HastRoot | Element): void {
  for (const child of node.children) {
    if (child.type !== "element") continue;
    if (child.tagName === "a" && typeof child.properties.href === "string" && !child.properties.href.startsWith("#")) {
      child.properties.rel = ["noopener", "noreferrer", "nofollow"];
    }
    markLinks(child);
  }
}

