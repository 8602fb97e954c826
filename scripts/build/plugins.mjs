// esbuild plugins that keep a step's start-up cheap. Each one changes when code runs, never what it does.
import path from "node:path";
import { fileURLToPath } from "node:url";

const undiciLazy = fileURLToPath(new URL("undici-lazy.mjs", import.meta.url));

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

/**
 * What @actions/core imports but needs only for a rarely used call: the names it imports, which a
 * stand-in re-exports, evaluating the module on first use (getIDToken; platform details).
 */
const LAZY_IN_CORE = {
  "@actions/http-client": { HttpClient: "class" },
  "@actions/http-client/lib/auth": { BearerCredentialHandler: "class" },
  "@actions/exec": { getExecOutput: "function" },
};

/** A stand-in module: each name calls into `file`, required on first use (by its name: the module's resolveDir is its folder). */
function standIn(file, names) {
  const load = `let m;\nconst load = () => (m ??= require(${JSON.stringify(`./${path.basename(file)}`)}));\n`;
  const exports = Object.entries(names).map(([name, kind]) =>
    kind === "class"
      ? // A constructor may return another object: callers get the module's own instance.
        `export class ${name} { constructor(...args) { return new (load().${name})(...args); } }`
      : `export function ${name}(...args) { return load().${name}(...args); }`,
  );
  return load + exports.join("\n") + "\n";
}

/**
 * `@actions/http-client` and `@actions/exec` imported by @actions/core resolve to stand-ins that
 * evaluate them on first use: with them go `tunnel`, @actions/io, and Node's net, tls, http and https.
 * The stand-in requires the module by its resolved path, so esbuild resolves it as it would any file
 * (an ESM-only package, required: the same module, evaluated lazily).
 */
export const lazyImportsOfCore = {
  name: "lazy-imports-of-core",
  setup(build) {
    build.onResolve({ filter: /^@actions\/(http-client(\/lib\/auth)?|exec)$/ }, async (args) => {
      if (!/[\\/]@actions[\\/]core[\\/]/.test(args.importer)) return undefined;
      const real = await build.resolve(args.path, { kind: "import-statement", resolveDir: args.resolveDir });
      if (real.errors.length) return { errors: real.errors };
      return { path: `${args.path} (lazy)`, namespace: "lazy-in-core", pluginData: real.path };
    });
    build.onLoad({ filter: /.*/, namespace: "lazy-in-core" }, (args) => ({
      contents: standIn(args.pluginData, LAZY_IN_CORE[args.path.replace(/ \(lazy\)$/, "")]),
      loader: "js",
      resolveDir: path.dirname(args.pluginData),
    }));
  },
};

/** The esbuild options of a package bundled alone into dist/chunks/<name>.cjs. */
function ownFile(name, entry) {
  return {
    entryPoints: { [name]: entry },
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
}

/**
 * Packages our code require()s where it first needs them (src/markdown.ts: parse5, for raw HTML;
 * src/trace/transcript-html.ts: diff2html, for a patch; src/trace/markdown-html.ts: the unified
 * libraries, for agent text), each bundled into a file of its own: a step whose texts hold no HTML,
 * that changed nothing and whose agent said nothing neither reads nor compiles them (in the shared
 * chunks they would cost every step their bytes, 260 KB together).
 */
const OWN_FILE_PACKAGES = {
  parse5: "parse5",
  diff2html: "diff2html",
  // src/trace/markdown-html.ts: agent text to HTML in a transcript.
  "hast-util-sanitize": "hast-util-sanitize",
  "hast-util-to-html": "hast-util-to-html",
  "mdast-util-to-hast": "mdast-util-to-hast",
};

/** A require() of one of OWN_FILE_PACKAGES resolves to a module that loads its file from dist/chunks. */
export const packagesInOwnFiles = {
  name: "packages-in-own-files",
  setup(build) {
    build.onResolve({ filter: new RegExp(`^(${Object.keys(OWN_FILE_PACKAGES).join("|")})$`) }, (args) =>
      args.kind === "require-call" ? { path: args.path, namespace: "own-file" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "own-file" }, (args) => ({
      // `require` here is a banner's (createRequire of an output file: a chunk in dist/chunks, next to
      // the package's file, or an entry file in dist/ above it), so the file is looked for in both.
      contents:
        `let file;\n` +
        `try { file = require.resolve("./${args.path}.cjs"); } catch { file = require.resolve("./chunks/${args.path}.cjs"); }\n` +
        `module.exports = require(file);\n`,
      loader: "js",
    }));
  },
};

/** The packages bundled into files of their own: undici (see undici-lazy.mjs) and OWN_FILE_PACKAGES. */
export const ownFileBundles = [
  ownFile("undici", "node_modules/undici/index.js"),
  ...Object.entries(OWN_FILE_PACKAGES).map(([name, pkg]) => ownFile(name, pkg)),
];

/**
 * Builtins whose lazy getters cost a start when an ES import runs them all to build the namespace:
 * `node:http`'s WebSocket, CloseEvent and MessageEvent load Node's internal undici (about 25 ms),
 * `node:tls`'s rootCertificates parses every root certificate, `node:crypto`'s webcrypto, subtle and
 * getRandomValues load WebCrypto. (`node -p "Object.entries(Object.getOwnPropertyDescriptors(require('http'))).filter(([, d]) => d.get)"`
 * lists a module's getters.) These are loaded with require() instead, through a stand-in per importing
 * file (so that it lands in that file's chunk), and esbuild reads each export where it is used. Every
 * other builtin stays an ES import: going through require() would make esbuild copy every export of
 * the module onto an object in each importing file, which costs more than the getters it avoids.
 */
const COSTLY_GETTERS = ["http", "tls", "crypto"];

export const builtinsViaRequire = {
  name: "builtins-via-require",
  setup(build) {
    build.onResolve({ filter: new RegExp(`^(node:)?(${COSTLY_GETTERS.join("|")})$`) }, (args) => {
      // A dynamic import() stays Node's own: with code splitting, esbuild would give it a chunk whose
      // only export is `default`, and `const { Agent } = await import("http")` would find nothing.
      if (args.namespace === "node-builtin" || args.kind === "dynamic-import") return { path: args.path, external: true };
      const name = args.path.startsWith("node:") ? args.path : `node:${args.path}`;
      // One stand-in per importing file, so that it lands in that file's chunk: shared by all, each
      // builtin would get a chunk of its own, a file to resolve and read on every start.
      // The path names the importer relative to the checkout: an absolute one would change the chunks' hashes with it.
      return { path: `${path.relative(process.cwd(), args.importer)} -> ${name}`, namespace: "node-builtin", pluginData: name };
    });
    build.onLoad({ filter: /.*/, namespace: "node-builtin" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.pluginData)});`,
      loader: "js",
    }));
  },
};
