/**
 * The host-side filtering proxy for `network: allowlist` (and, denying
 * everything but the model gateway, for `model-only`): an HTTP proxy that
 * understands CONNECT (HTTPS and any TCP) and absolute-form plain HTTP
 * requests, lets through only hosts matching `allowed-domains`, and records
 * every refusal. It listens on a unix socket that the sandbox reaches through
 * a bridge (see network.ts), or on 127.0.0.1 for tests.
 *
 * What an allowed name may reach is narrower than the name itself:
 * - ports 80 and 443 only, unless the rule names a port (`host:8443`);
 * - never an address in a private, loopback, CGNAT, link-local (cloud
 *   metadata), ULA or other non-public range (addresses.ts), unless a rule
 *   names that very IP literal. The check is on the address the name
 *   resolved to, the proxy connects to exactly that address (no second
 *   lookup an attacker's DNS could answer differently: no rebinding), and
 *   it checks the connected socket's peer again;
 * - plain HTTP goes out with `Host` set to the target the request named, so
 *   an allowed host's IP cannot be asked for another virtual host; CONNECT to
 *   port 80 (plain HTTP in a tunnel, Host unchecked) needs a rule naming 80.
 */
import http from "node:http";
import net from "node:net";
import { lookup } from "node:dns/promises";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import { canonicalIp, DEFAULT_PORTS, hostAllowed, LOOPBACK_NAMES, normalizeHost, parseDomainRules, ruleHostMatches, rulePortMatches, type DomainRule } from "../shared/domains.js";
import { nonPublicRange } from "./addresses.js";
import type { HostEndpoint } from "./types.js";

export { DEFAULT_PORTS, hostAllowed, parseDomainRules, type DomainRule };

/** Whether a rule names the IP literal `ip` itself (`localhost` for a loopback address), for `port`. */
function ipNamed(rules: readonly DomainRule[], ip: string, port: number): boolean {
  const a = unmapped(ip);
  return rules.some((r) => rulePortMatches(r, port) && (r.kind === "ip" ? unmapped(r.host) === a : r.kind === "loopback" && isLoopbackIp(a)));
}

