import http from "node:http";
import net, { type AddressInfo } from "node:net";
import type { Logger } from "../../src/logger.js";

/** A logger that keeps lines for assertions. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    debug: (m) => lines.push(`debug: ${m}`),
    info: (m) => lines.push(`info: ${m}`),
    warning: (m) => lines.push(`warning: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
    group: async (_t, fn) => fn(),
  };
}

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local HTTP server that records every request; `handler` answers (default: 200 JSON). */
export async function recordingServer(
  handler?: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void | Promise<void>,
): Promise<{ url: string; port: number; requests: Recorded[]; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      if (handler) void handler(req, res, body);
      else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, path: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request with the path sent verbatim (no normalisation). */
export function request(
  base: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path, method: opts.method ?? "GET", headers: opts.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** CONNECT through a proxy on loopback: the status line it answers. */
export async function connectThrough(proxyPort: number, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(proxyPort, "127.0.0.1", () => s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    let buf = "";
    s.on("data", (d: Buffer) => {
      buf += d.toString();
      if (buf.includes("\r\n\r\n")) {
        s.destroy();
        resolve(buf.split("\r\n")[0]!);
      }
    });
    s.on("error", reject);
    s.on("end", () => resolve(buf.split("\r\n")[0]!));
  });
}
