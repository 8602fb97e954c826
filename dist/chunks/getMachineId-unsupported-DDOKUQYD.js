import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{l as o}from"./chunk-WQ7BNOPC.js";import"./chunk-7O52XZFL.js";async function e(){o.debug("could not read machine-id: unsupported platform")}export{e as getMachineId};
