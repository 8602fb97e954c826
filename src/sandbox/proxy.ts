/**
 * The host-side filtering proxy for `network: allowlist` (and, denying
 * everything but the model gateway, for `model-only`): an HTTP proxy that
 * understands CONNECT (HTTPS and any TCP) and absolute-form plain HTTP
 * requests, lets through only hosts matching `allowed-domains`, and records
 * every refusal. It listens on a unix socket that the sandbox reaches through
 * a bridge (see network.ts), or on 127.0.0.1 for tests.
 */
import http from "node:http";
import net from "node:net";
import { lookup } from "node:dns/promises";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { HostEndpoint } from "./types.js";

export interface DomainRule {
  /** exact host name, `*.suffix` wildcard, IP literal, or loopback (`localhost`). */
  kind: "exact" | "wildcard" | "ip" | "loopback";
  /** Lower-case host, wildcard suffix without `*.`, or canonical IP. */
  host: string;
  /** When the entry named a port (`host:443`), only that port. */
  port?: number;
  /** The entry as the user wrote it. */
  source: string;
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1"]);

function canonicalIp(ip: string): string {
  if (net.isIPv6(ip)) {
    // Node normalises IPv6 text through SocketAddress.
    try {
      return new net.SocketAddress({ address: ip, family: "ipv6" }).address.toLowerCase();
    } catch {
      return ip.toLowerCase();
    }
  }
  return ip;
}

/** Lower-case, strip `[...]` and a trailing dot. */
function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  return net.isIP(h) ? canonicalIp(h) : h;
}

/**
 * Parse `allowed-domains` entries: `example.com` (that host only),
 * `*.example.com` (any subdomain, not the apex), an IPv4/IPv6 literal,
 * `localhost` (the loopback names localhost, 127.0.0.1 and ::1), each
 * optionally with `:port`. A leading `http(s)://` and a trailing path are
 * tolerated. Anything else is a ConfigurationError naming the entry.
 */
export function parseDomainRules(entries: readonly string[]): DomainRule[] {
  const rules: DomainRule[] = [];
  const problems: string[] = [];
  for (const raw of entries) {
    const source = raw.trim();
    if (!source) continue;
    let s = source.toLowerCase().replace(/^[a-z][a-z0-9+.-]*:\/\//, "");
    s = s.replace(/\/.*$/, "");
    let port: number | undefined;
    let host = s;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
    if (bracketed) {
      host = bracketed[1]!;
      if (bracketed[2]) port = Number(bracketed[2]);
    } else if ((s.match(/:/g) ?? []).length === 1) {
      const i = s.indexOf(":");
      host = s.slice(0, i);
      const p = s.slice(i + 1);
      if (!/^\d+$/.test(p)) {
        problems.push(`allowed-domains: '${source}' has an invalid port`);
        continue;
      }
      port = Number(p);
    }
    if (port !== undefined && (port < 1 || port > 65535)) {
      problems.push(`allowed-domains: '${source}' has a port outside 1-65535`);
      continue;
    }
    host = normalizeHost(host);
    if (host === "localhost") {
      rules.push({ kind: "loopback", host, port, source });
    } else if (net.isIP(host)) {
      rules.push({ kind: "ip", host: canonicalIp(host), port, source });
    } else if (host.startsWith("*.") && host.slice(2).split(".").every((l) => LABEL.test(l)) && host.slice(2).includes(".")) {
      rules.push({ kind: "wildcard", host: host.slice(2), port, source });
    } else if (host.split(".").every((l) => LABEL.test(l))) {
      rules.push({ kind: "exact", host, port, source });
    } else {
      problems.push(
        `allowed-domains: '${source}' is not a host name, a '*.example.com' wildcard, an IP address or 'localhost'` +
          (host === "*" ? " (to allow every host use 'network: open')" : host.startsWith("*.") ? " (a wildcard needs at least two labels after '*.')" : ""),
      );
    }
  }
  if (problems.length) throw new ConfigurationError(problems);
  return rules;
}

/** Whether `host:port` matches one of the rules. */
export function hostAllowed(rules: readonly DomainRule[], host: string, port: number): boolean {
  const h = normalizeHost(host);
  return rules.some((r) => {
    if (r.port !== undefined && r.port !== port) return false;
    switch (r.kind) {
      case "exact":
      case "ip":
        return h === r.host;
      case "wildcard":
        return h.endsWith("." + r.host);
      case "loopback":
        return LOOPBACK_NAMES.has(h);
    }
  });
}

function isLoopbackOrLinkLocal(ip: string): boolean {
  if (net.isIPv4(ip)) {
    return ip.startsWith("127.") || ip.startsWith("169.254.") || ip === "0.0.0.0";
  }
  const v6 = ip.toLowerCase();
  if (v6.startsWith("::ffff:")) return isLoopbackOrLinkLocal(v6.slice(7));
  return v6 === "::1" || v6 === "::" || /^fe[89ab]/.test(v6);
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
  /** Name resolution (default: the system resolver); replaceable in tests. */
  resolve?: (host: string) => Promise<string>;
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
  const resolve = opts.resolve ?? (async (h: string) => (await lookup(h)).address);
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
   * Names are resolved here (the sandbox has no DNS) and a name that resolves
   * to loopback or link-local is refused unless such an IP is itself allowed,
   * so an allowed domain cannot be pointed at the runner's own services.
   */
  const decide = async (host: string, port: number): Promise<{ address: string } | { reason: string }> => {
    const h = normalizeHost(host);
    if (isAlways(h, port)) return { address: LOOPBACK_NAMES.has(h) ? "127.0.0.1" : h };
    if (!hostAllowed(rules, h, port)) return { reason: "is not in allowed-domains" };
    if (net.isIP(h)) return { address: h };
    if (h === "localhost") return { address: "127.0.0.1" };
    let address: string;
    try {
      address = await resolve(h);
    } catch (e) {
      return { reason: `could not be resolved (${errorMessage(e)})` };
    }
    if (isLoopbackOrLinkLocal(address) && !hostAllowed(rules.filter((r) => r.kind === "ip" || r.kind === "loopback"), address, port)) {
      return { reason: `resolves to ${address}, a loopback or link-local address that is not allowed` };
    }
    return { address };
  };

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
    void decide(target.hostname, port).then((d) => {
      if ("reason" in d) {
        record(target.hostname, port, req.method ?? "GET", d.reason);
        res
          .writeHead(403, { "content-type": "text/plain", "x-agent-runner-blocked": "1" })
          .end(`Agent Runner: ${target.hostname}:${port} ${d.reason} (network policy)\n`);
        return;
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (!HOP_BY_HOP.has(k.toLowerCase()) && v !== undefined) headers[k] = v;
      }
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
    void decide(host, port).then((d) => {
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