/** `::ffff:a.b.c.d` (in either spelling) → `a.b.c.d`; any other address canonical. */
function unmapped(ip: string): string {
  const c = canonicalIp(ip);
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(c);
  if (m) return m[1]!;
  const h = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(c);
  if (!h) return c;
  const hi = parseInt(h[1]!, 16);
  const lo = parseInt(h[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function isLoopbackIp(ip: string): boolean {
  return net.isIPv4(ip) ? ip.startsWith("127.") : ip === "::1";
}

export interface BlockedAttempt {
  host: string;
  detail?: string;
}

export interface FilteringProxyOptions {
  allowedDomains: readonly string[];
  /** Endpoints always allowed (the model gateway), by exact host and port. */
  alwaysAllow?: readonly HostEndpoint[];
  /** Unix socket path to listen on; omitted: 127.0.0.1 on an ephemeral port. */
  listenPath?: string;
  log: Logger;
  /** Name resolution to every address (default: the system resolver); replaceable in tests. */
  resolve?: (host: string) => Promise<string[]>;
}

export interface FilteringProxy {
  /** `http://127.0.0.1:<port>` or the unix socket path. */
  readonly address: string;
  /** Port on 127.0.0.1 when listening on TCP. */
  readonly port?: number;
  blockedAttempts(): BlockedAttempt[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

const MAX_RECORDED_HOSTS = 500;

export async function startFilteringProxy(opts: FilteringProxyOptions): Promise<FilteringProxy> {
  const rules = parseDomainRules(opts.allowedDomains);
  const resolve = opts.resolve ?? (async (h: string) => (await lookup(h, { all: true })).map((a) => a.address));
  const always = (opts.alwaysAllow ?? []).map((e) => ({ host: normalizeHost(e.host), port: e.port }));
  const blocked = new Map<string, { count: number; detail: string }>();
  const sockets = new Set<net.Socket>();

  const record = (host: string, port: number, method: string, reason: string) => {
    const key = normalizeHost(host);
    const prev = blocked.get(key);
    if (prev) prev.count++;
    else if (blocked.size < MAX_RECORDED_HOSTS) {
      blocked.set(key, { count: 1, detail: `${method} ${host}:${port} ${reason}` });
    }
    opts.log.debug(`network: blocked ${method} ${host}:${port} (${reason})`);
  };

  const isAlways = (host: string, port: number) => {
    const h = normalizeHost(host);
    return always.some((e) => e.port === port && (e.host === h || (LOOPBACK_NAMES.has(e.host) && LOOPBACK_NAMES.has(h))));
  };

  /**
   * Decide and resolve: the address to connect to, or the reason for refusal.
   * Names are resolved here (the sandbox has no DNS); the answer is checked
   * and the connection goes to that checked address, never to a fresh lookup.
   * A non-public address (private, loopback, CGNAT, link-local, ULA…) is
   * refused unless a rule names that IP literal, so an allowed name cannot be
   * pointed at the runner's own network or the cloud metadata service.
   */
  const decide = async (host: string, port: number, method: string): Promise<{ address: string } | { reason: string }> => {
    const h = normalizeHost(host);
    if (isAlways(h, port)) return { address: LOOPBACK_NAMES.has(h) ? "127.0.0.1" : h };
    if (!hostAllowed(rules, h, port)) {
      const hostOnly = rules.some((r) => ruleHostMatches(r, h));
      return { reason: hostOnly ? `is not allowed: no allowed-domains rule names port ${port} (a rule without a port allows 80 and 443)` : "is not in allowed-domains" };
    }
    if (method === "CONNECT" && port === 80 && !rules.some((r) => r.port === 80 && ruleHostMatches(r, h)))
      return { reason: "is refused as a CONNECT tunnel: send plain http:// requests through the proxy (it sets their Host), or name port 80 in allowed-domains" };
    let addresses: string[];
    if (net.isIP(h)) addresses = [h];
    else if (h === "localhost") addresses = ["127.0.0.1"];
    else {
      try {
        addresses = await resolve(h);
      } catch (e) {
        return { reason: `could not be resolved (${errorMessage(e)})` };
      }
      if (addresses.length === 0) return { reason: "could not be resolved (no addresses)" };
    }
    const usable = addresses.map(canonicalIp).find((a) => nonPublicRange(a) === undefined || ipNamed(rules, a, port));
    if (usable) return { address: usable };
    const first = canonicalIp(addresses[0]!);
    const literal = net.isIP(h) !== 0;
    return {
      reason: `${literal ? "is" : `resolves to ${first}, which is`} ${nonPublicRange(first)}: refused unless allowed-domains names that IP${literal ? "" : ` (${first})`} itself`,
    };
  };

  /** The socket reached the checked address (and nothing a resolver could have substituted). */
  const peerIs = (s: net.Socket, address: string) => s.remoteAddress !== undefined && unmapped(s.remoteAddress) === unmapped(address);

  const server = http.createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("Agent Runner proxy: expected an absolute http:// URL\n");
      return;
    }
    if (target.protocol !== "http:") {
      res.writeHead(400, { "content-type": "text/plain" }).end("Agent Runner proxy: use CONNECT for https\n");
      return;
    }
    const port = target.port ? Number(target.port) : 80;
    void decide(target.hostname, port, req.method ?? "GET").then((d) => {
      if ("reason" in d) {
        record(target.hostname, port, req.method ?? "GET", d.reason);
        res
          .writeHead(403, { "content-type": "text/plain", "x-agent-runner-blocked": "1" })
          .end(`Agent Runner: ${target.hostname}:${port} ${d.reason} (network policy)\n`);
        return;
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (!HOP_BY_HOP.has(k.toLowerCase()) && k.toLowerCase() !== "host" && v !== undefined) headers[k] = v;
      }
      // The request named its target in the URL: that, not the client's Host header, is the virtual host asked for.
      headers.host = target.host;
      const upstream = http.request(
        { host: d.address, port, method: req.method, path: target.pathname + target.search, headers, setHost: false },
        (up) => {
          const out: http.OutgoingHttpHeaders = {};
          for (const [k, v] of Object.entries(up.headers)) {
            if (!HOP_BY_HOP.has(k.toLowerCase()) && v !== undefined) out[k] = v;
          }
          res.writeHead(up.statusCode ?? 502, out);
          up.pipe(res);
        },
      );
      upstream.on("socket", (s: net.Socket) =>
        s.once("connect", () => {
          if (!peerIs(s, d.address)) upstream.destroy(new Error(`connected to ${s.remoteAddress}, not the checked ${d.address}`));
        }),
      );
      upstream.on("error", (e) => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`Agent Runner proxy: ${errorMessage(e)}\n`);
        else res.destroy();
      });
      req.pipe(upstream);
    });
  });

  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? "");
    if (!m) {
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const host = m[1]!;
    const port = Number(m[2]);
    void decide(host, port, "CONNECT").then((d) => {
      if ("reason" in d) {
        record(host, port, "CONNECT", d.reason);
        const body = `Agent Runner: ${host}:${port} ${d.reason} (network policy)\n`;
        client.end(
          `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Agent-Runner-Blocked: 1\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        return;
      }
      const upstream = net.connect({ host: d.address, port });
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.once("connect", () => {
        if (!peerIs(upstream, d.address)) {
          upstream.destroy();
          client.destroy();
          return;
        }
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on("error", (e) => {
        if (!client.writableEnded && upstream.connecting) {
          client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nAgent Runner proxy: ${errorMessage(e)}\n`);
        } else client.destroy();
      });
      client.on("close", () => upstream.destroy());
    });
  });
  server.on("connection", (s: net.Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("clientError", (_e, s) => s.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if (opts.listenPath) server.listen(opts.listenPath, resolve);
    else server.listen(0, "127.0.0.1", resolve);
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : undefined;

  return {
    address: opts.listenPath ?? `http://127.0.0.1:${port}`,
    port,
    blockedAttempts: () =>
      [...blocked.entries()].map(([host, b]) => ({
        host,
        detail: b.count > 1 ? `${b.detail} (${b.count} attempts)` : b.detail,
      })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
