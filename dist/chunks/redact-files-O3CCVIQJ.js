import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a,b,c}from"./chunk-P6HOQ5GL.js";import"./chunk-7O52XZFL.js";export{a as redactFileTo,c as redactTreeInPlace,b as regularFiles};
