import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a,c as b}from"./chunk-QMEWIXCF.js";import"./chunk-LOHLNZXS.js";import"./chunk-PSEU5XR5.js";import"./chunk-7O52XZFL.js";export{a as context,b as getOctokit};
