/**
 * Which IP addresses are not on the public internet: the filtering proxy
 * refuses to connect an allowed name to one of these unless a rule names
 * the IP itself, so a hostile agent (or its DNS) cannot aim an allowed name
 * at the runner's loopback, its private network, a cloud metadata service
 * (169.254.169.254, fd00:ec2::254) or anything else behind the runner.
 *
 * IPv6 forms that carry an IPv4 address (`::ffff:a.b.c.d` mapped, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address inside.
 */
import net from "node:net";

type Range = [prefix: bigint, bits: number, what: string];

const V4: Array<[string, number, string]> = [
  ["0.0.0.0", 8, "a 'this network' address (0.0.0.0/8)"],
  ["10.0.0.0", 8, "a private address (10.0.0.0/8)"],
  ["100.64.0.0", 10, "a carrier-grade NAT address (100.64.0.0/10)"],
  ["127.0.0.0", 8, "a loopback address (127.0.0.0/8)"],
  ["169.254.0.0", 16, "a link-local address (169.254.0.0/16, where cloud metadata services answer)"],
  ["172.16.0.0", 12, "a private address (172.16.0.0/12)"],
  ["192.0.0.0", 24, "an IETF protocol address (192.0.0.0/24)"],
  ["192.0.2.0", 24, "a documentation address (192.0.2.0/24)"],
  ["192.168.0.0", 16, "a private address (192.168.0.0/16)"],
  ["198.18.0.0", 15, "a benchmarking address (198.18.0.0/15)"],
  ["198.51.100.0", 24, "a documentation address (198.51.100.0/24)"],
  ["203.0.113.0", 24, "a documentation address (203.0.113.0/24)"],
  ["224.0.0.0", 4, "a multicast address (224.0.0.0/4)"],
  ["240.0.0.0", 4, "a reserved address (240.0.0.0/4)"],
];

const V6: Array<[string, number, string]> = [
  ["::", 128, "the unspecified address (::)"],
  ["::1", 128, "a loopback address (::1)"],
  ["::", 96, "an IPv4-compatible address (::/96, deprecated)"],
  ["64:ff9b:1::", 48, "a local-use NAT64 address (64:ff9b:1::/48)"],
  ["100::", 64, "a discard address (100::/64)"],
  ["2001:db8::", 32, "a documentation address (2001:db8::/32)"],
  ["fc00::", 7, "a unique local address (fc00::/7)"],
  ["fe80::", 10, "a link-local address (fe80::/10)"],
  ["fec0::", 10, "a site-local address (fec0::/10, deprecated)"],
  ["ff00::", 8, "a multicast address (ff00::/8)"],
];

function v4ToBigInt(ip: string): bigint {
  return ip.split(".").reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

/** The 128-bit value of an IPv6 address (zone id dropped). */
function v6ToBigInt(ip: string): bigint {
  let s = ip.toLowerCase().replace(/%.*$/, "");
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const v = v4ToBigInt(dotted[1]!);
    s = s.slice(0, -dotted[1]!.length) + `${(v >> 16n).toString(16)}:${(v & 0xffffn).toString(16)}`;
  }
  const [head, tail] = s.includes("::") ? s.split("::") : [s, undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g || "0", 16)), 0n);
}

const compile = (list: Array<[string, number, string]>, toInt: (s: string) => bigint): Range[] => list.map(([p, bits, what]) => [toInt(p), bits, what]);
const V4_RANGES = compile(V4, v4ToBigInt);
const V6_RANGES = compile(V6, v6ToBigInt);

function inRange(value: bigint, width: number, [prefix, bits]: Range): boolean {
  const shift = BigInt(width - bits);
  return value >> shift === prefix >> shift;
}

function v4Range(value: bigint): string | undefined {
  return V4_RANGES.find((r) => inRange(value, 32, r))?.[2];
}

/**
 * What kind of non-public address `ip` is (a phrase for messages, naming the
 * range), or undefined for a public address. Anything that is not an IP
 * address counts as non-public.
 */
export function nonPublicRange(ip: string): string | undefined {
  const family = net.isIP(ip.replace(/%.*$/, ""));
  if (family === 4) return v4Range(v4ToBigInt(ip));
  if (family !== 6) return "not an IP address";
  const v = v6ToBigInt(ip);
  const embedded = (v4: bigint, form: string) => {
    const inner = v4Range(v4);
    return inner ? `${inner}, written as ${form}` : undefined;
  };
  if (v >> 32n === 0xffffn) return embedded(v & 0xffffffffn, "an IPv4-mapped IPv6 address");
  if (v >> 32n === v6ToBigInt("64:ff9b::") >> 32n) return embedded(v & 0xffffffffn, "a NAT64 address");
  if (v >> 112n === 0x2002n) return embedded((v >> 80n) & 0xffffffffn, "a 6to4 address");
  return V6_RANGES.find((r) => inRange(v, 128, r))?.[2];
}
