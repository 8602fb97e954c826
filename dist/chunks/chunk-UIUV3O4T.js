import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
var s=/[\u0000-\u0020\u007f~^:?*[\\]/;function r(t){return t.length>0&&!t.startsWith(".")&&!t.endsWith(".lock")}function i(t){return!t||t.startsWith("-")||t==="HEAD"||s.test(t)||t.includes("..")||t.includes("@{")||t.endsWith(".")?!1:t.split("/").every(r)}export{i as a};
