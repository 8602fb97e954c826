/** Artifact names and links: plain functions, free of the artifact client (the input parser uses them). */

/** Characters the artifact service refuses in names (it runs on NTFS-minded rules). */
const FORBIDDEN_NAME_CHARS = /[":<>|*?\r\n\\/]/;
/** …and in the paths of uploaded files. */
const FORBIDDEN_PATH_CHARS = /[":<>|*?\r\n]/;

/** True when the artifact service would refuse a file at this path (the whole upload would fail). */
export function unuploadablePath(relativePath: string): boolean {
  return FORBIDDEN_PATH_CHARS.test(relativePath);
}

export function artifactNameProblem(name: string): string | undefined {
  if (!name.trim()) return "must not be empty.";
  if (FORBIDDEN_NAME_CHARS.test(name)) return `'${name}' contains a character artifact names may not have (" : < > | * ? \\ / or a line break).`;
  return undefined;
}

/** The page a person opens to download an artifact of this workflow run; undefined outside one (CLI). */
export function artifactUrl(host: { serverUrl: string; repository?: string; runId?: string }, artifactId: number): string | undefined {
  if (!host.repository || !host.runId) return undefined;
  return `${host.serverUrl.replace(/\/+$/, "")}/${host.repository}/actions/runs/${host.runId}/artifacts/${artifactId}`;
}

