/**
 * A proxy tripwire: point HTTP_PROXY / HTTPS_PROXY (and lower-case forms) at it, with
 * NO_PROXY=127.0.0.1,localhost, and anything a CLI tries to reach outside 127.0.0.1 lands here.
 * It records the attempt and refuses it (403 for plain requests, a 403 answer to CONNECT), so
 * nothing is forwarded anywhere.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface TripwireHit {
  method: string;
  /** Absolute URL for proxied HTTP, `host:port` for CONNECT. */
  target: string;
  headers: Record<string, string | string[] | undefined>;
  at: number;
}

export interface Tripwire {
  url: string;
  hits: TripwireHit[];
  /** Proxy variables to merge into a child's env (upper and lower case, NO_PROXY for loopback). */
  env(): Record<string, string>;
  close(): Promise<void>;
}

export async function startTripwire(): Promise<Tripwire> {
  const hits: TripwireHit[] = [];
  const server = http.createServer((req, res) => {
    hits.push({ method: req.method ?? "?", target: req.url ?? "", headers: { ...req.headers }, at: Date.now() });
    req.resume();
    res.writeHead(403, { "content-type": "text/plain", connection: "close" });
    res.end("blocked by test tripwire\n");
  });
  server.on("connect", (req, socket) => {
    hits.push({ method: "CONNECT", target: req.url ?? "", headers: { ...req.headers }, at: Date.now() });
    socket.on("error", () => {});
    socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  });
  server.on("upgrade", (req, socket) => {
    hits.push({ method: `UPGRADE ${req.method}`, target: req.url ?? "", headers: { ...req.headers }, at: Date.now() });
    socket.on("error", () => {});
    socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    env: () => ({
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      ALL_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      all_proxy: url,
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
    }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
