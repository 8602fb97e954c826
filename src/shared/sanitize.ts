/**
 * Untrusted text from GitHub (comments, titles, bodies) is cleaned before it
 * is matched against the trigger phrase or shown to the agent: what a reader
 * of the rendered page cannot see must not steer the agent either.
 */
// No Markdown parser here: these run on every step (verify, delivery); visible-text.ts parses.

/** `<!-- … -->`, including an unterminated one that hides the rest of the text. */
const HTML_COMMENT = /<!--[\s\S]*?(?:-->|$)/g;

/**
 * Markdown "comments": a link reference definition pointing at `#`, e.g.
 * `[//]: # (hidden text)`, renders as nothing.
 */
const HIDDEN_LINK_DEFINITION = /^ {0,3}\[[^\]\n]+\]:[ \t]*<?#>?(?:[ \t]+(?:\([^\n]*\)|"[^\n]*"|'[^\n]*'))?[ \t]*$/gm;

/**
 * Invisible characters: every Unicode format character (zero-width spaces and
 * joiners, bidi embeddings/overrides/isolates, BOM, soft hyphen, the tag block
 * used for "ASCII smuggling"), variation selectors except the emoji one
 * (U+FE0F), and control characters other than tab and newline.
 */
const INVISIBLE = /[\p{Cf}\uFE00-\uFE0E\u{E0100}-\u{E01EF}]|[^\P{Cc}\n\t]/gu;

export function stripInvisible(text: string): string {
  return text.replace(INVISIBLE, "");
}

export function sanitizeUntrusted(text: string | null | undefined): string {
  if (!text) return "";
  return stripInvisible(text.replace(/\r\n?/g, "\n"))
    .replace(HTML_COMMENT, "")
    .replace(HIDDEN_LINK_DEFINITION, "")
    .trim();
}

/** A single line (titles, branch slugs, commit subjects): no newlines, collapsed spaces. */
export function sanitizeLine(text: string | null | undefined, max = 200): string {
  const flat = sanitizeUntrusted(text).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
