/**
 * A backend's session state as a folder that can travel between runs:
 *
 *   session.json        manifest: backend, session id, workspace, files
 *   home/<path>         each file, relative to the agent's HOME
 *
 * Captured after a run from the paths the backend names (sessionPaths),
 * redacted on the way out. Restored into the next run's fresh HOME before
 * the backend writes its own config (so current config always wins over
 * anything saved), and only at paths the backend names: a tampered state
 * folder cannot plant shell profiles, CLI settings or hooks.
 */
import { copyFile, lstat, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { AgentBackend, AgentContext } from "../agents/types.js";
import { AGENT_BACKENDS } from "../config/schema.js";
import type { Logger } from "../logger.js";
import { unuploadablePath } from "../publish/artifact-name.js";
import { redactFileTo, regularFiles } from "../trace/redact-files.js";
import type { Redactor } from "../trace/redact.js";

export const SESSION_MANIFEST = "session.json";
const HOME_DIR = "home";

/** Session ids end up as a CLI argument: keep them to what every CLI prints. */
const SessionId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/, "letters, digits, '.', '_', ':' and '-', not starting with '-'");

export const SessionManifest = z.object({
  version: z.literal(1),
  backend: z.enum(AGENT_BACKENDS),
  agentVersion: z.string().optional(),
  sessionId: SessionId,
  /** The workspace path the session was recorded in (CLIs key sessions by it). */
  workspace: z.string(),
  savedAt: z.string(),
  /** Paths relative to HOME, `/`-separated. */
  files: z.array(z.string()),
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
  info: { sessionId: string | undefined; agentVersion?: string },
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
    raw = JSON.parse(await readFile(path.join(dir, SESSION_MANIFEST), "utf8"));
  } catch (e) {
    return { problem: `${SESSION_MANIFEST} is missing or not JSON (${(e as Error).message})` };
  }
  const parsed = SessionManifest.safeParse(raw);
  if (!parsed.success) return { problem: `${SESSION_MANIFEST} is not valid (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).slice(0, 3).join("; ")})` };
  return { manifest: parsed.data };
}

/**
 * Put saved files into the fresh HOME. Only regular files listed in the
 * manifest and lying under the backend's session paths are restored.
 * Returns how many files were restored and which were refused.
 */
export async function restoreSession(
  backend: AgentBackend,
  ctx: AgentContext,
  fromDir: string,
  manifest: SessionManifest,
): Promise<{ restored: number; refused: string[] }> {
  const prefixes = sessionPrefixes(backend, ctx);
  const home = ctx.layout.home;
  const refused: string[] = [];
  let restored = 0;
  for (const rel of manifest.files) {
    if (!safeRelative(rel) || !within(rel, prefixes)) {
      refused.push(rel);
      continue;
    }
    const src = path.join(fromDir, HOME_DIR, rel);
    const st = await lstat(src).catch(() => undefined);
    if (!st?.isFile()) {
      refused.push(rel);
      continue;
    }
    const dst = path.join(home, rel);
    try {
      await mkdir(path.dirname(dst), { recursive: true });
      await copyFile(src, dst);
      restored++;
    } catch {
      // e.g. a file listed where another entry needs a folder
      refused.push(rel);
    }
  }
  return { restored, refused };
}
