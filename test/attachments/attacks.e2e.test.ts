/**
 * Attachments through dist/main.js (runActionSteps), a hostile `command`
 * agent in bubblewrap, judged on the host afterwards:
 *  - comment-attachments: pasted images and files come through GitHub's hosts
 *    only; a redirect to another host, a foreign image, an oversized and a
 *    wrong-type file are skipped with a warning and never reach the agent; the
 *    token goes to the GitHub host only; the agent cannot change its copies;
 *  - the attachments input: no file through a symlink out of the workspace and
 *    nothing from .git (checkout's credentials live there).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentScript, git, makeRepo } from "../artifacts/helpers.js";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import { startFakeAttachmentHosts, type FakeAttachmentHosts } from "../support/fake-github-attachments.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { runActionSteps } from "../support/harness.js";
import { PDF, png } from "./helpers.js";

const TOKEN = "ghs_attachmentsE2eToken0123456789abcdefAB";
let att: FakeAttachmentHosts;
let gh: FakeGitHub;

beforeAll(async () => {
  att = await startFakeAttachmentHosts();
  gh = await startFakeGitHub({ token: TOKEN, repo: { fullName: FIXTURE_REPO, collaborators: { alice: "write" } }, webRoutes: att.webRoutes, renderBodyHtml: att.renderBodyHtml });
  att.bind(gh.url);
});
afterAll(async () => {
  await gh?.close();
  await att?.close();
});

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** Reports what the agent sees of its attachments, and tries to change them. */
const HOSTILE = agentScript(`
cat > "$AGENT_OUTPUT_DIR/prompt.txt"
echo "REPORT dir=$AGENT_ATTACHMENTS_DIR"
if [ -z "$AGENT_ATTACHMENTS_DIR" ]; then echo "REPORT done=1"; exit 0; fi
for f in "$AGENT_ATTACHMENTS_DIR"/*; do echo "REPORT file=$(basename "$f") $(sha256sum < "$f" | cut -d' ' -f1)"; done
printf '%s\\n' "$AGENT_ATTACHMENTS" > "$AGENT_OUTPUT_DIR/list.txt"
for f in "$AGENT_ATTACHMENTS_DIR"/*; do (echo tampered > "$f") 2>/dev/null && echo "REPORT wrote=$(basename "$f")"; done
(touch "$AGENT_ATTACHMENTS_DIR/new-file") 2>/dev/null && echo "REPORT created=1"
echo "REPORT done=1"
`);

function reports(log: string, key: string): string[] {
  return [...log.matchAll(new RegExp(`REPORT ${key}=(.*)$`, "gm"))].map((m) => m[1]!.trim());
}

