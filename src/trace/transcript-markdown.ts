/**
 * transcript.md: the same content as transcript.html, for GitHub's file view.
 * Tool calls are <details> blocks with fenced code; fences are always longer
 * than any backtick run inside them. Agent and prompt text stays Markdown
 * (that is what agents write), but raw HTML tags in it are neutralised and an
 * unclosed fence is closed, so event text cannot break the structure around it.
 */
import {
  clippedPlain,
  conclusionKind,
  escapeHtml,
  formatBytes,
  formatCost,
  formatDuration,
  footerLines,
  formatUsage,
  resultMeta,
  truncationNote,
  usageLabel,
  usageWithCost,
  type Clipped,
  type ToolResultView,
  type TranscriptFormatter,
  type TranscriptPatch,
} from "./transcript-format.js";

const CONCLUSION_ICON: Record<string, string> = {
  success: "✅",
  failure: "❌",
  timeout: "⏱️",
  cancelled: "⏹️",
  skipped: "⏭️",
  other: "ℹ️",
};

/** A fenced code block whose fence no line of `content` can close. */
export function fence(content: string, lang = ""): string {
  let longest = 0;
  for (const m of content.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const ticks = "`".repeat(Math.max(3, longest + 1));
  return `${ticks}${lang}\n${content}${content.endsWith("\n") || content === "" ? "" : "\n"}${ticks}`;
}

/** An inline code span holding `s` (on one line), whatever backticks it contains. */
export function inlineCode(s: string, opts: { table?: boolean } = {}): string {
  let t = s.replace(/\s*\n\s*/g, " ");
  if (t === "") return "` `";
  if (opts.table) t = t.replace(/\|/g, "\\|");
  let longest = 0;
  for (const m of t.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const ticks = "`".repeat(longest + 1);
  const pad = t.startsWith("`") || t.endsWith("`") || (t.startsWith(" ") && t.endsWith(" ")) ? " " : "";
  return `${ticks}${pad}${t}${pad}${ticks}`;
}

/** Plain text as inline Markdown: one line, every Markdown/HTML character escaped. */
function mdText(s: string): string {
  return (
    s
      .replace(/\s*\n\s*/g, " ")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      // Characters that start emphasis, code, links, tables or strikethrough anywhere…
      .replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`)
      // …and those that only matter at the start of a line (headings, lists, quotes).
      .replace(/^(\s*)(>|(?:[#+-]|\d+[.)])(?=\s|$))/, (_m, sp: string, c: string) => `${sp}${c.slice(0, -1)}\\${c.slice(-1)}`)
  );
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/**
 * Agent or user Markdown made safe to embed: HTML tags outside code are
 * escaped (so `</details>` or `<script>` show as text), code fences and code
 * spans are left alone, and a fence left open is closed.
 */
export function safeMarkdown(text: string): string {
  const out: string[] = [];
  let open: { char: string; len: number } | undefined;
  for (const line of text.split("\n")) {
    const m = FENCE_LINE.exec(line);
    if (open) {
      if (m && m[1]![0] === open.char && m[1]!.length >= open.len && m[2]!.trim() === "") open = undefined;
      out.push(line);
      continue;
    }
    if (m && !(m[1]![0] === "`" && m[2]!.includes("`"))) {
      open = { char: m[1]![0]!, len: m[1]!.length };
      out.push(line);
      continue;
    }
    out.push(escapeTagsOutsideCodeSpans(line));
  }
  if (open) out.push(open.char.repeat(open.len));
  return out.join("\n");
}

function escapeTagsOutsideCodeSpans(line: string): string {
  let result = "";
  let i = 0;
  while (i < line.length) {
    const start = line.indexOf("`", i);
    if (start < 0) break;
    let runEnd = start;
    while (line[runEnd] === "`") runEnd++;
    const run = line.slice(start, runEnd);
    // The closing run must have exactly the same length.
    let close = -1;
    for (let j = line.indexOf(run, runEnd); j >= 0; j = line.indexOf(run, j + 1)) {
      if (line[j - 1] !== "`" && line[j + run.length] !== "`") {
        close = j;
        break;
      }
    }
    if (close < 0) {
      result += escapeTags(line.slice(i, runEnd));
      i = runEnd;
      continue;
    }
    result += escapeTags(line.slice(i, start)) + line.slice(start, close + run.length);
    i = close + run.length;
  }
  return result + escapeTags(line.slice(i));
}

function escapeTags(s: string): string {
  // A "<" that could start a tag, comment, declaration or autolink.
  return s.replace(/<(?=[A-Za-z/!?])/g, "&lt;");
}

function blockquote(s: string): string {
  return s
    .split("\n")
    .map((l) => (l === "" ? ">" : `> ${l}`))
    .join("\n");
}

function clippedBlock(c: Clipped, what: string, lang = "text"): string {
  return `${fence(clippedPlain(c), lang)}${c.truncated ? `\n\n_${mdText(truncationNote(c, what))}_` : ""}`;
}

function clippedMarkdown(c: Clipped, what: string): string {
  const text = c.truncated ? `${safeMarkdown(c.head)}\n\n_\\[… ${formatBytes(c.omittedBytes)} omitted …\\]_\n\n${safeMarkdown(c.tail)}` : safeMarkdown(c.head);
  return `${text}${c.truncated ? `\n\n_${mdText(truncationNote(c, what))}_` : ""}`;
}

function resultSection(r: ToolResultView): string {
  const label = r.isError ? "**Output** (error)" : "**Output**";
  if (r.output.head === "" && !r.output.truncated) return `${label}: _(no output)_`;
  return `${label}\n\n${clippedBlock(r.output, "Output")}`;
}

function details(summaryHtml: string, inner: string): string {
  return `<details><summary>${summaryHtml}</summary>\n\n${inner}\n\n</details>\n\n`;
}

/** The patch after the conversation: the changed files, then the diff in a fence nothing in it can close. */
function changesMarkdown(patch: TranscriptPatch): string {
  const n = patch.files.length;
  const list = patch.files.map((f) => `- ${inlineCode(f)}`).join("\n");
  const note = patch.truncated
    ? `> [!NOTE]\n> The patch is ${mdText(formatBytes(patch.totalBytes))}; only its beginning is shown\\. The whole patch is in patch\\.diff\\.\n\n`
    : "";
  return `## Changes (${n} file${n === 1 ? "" : "s"})\n\n${list ? `${list}\n\n` : ""}${note}${patch.text.trim() ? `${fence(patch.text, "diff")}\n\n` : ""}`;
}

export const markdownFormatter: TranscriptFormatter = {
  begin(ctx) {
    const h = ctx.header;
    const kind = conclusionKind(h.conclusion);
    const u = h.usage;
    const rows: [string, string][] = [
      ["Conclusion", `${CONCLUSION_ICON[kind]} **${mdText(h.conclusion)}**${h.reason ? ` — ${mdText(h.reason)}` : ""}`],
      ["Agent", `${inlineCode(h.agent, { table: true })} (${mdText(h.backend)})`],
      ["Model", h.model ? inlineCode(h.model, { table: true }) : "_default_"],
      ...(h.sandbox ? ([["Sandbox", mdText(h.sandbox)]] as [string, string][]) : []),
      ["Duration", mdText(formatDuration(h.durationMs))],
      ["Tokens", u ? mdText(formatUsage(u)) : "_unknown_"],
      ["Cost", u?.costUsd !== undefined ? mdText(formatCost(u.costUsd)) : "_unknown_"],
      ["Session", h.sessionId ? inlineCode(h.sessionId, { table: true }) : "_none_"],
      ["Started", mdText(h.startedAt)],
    ];
    return `# Agent run transcript\n\n| | |\n|---|---|\n${rows.map(([k, v]) => `| ${k} | ${v} |`).join("\n")}\n\n## Conversation\n\n`;
  },

  prompt(text) {
    return `**Prompt**\n\n${blockquote(clippedMarkdown(text, "Prompt"))}\n\n`;
  },

  attachments(list) {
    const items = list.map((a) => `- [\`${a.name}\`](attachments/${encodeURIComponent(a.name)}) (${escapeHtml(a.mediaType)}, ${formatBytes(a.bytes)}; ${escapeHtml(a.source.replace(/[\[\]`*_]/g, "\\$&"))})`);
    return `**Attachments** (in the run artifact's \`attachments/\`)\n\n${items.join("\n")}\n\n`;
  },

  session(ev) {
    return `<sub>Session ${inlineCode(ev.sessionId)}${ev.model ? ` · model ${inlineCode(ev.model)}` : ""}</sub>\n\n`;
  },

  text(text) {
    return `${clippedMarkdown(text, "Text")}\n\n`;
  },

  reasoning(text) {
    return details("<i>Reasoning</i>", blockquote(clippedMarkdown(text, "Reasoning")));
  },

  toolCall(call, state) {
    const failed = state.kind === "done" && state.result.isError;
    const mark = failed ? "❌ " : state.kind === "missing" ? "❔ " : state.kind === "deferred" ? "⏳ " : "";
    const status = failed ? " — <b>failed</b>" : state.kind === "missing" ? " — no result" : "";
    const summary = `${mark}#${call.index} <b>${escapeHtml(call.name)}</b>${call.summary ? ` <code>${escapeHtml(call.summary)}</code>` : ""}${status}`;
    const input = call.input.head === "" || call.input.head === "{}" ? "**Input**: _(none)_" : `**Input**\n\n${clippedBlock(call.input, "Input", "json")}`;
    const output =
      state.kind === "done"
        ? resultSection(state.result)
        : state.kind === "deferred"
          ? `_The result arrived later; it is shown further down (#${call.index})._`
          : "_No result was recorded for this call._";
    return details(summary, `${input}\n\n${output}`);
  },

  lateResult(call, result) {
    const mark = result.isError ? "❌ " : "";
    const summary = call
      ? `${mark}#${call.index} <b>${escapeHtml(call.name)}</b> result${call.summary ? ` <code>${escapeHtml(call.summary)}</code>` : ""}`
      : `${mark}<b>${escapeHtml(result.name ?? "tool")}</b> result without a matching call${result.id ? ` (${escapeHtml(result.id)})` : ""}`;
    return details(summary, resultSection(result));
  },

  usage(run) {
    return `<sub>${mdText(`${usageLabel(run)}: ${usageWithCost(run.usage)}`)}</sub>\n\n`;
  },

  permissionDenied(ev) {
    return `> [!WARNING]\n> **Permission denied:** ${inlineCode(ev.tool)}${ev.detail ? ` — ${mdText(ev.detail)}` : ""}\n\n`;
  },

  networkBlocked(ev) {
    return `> [!WARNING]\n> **Network blocked:** ${inlineCode(ev.host)}${ev.detail ? ` — ${mdText(ev.detail)}` : ""}\n\n`;
  },

  error(message) {
    return `${blockquote(`[!CAUTION]\n**Error**\n\n${clippedBlock(message, "Error")}`)}\n\n`;
  },

  result(ev, text) {
    const isError = ev.isError === true;
    const meta = resultMeta(ev);
    const parts = [`## ${isError ? "❌ Final result: error" : "Final result"}`];
    if (ev.reason) parts.push(`> [!CAUTION]\n> ${mdText(ev.reason)}`);
    parts.push(text ? clippedMarkdown(text, "Result") : "_(no final message)_");
    if (meta) parts.push(`<sub>${mdText(meta)}</sub>`);
    return `${parts.join("\n\n")}\n\n`;
  },

  unknown(type, json) {
    return details(`Event <code>${escapeHtml(type)}</code>`, clippedBlock(json, "Event", "json"));
  },

  plain(label, text) {
    return `**${mdText(label)}**\n\n${fence(text, "text")}\n\n`;
  },

  capNote(ctx) {
    return `> [!WARNING]\n> **Transcript truncated:** it reached its size limit (${mdText(formatBytes(ctx.maxTotalBytes))}); the rest of the conversation is omitted and only the final result follows\\. The full trace is in trace\\.jsonl\\.\n\n`;
  },

  end(stats, ctx) {
    const { counts, omissions } = footerLines(stats);
    return (
      (ctx.header.patch ? changesMarkdown(ctx.header.patch) : "") +
      `---\n\n<sub>${mdText(counts)}${omissions ? `<br>${mdText(omissions)}` : ""}` +
      `<br>Generated by Agent Runner.</sub>\n`
    );
  },
};
