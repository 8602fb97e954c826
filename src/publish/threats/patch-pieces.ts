/**
 * A patch split into what each file adds: the scanner looks only at added
 * lines (a removed secret is not published anew) and names the file. Reads
 * the patch as bytes and decodes each file's added text as UTF-8 (invalid
 * bytes become U+FFFD, which no secret rule matches by accident).
 */
import { readFile } from "node:fs/promises";
import type { ScanTarget } from "./secret-scan.js";


export async function patchPieces(patchPath: string): Promise<ScanTarget[]> {
  const bytes = await readFile(patchPath).catch(() => Buffer.alloc(0));
  return splitPatch(bytes.toString("utf8"));
}

export function splitPatch(patch: string): ScanTarget[] {
  const pieces = new Map<string, string[]>();
  let current: string[] | undefined;
  let inHunk = false;
  for (const line of patch.split("\n")) {
    if (line.startsWith("diff --git ")) {
      inHunk = false;
      current = undefined;
      continue;
    }
    if (!inHunk && line.startsWith("+++ ")) {
      const file = targetPath(line.slice(4).replace(/\r$/, ""));
      current = file === undefined ? undefined : (pieces.get(file) ?? []);
      if (file !== undefined && current) pieces.set(file, current);
      continue;
    }
    if (line.startsWith("@@")) inHunk = true;
    else if (inHunk && line.startsWith("+")) current?.push(line.slice(1).replace(/\r$/, ""));
  }
  return [...pieces].filter(([, lines]) => lines.length).map(([file, lines]) => ({ where: "patch", file, text: lines.join("\n") }));
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
