import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
var e=["success","failure","incomplete","timeout","cancelled","skipped"],t=["success","partial","failure","incomplete","timeout","cancelled","skipped"];export{e as a,t as b};
