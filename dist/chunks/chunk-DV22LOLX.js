import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
function e(r){return r.replace(/<!--(\s*agent-runner[:-])/gi,"&lt;!--$1")}export{e as a};
