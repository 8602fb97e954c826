import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{c as a,d as b,e as c,f as d}from"./chunk-IFHBLK22.js";import"./chunk-4H27BURI.js";import"./chunk-O2M2UNWR.js";import"./chunk-YTQPQ2WL.js";import"./chunk-VIKEAWRE.js";export{a as TRANSCRIPT_PATCH_LIMIT,c as readTraceEvents,b as readTranscriptPatch,d as writeTranscriptFiles};
