import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as r,c as i}from"./chunk-7O52XZFL.js";var o=i((p,e)=>{e.exports=r("node:child_process")});export{o as a};
