import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a,c as b}from"./chunk-2CUHYJ6Y.js";import"./chunk-QBNZHXMO.js";import"./chunk-PSEU5XR5.js";import"./chunk-VIKEAWRE.js";export{a as context,b as getOctokit};
