import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as f,b as m,c as $,d as y,f as R,g as k,h as x}from"./chunk-DRRF4P4P.js";import{b as U}from"./chunk-AEYHWS2R.js";import{createHash as C}from"node:crypto";var h=64536,S=2e4,g=50;function P(t){return`<!-- agent-runner:sticky:${C("sha256").update(t).digest("hex").slice(0,20)} -->`}var v={success:"\u2705",failure:"\u274C",timeout:"\u23F1\uFE0F",cancelled:"\u{1F6AB}",skipped:"\u23ED\uFE0F"};function d(t,e=S){let n=U(t);return n.length>e?`${n.slice(0,e)}

\u2026 (truncated; the full message is in the run's \`final-message\` output and result.json)`:n}function I(t){let e=[];return t.pullRequest&&e.push(`[Pull request #${t.pullRequest.number}](${t.pullRequest.url})`),t.commit&&e.push(t.commit.url?`[Commit ${t.commit.sha.slice(0,7)}](${t.commit.url})`:`Commit \`${t.commit.sha.slice(0,7)}\``),t.runUrl&&e.push(`[Run](${t.runUrl})`),t.artifactUrl&&e.push(`[Artifact](${t.artifactUrl})`),e.join(" \xB7 ")}function O(t){let e=[t.marker,"### \u{1F440} Agent Runner is working\u2026","",`${t.requester?`Requested by @${t.requester}. `:""}${t.runUrl?`[Follow the run](${t.runUrl}).`:""}`.trim()];return t.activity.length&&e.push("","<details open><summary>Latest activity</summary>","",m(t.activity.join(`
`),"text"),"","</details>"),e.join(`
`).slice(0,h)}function L(t){return t<1024?`${t} B`:`${(t/1024).toFixed(1)} KB`}function F(t){let e=t.usage,n=e.inputTokens||e.outputTokens?`${e.inputTokens.toLocaleString("en-US")} in \xB7 ${e.outputTokens.toLocaleString("en-US")} out${e.cachedTokens?` \xB7 ${e.cachedTokens.toLocaleString("en-US")} cached`:""} tokens`:"",r=e.requests?`${e.requests} model request${e.requests===1?"":"s"}`:"";return[`\u23F2\uFE0F ${y(t.durationMs)}`,n,e.costUsd!==void 0?`$${e.costUsd.toFixed(4)}`:"",r,t.toolCalls?`${t.toolCalls} tool calls`:""].filter(Boolean).join(" \xB7 ")}function A(t){return t.replace(/^GIT binary patch\n[\s\S]*?(?=^diff --git |(?![\s\S]))/gm,`(binary change omitted here; it is in patch.diff)

`)}function j(t,e,n){let r=n?`[the run's artifact](${n}) (\`patch.diff\`)`:`the run's artifact and on the runner at \`${t.path}\``,i=b=>`<details><summary>Patch (${L(t.bytes)})</summary>

${b}`,u=`

</details>`,c=A(t.text).replace(/\n+$/,""),o=i("")+m(c,"diff")+u;if(o.length<=e)return o;let a=`\u26A0\uFE0F The patch is too long for a comment: the start is shown below. The full patch is in ${r}.

`,s=e-i(a).length-u.length-200;if(s<500)return`<details><summary>Patch (${L(t.bytes)})</summary>

The patch is too long for a comment; it is in ${r}.

</details>`;let l=c.slice(0,s),p=l.lastIndexOf(`
`);return p>s/2&&(l=l.slice(0,p)),i(a)+m(`${l}
\u2026 (truncated)`,"diff")+u}function T(t,e,n){return e.length?[`<details><summary>${t}</summary>`,"",...n?[n,""]:[],...e.slice(0,g).map(r=>`- ${r}`),...e.length>g?[`- \u2026 and ${e.length-g} more`]:[],"","</details>",""]:[]}function D(t){let e=t.result,n=e.conclusion==="success"?"Agent Runner finished":`Agent Runner: ${e.conclusion}`,r=[t.marker,`### ${v[e.conclusion]} ${n}`,""];e.conclusion!=="success"&&e.reason&&r.push(`**Reason:** ${d(e.reason,2e3)}`,""),e.verify&&r.push(`**Verify:** ${R(e)}`,""),t.deliveryNote&&r.push(t.deliveryNote,""),r.push(e.output.trim()?d(e.output):"_The agent gave no final message._","");let i=e.diff.excludedFiles??[],u=[...$(e,"#### Attempts"),...e.verify?.runs.length?[`<details><summary>Checks (${e.verify.runs.length})</summary>`,"",...k(e),"","</details>",""]:[],...T(`Changed files (${e.diff.changedFiles.length})`,e.diff.changedFiles.map(s=>f(s))),...i.length?T(`Left out of the patch (${i.length})`,i.map(s=>f(s)),x(i)):[]],c=["---",[F(e),I(t.links)].filter(Boolean).join(" \xB7 ")],o=[...r,...u].join(`
`),a=`
`+c.join(`
`);if(t.patch&&t.patch.text.trim()){let s=h-o.length-a.length-2;o+=`
`+j(t.patch,s,t.links.artifactUrl)+`
`}return(o+a).slice(0,h)}function G(t){return[t.marker,"### \u274C Agent Runner could not run","",d(t.message,4e3),"",t.runUrl?`[Run](${t.runUrl})`:""].join(`
`).trim()}export{P as a,d as b,O as c,D as d,G as e};
