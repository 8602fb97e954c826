import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a,c as b}from"./chunk-MTITHKVX.js";import"./chunk-3FUKRMTV.js";import"./chunk-APXJJ4SP.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{a as HostRepo,b as hostRepoDir};
