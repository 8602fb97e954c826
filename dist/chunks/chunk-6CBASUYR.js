import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{d as t}from"./chunk-6NDGCS4I.js";function r(e){return t(e,{keepNewlines:!1})}function o(e,n){e.write(n.map(r).join(`
`)+`
`)}function a(e,n){e.write(t(n,{keepNewlines:!0}).replace(/\n?$/,`
`))}function l(e){return JSON.stringify(e,null,2).replace(/[\u007f-\u009f]/g,n=>`\\u${n.charCodeAt(0).toString(16).padStart(4,"0")}`)+`
`}export{r as a,o as b,a as c,l as d};
