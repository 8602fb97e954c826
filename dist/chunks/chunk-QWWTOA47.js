import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
function n(t,r){if(!t)return{};let e=Buffer.from(`x-access-token:${t}`,"utf8").toString("base64");return{GIT_CONFIG_COUNT:"1",GIT_CONFIG_KEY_0:`http.${r.replace(/\/+$/,"")}/.extraheader`,GIT_CONFIG_VALUE_0:`AUTHORIZATION: basic ${e}`}}export{n as a};
