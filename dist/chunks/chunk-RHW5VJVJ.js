import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as g,b as f,c as y,d as R,f as x,g as k,h as T}from"./chunk-IBJ4EAFN.js";import{b}from"./chunk-EJ2MJZJ3.js";import{a as m}from"./chunk-VXUKBLKY.js";import{a as F,c as A,e as j}from"./chunk-7O52XZFL.js";var U=A((P,q)=>{q.exports=F("node:crypto")});var v=j(U(),1);var d=64536,N=2e4,h=50;function K(t){return`<!-- agent-runner:sticky:${(0,v.createHash)("sha256").update(t).digest("hex").slice(0,20)} -->`}var _={success:"\u2705",failure:"\u274C",timeout:"\u23F1\uFE0F",cancelled:"\u{1F6AB}",skipped:"\u23ED\uFE0F"};function p(t,e=N){let n=b(t);return n.length>e?`${n.slice(0,e)}

\u2026 (truncated; the full message is in the run's \`final-message\` output and result.json)`:n}function w(t){let e=[];return t.pullRequest&&e.push(`[Pull request #${t.pullRequest.number}](${t.pullRequest.url})`),t.commit&&e.push(t.commit.url?`[Commit ${t.commit.sha.slice(0,7)}](${t.commit.url})`:`Commit \`${t.commit.sha.slice(0,7)}\``),t.runUrl&&e.push(`[Run](${t.runUrl})`),t.artifactUrl&&e.push(`[Artifact](${t.artifactUrl})`),e.join(" \xB7 ")}function V(t){let e=[t.marker,"### \u{1F440} Agent Runner is working\u2026","",`${t.requester?`Requested by @${t.requester}. `:""}${t.runUrl?`[Follow the run](${t.runUrl}).`:""}`.trim()];return t.activity.length&&e.push("","<details open><summary>Latest activity</summary>","",f(t.activity.join(`
`),"text"),"","</details>"),e.join(`
`).slice(0,d)}function C(t){return t<1024?`${t} B`:`${(t/1024).toFixed(1)} KB`}function B(t){let e=t.usage,n=e.inputTokens||e.outputTokens?`${m(e.inputTokens)} in \xB7 ${m(e.outputTokens)} out${e.cachedTokens?` \xB7 ${m(e.cachedTokens)} cached`:""} tokens`:"",r=e.requests?`${e.requests} model request${e.requests===1?"":"s"}`:"";return[`\u23F2\uFE0F ${R(t.durationMs)}`,n,e.costUsd!==void 0?`$${e.costUsd.toFixed(4)}`:"",r,t.toolCalls?`${t.toolCalls} tool calls`:""].filter(Boolean).join(" \xB7 ")}function S(t){return t.replace(/^GIT binary patch\n[\s\S]*?(?=^diff --git |(?![\s\S]))/gm,`(binary change omitted here; it is in patch.diff)

`)}function E(t,e,n){let r=n?`[the run's artifact](${n}) (\`patch.diff\`)`:`the run's artifact and on the runner at \`${t.path}\``,i=I=>`<details><summary>Patch (${C(t.bytes)})</summary>

${I}`,u=`

</details>`,c=S(t.text).replace(/\n+$/,""),o=i("")+f(c,"diff")+u;if(o.length<=e)return o;let a=`\u26A0\uFE0F The patch is too long for a comment: the start is shown below. The full patch is in ${r}.

`,s=e-i(a).length-u.length-200;if(s<500)return`<details><summary>Patch (${C(t.bytes)})</summary>

The patch is too long for a comment; it is in ${r}.

</details>`;let l=c.slice(0,s),$=l.lastIndexOf(`
`);return $>s/2&&(l=l.slice(0,$)),i(a)+f(`${l}
\u2026 (truncated)`,"diff")+u}function L(t,e,n){return e.length?[`<details><summary>${t}</summary>`,"",...n?[n,""]:[],...e.slice(0,h).map(r=>`- ${r}`),...e.length>h?[`- \u2026 and ${e.length-h} more`]:[],"","</details>",""]:[]}function J(t){let e=t.result,n=e.conclusion==="success"?"Agent Runner finished":`Agent Runner: ${e.conclusion}`,r=[t.marker,`### ${_[e.conclusion]} ${n}`,""];e.conclusion!=="success"&&e.reason&&r.push(`**Reason:** ${p(e.reason,2e3)}`,""),e.verify&&r.push(`**Verify:** ${x(e)}`,""),t.deliveryNote&&r.push(t.deliveryNote,""),r.push(e.output.trim()?p(e.output):"_The agent gave no final message._","");let i=e.diff.excludedFiles??[],u=[...y(e,"#### Attempts"),...e.verify?.runs.length?[`<details><summary>Checks (${e.verify.runs.length})</summary>`,"",...k(e),"","</details>",""]:[],...L(`Changed files (${e.diff.changedFiles.length})`,e.diff.changedFiles.map(s=>g(s))),...i.length?L(`Left out of the patch (${i.length})`,i.map(s=>g(s)),T(i)):[]],c=["---",[B(e),w(t.links)].filter(Boolean).join(" \xB7 ")],o=[...r,...u].join(`
`),a=`
`+c.join(`
`);if(t.patch&&t.patch.text.trim()){let s=d-o.length-a.length-2;o+=`
`+E(t.patch,s,t.links.artifactUrl)+`
`}return(o+a).slice(0,d)}function Q(t){return[t.marker,"### \u274C Agent Runner could not run","",p(t.message,4e3),"",t.runUrl?`[Run](${t.runUrl})`:""].join(`
`).trim()}export{K as a,p as b,V as c,J as d,Q as e};
