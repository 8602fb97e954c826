import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
var r=/<!--[\s\S]*?(?:-->|$)/g,i=/^ {0,3}\[[^\]\n]+\]:[ \t]*<?#>?(?:[ \t]+(?:\([^\n]*\)|"[^\n]*"|'[^\n]*'))?[ \t]*$/gm,s=/[\p{Cf}\uFE00-\uFE0E\u{E0100}-\u{E01EF}]|[^\P{Cc}\n\t]/gu;function u(n){return n.replace(s,"")}function c(n){return n?u(n.replace(/\r\n?/g,`
`)).replace(r,"").replace(i,"").trim():""}function l(n,e=200){let t=c(n).replace(/\s+/g," ").trim();return t.length>e?`${t.slice(0,e-1)}\u2026`:t}export{u as a,c as b,l as c};
