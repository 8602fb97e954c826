// What @actions/core imports from @actions/http-client, evaluated on first use. core needs it only for
// getIDToken, but imports it at start-up, and with it `tunnel` and Node's net, tls, http and https.
// esbuild turns each require() below into a call of the bundled module's lazy initializer.
let client;
let auth;

export class HttpClient {
  constructor(...args) {
    // A constructor may return another object: callers get http-client's own HttpClient.
    return new (client ??= require("@actions/http-client")).HttpClient(...args);
  }
}

export class BearerCredentialHandler {
  constructor(...args) {
    return new (auth ??= require("@actions/http-client/lib/auth")).BearerCredentialHandler(...args);
  }
}
