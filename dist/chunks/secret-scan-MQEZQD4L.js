import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a}from"./chunk-DU5DQTMF.js";import"./chunk-47AJWPMM.js";import"./chunk-7O52XZFL.js";export{a as scanForSecrets};
