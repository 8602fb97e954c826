import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a,c as b}from"./chunk-S3ALQWZS.js";import"./chunk-PSEU5XR5.js";import"./chunk-FRKOOTB3.js";import"./chunk-HZCSSCZZ.js";import"./chunk-7O52XZFL.js";export{a as context,b as getOctokit};
