import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a,c as b}from"./chunk-PU4XOXAG.js";import"./chunk-AY5C5CWP.js";import"./chunk-PSEU5XR5.js";import"./chunk-7O52XZFL.js";export{a as context,b as getOctokit};
