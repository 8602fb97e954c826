import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a,c as b}from"./chunk-LBOKSANW.js";import"./chunk-GHNVBSLC.js";import"./chunk-SHTSVY7E.js";import"./chunk-3FUKRMTV.js";import"./chunk-KNQM47XE.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{a as HostRepo,b as hostRepoDir};
