import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as r,c as e,e as o}from"./chunk-7O52XZFL.js";var i=e((x,s)=>{s.exports=r("node:child_process")});var p=e((l,c)=>{c.exports=r("node:util")});var t=o(i(),1),m=o(p(),1),u=m.promisify(t.exec);export{u as a};
