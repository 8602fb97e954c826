/**
 * GitHub's attachment hosting, faked on 127.0.0.1, for comment-attachments:
 *
 *   const att = await startFakeAttachmentHosts();
 *   const gh = await startFakeGitHub({ ..., webRoutes: att.webRoutes, renderBodyHtml: att.renderBodyHtml });
 *   att.bind(gh.url);                       // the GitHub host the links (and the token) go to
 *   const url = att.addImage(png);          // `${gh.url}/user-attachments/assets/<guid>`
 *   … run with GITHUB_SERVER_URL=gh.url and att.env() …
 *
 * As GitHub does it:
 *  - `GET /user-attachments/assets/<guid>` on the GitHub host answers 302 to a
 *    signed `https://private-user-images.githubusercontent.com/<uid>/<id>-<guid>.<ext>?jwt=…`;
 *    `GET /user-attachments/files/<id>/<name>` answers 302 to
 *    `https://objects.githubusercontent.com/github-production-repository-file-5c1aeb/<id>/<name>?X-Amz-…`;
 *  - `body_html` (the `full` media type) shows each pasted image through a
 *    fresh signed URL;
 *  - the storage host refuses a request carrying `Authorization` (400, as the
 *    real storage does) and an unknown signature (404).
 * `storage` stands in for both storage hosts (att.env() maps them to it for
 * the action: AGENT_RUNNER_TEST_ATTACHMENT_HOSTS); `evil` is a foreign host
 * that must never be asked for anything.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { startLoopbackServer, type LoopbackServer } from "./fake-github-http.js";

export interface FakeAssetOptions {
  /** The GitHub host's answer redirects here instead of to the storage host. */
  redirectTo?: string;
  /** Leave the image out of body_html (the door then falls back to the GitHub URL). */
  hiddenFromBodyHtml?: boolean;
  /** Content type the storage host claims (default from `ext`). */
  contentType?: string;
  /** File extension in the signed URL (default png). */
  ext?: string;
  /** Send without content-length (chunked), so only the streamed size tells. */
  chunked?: boolean;
}

interface Asset extends FakeAssetOptions {
  guid: string;
  id: number;
  data: Buffer;
}

interface FileAsset {
  id: number;
  name: string;
  data: Buffer;
  redirectTo?: string;
}

export interface FakeAttachmentHosts {
  storage: LoopbackServer;
  evil: LoopbackServer;
  /** Set the GitHub host (the fake GitHub's url) the attachment links name. */
  bind(githubUrl: string): void;
  addImage(data: Buffer, opts?: FakeAssetOptions): string;
  addFile(name: string, data: Buffer, opts?: { redirectTo?: string }): string;
  /** A URL on the evil host (a foreign image link). */
  evilUrl(path?: string): string;
  webRoutes: (req: { method: string; path: string; query: URLSearchParams }) => { status: number; body?: unknown; headers?: Record<string, string> } | undefined;
  renderBodyHtml: (markdown: string) => string;
  /** The action's test hook mapping the storage hosts to `storage`. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

const OWNER_ID = 424242;
const SIGNED_HOST = "https://private-user-images.githubusercontent.com";
const OBJECTS_HOST = "https://objects.githubusercontent.com";
const MIME: Record<string, string> = { png: "image/png", jpg: "image/jpeg", gif: "image/gif", webp: "image/webp", pdf: "application/pdf", txt: "text/plain", html: "text/html" };

export async function startFakeAttachmentHosts(): Promise<FakeAttachmentHosts> {
  let github = "http://127.0.0.1:1";
  const assets = new Map<string, Asset>();
  const files = new Map<number, FileAsset>();
  /** jwt → guid, for the signed URLs handed out. */
  const jwts = new Map<string, string>();
  const signatures = new Set<string>();
  let nextId = 9000;

  const signedUrl = (a: Asset) => {
    const jwt = randomBytes(12).toString("hex");
    jwts.set(jwt, a.guid);
    return `${SIGNED_HOST}/${OWNER_ID}/${a.id}-${a.guid}.${a.ext ?? "png"}?jwt=${jwt}`;
  };

