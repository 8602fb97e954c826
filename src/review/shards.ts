/**
 * Splitting a pull request's diff into review shards: a pure function of the
 * changed files and the limits, so the plan, every shard job and gather
 * compute the same shards from the same commits (the matrix carries only the
 * shard's number). Files stay whole; a directory stays whole while it fits a
 * shard, else it is split by its subdirectories; the pieces go to the
 * lightest shard, largest first, so shards balance by changed lines.
 */

export interface ShardFile {
  path: string;
  /** Changed lines (added + deleted); 0 for a binary file. */
  lines: number;
}

export interface Shard {
  /** 1-based, in the order of each shard's first path. */
  index: number;
  files: string[];
  lines: number;
}

export interface ShardLimits {
  lines: number;
  files: number;
  /** GitHub runs at most 256 jobs per matrix. */
  maxShards?: number;
}

interface Unit {
  key: string;
  files: ShardFile[];
  lines: number;
}

const MATRIX_LIMIT = 256;

/** How many shards the limits call for (at least one). */
export function shardCount(files: readonly ShardFile[], limits: ShardLimits): number {
  const lines = files.reduce((n, f) => n + f.lines, 0);
  const wanted = Math.max(1, Math.ceil(lines / limits.lines), Math.ceil(files.length / limits.files));
  return Math.min(wanted, limits.maxShards ?? MATRIX_LIMIT, Math.max(1, files.length));
}

/** Directory units no bigger than one shard's share: a directory that does not fit is split by its next path segment. */
function units(files: ShardFile[], depth: number, capLines: number, capFiles: number, out: Unit[]): void {
  const groups = new Map<string, ShardFile[]>();
  for (const f of files) {
    const parts = f.path.split("/");
    // A file directly in this directory is a unit of its own; a subdirectory groups its files.
    const key = parts.length > depth + 1 ? `${parts.slice(0, depth + 1).join("/")}/` : f.path;
    const g = groups.get(key);
    if (g) g.push(f);
    else groups.set(key, [f]);
  }
  for (const [key, group] of groups) {
    const lines = group.reduce((n, f) => n + f.lines, 0);
    const isDir = key.endsWith("/");
    if (!isDir || (lines <= capLines && group.length <= capFiles)) out.push({ key, files: group, lines });
    else units(group, depth + 1, capLines, capFiles, out);
  }
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function planShards(input: readonly ShardFile[], limits: ShardLimits): Shard[] {
  const files = [...input].sort((a, b) => byPath(a.path, b.path));
  if (!files.length) return [];
  const n = shardCount(files, limits);
  const total = files.reduce((s, f) => s + f.lines, 0);
  const capLines = Math.max(1, Math.ceil(total / n));
  const capFiles = Math.max(1, Math.ceil(files.length / n));
  const pieces: Unit[] = [];
  units(files, 0, capLines, capFiles, pieces);
  // Largest first (ties by path), each to the shard it loads least: balanced by lines, file counts kept in view.
  pieces.sort((a, b) => b.lines - a.lines || b.files.length - a.files.length || byPath(a.key, b.key));
  const bins = Array.from({ length: n }, () => ({ files: [] as string[], lines: 0 }));
  const load = (b: { files: string[]; lines: number }, u: Unit) => Math.max((b.lines + u.lines) / capLines, (b.files.length + u.files.length) / capFiles);
  for (const u of pieces) {
    let best = 0;
    for (let i = 1; i < n; i++) if (load(bins[i]!, u) < load(bins[best]!, u)) best = i;
    const bin = bins[best]!;
    bin.files.push(...u.files.map((f) => f.path));
    bin.lines += u.lines;
  }
  return bins
    .filter((b) => b.files.length)
    .map((b) => ({ files: b.files.sort(byPath), lines: b.lines }))
    .sort((a, b) => byPath(a.files[0]!, b.files[0]!))
    .map((b, i) => ({ index: i + 1, ...b }));
}

/** The directories a shard covers, for the summary (at most `max`, then a count). */
export function shardDirs(shard: Pick<Shard, "files">, max = 4, show: (dir: string) => string = (d) => d): string {
  const dirs = [...new Set(shard.files.map((f) => (f.includes("/") ? f.slice(0, f.lastIndexOf("/") + 1) : "./")))].map(show);
  return dirs.length > max ? `${dirs.slice(0, max).join(", ")} and ${dirs.length - max} more` : dirs.join(", ");
}
