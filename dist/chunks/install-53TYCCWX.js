import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{M as a,N as b}from"./chunk-ZJOX5GZG.js";import"./chunk-MFEVQZQF.js";import"./chunk-RRGJ5MZK.js";import"./chunk-XQ2VKDO5.js";import"./chunk-EA7C7JSM.js";import"./chunk-GU74WSFE.js";import"./chunk-VIKEAWRE.js";export{b as hostInstallOptions,a as installAgent};
