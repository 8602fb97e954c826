import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as r}from"./chunk-F6ITUBBZ.js";import{a as i}from"./chunk-DENBV2H4.js";import{e as o}from"./chunk-7O52XZFL.js";var s=o(r(),1),c=o(i(),1),e=c.promisify(s.exec);export{e as a};
