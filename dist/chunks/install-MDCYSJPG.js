import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{M as a,N as b}from"./chunk-AR3TVUPX.js";import"./chunk-UB2C4LML.js";import"./chunk-RRGJ5MZK.js";import"./chunk-BWOIADMJ.js";import"./chunk-6NDGCS4I.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{b as hostInstallOptions,a as installAgent};
