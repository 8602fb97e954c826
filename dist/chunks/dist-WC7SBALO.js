import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{d as a}from"./chunk-2HBAWWZE.js";import"./chunk-7O52XZFL.js";export default a();
