import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import type { Locator } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { TracedEvent } from "../../src/shared/events.js";
import {
  renderTranscriptHtml,
  renderTranscriptMarkdown,
  writeTranscript,
  type TranscriptHeader,
} from "../../src/trace/transcript.js";
import { cleanText, clip, escapeHtml, summarizeToolInput } from "../../src/trace/transcript-format.js";
import { fence, inlineCode, safeMarkdown } from "../../src/trace/transcript-markdown.js";

const START = Date.parse("2025-06-01T12:00:00.000Z");
const at = (s: number) => new Date(START + s * 1000).toISOString();
const XSS = "<script>alert(1)</script>";
const OUT_DIR = resolve(import.meta.dirname, "../../test-output/transcript");

function header(over: Partial<TranscriptHeader> = {}): TranscriptHeader {
  return {
    agent: "fixer",
    backend: "claude",
    model: "claude-sonnet-4",
    sandbox: "bwrap",
    conclusion: "success",
    durationMs: 83_400,
    usage: { inputTokens: 12_345, outputTokens: 678, cachedTokens: 9_000, costUsd: 0.0421 },
    sessionId: "sess-42",
    startedAt: at(0),
    prompt: "Fix the failing test.",
    ...over,
  };
}

/** Elements with a given class, as {attrs, inner} (a small, good-enough HTML reader for our own output). */
function detailsBlocks(html: string, cls: string): { attrs: string; inner: string }[] {
  const out: { attrs: string; inner: string }[] = [];
  const re = new RegExp(`<details class="[^"]*\\b${cls}\\b[^"]*"([^>]*)>([\\s\\S]*?)</details>`, "g");
  for (const m of html.matchAll(re)) out.push({ attrs: m[1]!, inner: m[2]! });
  return out;
}

/** Markdown with its fenced code blocks removed (CommonMark rule: the closing fence is at least as long). */
function withoutFences(md: string): string {
  const out: string[] = [];
  let open: string | undefined;
  for (const line of md.split("\n")) {
    const m = /^(?:> )?(`{3,}|~{3,})/.exec(line);
    if (open) {
      if (m && m[1]![0] === open[0] && m[1]!.length >= open.length && line.replace(/^(?:> )?[`~]+/, "").trim() === "") open = undefined;
      continue;
    }
    if (m) {
      open = m[1];
      continue;
    }
    out.push(line);
  }
  return out.join("\n");
}

