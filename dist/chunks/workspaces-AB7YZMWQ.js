import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a,b}from"./chunk-RYUI3E6V.js";import"./chunk-KNQM47XE.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{a as checkoutOf,b as copyCheckout};
