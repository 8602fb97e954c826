import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
function r(e,t=300){let n=e.replace(/\s+/g," ").trim();return n.length>t?`${n.slice(0,t-1)}\u2026`:n}function i(e){return e.replace(/[.*+?^${}()|[\]\\]/g,"\\$&")}export{r as a,i as b};
