import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import{mkdir as n,writeFile as t}from"node:fs/promises";import e from"node:path";async function f(r,o){for(let i of["objects","refs/heads","refs/tags"])await n(e.join(r,i),{recursive:!0});await t(e.join(r,"HEAD"),`ref: refs/heads/master
`),await t(e.join(r,"config"),`[core]
	repositoryformatversion = 0
	filemode = true
	bare = true
`+o)}export{f as a};
