import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as y,b as x,c as k,d as R,f as T,g as b,h as q}from"./chunk-FSPJ5OJ7.js";import{a as g,b as m}from"./chunk-RR27LOXU.js";import{b as v}from"./chunk-EJ2MJZJ3.js";import{a as c}from"./chunk-VXUKBLKY.js";import{a as M,c as _,e as w}from"./chunk-7O52XZFL.js";var L=_((V,U)=>{U.exports=M("node:crypto")});var I=w(L(),1);var d=64536,N=2e4,h=50;function J(t){return`<!-- agent-runner:sticky:${(0,I.createHash)("sha256").update(t).digest("hex").slice(0,20)} -->`}function p(t,e=N){let n=v(t);return n.length>e?`${n.slice(0,e)}

\u2026 (truncated; the full message is in the run's \`final-message\` output and result.json)`:n}function B(t){let e=[];return t.pullRequest&&e.push(`[Pull request #${t.pullRequest.number}](${t.pullRequest.url})`),t.commit&&e.push(t.commit.url?`[Commit ${t.commit.sha.slice(0,7)}](${t.commit.url})`:`Commit \`${t.commit.sha.slice(0,7)}\``),t.runUrl&&e.push(`[Run](${t.runUrl})`),t.artifactUrl&&e.push(`[Artifact](${t.artifactUrl})`),e.join(" \xB7 ")}function Q(t){let e=[t.marker,"### \u{1F440} Agent Runner is working\u2026","",`${t.requester?`Requested by @${t.requester}. `:""}${t.runUrl?`[Follow the run](${t.runUrl}).`:""}`.trim()];return t.activity.length&&e.push("","<details open><summary>Latest activity</summary>","",m(t.activity.join(`
`),"text"),"","</details>"),e.join(`
`).slice(0,d)}function C(t){return t<1024?`${t} B`:`${(t/1024).toFixed(1)} KB`}function S(t){let e=t.usage,n=e.inputTokens||e.outputTokens?`${c(e.inputTokens)} in \xB7 ${c(e.outputTokens)} out${e.cachedTokens?` \xB7 ${c(e.cachedTokens)} cached`:""} tokens`:"",r=e.requests?`${e.requests} model request${e.requests===1?"":"s"}`:"";return[`\u23F2\uFE0F ${R(t.durationMs)}`,n,e.costUsd!==void 0?`$${e.costUsd.toFixed(4)}`:"",r,t.toolCalls?`${t.toolCalls} tool calls`:""].filter(Boolean).join(" \xB7 ")}function E(t){return t.replace(/^GIT binary patch\n[\s\S]*?(?=^diff --git |(?![\s\S]))/gm,`(binary change omitted here; it is in patch.diff)

`)}function P(t,e,n){let r=n?`[the run's artifact](${n}) (\`patch.diff\`)`:`the run's artifact and on the runner at \`${t.path}\``,o=j=>`<details><summary>Patch (${C(t.bytes)})</summary>

${j}`,u=`

</details>`,i=E(t.text).replace(/\n+$/,""),a=o("")+m(i,"diff")+u;if(a.length<=e)return a;let s=`\u26A0\uFE0F The patch is too long for a comment: the start is shown below. The full patch is in ${r}.

`,f=e-o(s).length-u.length-200;if(f<500)return`<details><summary>Patch (${C(t.bytes)})</summary>

The patch is too long for a comment; it is in ${r}.

</details>`;let l=i.slice(0,f),$=l.lastIndexOf(`
`);return $>f/2&&(l=l.slice(0,$)),o(s)+m(`${l}
\u2026 (truncated)`,"diff")+u}function F(t,e,n){return e.length?[`<details><summary>${t}</summary>`,"",...n?[n,""]:[],...e.slice(0,h).map(r=>`- ${r}`),...e.length>h?[`- \u2026 and ${e.length-h} more`]:[],"","</details>",""]:[]}function W(t){let e=t.result,n=[t.marker,`### ${k(t.verdict??x({result:e}))}`,""];e.conclusion!=="success"&&e.reason&&n.push(`**Reason:** ${p(e.reason,2e3)}`,""),e.verify&&n.push(`**Verify:** ${T(e)}`,""),t.deliveryNote&&n.push(t.deliveryNote,""),n.push(e.output.trim()?p(e.output):"_The agent gave no final message._","");let r=e.diff.excludedFiles??[],o=[...y(e,"#### Attempts"),...e.verify?.runs.length?[`<details><summary>Checks (${e.verify.runs.length})</summary>`,"",...b(e),"","</details>",""]:[],...F(`Changed files (${e.diff.changedFiles.length})`,e.diff.changedFiles.map(s=>g(s))),...r.length?F(`Left out of the patch (${r.length})`,r.map(s=>g(s)),q(r)):[]],u=["---",[S(e),B(t.links)].filter(Boolean).join(" \xB7 ")],i=[...n,...o].join(`
`),a=`
`+u.join(`
`);if(t.patch&&t.patch.text.trim()){let s=d-i.length-a.length-2;i+=`
`+P(t.patch,s,t.links.artifactUrl)+`
`}return(i+a).slice(0,d)}function Y(t){return[t.marker,"### \u274C Agent Runner could not run","",p(t.message,4e3),"",t.runUrl?`[Run](${t.runUrl})`:""].join(`
`).trim()}export{J as a,p as b,Q as c,P as d,W as e,Y as f};
