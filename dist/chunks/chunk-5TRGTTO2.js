import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
function r(o){return o.head_repository_id==null||o.repository_id==null||o.head_repository_id===o.repository_id}export{r as a};
