/**
 * How each backend hands attachments to its CLI (argv and stdin), without
 * running it; the real CLIs are run in real-cli.e2e.test.ts.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentBackend } from "../../src/agents/registry.js";
import type { AgentContext, Attachments, InstalledAgent } from "../../src/agents/types.js";
import type { AgentBackendName } from "../../src/config/schema.js";
import { testContext } from "../agents/helpers.js";
import { PDF, png } from "./helpers.js";

function withAttachments(backend: AgentBackendName): { ctx: AgentContext; attachments: Attachments } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "att-dir-"));
  const files = [
    { name: "01-shot.png", data: png(), kind: "image" as const, mediaType: "image/png" },
    { name: "02-spec.pdf", data: PDF, kind: "pdf" as const, mediaType: "application/pdf" },
    { name: "03-log.txt", data: Buffer.from("log\n"), kind: "text" as const, mediaType: "text/plain" },
  ].map((f) => {
    writeFileSync(path.join(dir, f.name), f.data);
    return { path: path.join(dir, f.name), name: f.name, kind: f.kind, mediaType: f.mediaType, bytes: f.data.length };
  });
  const attachments = { dir, files };
  const base = testContext({ agent: { backend, name: backend }, run: { prompt: "look at the screenshot" } });
  return { ctx: { ...base, attachments }, attachments };
}

const installed: InstalledAgent = { binPath: "/bin/agent", version: "1", readOnlyPaths: [] };

describe("attachments on each CLI's command line", () => {
  it("claude: a stream-json user message with an image block and a document block; text files are not blocks", () => {
    const { ctx, attachments } = withAttachments("claude");
    const inv = agentBackend("claude").command(ctx, installed);
    expect(inv.args.slice(-2)).toEqual(["--input-format", "stream-json"]);
    const msg = JSON.parse(inv.stdin!.trim());
    expect(msg.type).toBe("user");
    expect(msg.message.content).toEqual([
      { type: "text", text: "look at the screenshot" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: readFileSync(attachments.files[0]!.path).toString("base64") } },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF.toString("base64") } },
    ]);
  });

  it("claude without images or PDFs keeps the plain prompt on stdin", () => {
    const ctx = testContext({ run: { prompt: "plain" } });
    const inv = agentBackend("claude").command(ctx, installed);
    expect(inv.stdin).toBe("plain");
    expect(inv.args).not.toContain("--input-format");
  });

  it("codex: --image=FILE for images only, before the prompt separator", () => {
    const { ctx, attachments } = withAttachments("codex");
    const args = agentBackend("codex").command(ctx, installed).args;
    expect(args.filter((a) => a.startsWith("--image"))).toEqual([`--image=${attachments.files[0]!.path}`]);
    expect(args.indexOf(`--image=${attachments.files[0]!.path}`)).toBeLessThan(args.indexOf("--"));
  });

  it("opencode: --file=FILE for images and PDFs, and the model declared to take them", async () => {
    const { ctx, attachments } = withAttachments("opencode");
    const args = agentBackend("opencode").command(ctx, installed).args;
    expect(args.filter((a) => a.startsWith("--file"))).toEqual([`--file=${attachments.files[0]!.path}`, `--file=${attachments.files[1]!.path}`]);
    const { env } = await agentBackend("opencode").materialise(ctx);
    const config = JSON.parse(env.OPENCODE_CONFIG_CONTENT!);
    const model = Object.values(config.provider["agent-runner"].models)[0] as Record<string, unknown>;
    expect(model).toMatchObject({ attachment: true, modalities: { input: ["text", "image", "pdf"], output: ["text"] } });
  });

  it("gemini: @path references after the prompt, the folder an include directory", async () => {
    const { ctx, attachments } = withAttachments("gemini");
    const inv = agentBackend("gemini").command(ctx, installed);
    expect(inv.stdin).toBe(`look at the screenshot\n\nAttached: @${attachments.files[0]!.path} @${attachments.files[1]!.path}\n`);
    await agentBackend("gemini").materialise(ctx);
    const settings = JSON.parse(readFileSync(path.join(ctx.layout.home, ".gemini/settings.json"), "utf8"));
    expect(settings.context.includeDirectories).toContain(attachments.dir);
  });
});
