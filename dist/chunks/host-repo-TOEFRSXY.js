import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a,c as b}from"./chunk-5VBVIZDF.js";import"./chunk-67LFE2W5.js";import"./chunk-WEU2MJSO.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{a as HostRepo,b as hostRepoDir};
