import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as p}from"./chunk-QKBKRSHM.js";import{a as $,b as m}from"./chunk-ECP3RM5D.js";import{createHash as k}from"node:crypto";var U=65536,f=U-1e3,x=2e4,g=50;function j(t){return`<!-- agent-runner:sticky:${k("sha256").update(t).digest("hex").slice(0,20)} -->`}var T={success:"\u2705",failure:"\u274C",timeout:"\u23F1\uFE0F",cancelled:"\u{1F6AB}",skipped:"\u23ED\uFE0F"};function h(t,n=x){let e=p(t);return e.length>n?`${e.slice(0,n)}

\u2026 (truncated; the full message is in the run's \`final-message\` output and result.json)`:e}function b(t){let n=[];return t.pullRequest&&n.push(`[Pull request #${t.pullRequest.number}](${t.pullRequest.url})`),t.commit&&n.push(t.commit.url?`[Commit ${t.commit.sha.slice(0,7)}](${t.commit.url})`:`Commit \`${t.commit.sha.slice(0,7)}\``),t.runUrl&&n.push(`[Run](${t.runUrl})`),t.artifactUrl&&n.push(`[Artifact](${t.artifactUrl})`),n.join(" \xB7 ")}function A(t){let n=[t.marker,"### \u{1F440} Agent Runner is working\u2026","",`${t.requester?`Requested by @${t.requester}. `:""}${t.runUrl?`[Follow the run](${t.runUrl}).`:""}`.trim()];return t.activity.length&&n.push("","<details open><summary>Latest activity</summary>","",m(t.activity.join(`
`),"text"),"","</details>"),n.join(`
`).slice(0,f)}function y(t){return t<1024?`${t} B`:`${(t/1024).toFixed(1)} KB`}function q(t){let n=t.usage,e=n.inputTokens||n.outputTokens?`${n.inputTokens.toLocaleString("en-US")} in \xB7 ${n.outputTokens.toLocaleString("en-US")} out${n.cachedTokens?` \xB7 ${n.cachedTokens.toLocaleString("en-US")} cached`:""} tokens`:"",r=n.requests?`${n.requests} model request${n.requests===1?"":"s"}`:"";return[`\u23F2\uFE0F ${$(t.durationMs)}`,e,n.costUsd!==void 0?`$${n.costUsd.toFixed(4)}`:"",r,t.toolCalls?`${t.toolCalls} tool calls`:""].filter(Boolean).join(" \xB7 ")}function L(t){return t.replace(/^GIT binary patch\n[\s\S]*?(?=^diff --git |(?![\s\S]))/gm,`(binary change omitted here; it is in patch.diff)

`)}function C(t,n,e){let r=e?`[the run's artifact](${e}) (\`patch.diff\`)`:`the run's artifact and on the runner at \`${t.path}\``,s=R=>`<details><summary>Patch (${y(t.bytes)})</summary>

${R}`,o=`

</details>`,c=L(t.text).replace(/\n+$/,""),u=s("")+m(c,"diff")+o;if(u.length<=n)return u;let a=`\u26A0\uFE0F The patch is too long for a comment: the start is shown below. The full patch is in ${r}.

`,i=n-s(a).length-o.length-200;if(i<500)return`<details><summary>Patch (${y(t.bytes)})</summary>

The patch is too long for a comment; it is in ${r}.

</details>`;let l=c.slice(0,i),d=l.lastIndexOf(`
`);return d>i/2&&(l=l.slice(0,d)),s(a)+m(`${l}
\u2026 (truncated)`,"diff")+o}function F(t){let n=t.result,e=n.conclusion==="success"?"Agent Runner finished":`Agent Runner: ${n.conclusion}`,r=[t.marker,`### ${T[n.conclusion]} ${e}`,""];n.conclusion!=="success"&&n.reason&&r.push(`**Reason:** ${h(n.reason,2e3)}`,""),t.deliveryNote&&r.push(t.deliveryNote,""),r.push(n.output.trim()?h(n.output):"_The agent gave no final message._","");let s=n.diff.changedFiles,o=[];s.length&&o.push(`<details><summary>Changed files (${s.length})</summary>`,"",...s.slice(0,g).map(i=>`- \`${i.replace(/`/g,"'")}\``),...s.length>g?[`- \u2026 and ${s.length-g} more`]:[],"","</details>","");let c=["---",[q(n),b(t.links)].filter(Boolean).join(" \xB7 ")],u=[...r,...o].join(`
`),a=`
`+c.join(`
`);if(t.patch&&t.patch.text.trim()){let i=f-u.length-a.length-2;u+=`
`+C(t.patch,i,t.links.artifactUrl)+`
`}return(u+a).slice(0,f)}function M(t){return[t.marker,"### \u274C Agent Runner could not run","",h(t.message,4e3),"",t.runUrl?`[Run](${t.runUrl})`:""].join(`
`).trim()}export{j as a,h as b,A as c,F as d,M as e};
