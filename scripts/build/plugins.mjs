// esbuild plugins that keep a step's start-up cheap. Each one changes when code runs, never what it does.
import { isBuiltin } from "node:module";
import { fileURLToPath } from "node:url";

const undiciLazy = fileURLToPath(new URL("undici-lazy.mjs", import.meta.url));
const httpClientLazy = fileURLToPath(new URL("http-client-lazy.mjs", import.meta.url));

/**
 * `undici` imported by a dependency (@actions/http-client, @actions/github) resolves to a stand-in that
 * loads dist/chunks/undici.cjs on first use (see undici-lazy.mjs).
 */
export const lazyUndici = {
  name: "lazy-undici",
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: undiciLazy }));
  },
};

/** `@actions/http-client` imported by @actions/core resolves to a stand-in (see http-client-lazy.mjs). */
export const lazyHttpClientInCore = {
  name: "lazy-http-client-in-core",
  setup(build) {
    build.onResolve({ filter: /^@actions\/http-client(\/lib\/auth)?$/ }, async (args) => {
      if (args.pluginData === "as-import") return undefined;
      // The stand-in's require() of an ESM-only package: resolved as the import it stands for.
      if (args.importer === httpClientLazy) {
        const real = await build.resolve(args.path, { kind: "import-statement", resolveDir: args.resolveDir, pluginData: "as-import" });
        return { path: real.path, errors: real.errors };
      }
      return /[\\/]@actions[\\/]core[\\/]/.test(args.importer) ? { path: httpClientLazy } : undefined;
    });
  },
};

/** The build of dist/chunks/undici.cjs, which undici-lazy.mjs loads. */
export const undiciBundle = {
  entryPoints: { undici: "node_modules/undici/index.js" },
  outdir: "dist/chunks",
  outExtension: { ".js": ".cjs" },
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
};

/**
 * Node builtins imported as ES modules are loaded with require() instead. An ES import of a builtin
 * reads every export once to build its namespace, which runs the builtin's lazy getters: `node:http`'s
 * WebSocket loads Node's internal undici, `node:tls` parses its root certificates, `node:crypto` loads
 * WebCrypto, about 30 ms of every start for things a step rarely uses. Through require() (the banner's
 * createRequire) esbuild reads each export where it is used, so a getter runs only when its value is.
 */
export const builtinsViaRequire = {
  name: "builtins-via-require",
  setup(build) {
    build.onResolve({ filter: /^[a-z_:/]+$/ }, (args) => {
      if (!isBuiltin(args.path)) return undefined;
      if (args.namespace === "node-builtin") return { path: args.path, external: true };
      const name = args.path.startsWith("node:") ? args.path : `node:${args.path}`;
      return { path: name, namespace: "node-builtin" };
    });
    build.onLoad({ filter: /.*/, namespace: "node-builtin" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: "js",
    }));
  },
};
