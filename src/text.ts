/** Small text helpers shared by every stage. */

/** Whitespace collapsed and cut to `max` characters: for log lines and one-line reasons. */
export function oneLine(s: string, max = 300): string {
  // A long text is flattened only as far as the line needs (every event of a stream passes here).
  // When its head alone flattens past `max`, the rest cannot change the first max - 1 characters.
  if (s.length > 4 * max + 16) {
    const head = s.slice(0, 4 * max).replace(/\s+/g, " ").trim();
    if (head.length > max) return `${head.slice(0, max - 1)}…`;
  }
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Characters with a meaning in a regular expression, escaped. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Inline code that shows `text` literally, on one line, whatever backticks it holds (a path or name in Markdown we post). */
export function inlineCode(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, " ");
  let longest = 0;
  // A loop, not Math.max(...runs): a text of a million backticks must not overflow the stack.
  for (const m of flat.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = "`".repeat(longest + 1);
  return `${fence} ${flat} ${fence}`;
}

/**
 * C0 and C1 control characters (ESC, CSI, BEL, OSC's terminators, DEL, …)
 * shown as visible `\xNN` text: a terminal or a renderer gets printable
 * characters only. Tabs stay; line breaks stay when `keepNewlines`.
 */
export function showControls(text: string, opts: { keepNewlines: boolean }): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => {
    if (ch === "\t" || (opts.keepNewlines && ch === "\n")) return ch;
    return `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`;
  });
}
