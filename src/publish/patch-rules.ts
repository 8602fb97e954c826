/**
 * What Agent Runner will deliver, as one check of a tree against the tree it
 * is committed on. Both doors use it: validate-patch.ts (the patch applied to
 * its base commit) and delivery (the patch applied, maybe with a 3-way merge,
 * onto the branch tip: the tree that is really committed). A merge can give a
 * tree the patch alone did not (a link that resolves differently next to the
 * tip's own links, a line already in the base but gone from the tip), so the
 * committed tree is checked again, against the parent it is committed on.
 *
 * Refused in what changed between the two trees:
 * - a path that is absolute, climbs out with `..`, enters a `.git` folder, or
 *   lies beyond a symlink;
 * - a gitlink (submodule entry) added, changed or removed, and any
 *   `.gitmodules`: they make a later `git submodule update` (or a checkout with
 *   `submodule.recurse`) fetch and check out code from a URL the agent chose;
 * - `.lfsconfig`: it points git-lfs, which runs on checkout and push, at a
 *   server the agent chose;
 * - a `.gitattributes` line (any folder) that names a `filter=`, `diff=` or
 *   `merge=` driver, directly or through a macro: a driver is a command that any
 *   later git with that driver configured (git-lfs is everywhere) runs on the
 *   files the agent picked. A `.gitattributes` that is a symlink is refused too
 *   (its content could not be checked line by line). `text`, `eol`,
 *   `working-tree-encoding`, `ident`, `export-*` and `linguist-*` only change
 *   how content is converted or shown, never run anything, so they stay allowed;
 * - a file written at a path whose attributes name a `filter` (Git LFS,
 *   git-crypt): git stores the filter's output (a pointer, cipher text) and
 *   Agent Runner runs no filter, so the commit would hold the wrong bytes;
 *   deleting, moving unchanged or chmod-ing such a file stays allowed;
 * - a symlink that is `.github` or lies inside it, or that leads into `.github`,
 *   outside the repository, into `.git` or round in a loop (an unchanged link
 *   the parent already had is not the agent's doing and stays);
 * - files under `.github/workflows/` or `.github/actions/` (also when a link
 *   in `.github` makes a changed file one of them), unless
 *   `allow-workflow-changes: true`.
 *
 * Only plumbing that reads objects is used (diff-tree, ls-tree, cat-file):
 * nothing here converts content (diff-tree's numstat runs with --no-textconv
 * and --no-ext-diff), so no attribute or config of any repository can make it
 * run a command.
 */
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { Git } from "../git/git.js";
import { treeDiff } from "../git/tree-diff.js";
import { GHA_CREDS_FILE } from "../shared/cloud.js";

export const ALLOW_WORKFLOW_INPUT = "allow-workflow-changes";

export const GITLINK_MODE = "160000";
export const SYMLINK_MODE = "120000";
export const NO_MODE = "000000";
/** Link hops followed before a chain counts as a loop (the kernel's limit is 40). */
export const MAX_LINK_HOPS = 40;
/** Paths through links considered for one changed file before giving up (a pathological tree). */
export const MAX_ALIASES = 2000;
/**
 * Alias-walk steps (look-ups and names found) for all changed files of one
 * tree together: a tree of many links and a patch of many files cannot make
 * the check run for minutes. Past it, a change counts as protected.
 */
export const MAX_ALIAS_STEPS = 1_000_000;
/** Attributes whose value names a driver: a command from git config runs for the matched files. */
const DRIVER_ATTRIBUTES = new Set(["filter", "diff", "merge"]);

export interface TreePolicy {
  allowWorkflowChanges: boolean;
}

export interface TreeProblem {
  /** The path the problem is about. */
  file: string;
  message: string;
  /** The input that would allow it, when one does. */
  allowedBy?: typeof ALLOW_WORKFLOW_INPUT;
}

export interface TreeCheck {
  /** Paths that differ between the trees (renames: both sides), in git's order. */
  changedFiles: string[];
  problems: TreeProblem[];
}

