/** Path helpers: containment of absolute paths, and realpath that does not throw. */
import fs from "node:fs";
import path from "node:path";

/** `child` is `dir` or inside it (both absolute, normalised). */
export function isSameOrUnder(child: string, dir: string): boolean {
  if (dir === "/") return true;
  return child === dir || child.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

/** `child` is strictly inside `dir`. */
export function isStrictlyUnder(child: string, dir: string): boolean {
  return child !== dir && isSameOrUnder(child, dir);
}

/** realpath when the path exists, else the resolved absolute path. */
export function realOrResolved(p: string): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync(abs);
  } catch {
    return abs;
  }
}
