import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * A private bare repository's skeleton, as `git init --bare` with an empty template writes it (written
 * here, it saves a git process before the agent starts), with our config only: the format, and `settingsLines` (the host repository: the
 * workspace's hashing settings; the delivery repository: its remote).
 */
export async function initBare(dir: string, settingsLines: string): Promise<void> {
  for (const sub of ["objects", "refs/heads", "refs/tags"]) await mkdir(path.join(dir, sub), { recursive: true });
  await writeFile(path.join(dir, "HEAD"), "ref: refs/heads/master\n");
  await writeFile(path.join(dir, "config"), "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n" + settingsLines);
}
