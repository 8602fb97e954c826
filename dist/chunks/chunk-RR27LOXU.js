import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{d as r}from"./chunk-6NDGCS4I.js";function l(t){let n=0;for(let e of t.matchAll(/`+/g))n=Math.max(n,e[0].length);return n}function s(t,n="inline"){let e=r(t,{keepNewlines:!1}),o="`".repeat(l(e)+1),c=n==="table-cell"?e.replace(/\|/g,"\\|"):e;return`${o} ${c} ${o}`}function a(t,n=""){let e="`".repeat(Math.max(2,l(t))+1);return`${e}${n}
${t}
${e}`}export{s as a,a as b};
