/** Small text helpers shared by every stage. */

/** Whitespace collapsed and cut to `max` characters: for log lines and one-line reasons. */
export function oneLine(s: string, max = 300): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Characters with a meaning in a regular expression, escaped. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
