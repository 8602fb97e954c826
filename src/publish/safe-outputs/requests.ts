/**
 * The agent's requests file (`outputs/safe-outputs.jsonl`) read as hostile
 * input: the agent may have written it directly, replaced it with a link to
 * a host file, made it huge, or (phase publish) the run job's artifact may
 * have been edited. Read in chunks with bounded memory (an overlong line is
 * skipped, not held), never through a symlink, and each line parsed on its
 * own, so one bad line refuses only itself.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** Bytes of the file read at all; the rest is reported, never parsed. */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** One request: a 64 KiB body escaped as JSON fits several times over. */
export const MAX_LINE_BYTES = 512 * 1024;
/** Requests looked at; more lines are reported as one refusal. */
export const MAX_REQUESTS = 100;

const CHUNK = 1024 * 1024;

export type RawRequest = { line: number; value: Record<string, unknown> } | { line: number; error: string };

export interface RequestsFile {
  requests: RawRequest[];
  /** Problems with the file as a whole (not a regular file, over the size or line count). */
  problems: string[];
}

type Opened = Awaited<ReturnType<typeof open>>;

async function openNoFollow(file: string): Promise<{ fh: Opened } | { problem: string } | undefined> {
  try {
    const fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    if ((await fh.stat()).isFile()) return { fh };
    await fh.close();
    return { problem: "it is not a regular file" };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") return { problem: "it is a symbolic link, which is never followed" };
    return { problem: `it cannot be read (${code ?? "error"})` };
  }
}

/** Splits the file into lines as it is read; a line over MAX_LINE_BYTES is dropped as it grows. */
class LineReader {
  readonly lines: { line: number; text?: string }[] = [];
  private parts: Buffer[] = [];
  private size = 0;
  private overlong = false;
  private lineNo = 1;
  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.add(chunk.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
    this.add(chunk.subarray(start));
  }
  end(): void {
    if (this.size || this.overlong) this.endLine();
  }
  private add(part: Buffer): void {
    if (this.overlong || !part.length) return;
    this.size += part.length;
    if (this.size > MAX_LINE_BYTES) {
      this.overlong = true;
      this.parts = [];
    } else this.parts.push(Buffer.from(part));
  }
  private endLine(): void {
    if (this.overlong) this.lines.push({ line: this.lineNo });
    else {
      const text = Buffer.concat(this.parts).toString("utf8");
      if (text.trim()) this.lines.push({ line: this.lineNo, text });
    }
    this.lineNo++;
    this.parts = [];
    this.size = 0;
    this.overlong = false;
  }
}

export async function readRequests(file: string): Promise<RequestsFile> {
  const opened = await openNoFollow(file);
  if (!opened) return { requests: [], problems: [] };
  if ("problem" in opened) return { requests: [], problems: [`The requests file was not read: ${opened.problem}.`] };
  const problems: string[] = [];
  const reader = new LineReader();
  const buf = Buffer.alloc(CHUNK);
  let total = 0;
  try {
    for (;;) {
      const { bytesRead } = await opened.fh.read(buf, 0, CHUNK, null);
      if (!bytesRead) break;
      total += bytesRead;
      if (total > MAX_FILE_BYTES) {
        problems.push(`The requests file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; the rest of it was not read.`);
        break;
      }
      reader.push(buf.subarray(0, bytesRead));
      if (reader.lines.length > MAX_REQUESTS) break;
    }
  } finally {
    await opened.fh.close();
  }
  if (total <= MAX_FILE_BYTES) reader.end();
  const lines = reader.lines;
  if (lines.length > MAX_REQUESTS) problems.push(`Requests after the first ${MAX_REQUESTS} were ignored.`);
  const requests = lines.slice(0, MAX_REQUESTS).map((l) => (l.text === undefined ? { line: l.line, error: `the request is longer than ${MAX_LINE_BYTES / 1024} KiB` } : parseLine(l.text, l.line)));
  return { requests, problems };
}

function parseLine(text: string, line: number): RawRequest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { line, error: "not a JSON object" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { line, error: "not a JSON object" };
  // A plain copy: no prototype tricks (`__proto__` keys) reach the schemas.
  return { line, value: Object.assign(Object.create(null) as Record<string, unknown>, value) };
}
