import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a}from"./chunk-SRABBH42.js";import"./chunk-47AJWPMM.js";import"./chunk-7O52XZFL.js";export default a();
