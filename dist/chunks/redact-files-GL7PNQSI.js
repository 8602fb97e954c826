import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a,b,c}from"./chunk-FQNZC4ZY.js";import"./chunk-27ZEJAKP.js";import"./chunk-HU44OG3J.js";import"./chunk-ZN2YNULM.js";import"./chunk-7VR44ZWL.js";import"./chunk-7O52XZFL.js";export{a as redactFileTo,c as redactTreeInPlace,b as regularFiles};
