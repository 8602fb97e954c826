import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a}from"./chunk-4NRKJF2C.js";import"./chunk-WDD3DFVU.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{a as GitHubApi};
