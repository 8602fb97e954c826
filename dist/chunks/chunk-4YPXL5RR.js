import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
async function r(t,e={}){let{HttpClient:i}=await import("./lib-VCF7QDLW.js"),n=new i().getAgentDispatcher(String(t));return n?await(await import("./undici-lazy-H7SG2BX4.js")).fetch(t,{...e,dispatcher:n}):fetch(t,e)}export{r as a};
