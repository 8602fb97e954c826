/**
 * `allowed-domains` rules: parsing the entries and matching a host and port
 * against them. The sandbox's filtering proxy (sandbox/proxy.ts) enforces
 * them on the agent's connections; the publish step (publish/post-text.ts)
 * uses the same rules for the links and images it leaves live.
 */
import net from "node:net";
import { ConfigurationError } from "../errors.js";

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
export const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1"]);

export function canonicalIp(ip: string): string {
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
export function normalizeHost(host: string): string {
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

/** Ports a rule without `:port` allows. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

/** Whether the rule's host part matches `h` (normalised). */
export function ruleHostMatches(r: DomainRule, h: string): boolean {
  switch (r.kind) {
    case "exact":
    case "ip":
      return h === r.host;
    case "wildcard":
      return h.endsWith("." + r.host);
    case "loopback":
      return LOOPBACK_NAMES.has(h);
  }
}

export const rulePortMatches = (r: DomainRule, port: number) => (r.port === undefined ? DEFAULT_PORTS.includes(port) : r.port === port);

/** Whether `host:port` matches one of the rules: the rule's port, or 80/443 when it names none. */
export function hostAllowed(rules: readonly DomainRule[], host: string, port: number): boolean {
  const h = normalizeHost(host);
  return rules.some((r) => rulePortMatches(r, port) && ruleHostMatches(r, h));
}
