/**
 * The one door through which files pasted into a GitHub thread reach the
 * agent (`comment-attachments`). The agent has no network; the host fetches
 * them before it starts, with these rules:
 *
 *  - Only links in the triggering comment and the issue/PR body as they were
 *    when the event fired (the event's text, not a re-fetched one: a body
 *    edited after the trigger adds nothing), and only to GitHub's attachment
 *    URLs: `<GITHUB_SERVER_URL>/user-attachments/{assets,files}/…` and the
 *    storage hosts in STORAGE_HOSTS (https). Every other link stays text and
 *    is never requested.
 *  - Pasted images are fetched through their signed URL
 *    (`private-user-images.githubusercontent.com/…?jwt=`) read from the
 *    rendered `body_html` (`full` media type), paired by the asset's GUID:
 *    that works for private repositories too, where the token alone gets 404.
 *  - The token is sent only to the GitHub host itself (GITHUB_SERVER_URL's
 *    origin), never to a storage host. Redirects are followed by hand, at most
 *    MAX_REDIRECTS, and only to attachment URLs under the same rules (a hop to
 *    a storage host drops the token); anything else ends the download.
 *  - Bounded: at most ATTACHMENT_LIMITS.maxFiles downloads, each cut off past
 *    ATTACHMENT_LIMITS.maxBytes, each within DOWNLOAD_TIMEOUT_MS. The type is
 *    checked by content when the files are staged (config/attachments.ts).
 * A failed or refused download is a warning; the run goes on.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Nodes } from "mdast";
import { ATTACHMENT_LIMITS, attachmentHostOverrides, type AttachmentCandidate } from "../config/attachments.js";
import { describeBytes } from "../shared/bytes.js";
import type { Logger } from "../logger.js";
import { childrenOf, htmlMayHaveAttributes, parseHtml, parseMarkdown, walkHtml, type HtmlNode } from "../markdown.js";
import type { GitHubRun, StageContext } from "../stage-context.js";
import { apiErrorMessage } from "../github/client.js";
import type { GitHubApi } from "../github/api.js";
import { errorMessage } from "../errors.js";
import type { Trigger } from "../shared/trigger.js";
import { fetchHonouringProxy } from "../shared/fetch.js";

/** GitHub's storage hosts for pasted files: fetched without the token. */
export const STORAGE_HOSTS = ["private-user-images.githubusercontent.com", "user-images.githubusercontent.com", "objects.githubusercontent.com"] as const;
/** The host whose signed URLs `body_html` holds for pasted images. */
const SIGNED_IMAGE_HOST = "private-user-images.githubusercontent.com";
const MAX_REDIRECTS = 5;
const DOWNLOAD_TIMEOUT_MS = 30_000;

const GUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
/** `/user-attachments/assets/<guid>` or `/user-attachments/files/<id>/<name>`. */
const ATTACHMENT_PATH = /^\/user-attachments\/(assets\/[0-9a-f-]{36}|files\/\d+\/[^/]+)$/i;
/** A signed image URL's path: `/<owner id>/<asset id>-<guid>.<ext>`. */
const SIGNED_PATH = /^\/\d+\/\d+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[A-Za-z0-9]+$/i;

export interface DoorOptions {
  /** GITHUB_SERVER_URL: the only host the token goes to. */
  serverUrl: string;
  token: string;
  /** Test hook: storage hosts → loopback origins (config/attachments.ts: attachmentHostOverrides). */
  hostOverrides?: Record<string, string>;
  maxBytes?: number;
  timeoutMs?: number;
  log: Logger;
}

/** How a URL may be fetched: with the token (the GitHub host), without (a storage host), or not at all. */
export function attachmentRoute(url: URL, o: Pick<DoorOptions, "serverUrl">): "token" | "anonymous" | undefined {
  if (url.username || url.password) return undefined;
  const server = new URL(o.serverUrl);
  if (url.origin === server.origin && ATTACHMENT_PATH.test(url.pathname)) return "token";
  if (url.protocol === "https:" && url.port === "" && (STORAGE_HOSTS as readonly string[]).includes(url.hostname)) return "anonymous";
  return undefined;
}

function parseUrl(text: string, base?: URL): URL | undefined {
  try {
    return new URL(text.trim(), base);
  } catch {
    return undefined;
  }
}

