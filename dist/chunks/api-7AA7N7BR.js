import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a}from"./chunk-2X6SEYS5.js";import"./chunk-46B6W3QX.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{a as GitHubApi};
