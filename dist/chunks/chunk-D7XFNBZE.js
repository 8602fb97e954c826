import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
function n(e={}){let g=e.stream??process.stderr,r=o=>g.write(o+`
`);return{debug:o=>{e.verbose&&r(`  ${o}`)},info:o=>r(o),warning:o=>r(`warning: ${o}`),error:o=>r(`error: ${o}`),notice:o=>r(`notice: ${o}`),group:async(o,s)=>(r(`\u25B8 ${o}`),s())}}function t(e,g){return{debug:r=>e.debug(g(r)),info:r=>e.info(g(r)),warning:r=>e.warning(g(r)),error:r=>e.error(g(r)),notice:r=>e.notice?e.notice(g(r)):e.info(g(r)),group:(r,o)=>e.group(g(r),o)}}export{n as a,t as b};