/** Every link and image source in Markdown (raw HTML's `<img src>` and `<a href>` too), in order. */
export function linkedUrls(markdown: string): string[] {
  const out: string[] = [];
  const fromHtml = (html: string) =>
    htmlMayHaveAttributes(html) &&
    walkHtml(parseHtml(html), (n: HtmlNode) => {
      if (!("attrs" in n)) return;
      for (const a of n.attrs) if ((n.nodeName === "img" && a.name === "src") || (n.nodeName === "a" && a.name === "href")) out.push(a.value);
    });
  const walk = (n: Nodes): void => {
    if (n.type === "image" || n.type === "link" || n.type === "definition") out.push(n.url);
    else if (n.type === "html") fromHtml(n.value);
    for (const c of childrenOf(n)) walk(c);
  };
  walk(parseMarkdown(markdown));
  return out;
}

/** Signed image URLs in a rendered body, by the asset GUID in their file name. */
function signedImageUrls(bodyHtml: string): Map<string, URL> {
  const out = new Map<string, URL>();
  walkHtml(parseHtml(bodyHtml), (n: HtmlNode) => {
    if (!("attrs" in n)) return;
    for (const a of n.attrs) {
      if (a.name !== "src" && a.name !== "href" && a.name !== "data-canonical-src") continue;
      const u = parseUrl(a.value);
      const guid = u && u.protocol === "https:" && u.hostname === SIGNED_IMAGE_HOST && u.searchParams.has("jwt") ? SIGNED_PATH.exec(u.pathname)?.[1] : undefined;
      if (guid && !out.has(guid.toLowerCase())) out.set(guid.toLowerCase(), u!);
    }
  });
  return out;
}

/** Where a request for `url` connects: the URL itself, or (tests) its storage host mapped to loopback. */
function connectUrl(url: URL, overrides: Record<string, string>): URL {
  const mapped = overrides[url.hostname];
  return mapped ? new URL(`${url.pathname}${url.search}`, mapped) : url;
}

type Downloaded = { ok: true; data: Buffer } | { ok: false; why: string };

async function readCapped(res: Response, max: number): Promise<Buffer | undefined> {
  const declared = Number(res.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body ?? []) {
    total += (chunk as Uint8Array).byteLength;
    if (total > max) return undefined;
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks);
}

/** GET with the door's rules: the token only to the GitHub host, redirects only to attachment URLs. */
async function downloadAttachment(start: URL, o: DoorOptions): Promise<Downloaded> {
  const max = o.maxBytes ?? ATTACHMENT_LIMITS.maxBytes;
  const overrides = o.hostOverrides ?? {};
  let url = start;
  for (let hop = 0; ; hop++) {
    const how = attachmentRoute(url, o);
    if (!how) return { ok: false, why: `it redirects to ${url.host}, which is not one of GitHub's attachment hosts; not followed` };
    let res: Response;
    try {
      res = await fetchHonouringProxy(connectUrl(url, overrides), {
        redirect: "manual",
        headers: { accept: "*/*", "user-agent": "agent-runner", ...(how === "token" ? { authorization: `Bearer ${o.token}` } : {}) },
        signal: AbortSignal.timeout(o.timeoutMs ?? DOWNLOAD_TIMEOUT_MS),
      });
    } catch (e) {
      return { ok: false, why: `the download failed (${errorMessage(e)})` };
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => undefined);
      const next = parseUrl(res.headers.get("location") ?? "", url);
      if (!next) return { ok: false, why: `HTTP ${res.status} without a usable Location` };
      if (hop >= MAX_REDIRECTS) return { ok: false, why: `more than ${MAX_REDIRECTS} redirects` };
      url = next;
      continue;
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return { ok: false, why: `HTTP ${res.status}` };
    }
    try {
      const data = await readCapped(res, max);
      return data ? { ok: true, data } : { ok: false, why: `it is larger than the limit of ${describeBytes(max)} per file` };
    } catch (e) {
      return { ok: false, why: `the download failed (${errorMessage(e)})` };
    }
  }
}

/** One text of the thread whose links may be attachments. */
export interface LinkSource {
  text: string;
  /** For the prompt: `the comment by @alice`. */
  source: string;
  /** Its rendered body (`full` media type), for the signed image URLs. */
  bodyHtml: () => Promise<string | undefined>;
}

async function renderedBody(fetchIt: () => Promise<{ data: unknown }>, what: string, log: Logger): Promise<string | undefined> {
  try {
    const { data } = await fetchIt();
    const html = (data as { body_html?: unknown }).body_html;
    return typeof html === "string" ? html : undefined;
  } catch (e) {
    log.warning(`comment-attachments: could not read the rendered ${what} (${apiErrorMessage(e)}); its pasted images are fetched without signed URLs.`);
    return undefined;
  }
}