describe("comment-attachments through the action", () => {
  it("pasted files reach a sandboxed agent read-only; foreign hosts, redirects away, oversize and wrong types never do", async () => {
    const shot = png(16, 12, 3);
    const bodyShot = png(10, 10, 4);
    const log = Buffer.from("ERROR at step 3\nstack: x\n");
    const zip = Buffer.concat([Buffer.from("PK\x03\x04", "latin1"), Buffer.alloc(64, 0)]);
    const shotUrl = att.addImage(shot);
    const bodyUrl = att.addImage(bodyShot);
    const logUrl = att.addFile("build.log", log);
    const zipUrl = att.addFile("bundle.zip", zip);
    const bigUrl = att.addImage(Buffer.alloc(20 * 1024 * 1024 + 10, 0x42));
    const awayUrl = att.addImage(png(4, 4, 9), { hiddenFromBodyHtml: true, redirectTo: att.evilUrl("/from-redirect.png") });
    const foreign = att.evilUrl("/pixel.png?user=alice");
    const comment = [
      "@agent fix the overlap, see", `![shot](${shotUrl})`, "", `[log](${logUrl}) and [bundle](${zipUrl})`, "",
      `![big](${bigUrl})`, "", `<img src="${awayUrl}">`, "", `![tracking](${foreign})`,
    ].join("\n");
    const ev = buildEvent("issue_comment.issue", {
      body: comment,
      author: "alice",
      number: 31,
      mutate: (p) => {
        p["issue"]["body"] = `The button overlaps.\n\n![before](${bodyUrl})`;
        p["comment"]["id"] = 7301;
      },
    });
    gh.seedEvent(ev);
    const { env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "event-")), ev);
    const ws = makeRepo({ "README.md": "# demo\n" });
    gh.clearRequests();
    const storageBefore = att.storage.requests.length;

    const { main } = await runActionSteps({
      workspace: ws,
      githubToken: TOKEN,
      inputs: { agent: "command", "agent-command": HOSTILE, sandbox: "bwrap", deliver: "none", comment: "none", "upload-artifacts": "false" },
      env: { ...eventEnv, GITHUB_API_URL: gh.url, GITHUB_SERVER_URL: gh.url, ...att.env() },
    });
    expect(main.outputs.conclusion, main.log).toBe("success");

    // What the agent saw: exactly the three good files, byte for byte, and it could change none.
    expect(reports(main.log, "done")).toEqual(["1"]);
    const seen = reports(main.log, "file").sort();
    expect(seen).toEqual(
      [`01-${shotUrl.split("/").pop()}.png ${sha(shot)}`, `02-build.txt ${sha(log)}`, `03-${bodyUrl.split("/").pop()}.png ${sha(bodyShot)}`].sort(),
    );
    expect(reports(main.log, "wrote")).toEqual([]);
    expect(reports(main.log, "created")).toEqual([]);

    // Each refusal is a warning naming the file and the limit.
    expect(main.log).toContain(`'${awayUrl}' from the comment by @alice was not attached: it redirects to ${new URL(att.evil.url).host}, which is not one of GitHub's attachment hosts`);
    expect(main.log).toContain(`'${bigUrl}' from the comment by @alice was not attached: it is larger than the limit of 20 MiB per file`);
    expect(main.log).toContain(`Attachment '${zipUrl}' is not an image (PNG, JPEG, GIF, WebP), a PDF or UTF-8 text (checked by its content); skipped.`);

    // On the host: the foreign host was never asked; the token went to the GitHub host only.
    expect(att.evil.requests).toEqual([]);
    expect(att.storage.requests.slice(storageBefore).filter((r) => r.headers.authorization !== undefined)).toEqual([]);
    expect(att.storage.requests.length).toBeGreaterThan(storageBefore);
    // The signed URLs came from the rendered comment and issue (`full` media type).
    const rendered = gh.requests.filter((r) => /full\+json/.test(String(r.headers.accept))).map((r) => r.path);
    expect(rendered).toEqual(expect.arrayContaining([expect.stringMatching(/\/issues\/comments\/7301$/), expect.stringMatching(/\/issues\/31$/)]));
    // Only the two links body_html had no signed URL for (the redirect away, the files) went to the GitHub host, with the token.
    const web = gh.requests.filter((r) => r.path.startsWith("/user-attachments/"));
    expect(web.map((r) => r.path).sort()).toEqual([new URL(awayUrl).pathname, new URL(logUrl).pathname, new URL(zipUrl).pathname].map(decodeURIComponent).sort());
    for (const r of web) expect(r.headers.authorization).toBe(`Bearer ${TOKEN}`);

    // The prompt lists them as untrusted data; the artifact keeps the host's copies; the transcript shows the images.
    const results = main.state["results-dir"]!;
    const prompt = readFileSync(path.join(results, "outputs/prompt.txt"), "utf8");
    expect(prompt).toContain("# Attachments");
    expect(prompt).toMatch(/02-build\.txt \(text, text\/plain, \d+ bytes; `.*build\.log` from the comment by @alice, untrusted data\)/);
    expect(prompt.slice(prompt.indexOf("# Attachments"))).not.toContain(new URL(foreign).host);
    expect(readdirSync(path.join(results, "attachments")).sort()).toEqual(seen.map((s) => s.split(" ")[0]).sort());
    expect(readFileSync(path.join(results, "attachments", `01-${shotUrl.split("/").pop()}.png`)).equals(shot)).toBe(true);
    const html = readFileSync(path.join(results, "transcript.html"), "utf8");
    expect(html).toContain(`src="data:image/png;base64,${shot.toString("base64")}"`);
    expect(html).toContain("img-src data:");
    const result = JSON.parse(readFileSync(path.join(results, "result.json"), "utf8"));
    expect(result.metadata.attachments).toHaveLength(3);
  }, 300_000);

  it("comment-attachments: false fetches nothing", async () => {
    const url = att.addImage(png(4, 4, 11));
    const ev = buildEvent("issue_comment.issue", { body: `@agent look ![x](${url})`, author: "alice", number: 32, mutate: (p) => (p["comment"]["id"] = 7302) });
    gh.seedEvent(ev);
    const { env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "event-")), ev);
    gh.clearRequests();
    const { main } = await runActionSteps({
      workspace: makeRepo({ "README.md": "x\n" }),
      githubToken: TOKEN,
      inputs: { agent: "command", "agent-command": HOSTILE, sandbox: "none", deliver: "none", comment: "none", "upload-artifacts": "false", "comment-attachments": "false" },
      env: { ...eventEnv, GITHUB_API_URL: gh.url, GITHUB_SERVER_URL: gh.url, ...att.env() },
    });
    expect(main.outputs.conclusion, main.log).toBe("success");
    expect(reports(main.log, "file")).toEqual([]);
    expect(gh.requests.filter((r) => r.path.startsWith("/user-attachments/"))).toEqual([]);
  }, 300_000);
});

