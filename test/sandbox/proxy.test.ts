import { afterEach, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/errors.js";
import { hostAllowed, parseDomainRules, startFilteringProxy } from "../../src/sandbox/proxy.js";
import { connectThrough, recordingLogger, recordingServer, request } from "./helpers.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe("allowed-domains rules", () => {
  it("matches exact hosts, wildcards (subdomains only), IPs, localhost and ports", () => {
    const rules = parseDomainRules(["registry.npmjs.org", "*.pypi.org", "10.1.2.3", "localhost", "https://example.com/path", "git.example.net:22", "[::1]:8080", ""]);
    expect(hostAllowed(rules, "registry.npmjs.org", 443)).toBe(true);
    expect(hostAllowed(rules, "REGISTRY.npmjs.org.", 443)).toBe(true);
    expect(hostAllowed(rules, "npmjs.org", 443)).toBe(false);
    expect(hostAllowed(rules, "evil-registry.npmjs.org", 443)).toBe(false);
    expect(hostAllowed(rules, "files.pypi.org", 443)).toBe(true);
    expect(hostAllowed(rules, "a.b.pypi.org", 80)).toBe(true);
    expect(hostAllowed(rules, "pypi.org", 443)).toBe(false);
    expect(hostAllowed(rules, "pypi.org.evil.com", 443)).toBe(false);
    expect(hostAllowed(rules, "10.1.2.3", 443)).toBe(true);
    // A rule without a port allows 80 and 443 only.
    expect(hostAllowed(rules, "10.1.2.3", 5432)).toBe(false);
    expect(hostAllowed(rules, "127.0.0.1", 80)).toBe(true);
    expect(hostAllowed(rules, "[::1]", 443)).toBe(true);
    expect(hostAllowed(rules, "[::1]", 9999)).toBe(false);
    expect(hostAllowed(rules, "example.com", 443)).toBe(true);
    expect(hostAllowed(rules, "git.example.net", 22)).toBe(true);
    expect(hostAllowed(rules, "git.example.net", 443)).toBe(false);
    expect(hostAllowed(parseDomainRules(["[::1]:8080"]), "::1", 8080)).toBe(true);
    expect(hostAllowed(parseDomainRules(["0:0:0:0:0:0:0:1"]), "::1", 443)).toBe(true);
    expect(hostAllowed([], "anything", 1)).toBe(false);
  });

  it("rejects entries that are not hosts, naming each", () => {
    expect(() => parseDomainRules(["*", "exa mple.com", "*.com.", "host:port"])).toThrow(ConfigurationError);
    let error: unknown;
    try {
      parseDomainRules(["*", "ok.com", "bad host"]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).problems).toHaveLength(2);
    expect((error as ConfigurationError).problems[0]).toContain("network: open");
    expect((error as ConfigurationError).problems[1]).toContain("bad host");
  });
});


describe("filtering proxy", () => {
  it("forwards allowed plain HTTP and CONNECT, refuses and records the rest", async () => {
    const target = await recordingServer();
    cleanups.push(target.close);
    const gateway = await recordingServer();
    cleanups.push(gateway.close);
    const proxy = await startFilteringProxy({
      allowedDomains: [`127.0.0.1:${target.port}`],
      alwaysAllow: [{ host: "127.0.0.1", port: gateway.port }],
      log: recordingLogger(),
    });
    cleanups.push(proxy.close);
    const port = proxy.port!;

    const ok = await request(`http://127.0.0.1:${port}`, `${target.url}/hello`, { headers: { "proxy-authorization": "Basic xyz" } });
    expect(ok.status).toBe(200);
    expect(target.requests[0]!.url).toBe("/hello");
    expect(target.requests[0]!.headers["proxy-authorization"]).toBeUndefined();
    expect(await connectThrough(port, `127.0.0.1:${target.port}`)).toBe("HTTP/1.1 200 Connection Established");
    expect(await connectThrough(port, `localhost:${gateway.port}`)).toBe("HTTP/1.1 200 Connection Established");

    const blocked = await request(`http://127.0.0.1:${port}`, "http://blocked.example/x");
    expect(blocked.status).toBe(403);
    expect(blocked.body).toContain("blocked.example:80 is not in allowed-domains");
    expect(await connectThrough(port, "evil.example:443")).toBe("HTTP/1.1 403 Forbidden");
    expect(await connectThrough(port, "evil.example:443")).toBe("HTTP/1.1 403 Forbidden");
    // Another port of an allowed IP is not allowed.
    expect(await connectThrough(port, `127.0.0.1:${gateway.port + 1}`)).toBe("HTTP/1.1 403 Forbidden");

    const attempts = proxy.blockedAttempts();
    expect(attempts.map((a) => a.host).sort()).toEqual(["127.0.0.1", "blocked.example", "evil.example"]);
    expect(attempts.find((a) => a.host === "evil.example")!.detail).toMatch(/CONNECT evil.example:443 .*\(2 attempts\)/);
  });

  it("refuses a domain that resolves to loopback or link-local unless a rule names that IP", async () => {
    const target = await recordingServer();
    cleanups.push(target.close);
    const fakeDns = async (h: string) => [h === "metadata.corp.example" ? "169.254.169.254" : "127.0.0.1"];
    const strict = await startFilteringProxy({ allowedDomains: [`*.corp.example:${target.port}`, "*.corp.example"], log: recordingLogger(), resolve: fakeDns });
    cleanups.push(strict.close);
    expect(await connectThrough(strict.port!, `rebind.corp.example:${target.port}`)).toBe("HTTP/1.1 403 Forbidden");
    expect(await connectThrough(strict.port!, "metadata.corp.example:80")).toBe("HTTP/1.1 403 Forbidden");
    expect(strict.blockedAttempts().map((a) => a.detail).join("\n")).toMatch(/resolves to 127\.0\.0\.1, which is a loopback address/);
    const loose = await startFilteringProxy({ allowedDomains: [`*.corp.example:${target.port}`, `127.0.0.1:${target.port}`], log: recordingLogger(), resolve: fakeDns });
    cleanups.push(loose.close);
    expect(await connectThrough(loose.port!, `rebind.corp.example:${target.port}`)).toBe("HTTP/1.1 200 Connection Established");
  });
});
