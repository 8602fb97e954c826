import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
function r(e){return e>=1073741824?`${(e/1073741824).toFixed(1).replace(/\.0$/,"")} GiB`:e>=1024**2?`${Math.round(e/1024**2)} MiB`:`${e} bytes`}export{r as a};
