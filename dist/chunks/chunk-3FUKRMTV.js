import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import n from"node:fs";import e from"node:path";function o(r,t){return t==="/"?!0:r===t||r.startsWith(t.endsWith("/")?t:t+"/")}function i(r,t){return r!==t&&o(r,t)}function u(r){let t=e.resolve(r);try{return n.realpathSync(t)}catch{return t}}export{o as a,i as b,u as c};
