import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a,b,c,d,e}from"./chunk-7CACOZJI.js";import"./chunk-OJEW3NIV.js";import"./chunk-O2M2UNWR.js";import"./chunk-VIKEAWRE.js";export{b as deliveryNote,a as deliveryOutputs,d as deliverySummary,e as refusalSummary,c as renderFinalComment};
