import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as at,b as O}from"./chunk-F4ZBI2SN.js";import{a as ot}from"./chunk-YSN3JLYZ.js";import{a as st}from"./chunk-5UWKJJU5.js";import{a as rt}from"./chunk-VXUKBLKY.js";import{e as R}from"./chunk-XSRI65JP.js";import{a as p,c as C,e as Dt}from"./chunk-7O52XZFL.js";var pt=C((Re,ut)=>{ut.exports=p("node:crypto")});var ft=C((Se,mt)=>{var W;try{W=p.resolve("./hast-util-sanitize.cjs")}catch{W=p.resolve("./chunks/hast-util-sanitize.cjs")}mt.exports=p(W)});var gt=C((Ae,ht)=>{var V;try{V=p.resolve("./hast-util-to-html.cjs")}catch{V=p.resolve("./chunks/hast-util-to-html.cjs")}ht.exports=p(V)});var bt=C((Be,xt)=>{var G;try{G=p.resolve("./mdast-util-to-hast.cjs")}catch{G=p.resolve("./chunks/mdast-util-to-hast.cjs")}xt.exports=p(G)});var vt=C((_e,Tt)=>{var Q;try{Q=p.resolve("./diff2html.cjs")}catch{Q=p.resolve("./chunks/diff2html.cjs")}Tt.exports=p(Q)});import{createReadStream as be,createWriteStream as ye}from"node:fs";import{once as $e}from"node:events";import{open as we}from"node:fs/promises";import P from"node:path";import{once as ue}from"node:events";var Lt=/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g,Wt=/[\u0000-\u0008\u000b-\u001f\u007f]/g;function I(t){return t.replace(Lt,"").replace(/\r\n?/g,`
`).replace(Wt,e=>e==="\x7F"?"\u2421":String.fromCharCode(9216+e.charCodeAt(0)))}function Vt(t,e){return Buffer.from(t.slice(0,e),"utf8").subarray(0,e).toString("utf8").replace(/\uFFFD$/,"")}function Gt(t,e){if(e<=0)return"";let n=Buffer.from(t.slice(-e),"utf8");return n.subarray(Math.max(0,n.length-e)).toString("utf8").replace(/^\uFFFD/,"")}function D(t,e){let n=Buffer.byteLength(t,"utf8");if(n<=e)return{head:I(t),tail:"",truncated:!1,totalBytes:n,omittedBytes:0};let r=Math.floor(e/4),s=Vt(t,e-r),o=Gt(t,r),a=Buffer.byteLength(s,"utf8")+Buffer.byteLength(o,"utf8");return{head:I(s),tail:I(o),truncated:!0,totalBytes:n,omittedBytes:Math.max(0,n-a)}}function it(t){return t.truncated?`${t.head}${t.head.endsWith(`
`)?"":`
`}${B(t)}
${t.tail}`:t.head}function B(t){return`[\u2026 ${m(t.omittedBytes)} omitted \u2026]`}function S(t,e){return`${e} truncated: showing ${m(t.totalBytes-t.omittedBytes)} of ${m(t.totalBytes)}; full text in trace.jsonl.`}var Kt={"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#39;"};function i(t){return t.replace(/[&<>"']/g,e=>Kt[e])}function x(t,e){try{let n=new WeakSet;return JSON.stringify(t,(s,o)=>{if(typeof o=="bigint")return o.toString();if(typeof o=="object"&&o!==null){if(n.has(o))return"[Circular]";n.add(o)}return o},e)??String(t)}catch{return String(t)}}function dt(t){if(typeof t=="string"){let e=t.trim();if(e.startsWith("{")&&e.endsWith("}")||e.startsWith("[")&&e.endsWith("]"))try{return JSON.stringify(JSON.parse(e),null,2)}catch{}return t}return t===void 0?"":x(t,2)}var Jt=["command","cmd","pattern","query","file_path","filePath","path","notebook_path","url","description","prompt","subject","name"];function lt(t,e=120){let n;if(t==null)n="";else if(typeof t=="string")n=t;else if(typeof t!="object")n=String(t);else if(Array.isArray(t))n=t.every(r=>typeof r=="string")?t.join(" "):x(t);else{let r=t,s=Jt.find(o=>{let a=r[o];return typeof a=="string"&&a.trim()!==""||Array.isArray(a)&&a.length>0&&a.every(d=>typeof d=="string")});if(s!==void 0){let o=r[s];n=Array.isArray(o)?o.join(" "):o,Array.isArray(o)&&o.length===3&&/(^|\/)(ba|z)?sh$/.test(o[0])&&/^-l?c$/.test(o[1])&&(n=o[2]);let a=r.path??r.file_path;s==="pattern"&&typeof a=="string"&&a!==""&&(n=`${n} in ${a}`)}else n=Object.keys(r).length===0?"":x(r)}return n=I(n).replace(/\s+/g," ").trim(),n.length>e&&(n=`${n.slice(0,e-1).trimEnd()}\u2026`),n}function f(t){return Number.isFinite(t)?rt(t):"\u2014"}function A(t,e){return`${f(t)} ${e}${t===1?"":"s"}`}function E(t){return Number.isFinite(t)?t===0?"$0.00":t<.01?`$${t.toFixed(4)}`:`$${t.toFixed(2)}`:"\u2014"}function j(t){if(!Number.isFinite(t)||t<0)return"\u2014";if(t<1e3)return`${Math.round(t)} ms`;let e=t/1e3;if(e<60)return`${e.toFixed(1)} s`;let n=Math.round(e),r=Math.floor(n/3600),s=Math.floor(n%3600/60),o=n%60,a=d=>String(d).padStart(2,"0");return r>0?`${r}h ${a(s)}m ${a(o)}s`:`${s}m ${a(o)}s`}function m(t){return t<1024?`${t} B`:t<1024*1024?`${(t/1024).toFixed(t<10*1024?1:0)} KB`:`${(t/(1024*1024)).toFixed(1)} MB`}function ct(t,e){let n=Date.parse(t);if(!Number.isFinite(n)||!Number.isFinite(e))return"";let r=Math.max(0,n-e)/1e3;if(r<60)return`+${r.toFixed(1)}s`;let s=Math.round(r),o=Math.floor(s/3600),a=Math.floor(s%3600/60),d=s%60,c=v=>String(v).padStart(2,"0");return o>0?`+${o}h${c(a)}m${c(d)}s`:`+${a}m${c(d)}s`}function L(t){return`${f(t.inputTokens)} in \xB7 ${f(t.outputTokens)} out \xB7 ${f(t.cachedTokens)} cached`}function k(t){return`${L(t)}${t.costUsd!==void 0?` \xB7 ${E(t.costUsd)}`:""}`}function M(t){return t.cumulative?"Usage so far":t.count>1?`Usage (${t.count} updates)`:"Usage"}function H(t){let e=[];return typeof t.numTurns=="number"&&e.push(`${f(t.numTurns)} turn${t.numTurns===1?"":"s"}`),t.usage&&e.push(k(t.usage)),e.join(" \xB7 ")}function q(t){let e=[A(t.events,"event"),`${A(t.toolCalls,"tool call")}${t.failedToolCalls?` (${f(t.failedToolCalls)} failed)`:""}`,A(t.errors,"error")];t.usage&&e.push(`tokens from events: ${k(t.usage)}`);let n=[];return t.truncatedItems&&n.push(`${f(t.truncatedItems)} long item${t.truncatedItems===1?" was":"s were"} truncated`),t.capped&&n.push(`${A(t.omittedEvents,"event")} after the size limit not shown`),{counts:e.join(" \xB7 "),omissions:n.length?`${n.join("; ")}; the full trace is in trace.jsonl.`:""}}function F(t){let e=t.toLowerCase();return e==="success"||e==="failure"||e==="incomplete"||e==="timeout"||e==="cancelled"||e==="skipped"?e:"other"}var jt=Dt(pt(),1);var K;function Qt(){if(K)return K;let{defaultSchema:t,sanitize:e}=ft(),{toHtml:n}=gt(),{toHast:r}=bt(),s={...t,tagNames:(t.tagNames??[]).filter(o=>o!=="img"&&o!=="picture"&&o!=="source"&&o!=="video"&&o!=="audio"),protocols:{...t.protocols,href:["http","https","mailto"],src:[]},clobberPrefix:""};return K={toHast:r,sanitize:e,toHtml:n,schema:s}}function _(t,e="md-"){let{toHast:n,sanitize:r,toHtml:s,schema:o}=Qt();try{let a=st(ot(t));yt(a);let d=n(a,{clobberPrefix:`user-content-${e}`}),c=r(d,o);return $t(c),s(c)}catch{return`<pre class="plain">${s({type:"text",value:t})}</pre>`}}function yt(t){if(!("children"in t))return;let e=t;e.children=e.children.map(n=>{if(n.type==="html"){let r={type:"text",value:n.value};return Yt(e)?{type:"paragraph",children:[r]}:r}return n.type==="image"?{type:"link",url:n.url,children:[{type:"text",value:`image: ${n.alt||n.url}`}]}:n.type==="imageReference"?{type:"linkReference",identifier:n.identifier,label:n.label,referenceType:"full",children:[{type:"text",value:`image: ${n.alt||n.label||n.identifier}`}]}:(yt(n),n)})}function Yt(t){return t.type==="root"||t.type==="blockquote"||t.type==="listItem"||t.type==="footnoteDefinition"}function $t(t){for(let e of t.children)e.type==="element"&&(e.tagName==="a"&&typeof e.properties.href=="string"&&!e.properties.href.startsWith("#")&&(e.properties.rel=["noopener","noreferrer","nofollow"]),$t(e))}var Zt=/^(?:diff --git |--- |\+\+\+ |rename from |rename to |copy from |copy to )/,Xt=/"((?:[^"\\]|\\.)*)"/g;function te(t){let e=[],n=r=>e.push(...Buffer.from(r,"utf8"));for(let r=0;r<t.length;r++){let s=t[r];if(s!=="\\"){n(s);continue}let o=t[r+1]??"",a=/^[0-3][0-7]{2}/.exec(t.slice(r+1,r+4));a&&Number.parseInt(a[0],8)>=128?(e.push(Number.parseInt(a[0],8)),r+=3):o==="\\"||o==='"'?(n(o),r++):(n(`\\${o}`),r++)}return Buffer.from(e).toString("utf8")}function wt(t,e){let n=!1;return t.split(`
`).map(r=>(r.startsWith("diff --git ")?n=!0:r.startsWith("@@")&&(n=!1),n&&Zt.test(r)?e(r):r)).join(`
`)}function ee(t){return t.includes('"')?wt(t,e=>e.replace(Xt,(n,r)=>te(r))):t}var J="\uE05C";function kt(t){let e=ee(t);return!e.includes("\\")||e.includes(J)?{patch:e,restore:n=>n}:{patch:wt(e,n=>n.replace(/\\/g,J)),restore:n=>n.split(J).join("\\")}}var Mt=`
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
`.trim(),Ht='(function(){var t=document.querySelector(".toolbar");if(!t)return;t.hidden=false;t.addEventListener("click",function(e){var b=e.target&&e.target.closest&&e.target.closest("button[data-action]");if(!b)return;var o=b.getAttribute("data-action")==="expand";var d=document.querySelectorAll("main details");for(var i=0;i<d.length;i++)d[i].open=o;});})();',Ct=t=>`'sha256-${(0,jt.createHash)("sha256").update(t,"utf8").digest("base64")}'`,Rt=`default-src 'none'; style-src ${Ct(Mt)}; script-src ${Ct(Ht)}; img-src 'none'; base-uri 'none'; form-action 'none'`,l=(t,e)=>e===void 0?"":` ${t}="${i(String(e))}"`;function b(t,e){let n=ct(t,e.startMs);return t?`<time class="ts"${l("datetime",t)}${l("title",t)}>${i(n||t)}</time>`:""}function T(t,e,n,r=""){return`<div class="entry-head"><span class="who">${i(t)}</span>${r}${b(e,n)}</div>`}function w(t){return t.truncated?`${i(t.head)}<span class="omitted">${i(B(t))}</span>${i(t.tail)}`:i(t.head)}function $(t,e){return t.truncated?`<p class="truncation-note">${i(S(t,e))}</p>`:""}function St(t,e,n=!1){let r=t.head.length+(t.truncated?t.tail.length:0);if(!n&&!re(e,r))return`<div class="plain">${w(t)}</div>`;let s=()=>`md${se(e)}-`;return t.truncated?`${_(t.head,s())}<span class="omitted">${i(B(t))}</span>${_(t.tail,s())}`:_(t.head,s())}var ne=1024*1024,Et=new WeakMap;function re(t,e){let n=Et.get(t)??0;return n+e>ne?!1:(Et.set(t,n+e),!0)}var At=new WeakMap;function se(t){let e=(At.get(t)??0)+1;return At.set(t,e),e}var It;function oe(t){try{let e=kt(t);return It??=vt(),e.restore(It.html(e.patch,{drawFileList:!0,outputFormat:"line-by-line",matching:"lines",diffStyle:"word"}))}catch{return`<pre class="patch-plain">${i(t)}</pre>`}}function ae(t){let e=t.files.length,n=t.truncated?`<p class="note">The patch is ${i(m(t.totalBytes))}; only its first ${i(m(Buffer.byteLength(t.text)))} are shown. The whole patch is in patch.diff.</p>`:"",r=t.text.trim()?oe(t.text):'<p class="empty">The patch is empty.</p>';return`<section class="changes" id="changes" data-kind="changes" data-files="${e}"><h2>Changes <span class="muted">(${e} file${e===1?"":"s"})</span></h2>${n}${r}</section>
`}function g(t,e,n){return`<div data-field="${t}"><dt>${i(e)}</dt><dd>${n}</dd></div>`}function Bt(t){let e=t.output.head===""&&!t.output.truncated;return`<div class="section-label">${t.isError?"Output (error)":"Output"}</div>`+(e?'<p class="empty">(no output)</p>':`<pre class="tool-output${t.isError?" error":""}">${w(t.output)}</pre>${$(t.output,"Output")}`)}var qt={begin(t){let e=t.header,n=F(e.conclusion),r=e.usage,s=[g("agent","Agent",`${i(e.agent)} <span class="muted">(${i(e.backend)})</span>`),g("model","Model",e.model?`<code>${i(e.model)}</code>`:'<span class="muted">default</span>'),g("duration","Duration",i(j(e.durationMs))),g("tokens","Tokens (input / output / cached)",r?`${i(f(r.inputTokens))} / ${i(f(r.outputTokens))} / ${i(f(r.cachedTokens))}`:'<span class="muted">unknown</span>'),g("cost","Cost",r?.costUsd!==void 0?i(E(r.costUsd)):'<span class="muted">unknown</span>'),g("session","Session",e.sessionId?`<code>${i(e.sessionId)}</code>`:'<span class="muted">none</span>'),...e.sandbox?[g("sandbox","Sandbox",i(e.sandbox))]:[],...e.patch?[g("changes","Changes",`<a href="#changes">${i(String(e.patch.files.length))} file${e.patch.files.length===1?"":"s"}</a>`)]:[],g("started","Started",`<time${l("datetime",e.startedAt)}>${i(e.startedAt)}</time>`)];return`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${i(e.attachments?.some(o=>o.dataUri)?Rt.replace("img-src 'none'","img-src data:"):Rt)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="Agent Runner">
<title>${i(`Transcript: ${e.agent} (${e.conclusion})`)}</title>
<style>${Mt}</style>
</head>
<body>
<div class="page">
<header class="run-header conclusion-${n}" data-conclusion="${i(e.conclusion)}">
<div class="title-row"><h1>Agent run transcript</h1><span class="conclusion conclusion-${n}" data-conclusion="${i(e.conclusion)}">${i(e.conclusion)}</span></div>
`+(e.reason?`<p class="reason">${i(e.reason)}</p>
`:"")+`<dl class="meta">${s.join("")}</dl>
</header>
<nav class="toolbar" hidden><button type="button" data-action="expand">Expand all</button><button type="button" data-action="collapse">Collapse all</button></nav>
<main class="conversation">
`},prompt(t,e){return`<section class="entry prompt" data-kind="prompt">${T("Prompt","",e)}<div class="text">${w(t)}</div>${$(t,"Prompt")}</section>
`},attachments(t,e){let n=t.map(r=>`<li data-name="${i(r.name)}" data-media-type="${i(r.mediaType)}"><code>${i(r.name)}</code> <span class="muted">${i(r.mediaType)}, ${i(m(r.bytes))}; ${i(r.source)}</span>`+(r.dataUri&&/^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/.test(r.dataUri)?`<img${l("src",r.dataUri)}${l("alt",r.name)}>`:"")+"</li>");return`<section class="entry attachments" data-kind="attachments">${T(`Attachments (${t.length})`,"",e)}<ul>${n.join("")}</ul><p class="muted">The files are in the run artifact's attachments/ folder.</p></section>
`},session(t,e){return`<div class="entry session" data-kind="session"${l("data-session-id",t.sessionId)}${l("data-ts",t.ts)}>Session <code>${i(t.sessionId)}</code>${t.model?` \xB7 model <code>${i(t.model)}</code>`:""} ${b(t.ts,e)}</div>
`},text(t,e,n){return`<div class="entry assistant" data-kind="text"${l("data-ts",e)}>${T("Assistant",e,n)}<div class="text md">${St(t,n)}</div>${$(t,"Text")}</div>
`},reasoning(t,e,n){return`<details class="entry reasoning" data-kind="reasoning"${l("data-ts",e)}><summary>Reasoning${b(e,n)}</summary><div class="text">${w(t)}</div>${$(t,"Reasoning")}</details>
`},toolCall(t,e,n){let r=e.kind==="done"?e.result.isError?"error":"ok":e.kind==="deferred"?"pending":"missing",s=r==="error"?'<span class="badge badge-error">failed</span>':r==="pending"?'<span class="badge badge-pending">result below</span>':r==="missing"?'<span class="badge badge-missing">no result</span>':"",o=t.input.head===""||t.input.head==="{}"?'<p class="empty">(no input)</p>':`<pre class="tool-input">${w(t.input)}</pre>${$(t.input,"Input")}`,a=e.kind==="done"?Bt(e.result):e.kind==="deferred"?`<p class="empty">The result arrived later; it is shown further down (#${t.index}).</p>`:'<p class="empty">No result was recorded for this call.</p>';return`<details class="entry tool-call${r==="error"?" error":""}" id="tool-${t.index}" data-kind="tool_call"${l("data-index",t.index)}${l("data-tool-name",t.name)}${l("data-tool-id",t.id)}${l("data-status",r)}${l("data-ts",t.ts)}><summary><span class="tool-index">#${t.index}</span><span class="tool-name">${i(t.name)}</span><span class="tool-summary"${l("title",t.summary)}>${i(t.summary)}</span>${s}${b(t.ts,n)}</summary><div class="tool-body"><div class="section-label">Input</div>${o}${a}</div></details>
`},lateResult(t,e,n){let r=e.isError?"error":"ok",s=t?`<span class="tool-index">#${t.index}</span><span class="tool-name">${i(t.name)}</span><span class="tool-summary">result of <a href="#tool-${t.index}">#${t.index}</a>${t.summary?` \xB7 ${i(t.summary)}`:""}</span>`:`<span class="tool-index">?</span><span class="tool-name">${i(e.name??"tool")}</span><span class="tool-summary">result without a matching call${e.id?` (${i(e.id)})`:""}</span>`;return`<details class="entry tool-result${e.isError?" error":""}" data-kind="tool_result"${l("data-for-index",t?.index)}${l("data-tool-name",t?.name??e.name)}${l("data-tool-id",e.id)}${l("data-status",r)}${l("data-ts",e.ts)}><summary>${s}${e.isError?'<span class="badge badge-error">failed</span>':""}${b(e.ts,n)}</summary><div class="tool-body">${Bt(e)}</div></details>
`},usage(t,e){return`<div class="entry usage" data-kind="usage"${l("data-count",t.count)}${l("data-ts",t.ts)}>${i(M(t))}: ${i(k(t.usage))} ${b(t.ts,e)}</div>
`},permissionDenied(t,e){return`<div class="entry notice permission-denied" data-kind="permission_denied"${l("data-tool-name",t.tool)}${l("data-ts",t.ts)}><span class="notice-label">Permission denied</span><code>${i(t.tool)}</code>${t.detail?` <span class="detail">${i(t.detail)}</span>`:""} ${b(t.ts,e)}</div>
`},networkBlocked(t,e){return`<div class="entry notice network-blocked" data-kind="network_blocked"${l("data-host",t.host)}${l("data-ts",t.ts)}><span class="notice-label">Network blocked</span><code>${i(t.host)}</code>${t.detail?` <span class="detail">${i(t.detail)}</span>`:""} ${b(t.ts,e)}</div>
`},error(t,e,n){return`<div class="entry event-error error" role="alert" data-kind="error"${l("data-ts",e)}>${T("Error",e,n)}<pre class="error-message">${w(t)}</pre>${$(t,"Error")}</div>
`},result(t,e,n){let r=t.isError===!0,s=H(t);return`<section class="entry result ${r?"error":"ok"}" data-kind="result" data-is-error="${r}"${l("data-ts",t.ts)}>`+T(r?"Final result: error":"Final result",t.ts,n)+(t.reason?`<p class="reason">${i(t.reason)}</p>`:"")+(e?`<div class="text md">${St(e,n,!0)}</div>${$(e,"Result")}`:'<p class="empty">(no final message)</p>')+(s?`<p class="result-meta">${i(s)}</p>`:"")+`</section>
`},unknown(t,e,n,r){return`<div class="entry unknown" data-kind="${i(t)}"${l("data-ts",n)}>${T(`Event: ${t}`,n,r)}<pre>${w(e)}</pre></div>
`},plain(t,e){return`<div class="entry plain-fallback" data-kind="plain"><div class="entry-head"><span class="who">${i(t)}</span></div><pre>${i(e)}</pre></div>
`},capNote(t){return`<div class="entry notice capped" data-kind="capped"><span class="notice-label">Transcript truncated</span>This transcript reached its size limit (${i(m(t.maxTotalBytes))}); the rest of the conversation is omitted and only the final result follows. The full trace is in trace.jsonl.</div>
`},end(t,e){let{counts:n,omissions:r}=q(t);return`</main>
${e.header.patch?ae(e.header.patch):""}<footer class="run-footer" data-events="${t.events}" data-tool-calls="${t.toolCalls}"><p>${i(n)}</p>`+(r?`<p>${i(r)}</p>`:"")+`<p>Generated by Agent Runner.</p></footer>
</div>
<script>${Ht}</script>
</body>
</html>
`}};var ie={success:"\u2705",failure:"\u274C",timeout:"\u23F1\uFE0F",cancelled:"\u23F9\uFE0F",skipped:"\u23ED\uFE0F",other:"\u2139\uFE0F"};function tt(t,e=""){let n=0;for(let s of t.matchAll(/`+/g))n=Math.max(n,s[0].length);let r="`".repeat(Math.max(3,n+1));return`${r}${e}
${t}${t.endsWith(`
`)||t===""?"":`
`}${r}`}function y(t,e={}){let n=t.replace(/\s*\n\s*/g," ");if(n==="")return"` `";e.table&&(n=n.replace(/\|/g,"\\|"));let r=0;for(let a of n.matchAll(/`+/g))r=Math.max(r,a[0].length);let s="`".repeat(r+1),o=n.startsWith("`")||n.endsWith("`")||n.startsWith(" ")&&n.endsWith(" ")?" ":"";return`${s}${o}${n}${o}${s}`}function u(t){return t.replace(/\s*\n\s*/g," ").replace(/&/g,"&amp;").replace(/</g,"&lt;").replace(/[\\`*_[\]|~]/g,e=>`\\${e}`).replace(/^(\s*)(>|(?:[#+-]|\d+[.)])(?=\s|$))/,(e,n,r)=>`${n}${r.slice(0,-1)}\\${r.slice(-1)}`)}var de=/^ {0,3}(`{3,}|~{3,})(.*)$/;function Y(t){let e=[],n;for(let r of t.split(`
`)){let s=de.exec(r);if(n){s&&s[1][0]===n.char&&s[1].length>=n.len&&s[2].trim()===""&&(n=void 0),e.push(r);continue}if(s&&!(s[1][0]==="`"&&s[2].includes("`"))){n={char:s[1][0],len:s[1].length},e.push(r);continue}e.push(le(r))}return n&&e.push(n.char.repeat(n.len)),e.join(`
`)}function le(t){let e="",n=0;for(;n<t.length;){let r=t.indexOf("`",n);if(r<0)break;let s=r;for(;t[s]==="`";)s++;let o=t.slice(r,s),a=-1;for(let d=t.indexOf(o,s);d>=0;d=t.indexOf(o,d+1))if(t[d-1]!=="`"&&t[d+o.length]!=="`"){a=d;break}if(a<0){e+=Z(t.slice(n,s)),n=s;continue}e+=Z(t.slice(n,r))+t.slice(r,a+o.length),n=a+o.length}return e+Z(t.slice(n))}function Z(t){return t.replace(/<(?=[A-Za-z/!?])/g,"&lt;")}function X(t){return t.split(`
`).map(e=>e===""?">":`> ${e}`).join(`
`)}function N(t,e,n="text"){return`${tt(it(t),n)}${t.truncated?`

_${u(S(t,e))}_`:""}`}function z(t,e){return`${t.truncated?`${Y(t.head)}

_\\[\u2026 ${m(t.omittedBytes)} omitted \u2026\\]_

${Y(t.tail)}`:Y(t.head)}${t.truncated?`

_${u(S(t,e))}_`:""}`}function Ft(t){let e=t.isError?"**Output** (error)":"**Output**";return t.output.head===""&&!t.output.truncated?`${e}: _(no output)_`:`${e}

${N(t.output,"Output")}`}function U(t,e){return`<details><summary>${t}</summary>

${e}

</details>

`}function ce(t){let e=t.files.length,n=t.files.map(s=>`- ${y(s)}`).join(`
`),r=t.truncated?`> [!NOTE]
> The patch is ${u(m(t.totalBytes))}; only its beginning is shown\\. The whole patch is in patch\\.diff\\.

`:"";return`## Changes (${e} file${e===1?"":"s"})

${n?`${n}

`:""}${r}${t.text.trim()?`${tt(t.text,"diff")}

`:""}`}var _t={begin(t){let e=t.header,n=F(e.conclusion),r=e.usage;return`# Agent run transcript

| | |
|---|---|
${[["Conclusion",`${ie[n]} **${u(e.conclusion)}**${e.reason?` \u2014 ${u(e.reason)}`:""}`],["Agent",`${y(e.agent,{table:!0})} (${u(e.backend)})`],["Model",e.model?y(e.model,{table:!0}):"_default_"],...e.sandbox?[["Sandbox",u(e.sandbox)]]:[],["Duration",u(j(e.durationMs))],["Tokens",r?u(L(r)):"_unknown_"],["Cost",r?.costUsd!==void 0?u(E(r.costUsd)):"_unknown_"],["Session",e.sessionId?y(e.sessionId,{table:!0}):"_none_"],["Started",u(e.startedAt)]].map(([o,a])=>`| ${o} | ${a} |`).join(`
`)}

## Conversation

`},prompt(t){return`**Prompt**

${X(z(t,"Prompt"))}

`},attachments(t){return`**Attachments** (in the run artifact's \`attachments/\`)

${t.map(n=>`- [\`${n.name}\`](attachments/${encodeURIComponent(n.name)}) (${i(n.mediaType)}, ${m(n.bytes)}; ${i(n.source.replace(/[\[\]`*_]/g,"\\$&"))})`).join(`
`)}

`},session(t){return`<sub>Session ${y(t.sessionId)}${t.model?` \xB7 model ${y(t.model)}`:""}</sub>

`},text(t){return`${z(t,"Text")}

`},reasoning(t){return U("<i>Reasoning</i>",X(z(t,"Reasoning")))},toolCall(t,e){let n=e.kind==="done"&&e.result.isError,r=n?"\u274C ":e.kind==="missing"?"\u2754 ":e.kind==="deferred"?"\u23F3 ":"",s=n?" \u2014 <b>failed</b>":e.kind==="missing"?" \u2014 no result":"",o=`${r}#${t.index} <b>${i(t.name)}</b>${t.summary?` <code>${i(t.summary)}</code>`:""}${s}`,a=t.input.head===""||t.input.head==="{}"?"**Input**: _(none)_":`**Input**

${N(t.input,"Input","json")}`,d=e.kind==="done"?Ft(e.result):e.kind==="deferred"?`_The result arrived later; it is shown further down (#${t.index})._`:"_No result was recorded for this call._";return U(o,`${a}

${d}`)},lateResult(t,e){let n=e.isError?"\u274C ":"",r=t?`${n}#${t.index} <b>${i(t.name)}</b> result${t.summary?` <code>${i(t.summary)}</code>`:""}`:`${n}<b>${i(e.name??"tool")}</b> result without a matching call${e.id?` (${i(e.id)})`:""}`;return U(r,Ft(e))},usage(t){return`<sub>${u(`${M(t)}: ${k(t.usage)}`)}</sub>

`},permissionDenied(t){return`> [!WARNING]
> **Permission denied:** ${y(t.tool)}${t.detail?` \u2014 ${u(t.detail)}`:""}

`},networkBlocked(t){return`> [!WARNING]
> **Network blocked:** ${y(t.host)}${t.detail?` \u2014 ${u(t.detail)}`:""}

`},error(t){return`${X(`[!CAUTION]
**Error**

${N(t,"Error")}`)}

`},result(t,e){let n=t.isError===!0,r=H(t),s=[`## ${n?"\u274C Final result: error":"Final result"}`];return t.reason&&s.push(`> [!CAUTION]
> ${u(t.reason)}`),s.push(e?z(e,"Result"):"_(no final message)_"),r&&s.push(`<sub>${u(r)}</sub>`),`${s.join(`

`)}

`},unknown(t,e){return U(`Event <code>${i(t)}</code>`,N(e,"Event","json"))},plain(t,e){return`**${u(t)}**

${tt(e,"text")}

`},capNote(t){return`> [!WARNING]
> **Transcript truncated:** it reached its size limit (${u(m(t.maxTotalBytes))}); the rest of the conversation is omitted and only the final result follows\\. The full trace is in trace\\.jsonl\\.

`},end(t,e){let{counts:n,omissions:r}=q(t);return(e.header.patch?ce(e.header.patch):"")+`---

<sub>${u(n)}${r?`<br>${u(r)}`:""}<br>Generated by Agent Runner.</sub>
`}};var pe={maxToolOutputBytes:20*1024,maxTotalBytes:10*1024*1024,maxBufferedBytes:1024*1024},me=2e3;function fe(t){let e=[];for(let n of t)if(typeof n=="string")e.push(n);else if(n&&typeof n=="object"&&"head"in n&&typeof n.head=="string"){let r=n;e.push(r.truncated?`${r.head}
\u2026
${r.tail??""}`:r.head)}else n&&typeof n=="object"&&!("header"in n)&&e.push(x(n,2));return e.filter(n=>n!=="").join(`
`)}function he(t){let e={...t};for(let[n,r]of Object.entries(t))typeof r!="function"||n==="plain"||(e[n]=(...s)=>{try{return r.apply(t,s)}catch(o){let a=s.find(d=>typeof d=="object"&&d!==null&&"header"in d);return t.plain(`This part could not be rendered (${o instanceof Error?o.message:String(o)}); as plain text:`,fe(s),a)}});return e}function zt(t,e,n,r){return ge(t.map(s=>({fmt:s.format==="html"?qt:_t,out:s.out})),e,n,r)}async function ge(t,e,n,r){let s=t.map(({fmt:a,out:d})=>{let c={out:d,pending:[],asm:void 0};return c.asm=new nt(he(a),e,r,v=>c.pending.push(v)),c}),o=async()=>{for(let a of s){if(a.pending.length===0)continue;let{out:d}=a,c=a.pending.join("");if(a.pending=[],d.errored)throw d.errored;if(d.destroyed||d.writableEnded)throw new Error("transcript: the output stream was closed before the transcript was complete");d.write(c)||await ue(d,"drain")}};for(let a of s)a.asm.begin();await o();for await(let a of n){for(let d of a)for(let c of s)c.asm.pushSafely(d);await o()}for(let a of s)a.asm.finish();return await o(),s.map(a=>a.asm.stats)}var nt=class{constructor(e,n,r,s){this.fmt=e;this.sink=s;let o={...pe,...xe(r??{})};this.ctx={header:n,startMs:Date.parse(n.startedAt),maxToolOutputBytes:Math.max(256,o.maxToolOutputBytes),maxTotalBytes:o.maxTotalBytes},this.maxBuffered=o.maxBufferedBytes}fmt;sink;stats={events:0,toolCalls:0,failedToolCalls:0,errors:0,truncatedItems:0,capped:!1,omittedEvents:0,bytes:0};ctx;maxBuffered;queue=[];queuedBytes=0;unresolved=[];usageRun;usageSum;usageCumulative;lastSession="";callIndex=0;begin(){this.write(this.fmt.begin(this.ctx));let e=this.ctx.header.prompt;e!==void 0&&e.trim()!==""&&this.enqueue(this.fmt.prompt(this.clip(e),this.ctx));let n=this.ctx.header.attachments;n?.length&&this.fmt.attachments&&this.enqueue(this.fmt.attachments(n,this.ctx))}pushSafely(e){try{this.push(e)}catch(n){this.enqueue(this.fmt.plain(`An event could not be rendered (${n instanceof Error?n.message:String(n)}); as plain text:`,this.clip(x(e,2)).head,this.ctx))}}push(e){if(this.stats.events++,typeof e!="object"||e===null)return;let n=e,r=typeof n.ts=="string"?n.ts:"";if(n.type==="tool_call"?this.stats.toolCalls++:n.type==="tool_result"&&n.isError===!0?this.stats.failedToolCalls++:n.type==="error"&&this.stats.errors++,this.stats.capped){n.type==="result"?this.writeAlways(this.renderResult(e,r)):this.stats.omittedEvents++,this.trackUsage(e);return}switch(n.type!=="usage"&&this.flushUsage(),e.type){case"session":{let s=`${e.sessionId}\0${e.model??""}`;s!==this.lastSession&&(this.lastSession=s,this.enqueue(this.fmt.session({sessionId:String(e.sessionId),...e.model?{model:String(e.model)}:{},ts:r},this.ctx)));break}case"text":h(e.text).trim()!==""&&this.enqueue(this.fmt.text(this.clip(h(e.text)),r,this.ctx));break;case"reasoning":h(e.text).trim()!==""&&this.enqueue(this.fmt.reasoning(this.clip(h(e.text)),r,this.ctx));break;case"tool_call":this.toolCall(e,r);break;case"tool_result":this.toolResult(e,r);break;case"usage":{if(this.trackUsage(e),!et(e.usage))break;let s=e.cumulative===!0,o=this.usageRun;o&&o.cumulative===s?(o.count++,o.usage=s?e.usage:O(o.usage,e.usage)):(this.flushUsage(),this.usageRun={count:1,usage:e.usage,cumulative:s,ts:r});break}case"permission_denied":this.enqueue(this.fmt.permissionDenied({tool:h(e.tool),...e.detail?{detail:h(e.detail)}:{},ts:r},this.ctx));break;case"network_blocked":this.enqueue(this.fmt.networkBlocked({host:h(e.host),...e.detail?{detail:h(e.detail)}:{},ts:r},this.ctx));break;case"error":this.enqueue(this.fmt.error(this.clip(h(e.message)),r,this.ctx));break;case"result":this.trackUsage(e),this.enqueue(this.renderResult(e,r));break;default:{let{raw:s,ts:o,...a}=n;this.enqueue(this.fmt.unknown(String(n.type),this.clip(x(a,2)),r,this.ctx))}}}finish(){this.flushUsage(),this.drain(!0),this.unresolved=[],(this.usageCumulative??this.usageSum)&&(this.stats.usage=this.usageCumulative??this.usageSum),this.writeAlways(this.fmt.end(this.stats,this.ctx))}renderResult(e,n){let r=typeof e.text=="string"&&e.text!==""?this.clip(e.text):void 0;return this.fmt.result({...e,ts:n},r,this.ctx)}toolCall(e,n){let r={index:++this.callIndex,...typeof e.id=="string"&&e.id!==""?{id:e.id}:{},name:h(e.name)||"tool",summary:lt(e.input),input:this.clip(dt(e.input)),ts:n},s={view:r,deferred:!1};this.unresolved.push(s),this.unresolved.length>me&&this.unresolved.shift(),this.queue.push({kind:"call",call:s,bytes:r.input.head.length+r.input.tail.length+512}),this.queuedBytes+=this.queue[this.queue.length-1].bytes,this.drain(!1)}toolResult(e,n){let r=e.isError===!0,s={...typeof e.id=="string"&&e.id!==""?{id:e.id}:{},...typeof e.name=="string"&&e.name!==""?{name:e.name}:{},output:this.clip(h(e.output)),isError:r,ts:n},o=this.match(s);if(!o){this.enqueue(this.fmt.lateResult(void 0,s,this.ctx));return}this.unresolved.splice(this.unresolved.indexOf(o),1),o.deferred?this.enqueue(this.fmt.lateResult(o.view,s,this.ctx)):(o.result=s,this.drain(!1))}match(e){if(e.id!==void 0){let r=this.unresolved.find(s=>s.view.id===e.id);if(r)return r}let n=e.id!==void 0?this.unresolved.filter(r=>r.view.id===void 0):this.unresolved;if(e.name!==void 0){let r=n.find(s=>s.view.name===e.name);if(r)return r}return n[0]}flushUsage(){let e=this.usageRun;e&&(this.usageRun=void 0,this.enqueue(this.fmt.usage(e,this.ctx)))}trackUsage(e){e.type==="usage"&&et(e.usage)?e.cumulative?this.usageCumulative=e.usage:this.usageSum=O(this.usageSum??at(),e.usage):e.type==="result"&&et(e.usage)&&(this.usageCumulative=e.usage)}clip(e){let n=D(e,this.ctx.maxToolOutputBytes);return n.truncated&&this.stats.truncatedItems++,n}enqueue(e){if(this.queue.length===0){this.write(e);return}this.queue.push({kind:"chunk",text:e,bytes:e.length}),this.queuedBytes+=e.length,this.drain(!1)}drain(e){for(;this.queue.length>0;){let n=this.queue[0];if(n.kind==="call"&&!n.call.result&&!e&&this.queuedBytes<=this.maxBuffered)return;if(this.queue.shift(),this.queuedBytes-=n.bytes,n.kind==="chunk"){this.write(n.text);continue}let r=n.call;r.result?this.write(this.fmt.toolCall(r.view,{kind:"done",result:r.result},this.ctx)):e?this.write(this.fmt.toolCall(r.view,{kind:"missing"},this.ctx)):(r.deferred=!0,this.write(this.fmt.toolCall(r.view,{kind:"deferred"},this.ctx)),r.view={...r.view,input:D("",1)})}}write(e){if(this.stats.capped)return;let n=Buffer.byteLength(e,"utf8");if(this.stats.bytes+n>this.ctx.maxTotalBytes&&this.stats.bytes>0){this.stats.capped=!0,this.queue.length=0,this.queuedBytes=0,this.writeAlways(this.fmt.capNote(this.ctx));return}this.stats.bytes+=n,this.sink(e)}writeAlways(e){this.stats.bytes+=Buffer.byteLength(e,"utf8"),this.sink(e)}};function h(t){return typeof t=="string"?t:t==null?"":x(t)}function et(t){if(typeof t!="object"||t===null)return!1;let e=t;return typeof e.inputTokens=="number"&&typeof e.outputTokens=="number"&&typeof e.cachedTokens=="number"}function xe(t){return Object.fromEntries(Object.entries(t).filter(([,e])=>e!==void 0))}var ke=1024*1024;function Ut(t,e,n){return{agent:t.agentName,backend:t.agentBackend,...t.model?{model:t.model}:{},sandbox:t.sandboxBackend,conclusion:t.conclusion,...t.reason?{reason:t.reason}:{},durationMs:t.durationMs,usage:t.usage,...t.sessionId?{sessionId:t.sessionId}:{},startedAt:t.startedAt,...e?{prompt:e}:{},...n?{patch:n}:{}}}async function Nt(t,e,n=ke){let r;try{r=await we(t,"r")}catch{return}try{let{size:s}=await r.stat();if(s===0&&e.length===0)return;let o=Buffer.alloc(Math.min(s,n)),{bytesRead:a}=await r.read(o,0,o.length,0),d=o.subarray(0,a).toString("utf8"),c=s>n;return c&&(d=d.slice(0,d.lastIndexOf(`
`)+1)),{text:d,truncated:c,totalBytes:s,files:e}}finally{await r.close()}}async function*sn(t){for await(let e of Pt(t))yield*e}async function*Pt(t){let e="",n=s=>{let o=[];for(let a of s.split(`
`)){let d=Te(a);d&&o.push(d)}return o};for await(let s of be(t,{encoding:"utf8"})){let o=e+s,a=o.lastIndexOf(`
`);if(a===-1){e=o;continue}e=o.slice(a+1);let d=n(o.slice(0,a));d.length&&(yield d)}let r=n(e);r.length&&(yield r)}function Te(t){if(!t.trim())return;let e;try{e=JSON.parse(t)}catch{return}return typeof e=="object"&&e!==null&&typeof e.type=="string"?e:void 0}async function on(t,e,n){let r=await Nt(e.diff.patchPath,e.diff.changedFiles),s={...Ut(e,n.prompt!==void 0?n.redactor.redact(n.prompt):void 0,r),...n.attachments?.length?{attachments:n.attachments}:{}},o=P.join(t,R.trace),[a,d]=await Ot(["markdown","html"],o,s,[P.join(t,R.transcriptMd),P.join(t,R.transcriptHtml)]);return{markdown:a,html:d}}async function an(t,e,n){let r=await Nt(e.diff.patchPath,e.diff.changedFiles),[s]=await Ot(["html"],P.join(t,R.trace),Ut(e,void 0,r),[n]);return s}async function Ot(t,e,n,r){let s=r.map(a=>ye(a)),o;for(let a of s)a.on("error",d=>o??=d);try{let a=t.map((c,v)=>({format:c,out:s[v]})),d=await zt(a,n,Pt(e));if(await Promise.all(s.map(async c=>{c.end(),await $e(c,"close")})),o)throw o;return d}catch(a){for(let d of s)d.destroy();throw a}}export{E as a,j as b,ke as c,Nt as d,sn as e,on as f,an as g};