  const storage = await startLoopbackServer(({ req, res, path, query }) => {
    // The real storage refuses a second auth mechanism: the token must never come here.
    if (req.headers.authorization) {
      res.writeHead(400, { "content-type": "application/xml" });
      res.end("<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed</Message></Error>");
      return 400;
    }
    let data: Buffer | undefined;
    let asset: Asset | undefined;
    const signed = /^\/\d+\/(\d+)-([0-9a-f-]{36})\.\w+$/.exec(path);
    const object = /^\/github-production-repository-file-5c1aeb\/(\d+)\/[^/]+$/.exec(path);
    if (signed && jwts.get(query.get("jwt") ?? "") === signed[2]) {
      asset = assets.get(signed[2]!);
      data = asset?.data;
    } else if (object && signatures.has(query.get("X-Amz-Signature") ?? "")) data = files.get(Number(object[1]))?.data;
    if (!data) {
      res.writeHead(404, { "content-type": "application/xml" });
      res.end("<Error><Code>NoSuchKey</Code></Error>");
      return 404;
    }
    const type = asset?.contentType ?? MIME[asset?.ext ?? "png"] ?? "application/octet-stream";
    res.writeHead(200, { "content-type": type, ...(asset?.chunked ? {} : { "content-length": String(data.length) }) });
    if (asset?.chunked) for (let i = 0; i < data.length; i += 1 << 20) res.write(data.subarray(i, i + (1 << 20)));
    res.end(asset?.chunked ? undefined : data);
    return 200;
  });
  const evil = await startLoopbackServer(({ res }) => {
    res.writeHead(200, { "content-type": "image/png" });
    res.end(Buffer.from("89504e470d0a1a0a", "hex"));
    return 200;
  });

  return {
    storage,
    evil,
    bind(url) {
      github = url.replace(/\/+$/, "");
    },
    addImage(data, opts = {}) {
      const a: Asset = { guid: randomUUID(), id: nextId++, data, ...opts };
      assets.set(a.guid, a);
      return `${github}/user-attachments/assets/${a.guid}`;
    },
    addFile(name, data, opts = {}) {
      const f: FileAsset = { id: nextId++, name, data, ...opts };
      files.set(f.id, f);
      return `${github}/user-attachments/files/${f.id}/${encodeURIComponent(name)}`;
    },
    evilUrl(p = "/steal.png") {
      return `${evil.url}${p}`;
    },
    webRoutes({ method, path }) {
      if (method !== "GET") return undefined;
      const img = /^\/user-attachments\/assets\/([0-9a-f-]{36})$/.exec(path);
      if (img) {
        const a = assets.get(img[1]!);
        if (!a) return { status: 404, body: { message: "Not Found" } };
        return { status: 302, headers: { location: a.redirectTo ?? signedUrl(a) } };
      }
      const file = /^\/user-attachments\/files\/(\d+)\/[^/]+$/.exec(path);
      if (file) {
        const f = files.get(Number(file[1]));
        if (!f) return { status: 404, body: { message: "Not Found" } };
        const sig = randomBytes(16).toString("hex");
        signatures.add(sig);
        return { status: 302, headers: { location: f.redirectTo ?? `${OBJECTS_HOST}/github-production-repository-file-5c1aeb/${f.id}/${encodeURIComponent(f.name)}?X-Amz-Signature=${sig}` } };
      }
      return undefined;
    },
    renderBodyHtml(markdown) {
      const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
      const pictures = [...assets.values()]
        .filter((a) => !a.hiddenFromBodyHtml && markdown.includes(a.guid))
        .map((a) => {
          const u = signedUrl(a);
          return `<p><a target="_blank" rel="noopener noreferrer" href="${u}"><img src="${u}" alt="image" style="max-width: 100%;"></a></p>`;
        });
      return `<p>${esc(markdown)}</p>\n${pictures.join("\n")}`;
    },
    env() {
      return { AGENT_RUNNER_TEST_ATTACHMENT_HOSTS: `private-user-images.githubusercontent.com=${storage.url},objects.githubusercontent.com=${storage.url}` };
    },
    async close() {
      await storage.close();
      await evil.close();
    },
  };
}
