// esbuild plugins that keep a step's start-up cheap. Each one changes when code runs, never what it does.
import { isBuiltin } from "node:module";
import { fileURLToPath } from "node:url";

const undiciLazy = fileURLToPath(new URL("undici-lazy.mjs", import.meta.url));

/**
 * `undici` imported by a dependency (@actions/http-client, @actions/github) resolves to a stand-in that
 * loads the real one on first use (see undici-lazy.mjs); the stand-in's own require resolves to undici.
 */
export const lazyUndici = {
  name: "lazy-undici",
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, (args) => (args.importer === undiciLazy ? undefined : { path: undiciLazy }));
  },
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
