import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a,c as b,d as c}from"./chunk-RS4HZ6KY.js";import"./chunk-E73ZLTCG.js";import"./chunk-GGBZQEZW.js";import"./chunk-7O52XZFL.js";export{c as LineSplitter,b as killMarked,a as runProcessTree};
