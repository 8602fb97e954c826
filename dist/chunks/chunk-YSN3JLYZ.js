import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
function f(n){let t=0,e=0;for(;e<n.length&&(n[e]===" "||n[e]==="	")&&(t=n[e]==="	"?t+4-t%4:t+1,!(t>128));e++);if(t<=128)return n;let s=e;for(;n[s]===" "||n[s]==="	";)s++;return n.slice(0,e)+n.slice(s)}var u=/^[ \t]*(?:(>)|([-+*])(?=[ \t]|$)|(\d{1,9})([.)])(?=[ \t]|$))/;function E(n){let t=0,e=0;for(;;){let s=u.exec(n.slice(t,t+64));if(!s)return-1;let r=t+s[0].length-(s[1]??s[2]??s[4]??"").length;if(++e>32)return r;t+=s[0].length}}function g(n){let t=[],e=0,s=0,r=0,o="",l=[];for(let i=0;i<n.length;i++){let c=n[i];if(c==="*"||c==="_"||c==="~"){s=c===o?s+1:1,s===1&&r++,o=c,(s>64||r>3e3)&&t.push(i);continue}o="",c==="\\"?i++:c==="["?e>=32?t.push(i):e++:c==="]"&&(e>0?e--:l.push(i))}return l.length>32?[...t,...l]:t}function _(n){let t=2;for(let s of n.matchAll(/`+/g))t=Math.max(t,s[0].length);let e="`".repeat(t+1);return`${e}text
${n}
${e}`}function A(n){let t=n.split(`
`),e=/^(`{3,}|~{3,})[ \t]*[^\s`][^`]*$/.exec(t[0]);if(!e||t.length<2)return!1;let[s]=e[1],r=o=>new RegExp(`^ {0,3}\\${s}{${e[1].length},}[ \\t]*$`).test(o);return r(t[t.length-1])&&!t.slice(1,-1).some(r)}function h(n){if(A(n))return n;let t=new Set(g(n)),e=0;for(let o of n.split(`
`)){let l=E(o);l>=0&&t.add(e+l),e+=o.length+1}if(t.size>64||(n.match(/`+/g)?.length??0)>5e3)return _(n);let s="",r=0;for(let o of[...t].sort((l,i)=>l-i))s+=`${n.slice(r,o)}\\`,r=o;return s+n.slice(r)}function p(n){let t=[],e=[],s=()=>{e.length&&t.push(h(e.join(`
`))),e=[]};for(let o of n.split(`
`))/^[ \t]*$/.test(o)?(s(),t.push(o)):e.push(f(o));s();let r=t.join(`
`);return r===n?n:r}export{p as a};