/** One entry that differs between two trees, as `git diff-tree --raw` gives it. */
export interface Change {
  path: string;
  oldMode: string;
  newMode: string;
  oldSha: string;
  newSha: string;
}

/** Code points HFS+ ignores in names: `.git\u200cattributes` is `.gitattributes` on a Mac. */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * Text case folded as a checkout on macOS or Windows may compare it. Upper
 * case first: NTFS compares through an upper-case table and APFS folds, so
 * `ſ` (long s) and `ı` (dotless i) are `S` and `I` there, while
 * `toLowerCase` alone leaves them as they are (`.huſky` would pass for an
 * ordinary name). Canonical normalization on both sides: APFS (and HFS+)
 * treat `é` and `e` + U+0301 as one name, and upper-casing can decompose
 * (`ǰ` has no upper-case letter of its own). Compatibility forms (NFKC:
 * full-width letters, ligatures) are not folded by either file system, so
 * they are left; a fold that joins more names than a file system does only
 * protects more.
 */
export function foldCase(text: string): string {
  // ASCII (nearly every path) folds the same either way, without the two normalizations.
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  return text.normalize("NFC").toUpperCase().toLowerCase().normalize("NFC");
}

/**
 * A path component as a checkout on any system could see it: case folded,
 * HFS-ignored code points dropped, NTFS's trailing dots and spaces dropped.
 */
export function folded(component: string): string {
  return foldCase(component.replace(HFS_IGNORED, "")).replace(/[. ]+$/, "");
}

/** A path problem, or undefined when the path is an ordinary repository path. */
export function pathProblem(p: string): string | undefined {
  if (p === "" || p.includes("\0")) return `'${p}' is not a valid path`;
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return `'${p}' is an absolute path`;
  const parts = p.split(/[/\\]/);
  if (parts.some((c) => c === "..")) return `'${p}' climbs out of the repository with '..'`;
  // Folded: on macOS and Windows checkouts `.GIT`, `.git.` and `GIT~1` are the same folder.
  if (parts.some((c) => folded(c) === ".git" || /^git~\d+$/.test(folded(c))))
    return `'${p}' is inside a .git folder (hooks and config there would run code)`;
  if (GHA_CREDS_FILE.test(parts[parts.length - 1]!))
    return `'${p}' is named like the cloud credentials file google-github-actions/auth writes (gha-creds-*.json), which is never delivered`;
  return undefined;
}

/** Which of git's special files a path names, folded, or by an NTFS 8.3 short name (the ones git's own fsck knows). */
function specialFile(p: string): "gitmodules" | "gitattributes" | "lfsconfig" | undefined {
  const name = folded(p.split("/").pop() ?? "");
  if (name === ".gitmodules" || /^(gitmod|gi7eba)~\d+$/.test(name)) return "gitmodules";
  if (name === ".gitattributes" || /^(gitatt|gi7d29)~\d+$/.test(name)) return "gitattributes";
  if (name === ".lfsconfig") return "lfsconfig";
  return undefined;
}

/** `.github` itself or anything in it (folded: a Windows runner checks `.GitHub./actions` out as `.github/actions`). */
const inGithub = (p: string) => folded(p.split("/")[0]!) === ".github";

/** Files GitHub runs as workflow or local action code: `.github/workflows/**` and `.github/actions/**`. */
export function isWorkflowFile(p: string): boolean {
  const [top, dir] = p.split("/").map(folded);
  return top === ".github" && (dir === "workflows" || dir === "actions");
}

type Resolved = { kind: "ok"; path: string } | { kind: "escapes" | "git" | "loop" };