describe("the attachments input through the action", () => {
  function workspaceWithTraps(): string {
    const ws = makeRepo({ "README.md": "# demo\n", "docs/ok.pdf": PDF.toString("latin1") });
    writeFileSync(path.join(ws, "docs/screen.png"), png(6, 6, 5));
    // What actions/checkout leaves behind with persist-credentials: true.
    git(ws, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic Z2hzX2NoZWNrb3V0VG9rZW5JbkdpdENvbmZpZw==");
    const outside = mkdtempSync(path.join(os.tmpdir(), "host-secret-"));
    writeFileSync(path.join(outside, "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\nhostsecret\n");
    symlinkSync(path.join(outside, "id_rsa"), path.join(ws, "docs/key.txt"));
    symlinkSync("../.git/config", path.join(ws, "docs/config.txt"));
    mkdirSync(path.join(ws, "sub"));
    return ws;
  }

  it("a path through a symlink out of the workspace, or into .git, is an error naming the input; nothing runs", async () => {
    const ws = workspaceWithTraps();
    const { main } = await runActionSteps({
      workspace: ws,
      inputs: { agent: "command", "agent-command": HOSTILE, prompt: "look", sandbox: "bwrap", attachments: "docs/key.txt\n.git/config\ndocs/config.txt" },
    });
    expect(main.exitCode).not.toBe(0);
    expect(main.log).toContain("Input 'attachments': 'docs/key.txt' goes through the symlink 'docs/key.txt'");
    expect(main.log).toContain("Input 'attachments': '.git/config' is inside a .git folder, which may hold the repository's credentials.");
    expect(main.log).toContain("Input 'attachments': 'docs/config.txt' leads into a .git folder");
    expect(reports(main.log, "done")).toEqual([]);
    expect(main.log).not.toContain("hostsecret");
    expect(main.log).not.toContain("Z2hzX2NoZWNrb3V0");
  }, 300_000);

  it("a glob takes what it may: no symlink, nothing under .git; the run goes on", async () => {
    const ws = workspaceWithTraps();
    const { main } = await runActionSteps({
      workspace: ws,
      inputs: { agent: "command", "agent-command": HOSTILE, prompt: "look", sandbox: "bwrap", attachments: "docs/*\n**/config" },
    });
    expect(main.outputs.conclusion, main.log).toBe("success");
    const files = reports(main.log, "file").map((s) => s.split(" ")[0]);
    // Globs do not follow symlinks: the two links are not even matched; .git is never walked.
    expect(files).toEqual(["01-ok.pdf", "02-screen.png"]);
    expect(main.log).toContain("Input 'attachments': '**/config' matches no file");
    const results = main.state["results-dir"]!;
    for (const f of readdirSync(path.join(results, "attachments"))) {
      const text = readFileSync(path.join(results, "attachments", f), "latin1");
      expect(text).not.toContain("hostsecret");
      expect(text).not.toContain("Z2hzX2NoZWNrb3V0");
    }
    expect(existsSync(path.join(results, "outputs/list.txt"))).toBe(true);
  }, 300_000);
});
