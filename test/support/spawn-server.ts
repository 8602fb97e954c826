// Starts the short commands of one vitest worker (git, mostly) on its behalf: see spawn-helper.ts, which
// runs this file with Node (its types are stripped; nothing here needs more than that).
//
// A fork copies the page tables of the process that forks, and the child tears the copy down again at
// exec: the cost grows with the memory the parent has touched. A vitest worker has touched 50-120 MB and
// forks thousands of git processes in a run; this process touches little beyond what every Node
// process maps, so each fork from here costs a fraction of one from the worker. It runs what it is
// asked, as asked, and relays the result.
//
// Protocol, one JSON object per line each way (toJsonLine: JSON with U+2028 and U+2029 escaped too, the
// two characters besides the usual ones that readline takes for a line's end):
//   in:  { id, file, args, cwd, env, input? }   (input in base64)
//   out: { id, code, signal, stdout, stderr }    (outputs in base64), or { id, error, errno } when the
//        command could not start or the request could not be read.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

interface Request {
  id: number;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  input?: string;
}

/** One line of JSON that readline gives back whole (the same as spawn-helper.ts's). */
const toJsonLine = (value: unknown): string => JSON.stringify(value).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`) + "\n";

const reply = (message: Record<string, unknown>): void => {
  process.stdout.write(toJsonLine(message));
};

function run(line: string): void {
  let id = 0;
  let answered = false;
  const answer = (message: Record<string, unknown>): void => {
    if (answered) return;
    answered = true;
    reply({ id, ...message });
  };
  try {
    const r = JSON.parse(line) as Request;
    id = r.id;
    const child = spawn(r.file, r.args, { cwd: r.cwd, env: r.env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.on("error", (e: NodeJS.ErrnoException) => answer({ error: e.message, errno: e.code }));
    // Without streams (EMFILE and the like), the error above is all there is.
    if (!child.stdout || !child.stderr || !child.stdin) return;
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("close", (code, signal) =>
      answer({ code, signal, stdout: Buffer.concat(out).toString("base64"), stderr: Buffer.concat(err).toString("base64") }),
    );
    // The command may exit before it reads its input: its exit code says so, not EPIPE.
    child.stdin.on("error", () => {});
    child.stdin.end(r.input === undefined ? undefined : Buffer.from(r.input, "base64"));
  } catch (e) {
    answer({ error: e instanceof Error ? e.message : String(e) });
  }
}

const requests = createInterface({ input: process.stdin, crlfDelay: Infinity });
requests.on("line", run);
// The worker has gone (or closed the pipe): nothing more will be asked.
requests.on("close", () => process.exit(0));