/** Where a symlink leads, following other links of the same tree. */
function resolveLink(linkPath: string, links: ReadonlyMap<string, string>): Resolved {
  const first = links.get(linkPath) ?? "";
  if (first.startsWith("/")) return { kind: "escapes" };
  const resolved = linkPath.split("/").slice(0, -1);
  let queue = first.split("/");
  let hops = 0;
  while (queue.length) {
    const comp = queue.shift()!;
    if (comp === "" || comp === ".") continue;
    if (comp === "..") {
      if (!resolved.length) return { kind: "escapes" };
      resolved.pop();
      continue;
    }
    resolved.push(comp);
    if (folded(comp) === ".git") return { kind: "git" };
    const target = links.get(resolved.join("/"));
    if (target !== undefined) {
      if (++hops > MAX_LINK_HOPS) return { kind: "loop" };
      if (target.startsWith("/")) return { kind: "escapes" };
      resolved.pop();
      queue = [...target.split("/"), ...queue];
    }
  }
  return { kind: "ok", path: resolved.join("/") };
}

/**
 * Where a symlink leads: "escapes" when it leaves the repository (or goes
 * absolute), "git" when it enters `.git`, "github" when it ends in `.github`,
 * "loop" for an endless chain, "ok" otherwise.
 */
export function symlinkVerdict(linkPath: string, links: ReadonlyMap<string, string>): "ok" | "escapes" | "git" | "github" | "loop" {
  const r = resolveLink(linkPath, links);
  if (r.kind !== "ok") return r.kind;
  return inGithub(r.path) ? "github" : "ok";
}

/** Every name `p` is also reachable by through the tree's links (`docs/x` → `.github/actions/x` when `.github/actions` → `../docs`). */
function aliasesOf(p: string, linkDirs: ReadonlyArray<[link: string, real: string]>): string[] {
  const seen = new Set([p]);
  const queue = [p];
  while (queue.length && seen.size < MAX_ALIASES) {
    const q = queue.shift()!;
    for (const [link, real] of linkDirs) {
      const under = real === "" ? q : q === real ? "" : q.startsWith(`${real}/`) ? q.slice(real.length + 1) : undefined;
      if (under === undefined) continue;
      const alias = under ? `${link}/${under}` : link;
      if (!seen.has(alias)) {
        seen.add(alias);
        queue.push(alias);
      }
    }
  }
  seen.delete(p);
  return [...seen];
}

/** The raw diff of two trees (deliver-api.ts and binaryChanges ask the same: one answer per step, git/tree-diff.ts). */
export async function treeChanges(git: Git, fromTree: string, toTree: string): Promise<Change[]> {
  return (await treeDiff(git, fromTree, toTree)).changes.map(({ path, oldMode, newMode, oldSha, newSha }) => ({ path, oldMode, newMode, oldSha, newSha }));
}

/** Symlinks of a tree (path → blob), and its plain `.gitattributes` files (path → blob). */
async function treeBlobs(git: Git, tree: string): Promise<{ links: Map<string, string>; attributes: Map<string, string> }> {
  const out = await git.exec(["ls-tree", "-r", "-z", "--full-tree", tree], { byObjectIds: true });
  const links = new Map<string, string>();
  const attributes = new Map<string, string>();
  for (const rec of out.stdout.split("\0")) {
    const m = /^(\d{6}) blob ([0-9a-f]+)\t(.*)$/s.exec(rec);
    if (!m) continue;
    if (m[1] === SYMLINK_MODE) links.set(m[3]!, m[2]!);
    else if (specialFile(m[3]!) === "gitattributes") attributes.set(m[3]!, m[2]!);
  }
  return { links, attributes };
}

const linkBlobs = async (git: Git, tree: string) => (await treeBlobs(git, tree)).links;

