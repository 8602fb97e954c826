/**
 * Markdown whose parse cost is bounded. micromark (and the tree walkers
 * after it) recurse once per container level and match delimiter runs and
 * brackets in time that grows with the square of their number, so 6 KB of
 * `>` overflows the stack and 64 KB of `[` takes seconds. A hostile agent
 * writes exactly that. Before anything parses agent text, one linear pass
 * escapes every construct past a small depth or length with a backslash:
 * the text still reads the same (`\>` shows as `>`), but nothing past the
 * bound nests or pairs up, so the parse is linear and its tree shallow.
 *
 * Bounded: container markers (`>`, `-`, `+`, `*`, `1.`, `1)`) opening a
 * line, the indentation of a line (lists also nest by indentation), open `[`
 * (and `![`) at once, `]` with no `[` open, the length of one run of `*`,
 * `_` or `~`, and the number of such runs between two blank lines. Code is
 * not told apart (that would take the parse this bounds), so a code block
 * past a bound shows the backslashes; no ordinary text comes near one.
 *
 * Escapes cost too (each is a token, and a paragraph of tens of thousands
 * of them is slow again), so a paragraph (the text between two blank lines,
 * where every inline construct lives) that needs more than a few escapes,
 * or holds thousands of backtick runs, becomes a fenced code block instead:
 * shown exactly as written, parsed in linear time, and inert.
 */

/** Containers (block quotes, list items) one line may open. */
export const MAX_CONTAINER_DEPTH = 32;
/** Brackets open at once. */
export const MAX_BRACKET_DEPTH = 32;
/** Length of one run of emphasis or strikethrough delimiters. */
export const MAX_DELIMITER_RUN = 64;
/** Runs of delimiters between two blank lines (one paragraph at most): matching them costs their number squared. */
export const MAX_DELIMITER_RUNS = 3000;
/** Escapes one paragraph may take before it is shown as a code block instead. */
export const MAX_ESCAPES = 64;
/** Backtick runs in one paragraph (each may open a code span, matched by a search ahead). */
export const MAX_CODE_RUNS = 5000;
/** Columns of indentation a line keeps. */
export const MAX_INDENT = 128;

/** `line` with its indentation cut to MAX_INDENT columns (a tab counts to the next multiple of 4). */
function boundIndent(line: string): string {
  let col = 0;
  let i = 0;
  for (; i < line.length && (line[i] === " " || line[i] === "\t"); i++) {
    col = line[i] === "\t" ? col + 4 - (col % 4) : col + 1;
    if (col > MAX_INDENT) break;
  }
  if (col <= MAX_INDENT) return line;
  let end = i;
  while (line[end] === " " || line[end] === "\t") end++;
  return line.slice(0, i) + line.slice(end);
}

const CONTAINER_MARKER = /^[ \t]*(?:(>)|([-+*])(?=[ \t]|$)|(\d{1,9})([.)])(?=[ \t]|$))/;

/** Where in `line` a backslash goes to stop its container markers past MAX_CONTAINER_DEPTH, or -1. */
function lineEscape(line: string): number {
  let at = 0;
  let depth = 0;
  for (;;) {
    const m = CONTAINER_MARKER.exec(line.slice(at, at + 64));
    if (!m) return -1;
    const markerAt = at + m[0].length - (m[1] ?? m[2] ?? m[4] ?? "").length;
    if (++depth > MAX_CONTAINER_DEPTH) return markerAt;
    at += m[0].length;
  }
}

/** Offsets where a backslash goes: brackets and delimiters past their bounds. */
function inlineEscapes(text: string): number[] {
  const at: number[] = [];
  let depth = 0;
  let run = 0;
  let runs = 0;
  let runChar = "";
  const unmatched: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "*" || ch === "_" || ch === "~") {
      run = ch === runChar ? run + 1 : 1;
      if (run === 1) runs++;
      runChar = ch;
      if (run > MAX_DELIMITER_RUN || runs > MAX_DELIMITER_RUNS) at.push(i);
      continue;
    }
    runChar = "";
    if (ch === "\\") i++;
    else if (ch === "[") {
      if (depth >= MAX_BRACKET_DEPTH) at.push(i);
      else depth++;
    } else if (ch === "]") {
      if (depth > 0) depth--;
      else unmatched.push(i);
    }
  }
  // A few stray `]` are ordinary text; many make every one of them search back for a `[`.
  return unmatched.length > MAX_BRACKET_DEPTH ? [...at, ...unmatched] : at;
}

/** A code block that shows `text` as written, whatever fences it holds. */
function fencedBlock(text: string): string {
  let longest = 2;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = "`".repeat(longest + 1);
  return `${fence}text\n${text}\n${fence}`;
}

/**
 * A chunk that is one fenced code block whatever comes before it: it opens
 * with an info string (so it cannot be the close of a fence left open
 * above), no line inside can close it, and its last line does. Its lines
 * are code (or raw HTML, if an HTML block above is still open): parsed in
 * linear time, and left alone, so a block this file made stays as it is.
 */
function isFencedBlock(chunk: string): boolean {
  const lines = chunk.split("\n");
  const open = /^(`{3,}|~{3,})[ \t]*[^\s`][^`]*$/.exec(lines[0]!);
  if (!open || lines.length < 2) return false;
  const [mark] = open[1]!;
  const closes = (line: string) => new RegExp(`^ {0,3}\\${mark}{${open[1]!.length},}[ \\t]*$`).test(line);
  return closes(lines[lines.length - 1]!) && !lines.slice(1, -1).some(closes);
}

/** One paragraph's worth of lines (no blank line in it), bounded. */
function boundChunk(chunk: string): string {
  if (isFencedBlock(chunk)) return chunk;
  const at = new Set(inlineEscapes(chunk));
  let lineStart = 0;
  for (const line of chunk.split("\n")) {
    const i = lineEscape(line);
    if (i >= 0) at.add(lineStart + i);
    lineStart += line.length + 1;
  }
  if (at.size > MAX_ESCAPES || (chunk.match(/`+/g)?.length ?? 0) > MAX_CODE_RUNS) return fencedBlock(chunk);
  let out = "";
  let from = 0;
  for (const i of [...at].sort((a, b) => a - b)) {
    out += `${chunk.slice(from, i)}\\`;
    from = i;
  }
  return out + chunk.slice(from);
}

/**
 * `markdown` with everything past the bounds escaped, or the paragraphs
 * that need too many escapes as code blocks; the same string when nothing
 * is past a bound. Linear in the length of the text.
 */
export function boundMarkdown(markdown: string): string {
  const out: string[] = [];
  let chunk: string[] = [];
  const flush = () => {
    if (chunk.length) out.push(boundChunk(chunk.join("\n")));
    chunk = [];
  };
  for (const line of markdown.split("\n")) {
    if (/^[ \t]*$/.test(line)) {
      flush();
      out.push(line);
    } else chunk.push(boundIndent(line));
  }
  flush();
  const text = out.join("\n");
  return text === markdown ? markdown : text;
}
