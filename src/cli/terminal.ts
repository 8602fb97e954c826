/**
 * The one door from what a run wrote (result.json, trace.jsonl, artifact
 * names: text a hostile agent chose) to the maintainer's terminal. An ESC,
 * CSI or OSC sequence in a file name could otherwise move the cursor to
 * rewrite `conclusion: failure` as `success`, set the window title, or write
 * the clipboard (OSC 52). Every line `show`, `logs` and `run` print goes
 * through here: C0 and C1 control characters become visible `\xNN` text,
 * and a line break inside a value cannot start a line of its own.
 */
import { showControls } from "../text.js";

/** One value (a file name, a reason) as printable text on one line. */
export function terminalText(value: string): string {
  return showControls(value, { keepNewlines: false });
}

/** Our own lines: each is one line on the terminal, whatever its values held. */
export function writeLines(stream: NodeJS.WritableStream, lines: readonly string[]): void {
  stream.write(lines.map(terminalText).join("\n") + "\n");
}

/** A block of text whose own line breaks are kept (a final message, a stack trace); everything else is escaped. */
export function writeBlock(stream: NodeJS.WritableStream, text: string): void {
  stream.write(showControls(text, { keepNewlines: true }).replace(/\n?$/, "\n"));
}

/**
 * JSON for a terminal: JSON.stringify escapes C0 characters but not DEL and
 * C1 (U+0080–U+009F, where U+009B is CSI); those are written as `\uXXXX`,
 * which parses back to the same value.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\u007f-\u009f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`) + "\n";
}