function unescapeHtml(s: string): string {
  return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

// ---------------------------------------------------------------------------

describe("escaping", () => {
  it("escapes the five HTML-significant characters", () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  });

  it("never lets event or header text into the HTML as markup", () => {
    const events: TracedEvent[] = [
      { type: "session", sessionId: XSS, model: XSS, ts: at(1) },
      { type: "text", text: `hello ${XSS} <img src=x onerror=alert(2)>`, ts: at(2) },
      { type: "reasoning", text: XSS, ts: at(3) },
      { type: "tool_call", id: `"><script>alert(3)</script>`, name: `Bash"><script>alert(4)</script>`, input: { command: XSS }, ts: at(4) },
      { type: "tool_result", id: `"><script>alert(3)</script>`, output: `${XSS}</pre></details>`, isError: false, ts: at(5) },
      { type: "permission_denied", tool: XSS, detail: XSS, ts: at(6) },
      { type: "network_blocked", host: XSS, detail: XSS, ts: at(7) },
      { type: "error", message: XSS, ts: at(8) },
      { type: "tool_result", name: XSS, output: XSS, isError: true, ts: at(9) },
      { type: "result", text: XSS, reason: XSS, isError: true, ts: at(10) },
      { type: "mystery", payload: XSS, ts: at(11) } as unknown as TracedEvent,
    ];
    const html = renderTranscriptHtml(
      header({ agent: XSS, backend: XSS, model: XSS, sandbox: XSS, conclusion: XSS, reason: XSS, sessionId: XSS, prompt: XSS, startedAt: XSS }),
      events,
    );
    expect(html).not.toContain(XSS);
    expect(html).not.toContain("<img");
    expect(html).not.toMatch(/<script>alert/);
    // Our own script is the only one, at the very end.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html.indexOf("<script>")).toBeGreaterThan(html.lastIndexOf("</main>"));
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    // Attribute values are escaped too: the tool name survives intact in data-tool-name.
    expect(html).toContain(`data-tool-name="Bash&quot;&gt;&lt;script&gt;alert(4)&lt;/script&gt;"`);
    // The closing tags inside tool output are text, so the structure holds.
    expect(html.match(/<details/g)!.length).toBe(html.match(/<\/details>/g)!.length);
  });

  it("references no URL of any kind and pins its inline style and script with a CSP", () => {
    const html = renderTranscriptHtml(header(), fixtureEvents());
    // Event text is all escaped, so every "<" that remains opens one of our own tags.
    const tags = [...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)\b([^>]*)>/g)];
    const names = new Set(tags.map((t) => t[1]!.toLowerCase()));
    for (const bad of ["img", "link", "iframe", "object", "embed", "video", "audio", "source", "form", "base"]) expect(names).not.toContain(bad);
    for (const [, , attrs] of tags) {
      expect(attrs).not.toMatch(/(?:^|\s)(?:src|srcset|action|formaction|poster|background|style|on[a-z]+)\s*=/i);
      // Only in-page fragment links.
      for (const m of attrs!.matchAll(/(?:^|\s)href\s*=\s*"([^"]*)"/gi)) expect(m[1]).toMatch(/^#/);
    }
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    expect(style).not.toMatch(/url\(|@import|@font-face|https?:/i);
    expect(html).not.toMatch(/https?:\/\//);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
    expect(csp).toBeDefined();
    expect(unescapeHtml(csp!)).toMatch(/^default-src 'none'; style-src 'sha256-[^']+'; script-src 'sha256-[^']+';/);
  });

  it("keeps Markdown structure intact around hostile text", () => {
    const md = renderTranscriptMarkdown(header({ prompt: `${XSS}\n\`\`\`\nunclosed fence` }), [
      { type: "text", text: `before </details> ${XSS} \`<kept>\` after`, ts: at(1) },
      { type: "tool_call", id: "t", name: "Bash", input: { command: "echo '```'" }, ts: at(2) },
      { type: "tool_result", id: "t", output: "a ``` b\n````\n</details>\n" + XSS, isError: false, ts: at(3) },
      { type: "reasoning", text: "</details><details>", ts: at(4) },
    ]);
    expect(md).not.toContain(`before </details>`);
    expect(md).toContain("before &lt;/details> &lt;script>alert(1)&lt;/script> `<kept>` after");
    // Outside code fences, every <details> we open is closed and nothing from the content opens or closes one.
    const outside = withoutFences(md);
    expect(outside.match(/<details>/g)).toHaveLength(2);
    expect(outside.match(/<\/details>/g)).toHaveLength(2);
    expect(outside).not.toContain("<script");
    // The prompt's unclosed fence was closed inside its quote.
    expect(md).toContain("> ```\n> unclosed fence\n> ```\n");
    // The tool output's fence is longer than any backtick run inside it.
    expect(md).toContain("`````text\na ``` b\n````\n</details>\n<script>alert(1)</script>\n`````");
  });
});

describe("markdown helpers", () => {
  it("fence() always outlasts the content's backtick runs", () => {
    expect(fence("plain")).toBe("```\nplain\n```");
    expect(fence("x ``` y", "js")).toBe("````js\nx ``` y\n````");
    expect(fence("`````")).toBe("``````\n`````\n``````");
  });

  it("inlineCode() copes with backticks, newlines and table pipes", () => {
    expect(inlineCode("a`b")).toBe("``a`b``");
    expect(inlineCode("`x`")).toBe("`` `x` ``");
    expect(inlineCode("a\nb")).toBe("`a b`");
    expect(inlineCode("a|b", { table: true })).toBe("`a\\|b`");
  });

  it("safeMarkdown() escapes tags outside code only and closes open fences", () => {
    expect(safeMarkdown("x <b>y</b> `<b>` ``a ` <i> ``")).toBe("x &lt;b>y&lt;/b> `<b>` ``a ` <i> ``");
    expect(safeMarkdown("```html\n<div>\n```\n<div>")).toBe("```html\n<div>\n```\n&lt;div>");
    expect(safeMarkdown("~~~\n<x>")).toBe("~~~\n<x>\n~~~");
    expect(safeMarkdown("1 < 2 and a<-b")).toBe("1 < 2 and a<-b");
  });
});

