import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{d as f}from"./chunk-RHW5VJVJ.js";import{a as t,b as s}from"./chunk-IBJ4EAFN.js";import{open as d,stat as p}from"node:fs/promises";var h=256*1024;async function m(e){let n=await p(e).catch(()=>{});if(!n||n.size===0)return;let r=await d(e,"r");try{let i=Buffer.alloc(Math.min(n.size,h));return await r.read(i,0,i.length,0),{text:i.toString("utf8"),bytes:n.size,path:e}}finally{await r.close()}}function v(e,n){let r={};return n&&(r["comment-url"]=n),e&&(e.pullRequest&&(r["pull-request-url"]=e.pullRequest.url,r["pull-request-number"]=String(e.pullRequest.number)),e.branch&&e.commitSha&&(r.branch=e.branch),e.commitSha&&(r["commit-sha"]=e.commitSha),e.commitSha&&e.verified!==void 0&&(r["commit-verified"]=String(e.verified))),r}function o(e,n){let r=[e?.note,e?.error?`\u274C **Delivery failed:** ${e.error}`:void 0,n].filter(i=>!!i);return r.length?r.join(`

`):void 0}async function R(e){let{result:n,outcome:r}=e,i=e.showPatch?await m(n.diff.patchPath):void 0,l=n.artifacts.find(a=>a.url&&!a.name.startsWith("agent-session-"))?.url,u=o(r,e.note);return f({marker:e.marker,result:n,links:{...e.runUrl?{runUrl:e.runUrl}:{},...l?{artifactUrl:l}:{},...r?.pullRequest?{pullRequest:r.pullRequest}:{},...r?.commitSha?{commit:{sha:r.commitSha,...r.commitUrl?{url:r.commitUrl}:{}}}:{}},...u?{deliveryNote:u}:{},...i?{patch:i}:{}})}function b(e,n){let r=["### Delivery",""];return e.pullRequest&&r.push(`- Pull request [#${e.pullRequest.number}](${e.pullRequest.url}) (${e.pullRequest.created?"opened":"updated"})`),e.commitSha&&r.push(`- Commit ${t(e.commitSha.slice(0,12))}${e.branch?` on ${t(e.branch)}`:""}${e.verified===!1?" \u2014 \u26A0\uFE0F not signed by GitHub":e.verified?" (verified)":""}`),n&&r.push(`- [Comment](${n})`),e.refusedFiles?.length&&r.push(`- Refused: changes to ${e.refusedFiles.map(i=>t(i)).join(", ")}`),e.note&&!e.pullRequest&&!e.commitSha&&r.push(`- ${e.note.split(`
`)[0]}`),e.error&&r.push("- \u274C Delivery failed:","",s(e.error,"text")),r.length===2&&r.push(`- ${e.mode==="none"?"Nothing delivered (deliver: none).":"Result posted as a comment."}`),r.join(`
`)+`
`}function q(e){return`### Delivery

- \u274C Not delivered: the patch was refused.

${s(e,"text")}
`}export{v as a,o as b,R as c,b as d,q as e};
