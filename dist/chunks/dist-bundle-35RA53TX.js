import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a,b}from"./chunk-YBLZHVWU.js";import"./chunk-PSEU5XR5.js";import"./chunk-VIKEAWRE.js";export{a as VERSION,b as retry};
