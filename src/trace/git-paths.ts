/**
 * Git writes a path that holds a backslash, a double quote, a control
 * character or (by default) any non-ASCII byte C-quoted in a patch's
 * headers: `+++ "b/dir\\name.txt"`, `"b/\303\251.txt"`. diff2html shows that
 * quoting as the name, so the transcript's file list read `"dir\\name.txt"`.
 * This turns the headers' quoted paths back into the names they spell:
 * backslash and quote escapes and octal bytes (decoded as UTF-8); control
 * characters stay escaped (`\t`), as they would be unreadable. Only header
 * lines are touched: from `diff --git` to the first hunk.
 *
 * diff2html then reads a backslash in a name as a Windows separator and
 * shows `/`; forDiff2html hides the headers' backslashes from it behind a
 * private-use character and puts them back in its HTML.
 */

const HEADER = /^(?:diff --git |--- |\+\+\+ |rename from |rename to |copy from |copy to )/;
const QUOTED = /"((?:[^"\\]|\\.)*)"/g;

/** The bytes a C-quoted string spells, as UTF-8 text (control-character escapes kept as written). */
function unquote(body: string): string {
  const bytes: number[] = [];
  const pushText = (t: string) => bytes.push(...Buffer.from(t, "utf8"));
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== "\\") {
      pushText(ch);
      continue;
    }
    const next = body[i + 1] ?? "";
    const octal = /^[0-3][0-7]{2}/.exec(body.slice(i + 1, i + 4));
    if (octal && Number.parseInt(octal[0], 8) >= 0x80) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else if (next === "\\" || next === '"') {
      pushText(next);
      i++;
    } else {
      pushText(`\\${next}`);
      i++;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** Each header line of `patch` through `edit`; every other line as it is. */
function mapHeaders(patch: string, edit: (line: string) => string): string {
  let inHeader = false;
  return patch
    .split("\n")
    .map((line) => {
      if (line.startsWith("diff --git ")) inHeader = true;
      else if (line.startsWith("@@")) inHeader = false;
      return inHeader && HEADER.test(line) ? edit(line) : line;
    })
    .join("\n");
}

export function unquoteGitPaths(patch: string): string {
  if (!patch.includes('"')) return patch;
  return mapHeaders(patch, (line) => line.replace(QUOTED, (_, body: string) => unquote(body)));
}

const BACKSLASH_STAND_IN = "\ue05c";

/** `patch` with its header paths unquoted and their backslashes hidden, and how to restore them in diff2html's HTML. */
export function forDiff2html(patch: string): { patch: string; restore: (html: string) => string } {
  const unquoted = unquoteGitPaths(patch);
  if (!unquoted.includes("\\") || unquoted.includes(BACKSLASH_STAND_IN)) return { patch: unquoted, restore: (html) => html };
  return {
    patch: mapHeaders(unquoted, (line) => line.replace(/\\/g, BACKSLASH_STAND_IN)),
    restore: (html) => html.split(BACKSLASH_STAND_IN).join("\\"),
  };
}
