import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a,b,c,d}from"./chunk-SNTV4IPJ.js";import"./chunk-7O52XZFL.js";export{a as MAX_FILE_BYTES,b as MAX_LINE_BYTES,c as MAX_REQUESTS,d as readRequests};