/** The triggering comment first, then the issue or pull request body. */
function linkSources(trigger: Trigger, api: GitHubApi, log: Logger): LinkSource[] {
  const r = { owner: api.repo.owner, repo: api.repo.name, mediaType: { format: "full+json" } };
  const out: LinkSource[] = [];
  const c = trigger.comment;
  const thread = trigger.thread;
  if (c) {
    const fetchIt =
      c.kind === "issue_comment"
        ? () => api.octokit.rest.issues.getComment({ ...r, comment_id: c.id })
        : c.kind === "review_comment"
          ? () => api.octokit.rest.pulls.getReviewComment({ ...r, comment_id: c.id })
          : thread
            ? () => api.octokit.rest.pulls.getReview({ ...r, pull_number: thread.number, review_id: c.id })
            : undefined;
    out.push({ text: c.body, source: `the ${c.kind === "review" ? "review" : "comment"} by @${c.author}`, bodyHtml: () => (fetchIt ? renderedBody(fetchIt, "comment", log) : Promise.resolve(undefined)) });
  }
  if (thread?.body) {
    const what = thread.kind === "pull_request" ? "pull request" : "issue";
    out.push({
      text: thread.body,
      source: `the ${what} body (#${thread.number}${thread.author ? ` by @${thread.author}` : ""})`,
      bodyHtml: () => renderedBody(() => api.octokit.rest.issues.get({ ...r, issue_number: thread.number }), `${what} body`, log),
    });
  }
  return out;
}

/** The attachment URLs of one text, each once; other links are left alone. */
function attachmentLinks(text: string, o: Pick<DoorOptions, "serverUrl">): URL[] {
  const seen = new Set<string>();
  const out: URL[] = [];
  for (const raw of linkedUrls(text)) {
    const u = parseUrl(raw);
    if (!u || !attachmentRoute(u, o) || seen.has(u.href)) continue;
    seen.add(u.href);
    out.push(u);
  }
  return out;
}

/**
 * Download the thread's attachments into `destDir`; returns them for
 * staging. Never throws for a download: each failure is one warning.
 */
export async function fetchThreadAttachments(sources: LinkSource[], destDir: string, o: DoorOptions): Promise<AttachmentCandidate[]> {
  const out: AttachmentCandidate[] = [];
  const done = new Set<string>();
  let skippedForCount = 0;
  for (const s of sources) {
    const links = attachmentLinks(s.text, o).filter((u) => !done.has(u.href));
    if (!links.length) continue;
    const needsSigned = links.some((u) => /\/user-attachments\/assets\//.test(u.pathname));
    const signed = needsSigned ? signedImageUrls((await s.bodyHtml()) ?? "") : new Map<string, URL>();
    for (const link of links) {
      done.add(link.href);
      if (out.length >= ATTACHMENT_LIMITS.maxFiles) {
        skippedForCount++;
        continue;
      }
      const guid = /\/user-attachments\/assets\//.test(link.pathname) ? GUID.exec(link.pathname)?.[0]?.toLowerCase() : undefined;
      const got = await downloadAttachment((guid && signed.get(guid)) || link, o);
      if (!got.ok) {
        o.log.warning(`comment-attachments: '${link.href}' from ${s.source} was not attached: ${got.why}.`);
        continue;
      }
      await mkdir(destDir, { recursive: true });
      const hostPath = path.join(destDir, `${out.length + 1}.download`);
      await writeFile(hostPath, got.data, { mode: 0o600 });
      out.push({ hostPath, label: link.href, source: s.source, untrusted: true });
    }
  }
  if (skippedForCount)
    o.log.warning(`comment-attachments: ${skippedForCount} more link(s) to attachments were not downloaded: the limit is ${ATTACHMENT_LIMITS.maxFiles} files.`);
  return out;
}

/**
 * Stage hook (action.ts, phase run/all on GitHub events): with
 * `comment-attachments` on, the thread's attachments are downloaded and
 * handed to the runner as already-fetched attachments.
 */
export async function withCommentAttachments(ctx: StageContext, run: GitHubRun): Promise<StageContext> {
  const { settings, log } = ctx;
  if (!settings.github.commentAttachments) return ctx;
  const sources = linkSources(run.trigger, run.api, log);
  if (!sources.length) return ctx;
  const fetched = await fetchThreadAttachments(sources, path.join(ctx.runDir, "comment-attachments"), {
    serverUrl: ctx.io.host.serverUrl,
    token: settings.github.token,
    hostOverrides: attachmentHostOverrides(STORAGE_HOSTS),
    log,
  });
  if (!fetched.length) return ctx;
  return { ...ctx, settings: { ...settings, run: { ...settings.run, fetchedAttachments: [...settings.run.fetchedAttachments, ...fetched] } } };
}
