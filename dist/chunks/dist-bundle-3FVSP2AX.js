import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a,b}from"./chunk-ZGEZ76UN.js";import"./chunk-PSEU5XR5.js";import"./chunk-7O52XZFL.js";export{a as VERSION,b as retry};
