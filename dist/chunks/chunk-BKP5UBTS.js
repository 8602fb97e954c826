import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
var o=["claude","codex","opencode","gemini","command"],t=["anthropic","openai","gemini","bedrock","vertex","azure"];function r(e){return e==="bedrock"||e==="vertex"||e==="azure"}var n="agent-runner",i="global";export{o as a,t as b,r as c,n as d,i as e};
