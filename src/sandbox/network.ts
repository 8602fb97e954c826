/**
 * How a sandbox without a network of its own still reaches the model gateway
 * (and, for `allowlist`, the filtering proxy):
 *
 *   sandbox: 127.0.0.1:<gateway port> ──socat──► /run/agent-runner/gateway.sock
 *                                                  │ (host dir bind-mounted in)
 *   host:    unix socket listener (node) ─────────► 127.0.0.1:<gateway port>
 *
 * The port inside equals the gateway's port on the host, so the gateway URL
 * is the same on both sides and a client that sends it through the proxy
 * instead (the proxy always allows the gateway) lands in the same place.
 * The proxy listens directly on a unix socket in the same folder and is
 * bridged to 127.0.0.1:<proxy port> inside.
 *
 *   none        no bridges, no network namespace peers: nothing reachable,
 *               the gateway neither (agents that need a model cannot work).
 *   model-only  gateway bridge + a deny-all proxy that records attempts.
 *   allowlist   gateway bridge + proxy enforcing allowed-domains.
 *   open        host network shared; nothing to bridge.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type { Logger } from "../logger.js";
import { makePrivateDir } from "./hostfs.js";
import { parseDomainRules, startFilteringProxy, type BlockedAttempt, type FilteringProxy } from "./proxy.js";
import type { HostEndpoint, NetworkPolicy } from "./types.js";

/** Where the bridge folder appears inside the sandbox. */
export const INSIDE_BRIDGE_DIR = "/run/agent-runner";
const DEFAULT_PROXY_PORT = 3128;

export interface Forward {
  /** TCP port on 127.0.0.1 inside the sandbox. */
  port: number;
  /** Socket file name in the bridge folder. */
  socket: string;
}

export interface NetworkPlan {
  mode: NetworkPolicy["mode"];
  /** Whether the sandbox gets its own network namespace. */
  isolated: boolean;
  /** Host folder holding the sockets (mounted at INSIDE_BRIDGE_DIR), when bridging. */
  bridgeDir?: string;
  /** TCP → unix forwards to start inside the sandbox. */
  forwards: Forward[];
  /** The gateway as addressed inside, when reachable. */
  gatewayInside?: HostEndpoint;
  /** Proxy variables for the agent's environment (allowlist, model-only). */
  env: Record<string, string>;
  blockedAttempts(): BlockedAttempt[];
  close(): Promise<void>;
}

/** Host-side half of a bridge: unix socket → TCP on the host's loopback. */
async function listenUnixToTcp(socketPath: string, target: HostEndpoint): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: target.host, port: target.port });
    sockets.add(client).add(upstream);
    const done = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", done).on("close", done);
    upstream.on("error", done).on("close", done);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, resolve);
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function proxyEnv(port: number, loopbackAllowed: boolean): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  // Servers the agent starts inside the sandbox listen on its own loopback, so
  // loopback bypasses the proxy, unless the user allowed the host's loopback
  // (then such traffic must go through the proxy to reach the host).
  const noProxy = loopbackAllowed ? "" : "localhost,127.0.0.1,::1";
  const env: Record<string, string> = {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    // Node ≥ 24 honours the variables above for fetch/http only with this.
    NODE_USE_ENV_PROXY: "1",
  };
  if (noProxy) {
    env.NO_PROXY = noProxy;
    env.no_proxy = noProxy;
  }
  return env;
}

export interface NetworkSetupOptions {
  network: NetworkPolicy;
  gateway?: HostEndpoint;
  log: Logger;
  /** Where to create the bridge folder (default os.tmpdir()). */
  baseDir?: string;
}

export async function setUpNetwork(opts: NetworkSetupOptions): Promise<NetworkPlan> {
  const { network, gateway, log } = opts;
  if (network.mode === "open") {
    return {
      mode: "open",
      isolated: false,
      forwards: [],
      gatewayInside: gateway,
      env: {},
      blockedAttempts: () => [],
      close: async () => {},
    };
  }
  if (network.mode === "none") {
    if (gateway) log.debug("network: none: the model gateway is not reachable from the sandbox");
    return { mode: "none", isolated: true, forwards: [], env: {}, blockedAttempts: () => [], close: async () => {} };
  }

  const bridgeDir = makePrivateDir("agent-runner-net-", opts.baseDir);
  const servers: { close(): Promise<void> }[] = [];
  const forwards: Forward[] = [];
  let proxy: FilteringProxy | undefined;
  try {
    let gatewayInside: HostEndpoint | undefined;
    if (gateway) {
      servers.push(await listenUnixToTcp(path.join(bridgeDir, "gateway.sock"), gateway));
      forwards.push({ port: gateway.port, socket: "gateway.sock" });
      gatewayInside = { host: "127.0.0.1", port: gateway.port };
    }
    const allowed = network.mode === "allowlist" ? network.allowedDomains : [];
    proxy = await startFilteringProxy({
      allowedDomains: allowed,
      alwaysAllow: gateway ? [gateway] : [],
      listenPath: path.join(bridgeDir, "proxy.sock"),
      log,
    });
    let proxyPort = DEFAULT_PROXY_PORT;
    while (forwards.some((f) => f.port === proxyPort)) proxyPort++;
    forwards.push({ port: proxyPort, socket: "proxy.sock" });
    const loopbackAllowed = parseDomainRules(allowed).some((r) => r.kind === "loopback" || (r.kind === "ip" && (r.host.startsWith("127.") || r.host === "::1")));
    const p = proxy;
    return {
      mode: network.mode,
      isolated: true,
      bridgeDir,
      forwards,
      gatewayInside,
      env: proxyEnv(proxyPort, loopbackAllowed),
      blockedAttempts: () => p.blockedAttempts(),
      close: async () => {
        await p.close();
        await Promise.all(servers.map((s) => s.close()));
        fs.rmSync(bridgeDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await proxy?.close();
    await Promise.all(servers.map((s) => s.close()));
    fs.rmSync(bridgeDir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * `reachable(url)`: the gateway keeps its port inside the sandbox, so a URL
 * on the host's loopback maps to the same URL on the sandbox's loopback, with
 * `localhost` spelled 127.0.0.1 (the sandbox's `localhost` may resolve to ::1
 * first, where nothing listens).
 */
export function reachableUrl(url: string, plan: Pick<NetworkPlan, "gatewayInside" | "mode">): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  const gw = plan.gatewayInside;
  const port = Number(u.port || (u.protocol === "https:" ? 443 : 80));
  if (gw && port === gw.port && ["127.0.0.1", "localhost", "[::1]"].includes(u.hostname)) {
    u.hostname = gw.host;
    return u.toString().replace(/\/$/, url.endsWith("/") ? "/" : "");
  }
  return url;
}
