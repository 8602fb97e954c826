import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as e,c as r}from"./chunk-7O52XZFL.js";var p=r((s,i)=>{i.exports=e("node:tls")});var q=r((t,o)=>{o.exports=e("node:assert")});export{p as a,q as b};