/** Blob contents, byte-exact (read through a file: a pipe decoded as text would garble non-UTF-8 bytes). */
export async function readBlobs(git: Git, shas: Iterable<string>, scratchDir: string): Promise<Map<string, Buffer>> {
  const wanted = [...new Set(shas)];
  const blobs = new Map<string, Buffer>();
  if (!wanted.length) return blobs;
  const file = path.join(scratchDir, `blobs-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  try {
    await git.exec(["cat-file", "--batch"], { input: wanted.join("\n") + "\n", stdoutFile: file });
    let rest = await readFile(file);
    for (const sha of wanted) {
      const nl = rest.indexOf(0x0a);
      const header = rest.subarray(0, nl).toString("latin1").split(" ");
      const size = Number(header[2]);
      if (header[0] !== sha || header[1] !== "blob" || !Number.isFinite(size)) throw new Error(`cannot read blob ${sha}: ${header.join(" ")}`);
      blobs.set(sha, rest.subarray(nl + 1, nl + 1 + size));
      rest = rest.subarray(nl + 1 + size + 1);
    }
    return blobs;
  } finally {
    await rm(file, { force: true });
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
/** Text, or undefined when the bytes are not UTF-8 (then names could not be compared reliably). */
function text(b: Buffer | undefined): string | undefined {
  if (!b) return "";
  try {
    return utf8.decode(b);
  } catch {
    return undefined;
  }
}

/** Symlink targets (path → target); links whose name or target is not UTF-8 text are left out and listed. */
async function linkTargets(git: Git, blobs: Map<string, string>, scratchDir: string): Promise<{ links: Map<string, string>; unreadable: string[] }> {
  const contents = await readBlobs(git, blobs.values(), scratchDir);
  const links = new Map<string, string>();
  const unreadable: string[] = [];
  for (const [p, sha] of blobs) {
    const target = text(contents.get(sha));
    // U+FFFD in a path means git's output was not UTF-8 either: the name cannot be matched against targets.
    if (target === undefined || /[\0\ufffd]/.test(target) || p.includes("\ufffd")) unreadable.push(p);
    else links.set(p, target);
  }
  return { links, unreadable };
}

interface AttributeLine {
  /** The line as written, trimmed. */
  line: string;
  /** `[attr]name` for a macro definition. */
  macro?: string;
  /** Attribute tokens: `name`, `-name`, `!name`, `name=value`. */
  attrs: string[];
}

/** gitattributes lines as git reads them: `#` comments, a pattern (maybe "quoted"), then attributes. */
function attributeLines(content: string): AttributeLine[] {
  const lines: AttributeLine[] = [];
  for (const raw of content.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const quoted = line.startsWith('"') ? /^"(?:[^"\\]|\\.)*"/.exec(line)?.[0] : undefined;
    const pattern = quoted ?? line.split(/\s/)[0]!;
    const attrs = line.slice(pattern.length).trim().split(/\s+/).filter(Boolean);
    const macro = /^\[attr\](\S+)$/.exec(pattern)?.[1];
    lines.push({ line: line.replace(/\s+/g, " "), ...(macro ? { macro } : {}), attrs });
  }
  return lines;
}

/** Macro names (root `.gitattributes`, the only place git reads them) that, set, assign a driver. */
function driverMacros(root: AttributeLine[]): Set<string> {
  const defs = new Map(root.filter((l) => l.macro).map((l) => [l.macro!, l.attrs]));
  const found = new Set<string>();
  // A macro may set another macro: repeat until nothing new is found.
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, attrs] of defs)
      if (!found.has(name) && attrs.some((a) => assignsDriver(a, found))) {
        found.add(name);
        grew = true;
      }
  }
  return found;
}

function assignsDriver(attr: string, macros: ReadonlySet<string>): boolean {
  const eq = attr.indexOf("=");
  // Case-insensitive on purpose: refusing a harmless `Filter=` costs nothing.
  if (eq > 0) return DRIVER_ATTRIBUTES.has(attr.slice(0, eq).toLowerCase());
  return macros.has(attr);
}

/** Lines of the new file that assign a driver and were not in the old one. */
function addedDriverLines(oldContent: string, newContent: string, macros: ReadonlySet<string>): string[] {
  const before = new Set(attributeLines(oldContent).map((l) => l.line));
  return attributeLines(newContent)
    .filter((l) => !before.has(l.line) && l.attrs.some((a) => assignsDriver(a, macros)))
    .map((l) => l.line);
}

/** Lists read from both trees once: their symlinks with targets. */
export interface TreeLinks {
  links: Map<string, string>;
  unreadable: string[];
}

