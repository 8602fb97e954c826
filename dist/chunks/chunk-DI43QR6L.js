import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
function i(t){let n=t?.trim();if(!n)return;let e=n.lastIndexOf("@");return e>0?n.slice(0,e):n}export{i as a};
