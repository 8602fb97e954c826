import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);
import*as o from"child_process";import*as s from"util";var c=s.promisify(o.exec);export{c as a};