/** Every symlink of `tree` with its target, read from the objects (never from a work tree). */
export async function treeLinks(git: Git, tree: string, scratchDir: string): Promise<TreeLinks> {
  return linkTargets(git, await linkBlobs(git, tree), scratchDir);
}

/**
 * Check `toTree` (what would be committed) against `fromTree` (its parent, or
 * the patch's base commit). Returns every problem found, each naming its file.
 */
export async function checkTree(git: Git, fromTree: string, toTree: string, policy: TreePolicy, scratchDir: string): Promise<TreeCheck> {
  const changes = await treeChanges(git, fromTree, toTree);
  const changedFiles = changes.map((c) => c.path);
  const problems: TreeProblem[] = [];
  if (!changes.length) return { changedFiles, problems };
  const add = (file: string, message: string, allowedBy?: typeof ALLOW_WORKFLOW_INPUT) => problems.push({ file, message, ...(allowedBy ? { allowedBy } : {}) });

  const listed = await treeBlobs(git, toTree);
  const after = await linkTargets(git, listed.links, scratchDir);
  // The parent's links only matter for a link that leads somewhere bad: read them only then.
  const before = async () => linkTargets(git, await linkBlobs(git, fromTree), scratchDir);
  const links = after.links;
  const changedLinks = new Set(changes.filter((c) => c.newMode === SYMLINK_MODE).map((c) => c.path));

  for (const c of changes) {
    const pathIssue = pathProblem(c.path);
    if (pathIssue) {
      add(c.path, pathIssue);
      continue;
    }
    const parentLink = c.path
      .split("/")
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join("/"))
      .find((dir) => links.has(dir) || after.unreadable.includes(dir));
    if (parentLink && c.newMode !== NO_MODE) add(c.path, `'${c.path}' lies beyond the symlink '${parentLink}'`);
    if (c.oldMode === GITLINK_MODE || c.newMode === GITLINK_MODE) {
      const what = c.oldMode === NO_MODE ? "adds" : c.newMode === NO_MODE ? "removes" : "changes";
      add(c.path, `it ${what} the submodule (gitlink) '${c.path}'; Agent Runner never delivers submodule changes (no input allows it)`);
    }
    const special = specialFile(c.path);
    if (special === "gitmodules") add(c.path, `it changes '${c.path}', which says where submodules are fetched from; Agent Runner never delivers it (no input allows it)`);
    if (special === "lfsconfig") add(c.path, `it changes '${c.path}', which says which server git-lfs talks to; Agent Runner never delivers it (no input allows it)`);
    if (special === "gitattributes" && c.newMode === SYMLINK_MODE)
      add(c.path, `'${c.path}' is a symlink; a .gitattributes must be a plain file (no input allows it)`);
    if (isWorkflowFile(c.path) && !policy.allowWorkflowChanges) add(c.path, "", ALLOW_WORKFLOW_INPUT);
  }

  await checkAttributes(git, changes, toTree, scratchDir, add);
  await checkFilteredFiles(git, changes, toTree, listed.attributes, scratchDir, add);
  await checkLinks(changes, before, after, changedLinks, add);
  if (!policy.allowWorkflowChanges) checkWorkflowAliases(changes, links, add);
  return { changedFiles, problems: dedupe(problems) };
}

type AddProblem = (file: string, message: string, allowedBy?: typeof ALLOW_WORKFLOW_INPUT) => void;

