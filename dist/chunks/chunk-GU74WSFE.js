import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
var o=class extends Error{name="ConfigurationError";problems;constructor(t){let n=Array.isArray(t)?t:[t];super(n.length===1?n[0]:`${n.length} problems with the inputs:
${n.map(e=>`  - ${e}`).join(`
`)}`),this.problems=n}},i=class extends Error{constructor(n,e,s){super(`'${n}' exited with ${e??"a signal"}${s?`: ${s.trim()}`:""}`);this.command=n;this.exitCode=e;this.stderrTail=s}command;exitCode;stderrTail;name="ExecError"};function a(r){return r instanceof o}function u(r){return r instanceof Error?r.message:String(r)}export{o as a,i as b,a as c,u as d};
