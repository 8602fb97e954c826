import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a}from"./chunk-YM7FZXWO.js";import"./chunk-WAG3HZH4.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{a as GitHubApi};
