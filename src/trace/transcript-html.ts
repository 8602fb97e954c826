/**
 * transcript.html: one self-contained file. Inline CSS, one tiny inline
 * script (expand/collapse all; the page works fully without it), no URL of
 * any kind. A Content-Security-Policy allows only that style and that script
 * by hash, so even a rendering bug could not load or run anything else.
 * Every piece of event text is escaped, except assistant text and the final
 * message, which are Markdown rendered through a sanitizer (markdown-html.ts:
 * no raw HTML, no images, safe links only). The patch is shown as a diff
 * (diff2html, line by line) after the conversation, with a file list that
 * links to each file. Elements carry stable classes and data attributes
 * (data-kind, data-tool-name, data-status, …) for tests and for readers' own tooling.
 */
import { createHash } from "node:crypto";
import type * as Diff2Html from "diff2html";
import { markdownToSafeHtml } from "./markdown-html.js";
import { forDiff2html } from "./git-paths.js";
import {
  conclusionKind,
  escapeHtml as esc,
  formatBytes,
  formatCost,
  formatDuration,
  formatInt,
  formatOffset,
  footerLines,
  omissionMarker,
  resultMeta,
  truncationNote,
  usageLabel,
  usageWithCost,
  type Clipped,
  type RenderContext,
  type ToolResultView,
  type TranscriptAttachment,
  type TranscriptFormatter,
  type TranscriptPatch,
} from "./transcript-format.js";

const CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--border:#d1d9e0;--panel:#f6f8fa;--code:#f6f8fa;
--ok:#1a7f37;--ok-bg:#dafbe1;--err:#cf222e;--err-bg:#ffebe9;--warn:#9a6700;--warn-bg:#fff8c5;--info:#0969da;--info-bg:#ddf4ff;--neutral:#59636e;--neutral-bg:#eaeef2}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--border:#3d444d;--panel:#151b23;--code:#151b23;
--ok:#3fb950;--ok-bg:#12261e;--err:#f85149;--err-bg:#25171c;--warn:#d29922;--warn-bg:#272115;--info:#4493f8;--info-bg:#121d2f;--neutral:#9198a1;--neutral-bg:#212830}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",Helvetica,Arial,sans-serif}
.page{max-width:980px;margin:0 auto;padding:24px 16px 48px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace;font-size:12.5px}
pre{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;background:var(--code);border:1px solid var(--border);border-radius:6px;padding:8px 10px;max-height:480px;overflow:auto}
code{background:var(--code);border-radius:4px;padding:0 4px;overflow-wrap:anywhere}
.muted,.ts{color:var(--muted)}
.run-header{border:1px solid var(--border);border-radius:8px;padding:16px 18px;background:var(--panel);margin-bottom:16px}
.run-header.conclusion-success{border-top:4px solid var(--ok)}.run-header.conclusion-failure{border-top:4px solid var(--err)}
.run-header.conclusion-timeout{border-top:4px solid var(--warn)}.run-header.conclusion-cancelled,.run-header.conclusion-skipped,.run-header.conclusion-other{border-top:4px solid var(--neutral)}
.title-row{display:flex;align-items:center;gap:12px;flex-wrap:wrap}
h1{font-size:20px;margin:0;font-weight:600}
.conclusion{display:inline-block;font-weight:600;border-radius:999px;padding:1px 10px;font-size:13px;border:1px solid currentColor}
.conclusion.conclusion-success{color:var(--ok);background:var(--ok-bg)}.conclusion.conclusion-failure{color:var(--err);background:var(--err-bg)}
.conclusion.conclusion-timeout{color:var(--warn);background:var(--warn-bg)}
.conclusion.conclusion-cancelled,.conclusion.conclusion-skipped,.conclusion.conclusion-other{color:var(--neutral);background:var(--neutral-bg)}
.run-header .reason{margin:8px 0 0;color:var(--err)}
dl.meta{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px 20px;margin:14px 0 0}
dl.meta>div{min-width:0}dl.meta dt{font-size:12px;color:var(--muted)}dl.meta dd{margin:0;overflow-wrap:anywhere}
.toolbar{display:flex;gap:8px;justify-content:flex-end;margin:0 0 8px}.toolbar[hidden]{display:none}
.toolbar button{font:inherit;font-size:12px;color:var(--fg);background:var(--panel);border:1px solid var(--border);border-radius:6px;padding:2px 10px;cursor:pointer}
.conversation{display:flex;flex-direction:column;gap:10px}
.entry{border:1px solid var(--border);border-radius:8px;padding:10px 14px;min-width:0}
.entry-head{display:flex;gap:8px;align-items:baseline;font-size:12px;font-weight:600;color:var(--muted);margin-bottom:4px}
.entry-head .ts,summary .ts{margin-left:auto;font-weight:400;font-size:12px;white-space:nowrap}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
.prompt{background:var(--info-bg);border-color:var(--info)}
.attachments li{margin:.3em 0}.attachments img{display:block;max-width:100%;max-height:480px;margin:.3em 0;border:1px solid var(--border,#ccc)}
.prompt .entry-head{color:var(--info)}
.session,.usage{border:none;padding:0 14px;font-size:12px;color:var(--muted)}
details>summary{cursor:pointer;list-style:none;display:flex;align-items:center;gap:8px;min-width:0}
details>summary::-webkit-details-marker{display:none}
details>summary::before{content:"";flex:none;width:0;height:0;border-style:solid;border-width:5px 0 5px 7px;border-color:transparent transparent transparent var(--muted)}
details[open]>summary::before{transform:rotate(90deg)}
.tool-call,.tool-result{padding:6px 12px;background:var(--panel)}
.tool-call>summary,.tool-result>summary{font-size:13px}
.tool-index{color:var(--muted);font-size:12px;flex:none}
.tool-name{font-weight:600;flex:none;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12.5px}
.tool-summary{flex:1 1 auto;min-width:0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;color:var(--muted);font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12px}
.badge{flex:none;font-size:11px;font-weight:600;border-radius:999px;padding:0 8px;border:1px solid currentColor}
.badge-error{color:var(--err);background:var(--err-bg)}.badge-pending{color:var(--warn);background:var(--warn-bg)}.badge-missing{color:var(--neutral);background:var(--neutral-bg)}
.tool-body{margin-top:8px;display:flex;flex-direction:column;gap:4px}
.section-label{font-size:12px;font-weight:600;color:var(--muted);margin-top:4px}
.tool-call.error,.tool-result.error{border-color:var(--err);background:var(--err-bg)}
.tool-call.error .tool-name,.tool-result.error .tool-name{color:var(--err)}
pre.tool-output.error{border-color:var(--err)}
.empty{color:var(--muted);font-style:italic}
.omitted{display:block;color:var(--warn);font-style:italic;margin:4px 0}
.truncation-note{margin:2px 0 0;font-size:12px;color:var(--warn)}
.reasoning{border-style:dashed;color:var(--muted);padding:6px 12px}
.reasoning>summary{font-size:12px;font-style:italic}
.reasoning .text{margin-top:6px;font-size:13px}
.event-error{border-color:var(--err);background:var(--err-bg)}
.event-error .entry-head{color:var(--err)}
.event-error pre{background:transparent;border-color:var(--err)}
.notice{padding:6px 12px;font-size:13px}
.permission-denied,.network-blocked,.capped{border-color:var(--warn);background:var(--warn-bg)}
.notice-label{font-weight:600;color:var(--warn);margin-right:6px}
.result{border-width:2px}.result.ok{border-color:var(--ok)}.result.error{border-color:var(--err);background:var(--err-bg)}
.result .entry-head{font-size:13px;color:var(--fg)}
.result.ok .entry-head{color:var(--ok)}.result.error .entry-head{color:var(--err)}
.result .reason{margin:0 0 6px;color:var(--err);font-weight:600}
.result-meta{margin:6px 0 0;font-size:12px;color:var(--muted)}
.unknown{font-size:12px}
.run-footer{margin-top:24px;border-top:1px solid var(--border);padding-top:10px;font-size:12px;color:var(--muted)}
.run-footer p{margin:2px 0}
.md{white-space:normal;overflow-wrap:anywhere}.md .plain{white-space:pre-wrap}.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}
.md p,.md ul,.md ol,.md blockquote,.md table,.md pre{margin:0 0 8px}
.md h1,.md h2,.md h3,.md h4,.md h5,.md h6{margin:12px 0 6px;font-size:15px;font-weight:600}.md h1{font-size:18px}.md h2{font-size:16px}
.md ul,.md ol{padding-left:24px}.md li.task-list-item{list-style:none}.md li.task-list-item input{margin:0 6px 0 -18px}
.md blockquote{padding:0 10px;border-left:3px solid var(--border);color:var(--muted)}
.md table{border-collapse:collapse;display:block;overflow:auto}.md th,.md td{border:1px solid var(--border);padding:3px 8px}.md th{background:var(--panel)}
.md pre code{background:none;padding:0}.md a{color:var(--info)}.md hr{border:none;border-top:1px solid var(--border)}
.md .sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)}.md section.footnotes{font-size:12px;color:var(--muted)}
.changes{margin-top:20px;border:1px solid var(--border);border-radius:8px;padding:12px 14px;min-width:0}
.changes>h2{font-size:16px;margin:0 0 10px}.changes .note{font-size:12px;color:var(--warn);margin:0 0 8px}
.d2h-file-list-wrapper{margin-bottom:12px}.d2h-file-list-header{margin-bottom:4px}.d2h-file-list-title{font-weight:600}
.d2h-file-switch,.d2h-file-collapse{display:none}
.d2h-file-list{list-style:none;margin:0;padding:0;border:1px solid var(--border);border-radius:6px}
.d2h-file-list>li{border-bottom:1px solid var(--border);padding:4px 10px}.d2h-file-list>li:last-child{border-bottom:none}
.d2h-file-name-wrapper{display:flex;align-items:center;gap:8px;min-width:0;width:100%}
.d2h-file-name{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12.5px}
a.d2h-file-name{color:var(--info);text-decoration:none}
.d2h-file-stats{margin-left:auto;display:flex;gap:4px;font-size:12px}.d2h-lines-added{color:var(--ok)}.d2h-lines-deleted{color:var(--err)}
.d2h-icon{fill:currentColor;flex:none}.d2h-added{color:var(--ok)}.d2h-deleted{color:var(--err)}.d2h-changed,.d2h-moved{color:var(--warn)}
.d2h-tag{font-size:10px;border:1px solid currentColor;border-radius:4px;padding:0 4px}
.d2h-file-wrapper{border:1px solid var(--border);border-radius:6px;margin-bottom:12px;overflow:hidden;scroll-margin-top:8px}
.d2h-file-header{display:flex;align-items:center;background:var(--panel);border-bottom:1px solid var(--border);padding:6px 10px}
.d2h-file-diff{overflow-x:auto}
.d2h-diff-table{border-collapse:collapse;width:100%;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12px}
.d2h-code-linenumber{width:1%;white-space:nowrap;color:var(--muted);text-align:right;vertical-align:top;border-right:1px solid var(--border);user-select:none}
.line-num1,.line-num2{display:inline-block;min-width:3em;padding:0 6px}
.d2h-code-line{display:flex;padding:0 8px}.d2h-code-line-prefix{user-select:none;flex:none;width:1.2em;white-space:pre}
.d2h-code-line-ctn{white-space:pre-wrap;overflow-wrap:anywhere;min-width:0}
.d2h-ins{background:var(--ok-bg)}.d2h-del{background:var(--err-bg)}.d2h-info{background:var(--info-bg);color:var(--muted)}
.d2h-code-line ins{background:color-mix(in srgb,var(--ok) 30%,transparent);text-decoration:none}
.d2h-code-line del{background:color-mix(in srgb,var(--err) 30%,transparent);text-decoration:none}
.d2h-emptyplaceholder,.d2h-code-side-emptyplaceholder{background:var(--panel)}
@media print{.toolbar{display:none}pre{max-height:none}}
`.trim();

/** Unhides the toolbar and wires it. Without JS the toolbar stays hidden. */
const SCRIPT = `(function(){var t=document.querySelector(".toolbar");if(!t)return;t.hidden=false;t.addEventListener("click",function(e){var b=e.target&&e.target.closest&&e.target.closest("button[data-action]");if(!b)return;var o=b.getAttribute("data-action")==="expand";var d=document.querySelectorAll("main details");for(var i=0;i<d.length;i++)d[i].open=o;});})();`;

const sha256 = (s: string) => `'sha256-${createHash("sha256").update(s, "utf8").digest("base64")}'`;
const CSP = `default-src 'none'; style-src ${sha256(CSS)}; script-src ${sha256(SCRIPT)}; img-src 'none'; base-uri 'none'; form-action 'none'`;

const attr = (name: string, value: string | number | undefined) => (value === undefined ? "" : ` ${name}="${esc(String(value))}"`);

function time(ts: string, ctx: RenderContext): string {
  const rel = formatOffset(ts, ctx.startMs);
  if (!ts) return "";
  return `<time class="ts"${attr("datetime", ts)}${attr("title", ts)}>${esc(rel || ts)}</time>`;
}

function head(label: string, ts: string, ctx: RenderContext, extra = ""): string {
  return `<div class="entry-head"><span class="who">${esc(label)}</span>${extra}${time(ts, ctx)}</div>`;
}

/** Clipped text as HTML: head, an omission marker, tail. */
function body(c: Clipped): string {
  if (!c.truncated) return esc(c.head);
  return `${esc(c.head)}<span class="omitted">${esc(omissionMarker(c))}</span>${esc(c.tail)}`;
}

function note(c: Clipped, what: string): string {
  return c.truncated ? `<p class="truncation-note">${esc(truncationNote(c, what))}</p>` : "";
}

/**
 * Agent text as Markdown (sanitized). A long text keeps its head and tail,
 * each rendered on its own, so a cut cannot leave a construct open.
 */
function markdown(c: Clipped, ctx: RenderContext, always = false): string {
  // Parsing is what costs memory on a huge stream: past the page's Markdown budget, texts stay
  // plain (the final message is always rendered).
  const size = c.head.length + (c.truncated ? c.tail.length : 0);
  if (!always && !spendMarkdownBudget(ctx, size)) return `<div class="plain">${body(c)}</div>`;
  const prefix = () => `md${nextMarkdownId(ctx)}-`;
  if (!c.truncated) return markdownToSafeHtml(c.head, prefix());
  return `${markdownToSafeHtml(c.head, prefix())}<span class="omitted">${esc(omissionMarker(c))}</span>${markdownToSafeHtml(c.tail, prefix())}`;
}

/** Characters of agent text one page renders as Markdown; the rest (and any text past it) is shown as plain text. */
const MARKDOWN_BUDGET = 1024 * 1024;
const markdownSpent = new WeakMap<RenderContext, number>();
function spendMarkdownBudget(ctx: RenderContext, size: number): boolean {
  const spent = markdownSpent.get(ctx) ?? 0;
  if (spent + size > MARKDOWN_BUDGET) return false;
  markdownSpent.set(ctx, spent + size);
  return true;
}

/** Footnote ids must differ between the texts of one page. */
const markdownIds = new WeakMap<RenderContext, number>();
function nextMarkdownId(ctx: RenderContext): number {
  const n = (markdownIds.get(ctx) ?? 0) + 1;
  markdownIds.set(ctx, n);
  return n;
}

let diff2html: typeof Diff2Html | undefined;

/** The diff as diff2html shows it; if diff2html fails on it, the patch as plain text (the page must still close). */
function patchHtml(text: string): string {
  try {
    const names = forDiff2html(text);
    // require(), not import: diff2html is evaluated on the first patch to show, not on every step.
    diff2html ??= require("diff2html") as typeof Diff2Html;
    return names.restore(diff2html.html(names.patch, { drawFileList: true, outputFormat: "line-by-line", matching: "lines", diffStyle: "word" }));
  } catch {
    return `<pre class="patch-plain">${esc(text)}</pre>`;
  }
}

/** The patch after the conversation: a file list linking to each file's diff. */
function changesSection(patch: TranscriptPatch): string {
  const n = patch.files.length;
  const note = patch.truncated
    ? `<p class="note">The patch is ${esc(formatBytes(patch.totalBytes))}; only its first ${esc(formatBytes(Buffer.byteLength(patch.text)))} are shown. The whole patch is in patch.diff.</p>`
    : "";
  const diff = patch.text.trim() ? patchHtml(patch.text) : `<p class="empty">The patch is empty.</p>`;
  return (
    `<section class="changes" id="changes" data-kind="changes" data-files="${n}">` +
    `<h2>Changes <span class="muted">(${n} file${n === 1 ? "" : "s"})</span></h2>${note}${diff}</section>\n`
  );
}

function metaItem(field: string, label: string, valueHtml: string): string {
  return `<div data-field="${field}"><dt>${esc(label)}</dt><dd>${valueHtml}</dd></div>`;
}

function resultBlock(result: ToolResultView): string {
  const empty = result.output.head === "" && !result.output.truncated;
  const label = result.isError ? "Output (error)" : "Output";
  return (
    `<div class="section-label">${label}</div>` +
    (empty
      ? `<p class="empty">(no output)</p>`
      : `<pre class="tool-output${result.isError ? " error" : ""}">${body(result.output)}</pre>${note(result.output, "Output")}`)
  );
}

export const htmlFormatter: TranscriptFormatter = {
  begin(ctx) {
    const h = ctx.header;
    const kind = conclusionKind(h.conclusion);
    const u = h.usage;
    const items = [
      metaItem("agent", "Agent", `${esc(h.agent)} <span class="muted">(${esc(h.backend)})</span>`),
      metaItem("model", "Model", h.model ? `<code>${esc(h.model)}</code>` : `<span class="muted">default</span>`),
      metaItem("duration", "Duration", esc(formatDuration(h.durationMs))),
      metaItem(
        "tokens",
        "Tokens (input / output / cached)",
        u ? `${esc(formatInt(u.inputTokens))} / ${esc(formatInt(u.outputTokens))} / ${esc(formatInt(u.cachedTokens))}` : `<span class="muted">unknown</span>`,
      ),
      metaItem("cost", "Cost", u?.costUsd !== undefined ? esc(formatCost(u.costUsd)) : `<span class="muted">unknown</span>`),
      metaItem("session", "Session", h.sessionId ? `<code>${esc(h.sessionId)}</code>` : `<span class="muted">none</span>`),
      ...(h.sandbox ? [metaItem("sandbox", "Sandbox", esc(h.sandbox))] : []),
      ...(h.patch
        ? [metaItem("changes", "Changes", `<a href="#changes">${esc(String(h.patch.files.length))} file${h.patch.files.length === 1 ? "" : "s"}</a>`)]
        : []),
      metaItem("started", "Started", `<time${attr("datetime", h.startedAt)}>${esc(h.startedAt)}</time>`),
    ];
    return (
      `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
      `<meta http-equiv="Content-Security-Policy" content="${esc(h.attachments?.some((a) => a.dataUri) ? CSP.replace("img-src 'none'", "img-src data:") : CSP)}">\n` +
      `<meta name="viewport" content="width=device-width, initial-scale=1">\n<meta name="referrer" content="no-referrer">\n` +
      `<meta name="generator" content="Agent Runner">\n` +
      `<title>${esc(`Transcript: ${h.agent} (${h.conclusion})`)}</title>\n<style>${CSS}</style>\n</head>\n<body>\n<div class="page">\n` +
      `<header class="run-header conclusion-${kind}" data-conclusion="${esc(h.conclusion)}">\n` +
      `<div class="title-row"><h1>Agent run transcript</h1><span class="conclusion conclusion-${kind}" data-conclusion="${esc(h.conclusion)}">${esc(h.conclusion)}</span></div>\n` +
      (h.reason ? `<p class="reason">${esc(h.reason)}</p>\n` : "") +
      `<dl class="meta">${items.join("")}</dl>\n</header>\n` +
      `<nav class="toolbar" hidden><button type="button" data-action="expand">Expand all</button><button type="button" data-action="collapse">Collapse all</button></nav>\n` +
      `<main class="conversation">\n`
    );
  },

  prompt(text, ctx) {
    return `<section class="entry prompt" data-kind="prompt">${head("Prompt", "", ctx)}<div class="text">${body(text)}</div>${note(text, "Prompt")}</section>\n`;
  },

  attachments(list: TranscriptAttachment[], ctx: RenderContext) {
    // Images inline as data: URIs (the page stays self-contained; CSP then allows data: images only).
    const items = list.map(
      (a) =>
        `<li data-name="${esc(a.name)}" data-media-type="${esc(a.mediaType)}"><code>${esc(a.name)}</code> <span class="muted">${esc(a.mediaType)}, ${esc(formatBytes(a.bytes))}; ${esc(a.source)}</span>` +
        (a.dataUri && /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/.test(a.dataUri) ? `<img${attr("src", a.dataUri)}${attr("alt", a.name)}>` : "") +
        `</li>`,
    );
    return `<section class="entry attachments" data-kind="attachments">${head(`Attachments (${list.length})`, "", ctx)}<ul>${items.join("")}</ul><p class="muted">The files are in the run artifact's attachments/ folder.</p></section>\n`;
  },

  session(ev, ctx) {
    return (
      `<div class="entry session" data-kind="session"${attr("data-session-id", ev.sessionId)}${attr("data-ts", ev.ts)}>` +
      `Session <code>${esc(ev.sessionId)}</code>${ev.model ? ` · model <code>${esc(ev.model)}</code>` : ""} ${time(ev.ts, ctx)}</div>\n`
    );
  },

  text(text, ts, ctx) {
    return `<div class="entry assistant" data-kind="text"${attr("data-ts", ts)}>${head("Assistant", ts, ctx)}<div class="text md">${markdown(text, ctx)}</div>${note(text, "Text")}</div>\n`;
  },

  reasoning(text, ts, ctx) {
    return (
      `<details class="entry reasoning" data-kind="reasoning"${attr("data-ts", ts)}><summary>Reasoning${time(ts, ctx)}</summary>` +
      `<div class="text">${body(text)}</div>${note(text, "Reasoning")}</details>\n`
    );
  },

  toolCall(call, state, ctx) {
    const status = state.kind === "done" ? (state.result.isError ? "error" : "ok") : state.kind === "deferred" ? "pending" : "missing";
    const badge =
      status === "error"
        ? `<span class="badge badge-error">failed</span>`
        : status === "pending"
          ? `<span class="badge badge-pending">result below</span>`
          : status === "missing"
            ? `<span class="badge badge-missing">no result</span>`
            : "";
    const input =
      call.input.head === "" || call.input.head === "{}"
        ? `<p class="empty">(no input)</p>`
        : `<pre class="tool-input">${body(call.input)}</pre>${note(call.input, "Input")}`;
    const out =
      state.kind === "done"
        ? resultBlock(state.result)
        : state.kind === "deferred"
          ? `<p class="empty">The result arrived later; it is shown further down (#${call.index}).</p>`
          : `<p class="empty">No result was recorded for this call.</p>`;
    return (
      `<details class="entry tool-call${status === "error" ? " error" : ""}" id="tool-${call.index}" data-kind="tool_call"` +
      `${attr("data-index", call.index)}${attr("data-tool-name", call.name)}${attr("data-tool-id", call.id)}${attr("data-status", status)}${attr("data-ts", call.ts)}>` +
      `<summary><span class="tool-index">#${call.index}</span><span class="tool-name">${esc(call.name)}</span>` +
      `<span class="tool-summary"${attr("title", call.summary)}>${esc(call.summary)}</span>${badge}${time(call.ts, ctx)}</summary>` +
      `<div class="tool-body"><div class="section-label">Input</div>${input}${out}</div></details>\n`
    );
  },

  lateResult(call, result, ctx) {
    const status = result.isError ? "error" : "ok";
    const title = call
      ? `<span class="tool-index">#${call.index}</span><span class="tool-name">${esc(call.name)}</span><span class="tool-summary">result of <a href="#tool-${call.index}">#${call.index}</a>${call.summary ? ` · ${esc(call.summary)}` : ""}</span>`
      : `<span class="tool-index">?</span><span class="tool-name">${esc(result.name ?? "tool")}</span><span class="tool-summary">result without a matching call${result.id ? ` (${esc(result.id)})` : ""}</span>`;
    return (
      `<details class="entry tool-result${result.isError ? " error" : ""}" data-kind="tool_result"` +
      `${attr("data-for-index", call?.index)}${attr("data-tool-name", call?.name ?? result.name)}${attr("data-tool-id", result.id)}${attr("data-status", status)}${attr("data-ts", result.ts)}>` +
      `<summary>${title}${result.isError ? `<span class="badge badge-error">failed</span>` : ""}${time(result.ts, ctx)}</summary>` +
      `<div class="tool-body">${resultBlock(result)}</div></details>\n`
    );
  },

  usage(run, ctx) {
    return `<div class="entry usage" data-kind="usage"${attr("data-count", run.count)}${attr("data-ts", run.ts)}>${esc(usageLabel(run))}: ${esc(usageWithCost(run.usage))} ${time(run.ts, ctx)}</div>\n`;
  },

  permissionDenied(ev, ctx) {
    return (
      `<div class="entry notice permission-denied" data-kind="permission_denied"${attr("data-tool-name", ev.tool)}${attr("data-ts", ev.ts)}>` +
      `<span class="notice-label">Permission denied</span><code>${esc(ev.tool)}</code>${ev.detail ? ` <span class="detail">${esc(ev.detail)}</span>` : ""} ${time(ev.ts, ctx)}</div>\n`
    );
  },

  networkBlocked(ev, ctx) {
    return (
      `<div class="entry notice network-blocked" data-kind="network_blocked"${attr("data-host", ev.host)}${attr("data-ts", ev.ts)}>` +
      `<span class="notice-label">Network blocked</span><code>${esc(ev.host)}</code>${ev.detail ? ` <span class="detail">${esc(ev.detail)}</span>` : ""} ${time(ev.ts, ctx)}</div>\n`
    );
  },

  error(message, ts, ctx) {
    return `<div class="entry event-error error" role="alert" data-kind="error"${attr("data-ts", ts)}>${head("Error", ts, ctx)}<pre class="error-message">${body(message)}</pre>${note(message, "Error")}</div>\n`;
  },

  result(ev, text, ctx) {
    const isError = ev.isError === true;
    const meta = resultMeta(ev);
    return (
      `<section class="entry result ${isError ? "error" : "ok"}" data-kind="result" data-is-error="${isError}"${attr("data-ts", ev.ts)}>` +
      head(isError ? "Final result: error" : "Final result", ev.ts, ctx) +
      (ev.reason ? `<p class="reason">${esc(ev.reason)}</p>` : "") +
      (text ? `<div class="text md">${markdown(text, ctx, true)}</div>${note(text, "Result")}` : `<p class="empty">(no final message)</p>`) +
      (meta ? `<p class="result-meta">${esc(meta)}</p>` : "") +
      `</section>\n`
    );
  },

  unknown(type, json, ts, ctx) {
    return `<div class="entry unknown" data-kind="${esc(type)}"${attr("data-ts", ts)}>${head(`Event: ${type}`, ts, ctx)}<pre>${body(json)}</pre></div>\n`;
  },

  plain(label, text) {
    return `<div class="entry plain-fallback" data-kind="plain"><div class="entry-head"><span class="who">${esc(label)}</span></div><pre>${esc(text)}</pre></div>\n`;
  },

  capNote(ctx) {
    return (
      `<div class="entry notice capped" data-kind="capped"><span class="notice-label">Transcript truncated</span>` +
      `This transcript reached its size limit (${esc(formatBytes(ctx.maxTotalBytes))}); the rest of the conversation is omitted and only the final result follows. ` +
      `The full trace is in trace.jsonl.</div>\n`
    );
  },

  end(stats, ctx) {
    const { counts, omissions } = footerLines(stats);
    return (
      `</main>\n${ctx.header.patch ? changesSection(ctx.header.patch) : ""}<footer class="run-footer" data-events="${stats.events}" data-tool-calls="${stats.toolCalls}">` +
      `<p>${esc(counts)}</p>` +
      (omissions ? `<p>${esc(omissions)}</p>` : "") +
      `<p>Generated by Agent Runner.</p></footer>\n</div>\n<script>${SCRIPT}</script>\n</body>\n</html>\n`
    );
  },
};
