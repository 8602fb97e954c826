/**
 * The agent's stdout on its way to the trace: read a pipe read at a time,
 * split into lines as readline splits them, and redacted in whole blocks of
 * lines. A secret the agent writes in pieces (across pipe reads) must still
 * be redacted in raw/stdout.jsonl and in trace.jsonl; the live log stays
 * bounded on a flood of events.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RESULTS_FILES } from "../../src/constants.js";
import { LineSplitter, runProcessTree } from "../../src/sandbox/process.js";
import type { AgentEvent } from "../../src/shared/events.js";
import { Redactor } from "../../src/shared/redact.js";
import { LiveLog } from "../../src/trace/live-log.js";
import { TraceWriter } from "../../src/trace/writer.js";

/** Lines of the blocks a splitter gives for `chunks`, as onStdoutLine would see them. */
function linesOf(chunks: Array<string | Buffer>): string[] {
  const s = new LineSplitter();
  const blocks = [...chunks.map((c) => s.push(Buffer.isBuffer(c) ? c : Buffer.from(c))), s.end()];
  for (const b of blocks) if (b) expect(b.endsWith("\n")).toBe(true);
  return blocks.join("").split("\n").slice(0, -1);
}

describe("LineSplitter", () => {
  it("ends lines at LF, CR LF and a lone CR, as readline does, wherever the reads are cut", () => {
    expect(linesOf(["a\nb\r\nc\rd", "\n"])).toEqual(["a", "b", "c", "d"]);
    // CR at the end of one read, its LF at the start of the next: one line end.
    expect(linesOf(["one\r", "\ntwo\r", "three\n"])).toEqual(["one", "two", "three"]);
    expect(linesOf(["x", "y", "z"])).toEqual(["xyz"]);
    expect(linesOf(["\n\n", "\r\n"])).toEqual(["", "", ""]);
    expect(linesOf([])).toEqual([]);
  });

  it("joins a line that spans thousands of reads once, whole, with the lines around it", () => {
    const piece = "x".repeat(4096);
    const chunks = ["before\nstart-", ...Array.from({ length: 4096 }, () => piece), "-end\r", "\nafter"];
    expect(linesOf(chunks)).toEqual(["before", `start-${piece.repeat(4096)}-end`, "after"]);
  });

  it("keeps a character whose bytes arrive in two reads whole", () => {
    const bytes = Buffer.from("héllo wörld ✓\n");
    for (let cut = 1; cut < bytes.length; cut++) expect(linesOf([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(["héllo wörld ✓"]);
  });
});

describe("stdout of an agent process, traced", () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("redacts a secret written across pipe reads in raw/stdout.jsonl and trace.jsonl, and loses no line", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "stdout-stream-"));
    const secret = "tr4ce-s3cret-value-0123456789";
    // The agent writes the secret in two halves with a pause between them (two pipe
    // reads), then 3 MB of lines with the secret at shifting offsets, then a last
    // line without a line end.
    const script = `
      const secret = process.env.S;
      const half = secret.length >> 1;
      process.stdout.write('{"type":"text","text":"' + secret.slice(0, half));
      setTimeout(() => {
        process.stdout.write(secret.slice(half) + '"}\\r\\n');
        let out = "";
        for (let i = 0; i < 30000; i++) out += "x".repeat(i % 97) + (i % 10 === 0 ? secret : "") + " line " + i + "\\n";
        process.stdout.write(out);
        process.stdout.write("last " + secret);
      }, 200);`;
    const redactor = new Redactor([secret]);
    const trace = new TraceWriter(dir, redactor);
    const lines: string[] = [];
    const outcome = await runProcessTree(
      { file: process.execPath, args: ["-e", script], cwd: dir, env: { PATH: process.env.PATH ?? "", S: secret } },
      {
        timeoutMs: 30_000,
        runId: `stdout-stream-${process.pid}`,
        onStdoutBlock: (text) => trace.stdoutBlock(text),
        onStdoutLine: (line) => {
          lines.push(line);
          trace.event({ type: "text", text: line }, line);
        },
        onStderr: () => undefined,
        flowControl: trace,
      },
    );
    await trace.close();
    expect(outcome.exitCode).toBe(0);

    expect(lines).toHaveLength(30002);
    expect(lines[0]).toBe(`{"type":"text","text":"${secret}"}`);
    expect(lines.at(-1)).toBe(`last ${secret}`);
    const raw = readFileSync(path.join(dir, RESULTS_FILES.stdout), "utf8");
    const traced = readFileSync(path.join(dir, RESULTS_FILES.trace), "utf8");
    for (const file of [raw, traced]) {
      expect(file).not.toContain(secret);
      expect(file).not.toContain(secret.slice(0, 15));
    }
    // Line for line what the agent wrote, with *** for the secret and LF line ends.
    expect(raw).toBe(lines.map((l) => l.replaceAll(secret, "***")).join("\n") + "\n");
    const events = traced.trimEnd().split("\n").map((l) => JSON.parse(l) as { text: string });
    expect(events).toHaveLength(30002);
    expect(events[0]!.text).toBe('{"type":"text","text":"***"}');
    expect(events.at(-1)!.text).toBe("last ***");
  });
});

describe("LiveLog", () => {
  const text = (n: number): AgentEvent => ({ type: "text", text: `message ${n} ${"y".repeat(90)}` });

  it("shows every line under its budget, then only errors, refusals and the result, and says how many it left out", () => {
    const shown: string[] = [];
    const live = new LiveLog((l) => shown.push(l), 2000, 300);
    for (let i = 0; i < 50; i++) live.event(text(i));
    live.event({ type: "tool_result", output: "fine", isError: false });
    live.event({ type: "error", message: "the model refused" });
    live.event({ type: "permission_denied", tool: "bash", detail: "rm -rf /" });
    for (let i = 0; i < 20; i++) live.event({ type: "error", message: `error flood ${i} ${"z".repeat(60)}` });
    live.event({ type: "result", isError: false, text: "done" });
    live.end();

    const messages = shown.filter((l) => l.startsWith("💬"));
    // About 2000 characters of 100-character lines, the last one crossing the budget.
    expect(messages.length).toBeGreaterThan(15);
    expect(messages.length).toBeLessThan(25);
    expect(messages[0]).toContain("message 0");
    expect(shown).toContain("❗ the model refused");
    expect(shown).toContain("⛔ permission denied: bash (rm -rf /)");
    expect(shown.some((l) => l.includes("The live log stops here"))).toBe(true);
    // The important lines have their own (smaller) budget: a flood of errors is cut too.
    const errors = shown.filter((l) => l.startsWith("❗ error flood"));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.length).toBeLessThan(20);
    // Left out: the text lines past the budget and the errors past theirs; the passing tool result has no line anyway.
    const leftOut = 50 - messages.length + (20 - errors.length) + (shown.includes("✓ finished") ? 0 : 1);
    expect(shown.at(-1)).toBe(`… ${leftOut} event line(s) left out of the live log (all are in trace.jsonl and the transcripts).`);
  });

  it("says nothing more when everything fitted", () => {
    const shown: string[] = [];
    const live = new LiveLog((l) => shown.push(l));
    for (let i = 0; i < 100; i++) live.event(text(i));
    live.end();
    expect(shown).toHaveLength(100);
  });
});
