import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{b as a}from"./chunk-E5MAWU4R.js";import"./chunk-RX363YJO.js";import"./chunk-7O52XZFL.js";export default a();
