/** An HTTP forward proxy for tests: it records what it was asked for and sends everything to one port on 127.0.0.1. */
import http from "node:http";
import net, { type AddressInfo } from "node:net";

export interface ForwardProxy {
  url: string;
  /** What the proxy was asked for, in order: absolute request targets, and `CONNECT host:port` for tunnels. */
  targets: string[];
  close(): Promise<void>;
}

/**
 * An HTTP forward proxy that sends every request and tunnel to `upstreamPort` on 127.0.0.1, whatever host
 * it names. undici's proxy agent tunnels (CONNECT) also to an http:// API.
 */
export async function startForwardProxy(upstreamPort: number): Promise<ForwardProxy> {
  const targets: string[] = [];
  const server = http.createServer((req, res) => {
    targets.push(req.url ?? "");
    const target = new URL(req.url ?? "/", "http://invalid");
    const upstream = http.request({ host: "127.0.0.1", port: upstreamPort, method: req.method, path: target.pathname + target.search, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    targets.push(`CONNECT ${req.url ?? ""}`);
    const upstream = net.connect(upstreamPort, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    targets,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