async function checkAttributes(git: Git, changes: Change[], toTree: string, scratchDir: string, add: AddProblem): Promise<void> {
  const edited = changes.filter((c) => specialFile(c.path) === "gitattributes" && c.newMode !== NO_MODE && c.newMode !== SYMLINK_MODE && c.newMode !== GITLINK_MODE);
  if (!edited.length) return;
  // Macros come from the root .gitattributes of the new tree, changed or not.
  const root = await git.exec(["ls-tree", "-z", toTree, "--", ".gitattributes"]);
  const rootSha = /^100\d{3} blob ([0-9a-f]+)\t/.exec(root.stdout)?.[1];
  const shas = edited.flatMap((c) => [c.newSha, ...(c.oldMode !== NO_MODE && c.oldMode !== SYMLINK_MODE ? [c.oldSha] : [])]);
  const blobs = await readBlobs(git, rootSha ? [...shas, rootSha] : shas, scratchDir);
  const rootText = rootSha ? text(blobs.get(rootSha)) ?? "" : "";
  const macros = driverMacros(attributeLines(rootText));
  for (const c of edited) {
    const now = text(blobs.get(c.newSha));
    const was = c.oldMode === NO_MODE || c.oldMode === SYMLINK_MODE ? "" : text(blobs.get(c.oldSha)) ?? "";
    if (now === undefined) {
      add(c.path, `'${c.path}' is not UTF-8 text, so its attributes cannot be checked (no input allows it)`);
      continue;
    }
    const lines = addedDriverLines(was, now, macros);
    if (lines.length)
      add(
        c.path,
        `it adds ${lines.map((l) => `'${l}'`).join(", ")} to '${c.path}': filter, diff and merge drivers run commands in every later git that has them configured; Agent Runner never delivers them (no input allows it)`,
      );
  }
}

/**
 * Files a `filter` driver stores (Git LFS, git-crypt): the blob git keeps is
 * the filter's output (an LFS pointer, cipher text), never the bytes in the
 * work tree. Agent Runner runs no filters, so a file the agent wrote there
 * would be committed as it is: a raw file where an LFS pointer belongs, a
 * pointer to an object no LFS server holds, or a git-crypt file in plain
 * text. Deleting such a file, changing only its mode, or moving it unchanged
 * (same blob) needs no filter and stays allowed.
 */
async function checkFilteredFiles(git: Git, changes: Change[], toTree: string, attributes: Map<string, string>, scratchDir: string, add: AddProblem): Promise<void> {
  const written = changes.filter((c) => /^100(644|755)$/.test(c.newMode) && c.newSha !== c.oldSha);
  if (!written.length || !attributes.size) return;
  const blobs = await readBlobs(git, attributes.values(), scratchDir);
  // Most repositories name no filter at all: then git is not asked.
  if (![...blobs.values()].some((b) => /filter\s*=|\[attr\]/i.test(b.toString("latin1")))) return;
  const writtenShas = new Set(written.map((c) => c.newSha));
  // A deleted file whose blob reappears elsewhere: a move, allowed when both places share the filter.
  const sources = changes.filter((c) => c.newMode === NO_MODE && writtenShas.has(c.oldSha));
  const filters = await filterOf(git, toTree, [...written, ...sources].map((c) => c.path), scratchDir);
  for (const c of written) {
    const value = filters.get(c.path);
    if (value === undefined) continue;
    if (sources.some((s) => s.oldSha === c.newSha && filters.get(s.path) === value)) continue;
    add(
      c.path,
      value === "lfs"
        ? `'${c.path}' is stored with Git LFS ('filter=lfs' in .gitattributes): Agent Runner commits a file's bytes as they are and cannot upload LFS objects, so the commit would hold a raw file, or a pointer to an object no LFS server has, where an LFS pointer belongs; commit LFS files yourself with git-lfs (no input allows it)`
        : `'${c.path}' passes through the '${value}' filter ('filter=${value}' in .gitattributes): Agent Runner runs no filters, so it would commit the bytes of the work tree where the filter's output belongs (no input allows it)`,
    );
  }
}

/** The filter driver `tree`'s own attributes name for each path (paths with none are left out). */
async function filterOf(git: Git, tree: string, paths: string[], scratchDir: string): Promise<Map<string, string>> {
  const env = { GIT_INDEX_FILE: path.join(scratchDir, `attr-index-${process.pid}-${Math.random().toString(36).slice(2)}`) };
  try {
    // `--cached`: the attributes of `tree` itself, read from an index of it (no work tree, no config, no system file).
    await git.exec(["read-tree", tree], { env });
    const out = await git.exec(["check-attr", "--cached", "-z", "--stdin", "filter"], { env, input: paths.map((p) => `${p}\0`).join("") });
    const fields = out.stdout.split("\0");
    const found = new Map<string, string>();
    for (let i = 0; i + 2 < fields.length; i += 3) {
      const value = fields[i + 2]!;
      if (value !== "unspecified" && value !== "unset" && value !== "set") found.set(fields[i]!, value);
    }
    return found;
  } finally {
    await rm(env.GIT_INDEX_FILE, { force: true });
  }
}

