// npm run demo: runs scripts/demo/demo.ts with Node's own type stripping. The
// test fakes it reuses import each other as `./x.js` (TypeScript's NodeNext
// style); this hook maps such a specifier to the `.ts` file beside it.
import { existsSync } from "node:fs";
import { registerHooks } from "node:module";
import { fileURLToPath } from "node:url";

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith(".") && specifier.endsWith(".js") && context.parentURL?.endsWith(".ts")) {
      const ts = new URL(specifier.replace(/\.js$/, ".ts"), context.parentURL);
      if (existsSync(fileURLToPath(ts))) return nextResolve(ts.href, context);
    }
    return nextResolve(specifier, context);
  },
});
await import(new URL("./demo/demo.ts", import.meta.url).href);
