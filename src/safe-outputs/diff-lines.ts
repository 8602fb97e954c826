/**
 * Which lines of a pull request a review comment may sit on. GitHub accepts
 * a comment only on a line its diff shows: on the RIGHT side an added or
 * context line (new numbering), on the LEFT a deleted or context line (old
 * numbering); a multi-line comment's start and end must be in one hunk.
 * Read from the `patch` of each file in `GET /pulls/{n}/files`.
 */

export type Side = "LEFT" | "RIGHT";

interface Hunk {
  LEFT: Set<number>;
  RIGHT: Set<number>;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** The hunks of one file's `patch`, as the line numbers each side shows. */
export function patchHunks(patch: string): Hunk[] {
  const hunks: Hunk[] = [];
  let hunk: Hunk | undefined;
  let oldLine = 0;
  let newLine = 0;
  for (const line of patch.split("\n")) {
    const header = HUNK_HEADER.exec(line);
    if (header) {
      hunk = { LEFT: new Set(), RIGHT: new Set() };
      hunks.push(hunk);
      oldLine = Number(header[1]);
      newLine = Number(header[2]);
      continue;
    }
    if (!hunk || line.startsWith("\\")) continue;
    if (line.startsWith("+")) hunk.RIGHT.add(newLine++);
    else if (line.startsWith("-")) hunk.LEFT.add(oldLine++);
    else {
      // A context line (a leading space; an empty line when trailing whitespace was trimmed).
      hunk.LEFT.add(oldLine++);
      hunk.RIGHT.add(newLine++);
    }
  }
  return hunks;
}

export class DiffLines {
  private readonly files = new Map<string, Hunk[]>();
  constructor(files: { filename: string; patch?: string }[]) {
    for (const f of files) this.files.set(f.filename, f.patch ? patchHunks(f.patch) : []);
  }

  /** Why a comment on `path` lines start..line of `side` cannot be placed, or undefined when it can. */
  problem(c: { path: string; line: number; side: Side; startLine?: number }): string | undefined {
    const hunks = this.files.get(c.path);
    if (!hunks) return `'${c.path}' is not changed by this pull request`;
    if (!hunks.length) return `'${c.path}' has no diff GitHub shows (binary or too large)`;
    const start = c.startLine ?? c.line;
    if (start > c.line) return `start_line ${start} is after line ${c.line}`;
    const inOneHunk = hunks.some((h) => h[c.side].has(c.line) && h[c.side].has(start));
    if (inOneHunk) return undefined;
    const where = c.startLine !== undefined ? `lines ${start}-${c.line}` : `line ${c.line}`;
    return `${where} (${c.side}) of '${c.path}' ${c.startLine !== undefined ? "are not inside one hunk of" : "is not in"} the pull request's diff`;
  }
}
