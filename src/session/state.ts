/**
 * A backend's session state as a folder that can travel between runs:
 *
 *   session.json        manifest: backend, session id, workspace, files
 *   home/<path>         each file, relative to the agent's HOME
 *
 * Captured after a run from the paths the backend names (sessionPaths),
 * redacted on the way out. A saved state is untrusted data: the agent that
 * produced it was possibly hostile, and an artifact can be replaced between
 * runs. So the manifest is validated with bounded sizes, and restoring puts
 * files into the next run's fresh HOME only when they are regular files
 * listed in the manifest, under the backend's session paths, within the size
 * limits, and not named like configuration a CLI would act on (settings,
 * hooks, MCP or git config): a tampered state cannot plant shell profiles,
 * CLI settings or hooks. Restoring happens before the backend writes its own
 * config, so the files it writes win; the files it does not write (Claude
 * Code's settings.json, for one) are kept out by the path rules alone.
 */
import { constants as fsConstants } from "node:fs";
import { copyFile, lstat, mkdir, readFile, realpath, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import * as z from "../shared/zod.js";
import type { AgentBackend, AgentContext } from "../agents/types.js";
import { AGENT_BACKENDS } from "../config/schema.js";
import type { Logger } from "../logger.js";
import { unuploadablePath } from "../shared/artifact-name.js";
import { redactFileTo, regularFiles } from "../trace/redact-files.js";
import type { Redactor } from "../shared/redact.js";

export const SESSION_MANIFEST = "session.json";
const HOME_DIR = "home";

/** Session ids end up as a CLI argument: keep them to what every CLI prints. */
const SessionId = z
  .string()
  .check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/, "letters, digits, '.', '_', ':' and '-', not starting with '-'"));

/** Limits of what one saved state may restore. */
const SESSION_LIMITS = { maxManifestBytes: 1024 * 1024, maxFiles: 10_000, maxPathLength: 1024, maxTotalBytes: 512 * 1024 * 1024 };

export const SessionManifest = z.object({
  version: z.literal(1),
  backend: z.enum(AGENT_BACKENDS),
  agentVersion: z.optional(z.string().check(z.maxLength(100))),
  sessionId: SessionId,
  /** The workspace path the session was recorded in (CLIs key sessions by it). */
  workspace: z.string().check(z.maxLength(4096)),
  /**
   * The workflow that saved it (`owner/repo/.github/workflows/x.yml`, from
   * GITHUB_WORKFLOW_REF without the ref): another workflow's state is not
   * restored unless the step names its session id. Absent locally.
   */
  workflow: z.optional(z.string().check(z.maxLength(1024))),
  savedAt: z.string().check(z.maxLength(64)),
  /** Paths relative to HOME, `/`-separated. */
  files: z.array(z.string().check(z.maxLength(SESSION_LIMITS.maxPathLength))).check(z.maxLength(SESSION_LIMITS.maxFiles)),
});
export type SessionManifest = z.infer<typeof SessionManifest>;

/** The backend's session paths as HOME-relative prefixes; paths outside HOME are ignored. */
function sessionPrefixes(backend: AgentBackend, ctx: AgentContext): string[] {
  const home = ctx.layout.home;
  return backend
    .sessionPaths(ctx)
    .map((p) => path.relative(home, path.resolve(home, p)).split(path.sep).join("/"))
    .filter((rel) => rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel));
}

function within(rel: string, prefixes: string[]): boolean {
  return prefixes.some((p) => rel === p || rel.startsWith(`${p}/`));
}

/**
 * Names of files a CLI reads as configuration, or that make git or a shell
 * run commands: never restored from a saved state, wherever they sit. Session
 * state is transcripts and databases; none of these belong in it.
 */
const CONFIG_NAMES = new Set([
  "settings.json",
  "settings.local.json",
  "managed-settings.json",
  "config",
  "config.json",
  "config.toml",
  "config.yaml",
  "config.yml",
  ".mcp.json",
  "mcp.json",
  "mcp_config.json",
  "hooks.json",
  "opencode.json",
  "opencode.jsonc",
  ".gitconfig",
  ".gitattributes",
  ".gitmodules",
  "attributes",
  ".bashrc",
  ".bash_profile",
  ".profile",
  ".zshrc",
  ".npmrc",
]);
/** Folders whose files are run or loaded as code or policy. */
const CONFIG_FOLDERS = new Set(["hooks", "plugins", "plugin", "policies", "commands", "extensions"]);

/** Whether a HOME-relative path names configuration (see CONFIG_NAMES). */
export function isConfigPath(rel: string): boolean {
  const parts = rel.toLowerCase().split("/");
  return CONFIG_NAMES.has(parts.at(-1)!) || parts.slice(0, -1).some((p) => CONFIG_FOLDERS.has(p));
}