describe("tool results are matched to their calls", () => {
  const outputOf = (html: string) =>
    Object.fromEntries(
      detailsBlocks(html, "tool-call").map((b) => [
        /data-index="(\d+)"/.exec(b.attrs)![1],
        unescapeHtml(/<pre class="tool-output[^"]*">([\s\S]*?)<\/pre>/.exec(b.inner)?.[1] ?? "(none)"),
      ]),
    );

  it("by id, when parallel results arrive out of order", () => {
    const html = renderTranscriptHtml(header(), [
      { type: "tool_call", id: "a", name: "Read", input: { file_path: "a.ts" }, ts: at(1) },
      { type: "tool_call", id: "b", name: "Read", input: { file_path: "b.ts" }, ts: at(1) },
      { type: "tool_call", id: "c", name: "Bash", input: { command: "ls" }, ts: at(1) },
      { type: "tool_result", id: "c", output: "out-c", isError: false, ts: at(2) },
      { type: "tool_result", id: "a", output: "out-a", isError: false, ts: at(3) },
      { type: "tool_result", id: "b", output: "out-b", isError: true, ts: at(4) },
    ]);
    expect(outputOf(html)).toEqual({ "1": "out-a", "2": "out-b", "3": "out-c" });
    expect(html).toMatch(/<details class="entry tool-call error"[^>]*data-index="2"[^>]*data-status="error"/);
  });

  it("by order when there are no ids, preferring a call with the same name", () => {
    const html = renderTranscriptHtml(header(), [
      { type: "tool_call", name: "Read", input: {}, ts: at(1) },
      { type: "tool_call", name: "Bash", input: {}, ts: at(1) },
      { type: "tool_call", name: "Read", input: {}, ts: at(1) },
      { type: "tool_result", name: "Bash", output: "bash", isError: false, ts: at(2) },
      { type: "tool_result", output: "first", isError: false, ts: at(2) },
      { type: "tool_result", output: "second", isError: false, ts: at(2) },
    ]);
    expect(outputOf(html)).toEqual({ "1": "first", "2": "bash", "3": "second" });
  });

  it("by order when results carry ids their calls did not", () => {
    const html = renderTranscriptHtml(header(), [
      { type: "tool_call", id: "x", name: "Bash", input: {}, ts: at(1) },
      { type: "tool_call", name: "Bash", input: {}, ts: at(1) },
      { type: "tool_result", id: "unknown-1", output: "goes to the id-less call", isError: false, ts: at(2) },
      { type: "tool_result", id: "x", output: "x", isError: false, ts: at(2) },
    ]);
    expect(outputOf(html)).toEqual({ "1": "x", "2": "goes to the id-less call" });
  });

  it("shows a result without a call on its own, and a call without a result as such", () => {
    const events: TracedEvent[] = [
      { type: "tool_result", id: "ghost", name: "Write", output: "orphan output", isError: false, ts: at(1) },
      { type: "tool_call", id: "never", name: "Bash", input: { command: "sleep 999" }, ts: at(2) },
      { type: "text", text: "after the call", ts: at(3) },
    ];
    const html = renderTranscriptHtml(header(), events);
    expect(detailsBlocks(html, "tool-result")[0]!.inner).toContain("result without a matching call (ghost)");
    expect(html).toMatch(/data-tool-name="Bash"[^>]*data-status="missing"/);
    // Order is kept: the text that followed the call still follows it.
    expect(html.indexOf("sleep 999")).toBeLessThan(html.indexOf("after the call"));
    const md = renderTranscriptMarkdown(header(), events);
    expect(md).toContain("❔ #1 <b>Bash</b> <code>sleep 999</code> — no result");
    expect(md).toContain("_No result was recorded for this call._");
  });

  it("holds back only a bounded amount behind a call awaiting its result", () => {
    const events: TracedEvent[] = [
      { type: "tool_call", id: "slow", name: "Bash", input: { command: "make" }, ts: at(1) },
      ...Array.from({ length: 40 }, (_, i): TracedEvent => ({ type: "text", text: `chatter ${i} ${"x".repeat(200)}`, ts: at(2) })),
      { type: "tool_result", id: "slow", output: "finally", isError: false, ts: at(3) },
    ];
    const html = renderTranscriptHtml(header(), events, { maxBufferedBytes: 2000 });
    expect(html).toMatch(/data-index="1" data-tool-name="Bash" data-tool-id="slow" data-status="pending"/);
    const late = detailsBlocks(html, "tool-result");
    expect(late).toHaveLength(1);
    expect(late[0]!.attrs).toContain('data-for-index="1"');
    expect(late[0]!.inner).toContain("finally");
    expect(late[0]!.inner).toContain('href="#tool-1"');
    // Order preserved: the call, the chatter, then the late result.
    expect(html.indexOf("chatter 0")).toBeGreaterThan(html.indexOf('id="tool-1"'));
    expect(html.indexOf("finally")).toBeGreaterThan(html.indexOf("chatter 39"));
    // With the default buffer the result stays inside its call.
    const normal = renderTranscriptHtml(header(), events);
    expect(detailsBlocks(normal, "tool-result")).toHaveLength(0);
    expect(detailsBlocks(normal, "tool-call")[0]!.inner).toContain("finally");
  });
});

