import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a,b,c,d,e}from"./chunk-PIQVWN4I.js";import"./chunk-GU74WSFE.js";import"./chunk-7O52XZFL.js";export{d as GitHubApiError,c as apiErrorMessage,b as createOctokit,e as isNotFound,a as rateLimitWaitMs};
