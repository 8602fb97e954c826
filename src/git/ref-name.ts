/**
 * Whether git takes a name as a branch name, decided here rather than by a `git check-ref-format
 * --branch` process per name (a spawn costs more than the check). A port of git's rules
 * (refs.c check_refname_format on `refs/heads/<name>`, plus what `--branch` adds: no leading
 * `-`, not `HEAD`). Stricter than git in one place, on purpose: git would expand `@{-1}` or
 * `@{upstream}` against the repository's reflog and config (agent- or thread-written state);
 * every name with `@{` is refused here, as git refuses it once nothing is expanded.
 */

/** Bytes never allowed in a ref name: controls, DEL, space and `~^:?*[\`. */
const FORBIDDEN = /[\u0000-\u0020\u007f~^:?*[\\]/;

function componentOk(component: string): boolean {
  return component.length > 0 && !component.startsWith(".") && !component.endsWith(".lock");
}

/** Whether `name` is a branch name git accepts (`git check-ref-format --branch`), printed back as it is. */
export function isBranchName(name: string): boolean {
  if (!name || name.startsWith("-") || name === "HEAD") return false;
  if (FORBIDDEN.test(name) || name.includes("..") || name.includes("@{") || name.endsWith(".")) return false;
  return name.split("/").every(componentOk);
}
