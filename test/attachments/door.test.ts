/**
 * The download door for comment-attachments (src/trigger/attachments.ts),
 * against the fake GitHub and its fake attachment hosts on 127.0.0.1: what is
 * requested where, with which credentials, and what is refused.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachmentHostOverrides } from "../../src/config/attachments.js";
import { attachmentRoute, fetchThreadAttachments, linkedUrls, STORAGE_HOSTS, type LinkSource } from "../../src/trigger/attachments.js";
import { startFakeAttachmentHosts, type FakeAttachmentHosts } from "../support/fake-github-attachments.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { recordingLogger } from "../sandbox/helpers.js";
import { png } from "./helpers.js";

const TOKEN = "ghs_attachmentDoorToken0123456789abcdef";
let att: FakeAttachmentHosts;
let gh: FakeGitHub;

beforeAll(async () => {
  att = await startFakeAttachmentHosts();
  gh = await startFakeGitHub({ token: TOKEN, webRoutes: att.webRoutes, renderBodyHtml: att.renderBodyHtml });
  att.bind(gh.url);
});
afterAll(async () => {
  await gh?.close();
  await att?.close();
});

function source(text: string): LinkSource {
  return { text, source: "the comment by @alice", bodyHtml: async () => att.renderBodyHtml(text) };
}

async function fetchAll(text: string) {
  const log = recordingLogger();
  const dest = mkdtempSync(path.join(os.tmpdir(), "door-"));
  const got = await fetchThreadAttachments([source(text)], dest, {
    serverUrl: gh.url,
    token: TOKEN,
    hostOverrides: attachmentHostOverrides(STORAGE_HOSTS, att.env()),
    log,
  });
  return { got, log, warnings: log.lines.filter((l) => l.startsWith("warning:")) };
}

const storageAuth = () => att.storage.requests.filter((r) => r.headers.authorization !== undefined);

describe("comment-attachments download door", () => {
  it("a pasted image comes through its signed URL from body_html, with no token at the storage host", async () => {
    const image = png(8, 8, 1);
    const url = att.addImage(image);
    const before = att.storage.requests.length;
    const { got, warnings } = await fetchAll(`see ![shot](${url})`);
    expect(warnings).toEqual([]);
    expect(got).toHaveLength(1);
    expect(readFileSync(got[0]!.hostPath).equals(image)).toBe(true);
    expect(got[0]).toMatchObject({ label: url, source: "the comment by @alice", untrusted: true });
    const asked = att.storage.requests.slice(before);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.query["jwt"]).toBeTruthy();
    expect(storageAuth()).toEqual([]);
  });

  it("without a signed URL the GitHub host is asked with the token, and its redirect to storage drops it", async () => {
    const image = png(8, 8, 2);
    const url = att.addImage(image, { hiddenFromBodyHtml: true });
    const file = att.addFile("notes.txt", Buffer.from("line one\nline two\n"));
    gh.clearRequests();
    const { got, warnings } = await fetchAll(`<img src="${url}" width="300">\n\n[notes](${file})`);
    expect(warnings).toEqual([]);
    expect(got.map((g) => readFileSync(g.hostPath).toString("latin1"))).toEqual([image.toString("latin1"), "line one\nline two\n"]);
    const web = gh.requests.filter((r) => r.path.startsWith("/user-attachments/"));
    expect(web).toHaveLength(2);
    for (const r of web) expect(r.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(storageAuth()).toEqual([]);
  });

  it("a redirect to another host is not followed, and that host is never asked", async () => {
    const url = att.addImage(png(), { hiddenFromBodyHtml: true, redirectTo: att.evilUrl("/collect?from=github") });
    const file = att.addFile("x.pdf", Buffer.from("%PDF-1.4\n"), { redirectTo: att.evilUrl("/file") });
    const { got, warnings } = await fetchAll(`![a](${url}) [b](${file})`);
    expect(got).toEqual([]);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`redirects to ${new URL(att.evil.url).host}, which is not one of GitHub's attachment hosts`);
    expect(att.evil.requests).toEqual([]);
  });

  it("links to any other host stay text: never requested, not even with a GitHub-looking path", async () => {
    const text = [
      `![x](${att.evilUrl("/user-attachments/assets/00000000-0000-0000-0000-000000000000")})`,
      `<img src="${att.evilUrl("/a.png")}">`,
      "![y](http://private-user-images.githubusercontent.com/1/2-00000000-0000-0000-0000-000000000000.png?jwt=x)",
      "![z](https://private-user-images.githubusercontent.com:8443/1/2-00000000-0000-0000-0000-000000000000.png)",
      `![u](${gh.url.replace("http://", `http://user:${TOKEN}@`)}/user-attachments/assets/00000000-0000-0000-0000-000000000000)`,
      `[page](${gh.url}/octo/repo/issues/1)`,
    ].join("\n");
    gh.clearRequests();
    const { got, warnings } = await fetchAll(text);
    expect(got).toEqual([]);
    expect(warnings).toEqual([]);
    expect(att.evil.requests).toEqual([]);
    expect(gh.requests).toEqual([]);
  });

  it("a file over 20 MB is cut off (declared or streamed) and not written", async () => {
    const big = Buffer.alloc(20 * 1024 * 1024 + 1, 0x41);
    const declared = att.addImage(big);
    const streamed = att.addImage(big, { chunked: true });
    const { got, warnings } = await fetchAll(`![a](${declared}) ![b](${streamed})`);
    expect(got).toEqual([]);
    expect(warnings).toHaveLength(2);
    for (const w of warnings) expect(w).toContain("larger than the limit of 20 MiB per file");
  });

  it("at most 10 downloads; the rest named in one warning", async () => {
    const urls = Array.from({ length: 12 }, (_, i) => att.addImage(png(4, 4, 40 + i)));
    const { got, warnings } = await fetchAll(urls.map((u) => `![](${u})`).join("\n"));
    expect(got).toHaveLength(10);
    expect(warnings).toEqual(["warning: comment-attachments: 2 more link(s) to attachments were not downloaded: the limit is 10 files."]);
  });

  it("routes: the token only for the GitHub host's attachment paths; storage hosts only over https on the default port", () => {
    const o = { serverUrl: "https://github.com" };
    expect(attachmentRoute(new URL("https://github.com/user-attachments/assets/0b5c1d3e-1111-2222-3333-444455556666"), o)).toBe("token");
    expect(attachmentRoute(new URL("https://github.com/user-attachments/files/123/report.pdf"), o)).toBe("token");
    expect(attachmentRoute(new URL("https://github.com/octo/repo/issues/1"), o)).toBeUndefined();
    expect(attachmentRoute(new URL("https://github.com.evil.example/user-attachments/assets/0b5c1d3e-1111-2222-3333-444455556666"), o)).toBeUndefined();
    expect(attachmentRoute(new URL("https://user-images.githubusercontent.com/1/a.png"), o)).toBe("anonymous");
    expect(attachmentRoute(new URL("https://objects.githubusercontent.com/x"), o)).toBe("anonymous");
    expect(attachmentRoute(new URL("https://raw.githubusercontent.com/o/r/main/a.png"), o)).toBeUndefined();
    expect(attachmentRoute(new URL("https://camo.githubusercontent.com/abc"), o)).toBeUndefined();
  });

  it("finds links in Markdown images, links, definitions and raw HTML, not in code", () => {
    const text = "![a](https://x/1) [b](https://x/2)\n\n[c]: https://x/3\n\n<img src=\"https://x/4\"> <a href=\"https://x/5\">e</a>\n\n`![no](https://x/6)`\n\n```\n![no](https://x/7)\n```\n";
    expect(linkedUrls(text)).toEqual(["https://x/1", "https://x/2", "https://x/3", "https://x/4", "https://x/5"]);
  });

  it("the test hook maps only GitHub's storage hosts, and only to loopback", () => {
    expect(() => attachmentHostOverrides(STORAGE_HOSTS, { AGENT_RUNNER_TEST_ATTACHMENT_HOSTS: "github.com=http://127.0.0.1:1" })).toThrow(/loopback/);
    expect(() => attachmentHostOverrides(STORAGE_HOSTS, { AGENT_RUNNER_TEST_ATTACHMENT_HOSTS: "objects.githubusercontent.com=https://evil.example" })).toThrow(/loopback/);
    expect(attachmentHostOverrides(STORAGE_HOSTS, {})).toEqual({});
  });
});
