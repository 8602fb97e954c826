// What @actions/http-client and @actions/github import from undici, loaded on first use.
// Both import it at start-up (a proxy agent, a fetch with a proxy dispatcher) that most steps never
// call, and evaluating undici's modules cost about 90 ms of every step's start. esbuild turns the
// require() below into a call of the bundled undici's lazy CommonJS wrapper, so the code ships in the
// bundle as before and runs only when one of these is first used.
let undici;
const load = () => (undici ??= require("undici"));

export class ProxyAgent {
  constructor(options) {
    // A constructor may return another object: callers get undici's own ProxyAgent.
    return new (load().ProxyAgent)(options);
  }
}

export function fetch(input, init) {
  return load().fetch(input, init);
}
