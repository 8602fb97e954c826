// Helpers shared by npm run bench and npm run bench:floor.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A repository of `fileCount` small files in folders of 100, one commit, objects in one pack (BENCH_LOOSE=1 keeps them loose). */
export function makeRepo(fileCount, prefix = "bench-repo-") {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: dir });
  for (let i = 0; i < fileCount; i++) {
    const sub = path.join(dir, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(sub);
    writeFileSync(path.join(sub, `f${i}.txt`), `file ${i}\n`);
  }
  execFileSync("git", ["add", "-A"], { cwd: dir });
  // No background auto-gc racing the runs; objects in one pack, as a checkout leaves them.
  execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", "-c", "gc.auto=0", "commit", "-qm", "init"], { cwd: dir });
  if (process.env.BENCH_LOOSE !== "1") execFileSync("git", ["repack", "-adq"], { cwd: dir });
  return dir;
}