describe("truncation", () => {
  it("clip() keeps head and tail within the byte budget, never splitting a character", () => {
    const text = "é".repeat(30_000) + "THE END";
    const c = clip(text, 1001);
    expect(c.truncated).toBe(true);
    expect(c.totalBytes).toBe(60_007);
    expect(Buffer.byteLength(c.head) + Buffer.byteLength(c.tail)).toBeLessThanOrEqual(1001);
    expect(c.head + c.tail).not.toContain("\uFFFD");
    expect(c.tail.endsWith("THE END")).toBe(true);
    expect(c.omittedBytes).toBe(60_007 - Buffer.byteLength(c.head) - Buffer.byteLength(c.tail));
    expect(clip("short", 1000)).toMatchObject({ head: "short", tail: "", truncated: false });
  });

  it("cuts long tool output to ~20 KB with a note pointing to trace.jsonl", () => {
    const big = "START\n" + "line of output\n".repeat(20_000) + "FAILED: 3 tests";
    const events: TracedEvent[] = [
      { type: "tool_call", id: "t", name: "Bash", input: { command: "npm test" }, ts: at(1) },
      { type: "tool_result", id: "t", output: big, isError: true, ts: at(2) },
    ];
    const html = renderTranscriptHtml(header(), events);
    const block = detailsBlocks(html, "tool-call")[0]!.inner;
    expect(block).toContain("START");
    expect(block).toContain("FAILED: 3 tests");
    expect(block).toMatch(/<span class="omitted">\[… [\d.]+ KB omitted …\]<\/span>/);
    expect(block).toMatch(/Output truncated: showing 20 KB of 29\d KB; full text in trace\.jsonl\./);
    expect(html.length).toBeLessThan(40_000);
    const md = renderTranscriptMarkdown(header(), events);
    expect(md).toContain("_Output truncated: showing 20 KB of");
    expect(md.length).toBeLessThan(30_000);
    // A custom limit applies to inputs too.
    const small = renderTranscriptHtml(header(), [{ type: "tool_call", name: "Write", input: { content: "y".repeat(5000) }, ts: at(1) }], { maxToolOutputBytes: 1000 });
    expect(small).toContain("Input truncated: showing");
  });

  it("stops at the total size cap, says so, and still shows the final result and footer", () => {
    const events: TracedEvent[] = [
      ...Array.from({ length: 500 }, (_, i): TracedEvent => ({ type: "text", text: `message ${i} ${"z".repeat(1000)}`, ts: at(i) })),
      { type: "result", text: "All done", isError: false, numTurns: 500, ts: at(600) },
    ];
    const html = renderTranscriptHtml(header(), events, { maxTotalBytes: 50_000 });
    expect(Buffer.byteLength(html)).toBeLessThan(50_000 + 20_000);
    expect(html).toContain('data-kind="capped"');
    expect(html).toContain("The full trace is in trace.jsonl.");
    expect(html).toContain("All done");
    expect(html).not.toContain("message 499");
    expect(html).toMatch(/\d+ events after the size limit not shown/);
    expect(html.trimEnd().endsWith("</html>")).toBe(true);
    // Counts still cover the whole trace.
    const withCalls: TracedEvent[] = [
      ...events.slice(0, -1),
      { type: "tool_call", name: "Bash", input: {}, ts: at(550) },
      { type: "tool_result", output: "no", isError: true, ts: at(551) },
      { type: "error", message: "late", ts: at(552) },
      events.at(-1)!,
    ];
    expect(renderTranscriptHtml(header(), withCalls, { maxTotalBytes: 50_000 })).toContain("504 events · 1 tool call (1 failed) · 1 error");
    const md = renderTranscriptMarkdown(header(), events, { maxTotalBytes: 50_000 });
    expect(md).toContain("**Transcript truncated:**");
    expect(md).toContain("All done");
  });

  it("cleans terminal noise from outputs", () => {
    expect(cleanText("\u001b[31mred\u001b[0m\r\nnext\rover\u0000\u0007")).toBe("red\nnext\nover\u2400\u2407");
  });
});

