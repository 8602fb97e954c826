/**
 * The type of text GitHub may render, low where every sink can name it; the
 * only maker is publish/safe-markdown.ts (`toSafeMarkdown`, the posting filter).
 */
declare const safeMarkdownBrand: unique symbol;

/** Markdown that has been through the posting filter (and was redacted before it). */
export type SafeMarkdown = string & { readonly [safeMarkdownBrand]: "SafeMarkdown" };
