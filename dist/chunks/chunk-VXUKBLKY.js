import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
function i(t){if(!Number.isFinite(t))return String(t);let r=Math.round(t),n=BigInt(Math.abs(r)).toString().replace(/\B(?=(\d{3})+(?!\d))/g,",");return r<0?`-${n}`:n}function e(t,r){return t<r?-1:t>r?1:0}export{i as a,e as b};
