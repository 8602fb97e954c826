import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a,c as b}from"./chunk-JZ56R3CQ.js";import"./chunk-GHNVBSLC.js";import"./chunk-FRDVMUVI.js";import"./chunk-3FUKRMTV.js";import"./chunk-KNQM47XE.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{a as HostRepo,b as hostRepoDir};