async function checkLinks(changes: Change[], parent: () => Promise<TreeLinks>, after: TreeLinks, changedLinks: Set<string>, add: AddProblem): Promise<void> {
  // A link whose name or target is not UTF-8 cannot be matched against the others: no new link is checked next to one.
  if (after.unreadable.length)
    for (const p of changedLinks)
      add(
        p,
        after.unreadable.includes(p)
          ? `the name or target of symlink '${p}' is not UTF-8 text, so where it leads cannot be checked (no input allows it)`
          : `symlink '${p}' cannot be checked next to symlinks whose name or target is not UTF-8 (${after.unreadable.join(", ")}; no input allows it)`,
      );
  for (const c of changes) {
    if (c.newMode !== SYMLINK_MODE || !inGithub(c.path)) continue;
    add(c.path, `'${c.path}' is a symlink in .github: it would make files outside .github count as workflows or actions (no input allows it)`);
  }
  // Every link of the new tree, changed or not: the same link can lead elsewhere next to other links.
  let before: TreeLinks | undefined;
  for (const [p, target] of after.links) {
    if (inGithub(p) && changedLinks.has(p)) continue;
    const verdict = symlinkVerdict(p, after.links);
    if (verdict === "ok") continue;
    before ??= await parent();
    if (before.links.get(p) === target && symlinkVerdict(p, before.links) === verdict) continue;
    add(
      p,
      verdict === "git"
        ? `symlink '${p}' → '${target}' points into .git`
        : verdict === "loop"
          ? `symlink '${p}' → '${target}' is part of an endless chain of links`
          : verdict === "github"
            ? `symlink '${p}' → '${target}' points into .github (what is written through it would land there; no input allows it)`
            : `symlink '${p}' → '${target}' points outside the repository`,
    );
  }
}

/** A changed file that is a workflow or action through a link in `.github` counts as one. */
function checkWorkflowAliases(changes: Change[], links: Map<string, string>, add: AddProblem): void {
  if (![...links.keys()].some(inGithub)) return;
  const linkDirs: Array<[string, string]> = [];
  for (const p of links.keys()) {
    const r = resolveLink(p, links);
    if (r.kind === "ok") linkDirs.push([p, r.path]);
  }
  for (const c of changes) {
    if (isWorkflowFile(c.path)) continue;
    const alias = aliasesOf(c.path, linkDirs).find(isWorkflowFile);
    if (alias) add(c.path, `'${c.path}' is '${alias}' through a symlink in .github`, ALLOW_WORKFLOW_INPUT);
  }
}

function dedupe(problems: TreeProblem[]): TreeProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.file}\0${p.message}\0${p.allowedBy ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * One sentence per problem. Workflow files are grouped in one sentence naming
 * the input that allows them; the rest say that no input does.
 */
export function describeProblems(problems: TreeProblem[]): string[] {
  const workflow = problems.filter((p) => p.allowedBy === ALLOW_WORKFLOW_INPUT);
  const others = problems.filter((p) => p.allowedBy !== ALLOW_WORKFLOW_INPUT).map((p) => p.message);
  const details = workflow.filter((p) => p.message).map((p) => p.message);
  const files = [...new Set(workflow.map((p) => p.file))];
  return [
    ...new Set(others),
    ...(files.length
      ? [
          `it changes workflow files (${files.join(", ")}${details.length ? `; ${details.join("; ")}` : ""}); set '${ALLOW_WORKFLOW_INPUT}: true' to deliver changes to .github/workflows/ and .github/actions/.`,
        ]
      : []),
  ];
}