describe("content", () => {
  it("summarizes tool inputs on one line", () => {
    expect(summarizeToolInput({ command: "npm test\n  --watch=false" })).toBe("npm test --watch=false");
    expect(summarizeToolInput({ command: ["bash", "-lc", "ls -la"] })).toBe("ls -la");
    expect(summarizeToolInput({ file_path: "src/a.ts", old_string: "x" })).toBe("src/a.ts");
    expect(summarizeToolInput({ pattern: "TODO", path: "src" })).toBe("TODO in src");
    expect(summarizeToolInput({ foo: 1 })).toBe('{"foo":1}');
    expect(summarizeToolInput({ command: "x".repeat(300) })).toHaveLength(120);
    expect(summarizeToolInput(undefined)).toBe("");
  });

  it("renders the header, usage runs, notices and the result", () => {
    const html = renderTranscriptHtml(header({ conclusion: "failure", reason: "turn limit reached" }), fixtureEvents());
    expect(html).toContain('<span class="conclusion conclusion-failure" data-conclusion="failure">failure</span>');
    expect(html).toContain('<p class="reason">turn limit reached</p>');
    expect(html).toMatch(/data-field="tokens"><dt>[^<]*<\/dt><dd>12,345 \/ 678 \/ 9,000<\/dd>/);
    expect(html).toContain('data-field="cost"><dt>Cost</dt><dd>$0.04</dd>');
    expect(html).toContain('data-field="duration"><dt>Duration</dt><dd>1m 23s</dd>');
    expect(html).toContain("<code>sess-42</code>");
    expect(html).toMatch(/data-kind="usage" data-count="2"[^>]*>Usage \(2 updates\): 3,000 in · 450 out · 2,000 cached/);
    expect(html).toContain('data-kind="permission_denied" data-tool-name="WebFetch"');
    expect(html).toContain('data-kind="network_blocked" data-host="registry.npmjs.org"');
    expect(html).toMatch(/<div class="entry event-error error" role="alert" data-kind="error"/);
    expect(html).toMatch(/<section class="entry result ok" data-kind="result" data-is-error="false"/);
    expect(html).toMatch(/<details class="entry reasoning"/);
    expect(html).toMatch(/<time class="ts" datetime="[^"]+" title="[^"]+">\+2\.0s<\/time>/);
    expect(html).toContain("6 tool calls (1 failed) · 1 error");
  });

  it("markdown has the same content", () => {
    const md = renderTranscriptMarkdown(header(), fixtureEvents());
    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(join(OUT_DIR, "transcript.md"), md);
    expect(md).toMatch(/^# Agent run transcript\n/);
    expect(md).toContain("| Conclusion | ✅ **success** |");
    expect(md).toContain("| Tokens | 12,345 in · 678 out · 9,000 cached |");
    expect(md).toContain("| Session | `sess-42` |");
    for (const name of ["Read", "Bash", "Grep", "Edit"]) expect(md).toContain(`<b>${name}</b>`);
    expect(md).toContain("<details><summary>❌ #2 <b>Bash</b> <code>npm test</code> — <b>failed</b></summary>");
    expect(md).toContain("> [!WARNING]\n> **Permission denied:** `WebFetch`");
    expect(md).toContain("> [!WARNING]\n> **Network blocked:** `registry.npmjs.org`");
    expect(md).toContain("> [!CAUTION]\n> **Error**");
    expect(md).toContain("## Final result");
    expect(md).toContain("<details><summary><i>Reasoning</i></summary>");
    // The wording both formats share: folded usage, the result's turns and usage, the footer's counts.
    expect(md).toContain("<sub>Usage (2 updates): 3,000 in · 450 out · 2,000 cached</sub>");
    expect(md).toContain("<sub>7 turns · 12,345 in · 678 out · 9,000 cached · $0.04</sub>");
    expect(md).toContain("<sub>22 events · 6 tool calls (1 failed) · 1 error · tokens from events: 12,345 in · 678 out · 9,000 cached · $0.04<br>Generated by Agent Runner.</sub>");
    const html = renderTranscriptHtml(header(), fixtureEvents());
    expect(html).toContain('<p class="result-meta">7 turns · 12,345 in · 678 out · 9,000 cached · $0.04</p>');
  });

  it("the streaming writers produce the same text, honouring back-pressure", async () => {
    const events = fixtureEvents();
    async function* slow() {
      for (const ev of events) {
        await new Promise((r) => setTimeout(r, 1));
        yield ev;
      }
    }
    for (const [format, render] of [
      ["html", renderTranscriptHtml],
      ["markdown", renderTranscriptMarkdown],
    ] as const) {
      const chunks: string[] = [];
      let drains = 0;
      const out = new Writable({
        highWaterMark: 256,
        write(chunk: Buffer, _enc, cb) {
          chunks.push(chunk.toString("utf8"));
          setTimeout(cb, 1);
        },
      });
      out.on("drain", () => drains++);
      const stats = await writeTranscript(format, out, header(), slow());
      expect(chunks.join("")).toBe(render(header(), events));
      expect(drains).toBeGreaterThan(0);
      expect(stats).toMatchObject({ events: events.length, toolCalls: 6, failedToolCalls: 1, errors: 1, capped: false });
      expect(stats.bytes).toBe(Buffer.byteLength(chunks.join("")));
    }
  });
});

// ---------------------------------------------------------------------------
// The fixture used by the browser test and the content tests.

function fixtureEvents(): TracedEvent[] {
  return [
    { type: "session", sessionId: "sess-42", model: "claude-sonnet-4", ts: at(0.4) },
    { type: "reasoning", text: "The user wants the failing test fixed. I should read the source and run the tests first.", ts: at(1) },
    {
      type: "text",
      text: "I'll start by reading `src/math.ts`. (Raw HTML stays text: <script>window.__pwned = 1</script> <img src=x onerror=\"window.__pwned = 2\"> <b>not bold</b>)",
      ts: at(2),
    },
    { type: "tool_call", id: "toolu_1", name: "Read", input: { file_path: "src/math.ts" }, ts: at(2.5) },
    { type: "tool_result", id: "toolu_1", output: "export function add(a: number, b: number) {\n  return a - b;\n}\n", isError: false, ts: at(2.8) },
    { type: "tool_call", id: "toolu_2", name: "Bash", input: { command: "npm test", description: "Run the test suite" }, ts: at(4) },
    {
      type: "tool_result",
      id: "toolu_2",
      output:
        "\u001b[31mFAIL\u001b[0m test/math.test.ts > add\nAssertionError: expected -1 to be 3\n <script>window.__pwned = 3</script>\n\nTests: 1 failed, 11 passed\nexit code 1",
      isError: true,
      ts: at(9.2),
    },
    { type: "usage", usage: { inputTokens: 1500, outputTokens: 200, cachedTokens: 1000 }, ts: at(9.3) },
    { type: "usage", usage: { inputTokens: 1500, outputTokens: 250, cachedTokens: 1000 }, ts: at(9.4) },
    // Two calls in parallel; their results come back in reverse order.
    { type: "tool_call", id: "toolu_3", name: "Grep", input: { pattern: "add\\(", path: "src" }, ts: at(10) },
    { type: "tool_call", id: "toolu_4", name: "Read", input: { file_path: "test/math.test.ts" }, ts: at(10) },
    { type: "tool_result", id: "toolu_4", output: "it('add', () => expect(add(1, 2)).toBe(3));", isError: false, ts: at(10.5) },
    { type: "tool_result", id: "toolu_3", output: "src/math.ts:1:export function add(a: number, b: number) {", isError: false, ts: at(10.6) },
    { type: "permission_denied", tool: "WebFetch", detail: "denied by the permission policy (default: deny)", ts: at(11) },
    { type: "network_blocked", host: "registry.npmjs.org", detail: "network: model-only", ts: at(11.5) },
    {
      type: "tool_call",
      id: "toolu_5",
      name: "Edit",
      input: { file_path: "src/math.ts", old_string: "return a - b;", new_string: "return a + b;" },
      ts: at(13),
    },
    { type: "tool_result", id: "toolu_5", output: "The file src/math.ts has been updated.", isError: false, ts: at(13.2) },
    { type: "error", message: "Stream interrupted: <script>window.__pwned = 4</script> (retrying)", ts: at(14) },
    { type: "tool_call", id: "toolu_6", name: "Bash", input: { command: "npm test" }, ts: at(15) },
    { type: "tool_result", id: "toolu_6", output: "Tests: 12 passed\nexit code 0", isError: false, ts: at(20) },
    { type: "text", text: "Fixed: `add` subtracted instead of adding. All 12 tests pass now.", ts: at(21) },
    {
      type: "result",
      text: "Fixed `add` in src/math.ts (it subtracted). All 12 tests pass.",
      isError: false,
      numTurns: 7,
      usage: { inputTokens: 12_345, outputTokens: 678, cachedTokens: 9_000, costUsd: 0.0421 },
      ts: at(21.5),
    },
  ];
}

// ---------------------------------------------------------------------------
// Browser: the HTML opened from disk in headless Chromium.

/** The Chromium on PATH, found by the preflight (test/preflight.ts). */
const CHROMIUM = inject("chromium");
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

describe("transcript.html in headless Chromium", () => {
  type Pw = typeof import("playwright-core");
  type Ctx = Awaited<ReturnType<Pw["chromium"]["launchPersistentContext"]>>;
  let pw: Pw;
  const dirs: string[] = [];
  const contexts: Ctx[] = [];
  let fileUrl: string;
  const expectedTools = ["Read", "Bash", "Grep", "Read", "Edit", "Bash"];

  /** A computed style property (the tsconfig has no DOM lib, hence the cast). */
  const css = (loc: Locator, prop: string) =>
    loc.evaluate(
      (e, p) => (globalThis as unknown as { getComputedStyle(el: unknown): Record<string, string> }).getComputedStyle(e)[p]!,
      prop,
    );

  async function open(javaScriptEnabled: boolean) {
    const dir = mkdtempSync(join(tmpdir(), "transcript-chromium-"));
    dirs.push(dir);
    const context = await pw.chromium.launchPersistentContext(dir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      javaScriptEnabled,
      viewport: { width: 1100, height: 900 },
      colorScheme: "light",
    });
    contexts.push(context);
    const requests: string[] = [];
    const problems: string[] = [];
    context.on("request", (r) => requests.push(r.url()));
    // Anything but the file itself is refused (and would be reported above).
    await context.route("**/*", (route) => (route.request().url() === fileUrl ? route.continue() : route.abort()));
    const page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`console.${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(fileUrl, { waitUntil: "load" });
    return { page, requests, problems };
  }

  beforeAll(async () => {
    pw = await import("playwright-core");
    mkdirSync(OUT_DIR, { recursive: true });
    const file = join(OUT_DIR, "transcript.html");
    writeFileSync(file, renderTranscriptHtml(header({ prompt: `Fix the failing test in \`src/math.ts\`. ${XSS}` }), fixtureEvents()));
    fileUrl = pathToFileURL(file).href;
  });

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("loads with no errors, no requests, no injected script, every tool call and the error highlighted", async () => {
    const { page, requests, problems } = await open(true);
    await page.waitForTimeout(200);

    expect(problems).toEqual([]);
    expect(requests).toEqual([fileUrl]);

    // Injected markup stayed text.
    expect(await page.evaluate("typeof globalThis.__pwned")).toBe("undefined");
    expect(await page.locator("script").count()).toBe(1);
    expect(await page.locator("img, iframe, object, embed, link").count()).toBe(0);
    expect(await page.locator(".prompt .text").textContent()).toContain(XSS);
    expect(await page.locator(".assistant .text").first().textContent()).toContain("<script>window.__pwned = 1</script>");

    // Every tool call, in order, with its name in the DOM.
    const calls = page.locator("details.tool-call");
    expect(await calls.count()).toBe(expectedTools.length);
    expect(await calls.evaluateAll((els) => els.map((e) => e.getAttribute("data-tool-name")))).toEqual(expectedTools);
    expect(await page.locator("details.tool-call .tool-name").allTextContents()).toEqual(expectedTools);
    expect(await page.locator("details.tool-call .tool-summary").first().textContent()).toBe("src/math.ts");
    // Parallel results landed in their own calls.
    expect(await page.locator('details.tool-call[data-tool-id="toolu_3"] .tool-output').textContent()).toContain("src/math.ts:1:");

    // The failed call and the error event are highlighted.
    const failed = page.locator("details.tool-call.error");
    expect(await failed.count()).toBe(1);
    expect(await failed.getAttribute("data-tool-name")).toBe("Bash");
    expect(await failed.locator(".badge-error").textContent()).toBe("failed");
    const errorEvent = page.locator('[data-kind="error"].error[role="alert"]');
    expect(await errorEvent.count()).toBe(1);
    const bg = (sel: string) => css(page.locator(sel).first(), "backgroundColor");
    const okBg = await bg('details.tool-call[data-status="ok"]');
    expect(await bg("details.tool-call.error")).not.toBe(okBg);
    expect(await bg('[data-kind="error"]')).toBe(await bg("details.tool-call.error"));
    expect(await css(page.locator('[data-kind="error"]'), "borderTopColor")).toBe("rgb(207, 34, 46)");

    // Notices, header and result are there.
    expect(await page.locator('.permission-denied[data-tool-name="WebFetch"]').count()).toBe(1);
    expect(await page.locator('.network-blocked[data-host="registry.npmjs.org"]').count()).toBe(1);
    expect(await page.locator(".run-header .conclusion").textContent()).toBe("success");
    expect(await page.locator('[data-field="session"] dd').textContent()).toBe("sess-42");
    expect(await page.locator('.result[data-is-error="false"] .text').textContent()).toContain("All 12 tests pass");

    // Collapsed by default; the failing call opens to its input and output.
    expect(await failed.getAttribute("open")).toBeNull();
    await failed.locator("summary").click();
    expect(await failed.getAttribute("open")).not.toBeNull();
    expect(await failed.locator(".tool-output.error").textContent()).toContain("AssertionError: expected -1 to be 3");
    expect(await failed.locator(".tool-output.error").textContent()).not.toContain("\u001b");
    await page.screenshot({ path: join(OUT_DIR, "transcript.png"), fullPage: true });

    // The toolbar (script) expands everything.
    expect(await page.locator(".toolbar").isVisible()).toBe(true);
    await page.locator('.toolbar button[data-action="expand"]').click();
    expect(await page.locator("main details:not([open])").count()).toBe(0);
    await page.screenshot({ path: join(OUT_DIR, "transcript-expanded.png"), fullPage: true });
    await page.locator('.toolbar button[data-action="collapse"]').click();
    expect(await page.locator("main details[open]").count()).toBe(0);

    expect(problems).toEqual([]);
    expect(requests).toEqual([fileUrl]);
  });

  it("works with JavaScript disabled", async () => {
    const { page, requests, problems } = await open(false);
    expect(problems).toEqual([]);
    expect(requests).toEqual([fileUrl]);
    expect(await page.locator(".toolbar").isVisible()).toBe(false);
    const call = page.locator('details.tool-call[data-tool-name="Edit"]');
    await call.locator("summary").click();
    expect(await call.getAttribute("open")).not.toBeNull();
    expect(await call.locator(".tool-input").textContent()).toContain('"new_string": "return a + b;"');
    expect(await call.locator(".tool-input").isVisible()).toBe(true);
  });
});
