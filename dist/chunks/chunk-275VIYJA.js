import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as g,b as m,c as $,e as y}from"./chunk-KRAZBA6Z.js";import{b as R}from"./chunk-UOYB64L5.js";import{createHash as T}from"node:crypto";var h=64536,b=2e4,f=50;function v(t){return`<!-- agent-runner:sticky:${T("sha256").update(t).digest("hex").slice(0,20)} -->`}var q={success:"\u2705",failure:"\u274C",timeout:"\u23F1\uFE0F",cancelled:"\u{1F6AB}",skipped:"\u23ED\uFE0F"};function d(t,n=b){let e=R(t);return e.length>n?`${e.slice(0,n)}

\u2026 (truncated; the full message is in the run's \`final-message\` output and result.json)`:e}function C(t){let n=[];return t.pullRequest&&n.push(`[Pull request #${t.pullRequest.number}](${t.pullRequest.url})`),t.commit&&n.push(t.commit.url?`[Commit ${t.commit.sha.slice(0,7)}](${t.commit.url})`:`Commit \`${t.commit.sha.slice(0,7)}\``),t.runUrl&&n.push(`[Run](${t.runUrl})`),t.artifactUrl&&n.push(`[Artifact](${t.artifactUrl})`),n.join(" \xB7 ")}function w(t){let n=[t.marker,"### \u{1F440} Agent Runner is working\u2026","",`${t.requester?`Requested by @${t.requester}. `:""}${t.runUrl?`[Follow the run](${t.runUrl}).`:""}`.trim()];return t.activity.length&&n.push("","<details open><summary>Latest activity</summary>","",m(t.activity.join(`
`),"text"),"","</details>"),n.join(`
`).slice(0,h)}function x(t){return t<1024?`${t} B`:`${(t/1024).toFixed(1)} KB`}function I(t){let n=t.usage,e=n.inputTokens||n.outputTokens?`${n.inputTokens.toLocaleString("en-US")} in \xB7 ${n.outputTokens.toLocaleString("en-US")} out${n.cachedTokens?` \xB7 ${n.cachedTokens.toLocaleString("en-US")} cached`:""} tokens`:"",r=n.requests?`${n.requests} model request${n.requests===1?"":"s"}`:"";return[`\u23F2\uFE0F ${$(t.durationMs)}`,e,n.costUsd!==void 0?`$${n.costUsd.toFixed(4)}`:"",r,t.toolCalls?`${t.toolCalls} tool calls`:""].filter(Boolean).join(" \xB7 ")}function S(t){return t.replace(/^GIT binary patch\n[\s\S]*?(?=^diff --git |(?![\s\S]))/gm,`(binary change omitted here; it is in patch.diff)

`)}function F(t,n,e){let r=e?`[the run's artifact](${e}) (\`patch.diff\`)`:`the run's artifact and on the runner at \`${t.path}\``,i=U=>`<details><summary>Patch (${x(t.bytes)})</summary>

${U}`,u=`

</details>`,c=S(t.text).replace(/\n+$/,""),o=i("")+m(c,"diff")+u;if(o.length<=n)return o;let a=`\u26A0\uFE0F The patch is too long for a comment: the start is shown below. The full patch is in ${r}.

`,s=n-i(a).length-u.length-200;if(s<500)return`<details><summary>Patch (${x(t.bytes)})</summary>

The patch is too long for a comment; it is in ${r}.

</details>`;let l=c.slice(0,s),p=l.lastIndexOf(`
`);return p>s/2&&(l=l.slice(0,p)),i(a)+m(`${l}
\u2026 (truncated)`,"diff")+u}function k(t,n,e){return n.length?[`<details><summary>${t}</summary>`,"",...e?[e,""]:[],...n.slice(0,f).map(r=>`- ${r}`),...n.length>f?[`- \u2026 and ${n.length-f} more`]:[],"","</details>",""]:[]}function B(t){let n=t.result,e=n.conclusion==="success"?"Agent Runner finished":`Agent Runner: ${n.conclusion}`,r=[t.marker,`### ${q[n.conclusion]} ${e}`,""];n.conclusion!=="success"&&n.reason&&r.push(`**Reason:** ${d(n.reason,2e3)}`,""),t.deliveryNote&&r.push(t.deliveryNote,""),r.push(n.output.trim()?d(n.output):"_The agent gave no final message._","");let i=n.diff.excludedFiles??[],u=[...k(`Changed files (${n.diff.changedFiles.length})`,n.diff.changedFiles.map(s=>g(s))),...i.length?k(`Left out of the patch (${i.length})`,i.map(s=>g(s)),y(i)):[]],c=["---",[I(n),C(t.links)].filter(Boolean).join(" \xB7 ")],o=[...r,...u].join(`
`),a=`
`+c.join(`
`);if(t.patch&&t.patch.text.trim()){let s=h-o.length-a.length-2;o+=`
`+F(t.patch,s,t.links.artifactUrl)+`
`}return(o+a).slice(0,h)}function E(t){return[t.marker,"### \u274C Agent Runner could not run","",d(t.message,4e3),"",t.runUrl?`[Run](${t.runUrl})`:""].join(`
`).trim()}export{v as a,d as b,w as c,B as d,E as e};
