import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a,b,d as c}from"./chunk-HZCSSCZZ.js";import"./chunk-7O52XZFL.js";c();export{a as ProxyAgent,b as fetch};
