// What @actions/http-client and @actions/github import from undici, loaded from its own file on first
// use. Both import it at start-up, for a proxy agent and for the fetch of GitHub API calls, which a
// step makes late or not at all; in the start-up chunks, undici's 400 KB cost every step about 40 ms
// to load even unevaluated. scripts/build.mjs bundles undici alone into dist/chunks/undici.cjs.
import { createRequire } from "node:module";

const here = import.meta.url;
let undici;
const load = () => (undici ??= createRequire(here)(here.includes("/chunks/") ? "./undici.cjs" : "./chunks/undici.cjs"));

export class ProxyAgent {
  constructor(options) {
    // A constructor may return another object: callers get undici's own ProxyAgent.
    return new (load().ProxyAgent)(options);
  }
}

export function fetch(input, init) {
  // Without a proxy (no dispatcher), Node's own fetch, which is undici too and already part of the
  // runtime: a step that calls the GitHub API no longer loads and compiles 400 KB for it (~50 ms of CPU).
  // A proxy's dispatcher is an agent of the bundled undici, which only its own fetch may be handed.
  if (init?.dispatcher == null) return globalThis.fetch(input, init);
  return load().fetch(input, init);
}
