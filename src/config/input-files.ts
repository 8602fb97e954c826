/**
 * Contents of the file-valued inputs (`instructions-file`, `prompt-file`,
 * `output-schema` as a path, `skills`), read once the event is known:
 *
 *  - on pull request events, a path inside the repository is read from the
 *    base commit's git objects, never from the working tree: the workspace
 *    holds the PR's code (a workflow may check out the head itself), and a PR
 *    must not choose the agent's instructions, task, schema or skills;
 *  - otherwise a path inside the workspace is read from disk, but never
 *    through a symlink that leads out of the workspace (every link on the way
 *    is checked, not only the end), so a file cannot pull in /etc/passwd or a
 *    runner's credentials;
 *  - a path outside the workspace is the workflow's own file (e.g. written to
 *    RUNNER_TEMP by an earlier step) and is read as given.
 *
 * Skills from the workspace or the base commit are copied into a private
 * folder without links: a symlink inside a skill folder is refused, so no
 * copy later can follow it to content outside.
 */
import { chmod, lstat, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { ConfigurationError } from "../errors.js";
import type { Git } from "../git/git.js";
import type { InputFiles, Settings, Skill } from "./schema.js";

/** A file input is text the agent reads: anything larger is a mistake. */
const MAX_INPUT_FILE_BYTES = 4 * 1024 * 1024;
/** Per skill folder. */
const MAX_SKILL_FILES = 1000;
export const MAX_SKILL_BYTES = 64 * 1024 * 1024;
/** Links followed while resolving one path (like the kernel's limit). */
const MAX_LINK_HOPS = 40;

export interface BaseCommitFiles {
  /** git at the repository's top folder. */
  git: Git;
  commit: string;
  /** The repository's top folder: paths inside it are read from `commit`. */
  root: string;
  /** The folder `root` was found from (the step's working directory), when git was asked. */
  foundFrom?: string;
  /** For messages: "the base branch main (abc123…)". */
  describe: string;
}

export interface InputFileOptions {
  /** The folder relative paths are resolved against and links may not leave (the job's workspace; the CLI's cwd). */
  cwd: string;
  /** A private folder outside the workspace for the skills' copies. */
  stagingDir: string;
  /** Set on pull request events. */
  base?: BaseCommitFiles;
}

class InputFileProblem extends Error {}

/** The schema object in `text`, or undefined when it is not a JSON object. */
export function outputSchemaDocument(text: string): Record<string, unknown> | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof doc === "object" && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>) : undefined;
}

type Located = { kind: "base"; rel: string } | { kind: "workspace"; full: string } | { kind: "outside"; full: string };

