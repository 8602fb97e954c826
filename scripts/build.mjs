// Bundles the action entries and the CLI into dist/ (one ESM file each).
import { build } from "esbuild";
import { mkdir, rm, writeFile } from "node:fs/promises";

const dist = new URL("../dist/", import.meta.url);
await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });

await build({
  entryPoints: { main: "src/main.ts", post: "src/post.ts", cli: "src/cli.ts" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
  // Some CommonJS dependencies require() node builtins; ESM has no require.
  banner: {
    js: "import { createRequire as __arCreateRequire } from 'node:module'; const require = __arCreateRequire(import.meta.url);",
  },
});
await writeFile(new URL("package.json", dist), JSON.stringify({ type: "module" }) + "\n");
