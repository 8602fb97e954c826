/**
 * Agent text shown as code in GitHub Markdown, whatever it holds. The one
 * place that writes a code span or a code block around text we did not
 * write: a file name, a branch, a session id, the last line of stderr.
 *
 * A code span ends only at a backtick run of exactly its fence's length, so
 * a fence one longer than the longest run inside cannot be closed early;
 * the padding spaces keep a name that starts or ends with a backtick apart
 * from the fence (CommonMark strips one space on each side again). Control
 * characters are shown as `\xNN` (a name with ESC or a line break in it is
 * still one visible line).
 */
import { showControls } from "../text.js";

function longestBacktickRun(text: string): number {
  // A loop, not Math.max(...runs): a text of a million backticks must not overflow the stack.
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/**
 * `name` as inline code that nothing in it can end. In a table cell a `|`
 * would end the cell before inline parsing (GFM), so it is escaped there;
 * GFM removes that backslash again, inside code spans too.
 */
export function codeName(name: string, where: "inline" | "table-cell" = "inline"): string {
  const visible = showControls(name, { keepNewlines: false });
  const fence = "`".repeat(longestBacktickRun(visible) + 1);
  const body = where === "table-cell" ? visible.replace(/\|/g, "\\|") : visible;
  return `${fence} ${body} ${fence}`;
}

/** A fenced code block longer than any backtick run inside the text. */
export function fenced(text: string, lang = ""): string {
  const fence = "`".repeat(Math.max(2, longestBacktickRun(text)) + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}