/** A relative path that stays where it is put: no `..`, not absolute, no empty parts. */
function safeRelative(rel: string): boolean {
  if (!rel || rel.startsWith("/") || rel.includes("\\") || rel.includes("\0")) return false;
  return rel.split("/").every((c) => c !== "" && c !== "." && c !== "..");
}

/**
 * Copy the backend's session files from HOME into `outDir`, redacted, with a
 * manifest. Returns undefined when there is nothing to carry (no session id,
 * no files, a backend without session state).
 */
export async function captureSession(
  backend: AgentBackend,
  ctx: AgentContext,
  info: { sessionId: string | undefined; agentVersion?: string; workflow?: string },
  outDir: string,
  redactor: Redactor,
  log: Logger,
): Promise<SessionManifest | undefined> {
  const id = SessionId.safeParse(info.sessionId);
  if (!id.success) return undefined;
  const home = ctx.layout.home;
  const files: string[] = [];
  for (const prefix of sessionPrefixes(backend, ctx)) {
    const full = path.join(home, prefix);
    const st = await lstat(full).catch(() => undefined);
    if (!st) continue;
    const found = st.isFile() ? { files: [full], skipped: [] } : st.isDirectory() ? await regularFiles(full) : { files: [], skipped: [prefix] };
    for (const s of found.skipped) log.debug(`Session state: left out ${s} (not a regular file).`);
    for (const f of found.files) {
      const rel = path.relative(home, f).split(path.sep).join("/");
      if (files.includes(rel)) continue;
      if (unuploadablePath(rel)) {
        log.debug(`Session state: left out ${rel} (a name artifacts cannot hold).`);
        continue;
      }
      await redactFileTo(f, path.join(outDir, HOME_DIR, rel), redactor);
      files.push(rel);
    }
  }
  if (!files.length) return undefined;
  const manifest: SessionManifest = {
    version: 1,
    backend: backend.name,
    ...(info.agentVersion ? { agentVersion: info.agentVersion } : {}),
    sessionId: id.data,
    workspace: ctx.layout.workspace,
    ...(info.workflow ? { workflow: info.workflow } : {}),
    savedAt: new Date().toISOString(),
    files: files.sort(),
  };
  await writeFile(path.join(outDir, SESSION_MANIFEST), JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}

/** Read and validate a saved state's manifest; a problem is a message, never a crash. */
export async function readSessionManifest(dir: string): Promise<{ manifest: SessionManifest } | { problem: string }> {
  let raw: unknown;
  try {
    const file = path.join(dir, SESSION_MANIFEST);
    const st = await lstat(file);
    if (!st.isFile() || st.size > SESSION_LIMITS.maxManifestBytes)
      return { problem: `${SESSION_MANIFEST} is not a regular file of at most ${SESSION_LIMITS.maxManifestBytes} bytes` };
    raw = JSON.parse(await readFile(file, "utf8"));
  } catch (e) {
    return { problem: `${SESSION_MANIFEST} is missing or not JSON (${(e as Error).message})` };
  }
  const parsed = SessionManifest.safeParse(raw);
  if (!parsed.success) return { problem: `${SESSION_MANIFEST} is not valid (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).slice(0, 3).join("; ")})` };
  return { manifest: parsed.data };
}

/**
 * Put saved files into the fresh HOME. Only regular files listed in the
 * manifest, lying under the backend's session paths, not named like
 * configuration, and reached without a symlink are restored, up to
 * SESSION_LIMITS. Returns how many files were restored and which were refused.
 */
export async function restoreSession(
  backend: AgentBackend,
  ctx: AgentContext,
  fromDir: string,
  manifest: SessionManifest,
): Promise<{ restored: number; refused: string[] }> {
  const prefixes = sessionPrefixes(backend, ctx);
  const home = ctx.layout.home;
  const filesRoot = await realpath(path.join(fromDir, HOME_DIR)).catch(() => undefined);
  const refused: string[] = [];
  let restored = 0;
  let bytes = 0;
  for (const rel of new Set(manifest.files)) {
    if (!filesRoot || !safeRelative(rel) || !within(rel, prefixes) || isConfigPath(rel)) {
      refused.push(rel);
      continue;
    }
    const src = path.join(filesRoot, ...rel.split("/"));
    const st = await lstat(src).catch(() => undefined);
    // A folder on the way that is a link would read from elsewhere (a local state dir can hold links).
    const real = st?.isFile() ? await realpath(src).catch(() => undefined) : undefined;
    if (!st?.isFile() || real !== src || bytes + st.size > SESSION_LIMITS.maxTotalBytes) {
      refused.push(rel);
      continue;
    }
    const dst = path.join(home, ...rel.split("/"));
    try {
      await mkdir(path.dirname(dst), { recursive: true });
      // Never through something already there: HOME is fresh, the backend writes after us.
      await copyFile(src, dst, fsConstants.COPYFILE_EXCL);
      bytes += (await stat(dst)).size;
      restored++;
    } catch {
      // e.g. a file listed where another entry needs a folder
      refused.push(rel);
    }
  }
  return { restored, refused };
}
