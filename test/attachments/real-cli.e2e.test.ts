/**
 * Issue #13 acceptance with the four real, pinned CLIs against the stub
 * model, each run once through dist/main.js on an issue comment, in bwrap:
 * `attachments: docs/screen.png` and an image pasted into the comment (served
 * by the fake GitHub as GitHub serves `body_html` and the asset) both reach
 * the model request as image bytes, in the CLI's own wire shape (Anthropic
 * image block, Responses `input_image`, Gemini `inlineData`, Chat
 * `image_url`); an image linked from a foreign host is never fetched.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_PATH } from "../agents/helpers.js";
import { makeRepo } from "../artifacts/helpers.js";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import { startFakeAttachmentHosts, type FakeAttachmentHosts } from "../support/fake-github-attachments.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { runStep } from "../support/harness.js";
import { attachedMediaOf, startStubModel, type StubModel } from "../support/stub-model.js";
import { png } from "./helpers.js";

const TOKEN = "ghs_attachmentsCliToken0123456789abcdefAB";
const KEY = "sk-test-attachments-key-0123456789abcdef";
let att: FakeAttachmentHosts;
let gh: FakeGitHub;
let stub: StubModel;

beforeAll(async () => {
  att = await startFakeAttachmentHosts();
  gh = await startFakeGitHub({ token: TOKEN, repo: { fullName: FIXTURE_REPO, collaborators: { alice: "write" } }, webRoutes: att.webRoutes, renderBodyHtml: att.renderBodyHtml });
  att.bind(gh.url);
  stub = await startStubModel([]);
});
afterAll(async () => {
  await stub?.close();
  await gh?.close();
  await att?.close();
});

type Cli = "claude" | "codex" | "gemini" | "opencode";
const CLIS: { cli: Cli; inputs: () => Record<string, string>; shape: ReturnType<typeof attachedMediaOf>[number]["shape"] }[] = [
  { cli: "claude", inputs: () => ({ model: "claude-sonnet-4-5", "base-url": stub.url, secrets: `ANTHROPIC_API_KEY=${KEY}` }), shape: "anthropic-block" },
  { cli: "codex", inputs: () => ({ model: "gpt-5.5", "base-url": `${stub.url}/v1`, secrets: `OPENAI_API_KEY=${KEY}` }), shape: "data-uri" },
  { cli: "gemini", inputs: () => ({ model: "gemini-2.5-pro", "base-url": stub.url, secrets: `GEMINI_API_KEY=${KEY}` }), shape: "gemini-inline-data" },
  { cli: "opencode", inputs: () => ({ model: "stub-model", "base-url": `${stub.url}/v1`, secrets: `OPENAI_API_KEY=${KEY}` }), shape: "data-uri" },
];

describe.each(CLIS)("attachments with the real $cli CLI", ({ cli, inputs, shape }) => {
  it(
    "the input's PNG and the comment's pasted PNG are in the model request; the foreign image is not fetched",
    async () => {
      const seed = CLIS.findIndex((c) => c.cli === cli) * 10;
      const fromInput = png(12, 9, seed + 1);
      const pasted = png(9, 12, seed + 2);
      const pastedUrl = att.addImage(pasted);
      const ws = makeRepo({ "README.md": "# demo\n" });
      mkdirSync(path.join(ws, "docs"), { recursive: true });
      writeFileSync(path.join(ws, "docs/screen.png"), fromInput);
      const number = 50 + seed;
      const ev = buildEvent("issue_comment.issue", {
        body: `@agent the button overlaps, see ![shot](${pastedUrl}) and ![ad](${att.evilUrl("/ad.png")})`,
        author: "alice",
        number,
        mutate: (p) => (p["comment"]["id"] = 8000 + seed),
      });
      gh.seedEvent(ev);
      const { env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "event-")), ev);
      stub.setScript([{ text: "I see the overlap." }]);
      const before = stub.requests.length;

      const main = await runStep("main", {
        workspace: ws,
        githubToken: TOKEN,
        inputs: { agent: cli, ...inputs(), "agent-version": "preinstalled", sandbox: "bwrap", deliver: "none", comment: "none", "upload-artifacts": "false", attachments: "docs/screen.png" },
        env: { ...eventEnv, GITHUB_API_URL: gh.url, GITHUB_SERVER_URL: gh.url, ...att.env(), PATH: AGENT_PATH },
        timeoutMs: 180_000,
      });
      expect(main.outputs.conclusion, main.log).toBe("success");

      const media = stub.requests.slice(before).filter((r) => r.kind === "model").flatMap(attachedMediaOf);
      for (const image of [fromInput, pasted]) {
        expect(media, `${cli}: ${image.length}-byte PNG`).toContainEqual({ shape, mediaType: "image/png", data: image.toString("base64") });
      }
      expect(att.evil.requests).toEqual([]);
    },
    240_000,
  );
});
