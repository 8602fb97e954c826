/**
 * A patch split into what each file adds: the scanner looks only at added
 * lines (a removed secret is not published anew) and names the file; and the
 * names of the files it leaves (a name is published as much as a line is). Reads
 * the patch as bytes and decodes each file's added text as UTF-8 (invalid
 * bytes become U+FFFD, which no secret rule matches by accident).
 */
import { readFile } from "node:fs/promises";
/** Text about to be published, and where it goes. */
export interface ScanTarget {
  /** Where the text goes: "patch", "safe output 2 (add-comment)", "final message". */
  where: string;
  /** The repository path, for patch pieces. */
  file?: string;
  text: string;
}


/** The `where` of a file's name as a scan target. */
export const FILE_NAME = "file name";

/** What the patch publishes: each file's added lines, and the name of every file it leaves in the tree. */
export async function patchPieces(patchPath: string): Promise<ScanTarget[]> {
  const text = (await readFile(patchPath).catch(() => Buffer.alloc(0))).toString("utf8");
  return [...splitPatch(text), ...patchPaths(text).map((file): ScanTarget => ({ where: FILE_NAME, file, text: file }))];
}

export function splitPatch(patch: string): ScanTarget[] {
  const pieces = new Map<string, string[]>();
  let current: string[] | undefined;
  let inHunk = false;
  const open = (file: string) => {
    current = pieces.get(file) ?? [];
    pieces.set(file, current);
  };
  for (const line of patch.split("\n")) {
    if (line.startsWith("diff --git ")) {
      inHunk = false;
      // Named from the header until a `+++` line names it better; a patch from a hostile
      // artifact may have neither in the shape git writes, and its added lines still count.
      open(headerPath(line.replace(/\r$/, "")) ?? UNKNOWN_FILE);
      continue;
    }
    if (!inHunk && line.startsWith("+++ ")) {
      const file = targetPath(line.slice(4).replace(/\r$/, ""));
      if (file !== undefined) open(file);
      continue;
    }
    if (line.startsWith("@@")) {
      inHunk = true;
      if (!current) open(UNKNOWN_FILE);
    } else if (inHunk && line.startsWith("+")) current?.push(line.slice(1).replace(/\r$/, ""));
  }
  return [...pieces].filter(([, lines]) => lines.length).map(([file, lines]) => ({ where: "patch", file, text: lines.join("\n") }));
}

const UNKNOWN_FILE = "(a file the patch does not name)";

/**
 * Every path the patch leaves in the tree: added, changed, renamed or copied
 * to, and empty files too (a new empty file has no `+++` line and no added
 * line, only its name). Deleted files are left out: their names do not leave
 * anew. Names are what reaches `changed-files`, branch contents and comments,
 * so they are scanned like text.
 */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  let current: string | undefined;
  let deleted = false;
  const close = () => {
    if (current !== undefined && !deleted) paths.add(current);
  };
  for (const raw of patch.split("\n")) {
    const line = raw.replace(/\r$/, "");
    if (line.startsWith("diff --git ")) {
      close();
      current = headerTarget(line);
      deleted = false;
    } else if (current === undefined && !line.startsWith("@@")) continue;
    else if (line.startsWith("deleted file mode ")) deleted = true;
    else if (line.startsWith("rename to ") || line.startsWith("copy to ")) current = cPath(line.slice(line.indexOf(" to ") + 4));
    else if (line.startsWith("+++ ")) current = targetPath(line.slice(4)) ?? current;
    else if (line.startsWith("@@")) {
      // Hunks follow: the header lines are over.
      close();
      current = undefined;
    }
  }
  close();
  return [...paths];
}

/** The b/ side of a `diff --git` line, quoted or not. */
function headerTarget(line: string): string | undefined {
  const quoted = /^diff --git (?:"a\/(?:[^"\\]|\\.)*"|a\/\S.*?) "b\/((?:[^"\\]|\\.)*)"$/.exec(line);
  return quoted ? unquoteC(quoted[1]!) : headerPath(line);
}

/** A name as git writes it after `rename to`: C-quoted when it holds special bytes. */
function cPath(name: string): string {
  return name.startsWith('"') && name.endsWith('"') ? unquoteC(name.slice(1, -1)) : name;
}

/** The `b/` side of `diff --git a/x b/x` (unquoted names only; quoted ones come from `+++`). */
function headerPath(line: string): string | undefined {
  const at = line.lastIndexOf(" b/");
  return at > 0 ? line.slice(at + 3) : undefined;
}

/** `b/path`, or git's C-style quoted `"b/pa\\tth"` (octal escapes are UTF-8 bytes). */
function targetPath(name: string): string | undefined {
  const unquoted = name.startsWith('"') && name.endsWith('"') ? unquoteC(name.slice(1, -1)) : name;
  return unquoted.startsWith("b/") ? unquoted.slice(2) : undefined;
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 };

function unquoteC(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== "\\") {
      bytes.push(...Buffer.from(c, "utf8"));
      continue;
    }
    const octal = /^[0-7]{3}/.exec(text.slice(i + 1));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
    } else {
      const next = text[++i] ?? "";
      bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}