/** `full` is `root` or lies under it (both absolute). */
export function inside(root: string, full: string): boolean {
  const rel = path.relative(root, full);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** `full` relative to `root` with `/`, or undefined when it lies outside. */
export function repoRelative(root: string, full: string): string | undefined {
  if (!inside(root, full)) return undefined;
  return path.relative(root, full).split(path.sep).join("/");
}

function locate(given: string, o: InputFileOptions): Located {
  const full = path.resolve(o.cwd, given);
  const rel = o.base ? repoRelative(o.base.root, full) : undefined;
  if (rel !== undefined) return { kind: "base", rel };
  return inside(o.cwd, full) ? { kind: "workspace", full } : { kind: "outside", full };
}

/**
 * The real path of `full` (inside `root`), resolving each link on the way and
 * refusing any whose target lies outside `root`, even if a later link leads back.
 */
export function resolveInsideWorkspace(root: string, full: string): string {
  const rootReal = realpathSync(root);
  const queue = path.relative(root, full).split(path.sep).filter((p) => p && p !== ".");
  let cur = rootReal;
  let hops = 0;
  while (queue.length) {
    const part = queue.shift()!;
    if (part === "..") {
      cur = path.dirname(cur);
      if (!inside(rootReal, cur)) throw new InputFileProblem("leads out of the workspace");
      continue;
    }
    const next = path.join(cur, part);
    let st;
    try {
      st = lstatSync(next);
    } catch {
      throw new InputFileProblem("does not exist");
    }
    if (!st.isSymbolicLink()) {
      cur = next;
      continue;
    }
    if (++hops > MAX_LINK_HOPS) throw new InputFileProblem("has too many symlinks on the way");
    const target = readlinkSync(next);
    // `cur` holds no links, so resolving the target against it lexically is exact.
    const abs = path.resolve(cur, target);
    if (!inside(rootReal, abs))
      throw new InputFileProblem(`goes through the symlink '${path.relative(rootReal, next)}' → '${target}', which leads out of the workspace`);
    queue.unshift(...path.relative(rootReal, abs).split(path.sep).filter((p) => p && p !== "."));
    cur = rootReal;
  }
  return cur;
}

interface TreeEntry {
  mode: string;
  type: string;
  sha: string;
  path: string;
}

async function treeEntries(git: Git, commit: string, rel: string, recursive: boolean): Promise<TreeEntry[]> {
  const out = await git.exec(["ls-tree", "-z", "--full-tree", ...(recursive ? ["-r"] : []), commit, "--", rel], { okCodes: [128] });
  return out.stdout
    .split("\0")
    .filter(Boolean)
    .flatMap((line) => {
      const m = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(line);
      return m ? [{ mode: m[1]!, type: m[2]!, sha: m[3]!, path: m[4]! }] : [];
    });
}

async function blobSize(git: Git, sha: string): Promise<number> {
  return Number(await git.text(["cat-file", "-s", sha]));
}

async function readBaseFile(base: BaseCommitFiles, rel: string): Promise<string> {
  const entry = (await treeEntries(base.git, base.commit, rel, false)).find((e) => e.path === rel);
  if (!entry) throw new InputFileProblem(`does not exist on ${base.describe} (on pull request events file inputs are read from the base branch, not from the pull request)`);
  if (entry.mode === "120000") throw new InputFileProblem(`is a symlink on ${base.describe}; name the file itself`);
  if (entry.type !== "blob") throw new InputFileProblem(`is not a file on ${base.describe}`);
  if ((await blobSize(base.git, entry.sha)) > MAX_INPUT_FILE_BYTES) throw new InputFileProblem(`is larger than ${MAX_INPUT_FILE_BYTES} bytes`);
  return (await base.git.exec(["cat-file", "blob", entry.sha])).stdout;
}

async function readDiskFile(full: string): Promise<string> {
  const st = await lstat(full).catch(() => undefined);
  if (!st) throw new InputFileProblem("does not exist");
  if (!st.isFile()) throw new InputFileProblem("is not a regular file");
  if (st.size > MAX_INPUT_FILE_BYTES) throw new InputFileProblem(`is larger than ${MAX_INPUT_FILE_BYTES} bytes`);
  return readFile(full, "utf8");
}

async function readText(given: string, o: InputFileOptions): Promise<string> {
  const at = locate(given, o);
  if (at.kind === "base") return readBaseFile(o.base!, at.rel);
  if (at.kind === "workspace") return readDiskFile(resolveInsideWorkspace(o.cwd, at.full));
  // The workflow's own file: follow it as the workflow wrote it.
  let real: string;
  try {
    real = realpathSync(at.full);
  } catch {
    throw new InputFileProblem("does not exist");
  }
  return readDiskFile(real);
}

class SkillBudget {
  files = 0;
  bytes = 0;
  add(bytes: number): void {
    this.files++;
    this.bytes += bytes;
    if (this.files > MAX_SKILL_FILES) throw new InputFileProblem(`holds more than ${MAX_SKILL_FILES} files`);
    if (this.bytes > MAX_SKILL_BYTES) throw new InputFileProblem(`is larger than ${MAX_SKILL_BYTES} bytes`);
  }
}

/** The skill's files from the base commit, into `dest`; links and submodules refused. */
async function stageBaseSkill(base: BaseCommitFiles, rel: string, dest: string): Promise<void> {
  const prefix = rel ? `${rel}/` : "";
  const entries = (await treeEntries(base.git, base.commit, rel, true)).filter((e) => e.path.startsWith(prefix));
  if (!entries.some((e) => e.path === `${prefix}SKILL.md` && e.type === "blob" && e.mode !== "120000"))
    throw new InputFileProblem(`has no SKILL.md on ${base.describe} (on pull request events skills are read from the base branch, not from the pull request)`);
  const budget = new SkillBudget();
  for (const e of entries) {
    const sub = e.path.slice(prefix.length);
    if (e.mode === "120000") throw new InputFileProblem(`holds a symlink '${sub}' on ${base.describe}; skills are copied without links`);
    if (e.type !== "blob") throw new InputFileProblem(`holds '${sub}', which is not a file (a submodule?)`);
    budget.add(await blobSize(base.git, e.sha));
    const to = path.join(dest, ...sub.split("/"));
    await mkdir(path.dirname(to), { recursive: true });
    await base.git.exec(["cat-file", "blob", e.sha], { stdoutFile: to });
    if (e.mode === "100755") await chmod(to, 0o755);
  }
}

/** A workspace skill folder, copied into `dest` file by file; any symlink, device or socket in it is refused. */
async function stageWorkspaceSkill(dir: string, dest: string, budget = new SkillBudget(), sub = ""): Promise<void> {
  await mkdir(dest, { recursive: true });
  for (const name of (await readdir(dir)).sort()) {
    const from = path.join(dir, name);
    const to = path.join(dest, name);
    const shown = sub ? `${sub}/${name}` : name;
    const st = await lstat(from);
    if (st.isSymbolicLink()) throw new InputFileProblem(`holds a symlink '${shown}'; skills are copied without links (copy the file into the skill instead)`);
    if (st.isDirectory()) await stageWorkspaceSkill(from, to, budget, shown);
    else if (st.isFile()) {
      budget.add(st.size);
      await writeFile(to, await readFile(from), { mode: st.mode & 0o111 ? 0o755 : 0o644 });
    } else throw new InputFileProblem(`holds '${shown}', which is not a regular file`);
  }
}

async function readSkill(given: string, index: number, o: InputFileOptions): Promise<Skill> {
  const at = locate(given, o);
  const name = path.basename(path.resolve(o.cwd, given));
  // One folder per skill keeps the folder's own name (the backends copy it under that name).
  const dest = path.join(o.stagingDir, "skills", String(index), name);
  if (at.kind === "base") {
    await stageBaseSkill(o.base!, at.rel, dest);
    return { name, path: dest };
  }
  if (at.kind === "workspace") {
    const real = resolveInsideWorkspace(o.cwd, at.full);
    const manifest = await lstat(path.join(real, "SKILL.md")).catch(() => undefined);
    if (!manifest?.isFile()) throw new InputFileProblem(`has no SKILL.md (looked in ${real})`);
    await stageWorkspaceSkill(real, dest);
    return { name, path: dest };
  }
  const manifest = await lstat(path.join(at.full, "SKILL.md")).catch(() => undefined);
  if (!manifest) throw new InputFileProblem(`has no SKILL.md (looked in ${at.full})`);
  return { name, path: at.full };
}

/**
 * Settings with every file input read (and `inputFiles` emptied). All
 * problems are reported at once, each naming its input.
 */
export async function readInputFiles(settings: Settings, o: InputFileOptions): Promise<Settings> {
  const files: InputFiles = settings.inputFiles;
  const problems: string[] = [];
  const attempt = async <T>(input: string, given: string, read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (e) {
      if (!(e instanceof InputFileProblem)) throw e;
      problems.push(`Input '${input}': '${given}' ${e.message}.`);
      return undefined;
    }
  };

  const instructions = files.instructions !== undefined ? await attempt("instructions-file", files.instructions, () => readText(files.instructions!, o)) : undefined;
  let prompt: string | undefined;
  if (files.prompt !== undefined) {
    prompt = await attempt("prompt-file", files.prompt, () => readText(files.prompt!, o));
    if (prompt !== undefined && !prompt.trim()) problems.push(`Input 'prompt-file': '${files.prompt}' is empty.`);
  }
  let outputSchema: Record<string, unknown> | undefined;
  if (files.outputSchema !== undefined) {
    const text = await attempt("output-schema", files.outputSchema, () => readText(files.outputSchema!, o));
    if (text !== undefined) {
      outputSchema = outputSchemaDocument(text);
      if (!outputSchema) problems.push(`Input 'output-schema': '${files.outputSchema}' must hold a JSON Schema object.`);
    }
  }
  const skills: Skill[] = [];
  for (const [i, folder] of files.skills.entries()) {
    const skill = await attempt("skills", folder, () => readSkill(folder, i, o));
    if (skill) skills.push(skill);
  }
  if (problems.length) throw new ConfigurationError(problems);

  return {
    ...settings,
    agent: { ...settings.agent, ...(instructions !== undefined ? { instructions } : {}), skills: [...settings.agent.skills, ...skills] },
    run: { ...settings.run, ...(prompt !== undefined ? { prompt } : {}), ...(outputSchema ? { outputSchema } : {}) },
    inputFiles: { skills: [] },
  };
}

/** Where file inputs read from a commit or copied out of the workspace are staged for the run. */
export function inputStagingDir(runDir: string): string {
  return path.join(runDir, "inputs");
}
