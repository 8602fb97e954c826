import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{a as r}from"./chunk-EL52TQEI.js";import{l as i}from"./chunk-WQ7BNOPC.js";import"./chunk-7O52XZFL.js";async function a(){try{let t=(await r('ioreg -rd1 -c "IOPlatformExpertDevice"')).stdout.split(`
`).find(n=>n.includes("IOPlatformUUID"));if(!t)return;let e=t.split('" = "');if(e.length===2)return e[1].slice(0,-1)}catch(t){i.debug(`error reading machine id: ${t}`)}}export{a as getMachineId};
