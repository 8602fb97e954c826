/**
 * The agent's own commits, read without running git in its repository.
 *
 * After the run the workspace's `.git` is hostile (host-repo.ts says why), so
 * no git process is pointed at it. Instead this file reads HEAD and one ref as
 * bounded data (no symlinks followed, strict formats), and copies only object
 * files (names that look like objects and packs, regular files, no
 * `info/alternates`) into the private repository, where `rev-list` can walk
 * them like any other untrusted objects (as a fetch from a hostile remote would).
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, unlink } from "node:fs/promises";
import path from "node:path";
import { isRealDirectory, linkOrCopy } from "./files.js";
import type { Git } from "./git.js";

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const BRANCH_REF = /^refs\/heads\/(?!.*(?:\.\.|\/\/|@\{|\/\.|\.lock(?:\/|$)))[A-Za-z0-9._/-]+$/;
const LOOSE_DIR = /^[0-9a-f]{2}$/;
const LOOSE_FILE = /^(?:[0-9a-f]{38}|[0-9a-f]{62})$/;
const PACK_FILE = /^pack-[0-9a-f]{40,64}\.(?:pack|idx)$/;
/** More object files than any agent session makes; past it, commits are not listed. */
const MAX_OBJECT_FILES = 200_000;
const MAX_REF_FILE = 4096;
const MAX_PACKED_REFS = 16 * 1024 * 1024;

/** The commits the agent added on top of `base` (oldest first); [] when HEAD did not move or cannot be read safely. */
export async function agentCommits(repo: { git: Git; objectsDir: string; workspace: { gitDir: string; commonDir: string } }, base: string): Promise<string[]> {
  const head = await readAgentHead(repo.workspace.gitDir, repo.workspace.commonDir);
  if (!head || head === base) return [];
  if (!(await importObjects(path.join(repo.workspace.commonDir, "objects"), repo.objectsDir))) return [];
  const log = await repo.git.exec(["rev-list", "--reverse", `${base}..${head}`], { okCodes: [128] });
  return log.exitCode === 0 ? log.stdout.split("\n").filter(Boolean) : [];
}

/** HEAD of the agent's repository as an object id, following at most one branch ref. */
export async function readAgentHead(gitDir: string, commonDir: string): Promise<string | undefined> {
  if (!(await isRealDirectory(gitDir)) || !(await isRealDirectory(commonDir))) return undefined;
  const head = (await readSmallFile(path.join(gitDir, "HEAD"), MAX_REF_FILE))?.trim();
  if (!head) return undefined;
  if (OBJECT_ID.test(head)) return head;
  const ref = /^ref: (\S+)$/.exec(head)?.[1];
  if (!ref || !BRANCH_REF.test(ref)) return undefined;
  const loose = await readRefFile(commonDir, ref);
  if (loose !== undefined) return OBJECT_ID.test(loose) ? loose : undefined;
  const packed = await readSmallFile(path.join(commonDir, "packed-refs"), MAX_PACKED_REFS);
  for (const line of packed?.split("\n") ?? []) {
    const [id, name] = line.split(" ");
    if (name === ref && id && OBJECT_ID.test(id)) return id;
  }
  return undefined;
}

/** refs/heads/… as a loose file, every folder on the way a real directory. */
async function readRefFile(commonDir: string, ref: string): Promise<string | undefined> {
  const parts = ref.split("/");
  let dir = commonDir;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    if (!(await isRealDirectory(dir))) return undefined;
  }
  return (await readSmallFile(path.join(dir, parts.at(-1)!), MAX_REF_FILE))?.trim();
}

/** A regular file's text, opened without following a symlink, or undefined. */
async function readSmallFile(file: string, max: number): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > max) return undefined;
    return (await handle.readFile()).toString("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * Copies object files the private store lacks. Returns false when the
 * folder is not a real directory or holds more files than any session makes.
 */
export async function importObjects(from: string, to: string): Promise<boolean> {
  if (!(await isRealDirectory(from))) return false;
  const files: { src: string; dest: string }[] = [];
  for (const e of await readdir(from, { withFileTypes: true })) {
    if (!e.isDirectory() || !(LOOSE_DIR.test(e.name) || e.name === "pack")) continue;
    const pattern = e.name === "pack" ? PACK_FILE : LOOSE_FILE;
    for (const f of await readdir(path.join(from, e.name), { withFileTypes: true }).catch(() => [])) {
      if (f.isFile() && pattern.test(f.name)) files.push({ src: path.join(from, e.name, f.name), dest: path.join(to, e.name, f.name) });
      if (files.length > MAX_OBJECT_FILES) return false;
    }
  }
  for (const { src, dest } of files) {
    if (await exists(dest)) continue;
    await mkdir(path.dirname(dest), { recursive: true });
    await linkOrCopy(src, dest).catch(() => undefined);
    // link(2) does not follow a symlink swapped in since readdir; such an entry is dropped, never read.
    if (!(await lstat(dest).then((s) => s.isFile(), () => true))) await unlink(dest).catch(() => undefined);
  }
  return true;
}

async function exists(p: string): Promise<boolean> {
  return lstat(p).then(
    () => true,
    () => false,
  );
}

