import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a}from"./chunk-FK3URL2Y.js";import"./chunk-PIQVWN4I.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{a as GitHubApi};
