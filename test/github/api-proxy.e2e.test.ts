/**
 * GitHub API calls behind a proxy, through dist/. A step's API calls go through the fetch stand-in of
 * scripts/build/undici-lazy.mjs: with no proxy, Node's own fetch (every other end-to-end test, whose fake
 * GitHub is on 127.0.0.1, which is never proxied); with HTTP_PROXY set, as on a self-hosted runner behind
 * one, the bundled undici's fetch with its proxy agent. Here the API's host is a name only the proxy
 * knows: a call that went around the proxy could not arrive.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startForwardProxy, type ForwardProxy } from "../support/forward-proxy.js";
import { scenario, type Scenario } from "./scenario.js";

let s: Scenario | undefined;
let proxy: ForwardProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await s?.close();
  s = proxy = undefined;
});

describe("the GitHub API behind a proxy", () => {
  it("with HTTP_PROXY set, every API call of the step goes through the proxy, and the run delivers its comment", async () => {
    s = await scenario({ fixture: "issue_comment.issue", tweaks: { body: "@agent say hello", author: "alice" } });
    const apiPort = Number(new URL(s.gh.url).port);
    proxy = await startForwardProxy(apiPort);
    const apiUrl = `http://api.github.test:${apiPort}`;
    const r = await s.run({}, { GITHUB_API_URL: apiUrl, HTTP_PROXY: proxy.url, http_proxy: proxy.url, NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost" });
    expect(r.exitCode, r.log + r.stderr).toBe(0);
    expect(r.outputs.conclusion, r.log).toBe("success");
    // The step read the thread and answered on it, all through the proxy, by the API's own name.
    expect(proxy.targets.length).toBeGreaterThan(0);
    expect(new Set(proxy.targets), proxy.targets.join("\n")).toEqual(new Set([`CONNECT api.github.test:${apiPort}`]));
    // What arrived through the tunnel is what the step did: it reacted, and it posted its comment.
    expect(s.gh.requests.filter((q) => q.method === "POST" && q.path.endsWith("/issues/7/comments")).length).toBeGreaterThan(0);
    expect(s.gh.issueComments(7).length).toBeGreaterThan(1);
  });
});
