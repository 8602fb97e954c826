/**
 * Downloads outside the API client (attachments, the job's OIDC token for Azure, the CLI's artifact
 * zips) honour the runner's proxy settings as the API calls do (src/shared/fetch.ts). The target's host
 * is a name only the proxy knows: a request that went around the proxy could not arrive.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fetchHonouringProxy } from "../../src/shared/fetch.js";
import { startForwardProxy, type ForwardProxy } from "../support/forward-proxy.js";

const PROXY_VARS = ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"] as const;
let saved: Record<string, string | undefined> = {};
let server: http.Server;
let port: number;
let proxy: ForwardProxy;
const seen: string[] = [];

beforeEach(async () => {
  saved = Object.fromEntries(PROXY_VARS.map((k) => [k, process.env[k]]));
  for (const k of PROXY_VARS) delete process.env[k];
  seen.length = 0;
  server = http.createServer((req, res) => {
    seen.push(`${req.headers.host} ${req.url}`);
    res.end("attachment bytes");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  proxy = await startForwardProxy(port);
});
afterEach(async () => {
  for (const k of PROXY_VARS) if (saved[k] === undefined) delete process.env[k];
  else process.env[k] = saved[k];
  await proxy.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("fetchHonouringProxy", () => {
  it("with HTTP_PROXY set, a download goes through the proxy, by the host's own name", async () => {
    process.env.HTTP_PROXY = process.env.http_proxy = proxy.url;
    const res = await fetchHonouringProxy(`http://files.github.test:${port}/user-attachments/files/1/build.log`, { headers: { accept: "*/*" } });
    expect(await res.text()).toBe("attachment bytes");
    expect(proxy.targets).toEqual([`CONNECT files.github.test:${port}`]);
    expect(seen).toEqual([`files.github.test:${port} /user-attachments/files/1/build.log`]);
  });

  it("a host NO_PROXY names, and loopback, go direct", async () => {
    process.env.HTTP_PROXY = process.env.http_proxy = proxy.url;
    process.env.NO_PROXY = process.env.no_proxy = "files.github.test";
    await expect(fetchHonouringProxy(`http://files.github.test:${port}/x`)).rejects.toThrow();
    expect(await (await fetchHonouringProxy(`http://127.0.0.1:${port}/y`)).text()).toBe("attachment bytes");
    expect(proxy.targets).toEqual([]);
    expect(seen).toEqual([`127.0.0.1:${port} /y`]);
  });

  it("without proxy settings, Node's own fetch", async () => {
    expect(await (await fetchHonouringProxy(`http://127.0.0.1:${port}/z`)).text()).toBe("attachment bytes");
    expect(proxy.targets).toEqual([]);
  });

  it("no other fetch in src/: every download outside the API client goes through it", () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = path.join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith(".ts")) files.push(p);
      }
    };
    walk(path.resolve(__dirname, "../../src"));
    const bare = files.filter((f) => !f.endsWith(path.join("shared", "fetch.ts")) && /(?<![\w.])fetch\((?![a-z]+: )/.test(readFileSync(f, "utf8").replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "")));
    expect(bare.map((f) => path.relative(process.cwd(), f))).toEqual([]);
  });
});
