/**
 * The user-facing Markdown: README.md and every page under docs/. The tests
 * that lint workflows, check links and count words read the docs through here,
 * so a page added to docs/ is covered without touching them.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./harness.js";

/** Absolute paths: README.md first, then docs/*.md in name order. */
export function docFiles(): string[] {
  const dir = path.join(REPO_ROOT, "docs");
  const pages = readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => path.join(dir, f));
  return [path.join(REPO_ROOT, "README.md"), ...pages];
}

/** A file's text, by its path relative to the checkout (`docs/verify.md`). */
export function readDoc(relative: string): string {
  return readFileSync(path.join(REPO_ROOT, relative), "utf8");
}

/** The part of `text` from the line `heading` to the next heading of the same or a higher level. */
export function sectionOf(text: string, heading: string): string {
  const level = /^#+/.exec(heading)![0].length;
  const start = text.search(new RegExp(`^${heading.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*$`, "m"));
  if (start < 0) throw new Error(`no heading '${heading}'`);
  const rest = text.slice(start + heading.length);
  const next = rest.search(new RegExp(`^#{1,${level}} `, "m"));
  return text.slice(start, next < 0 ? undefined : start + heading.length + next);
}

/** The bodies of the ```yaml fenced blocks in `text`, in order. */
export function yamlBlocks(text: string): string[] {
  return [...text.matchAll(/^```yaml\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
}
