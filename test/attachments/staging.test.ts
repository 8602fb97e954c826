/**
 * Staging attachments (src/config/attachments.ts): type by content, the
 * limits, our own file names, redaction of text, and how the input parses.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { attachmentPatterns, sniffAttachment, stageAttachments, type AttachmentCandidate } from "../../src/config/attachments.js";
import { parseSettings } from "../../src/config/parse.js";
import { Redactor } from "../../src/shared/redact.js";
import { recordingLogger } from "../sandbox/helpers.js";
import { PDF, png } from "./helpers.js";

function setup(files: Record<string, Buffer | string>) {
  const root = mkdtempSync(path.join(os.tmpdir(), "stage-"));
  const ws = path.join(root, "ws");
  for (const [name, data] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(ws, name)), { recursive: true });
    writeFileSync(path.join(ws, name), data);
  }
  mkdirSync(ws, { recursive: true });
  return { root, ws, dir: path.join(root, "sandbox-attachments"), artifactDir: path.join(root, "results/attachments") };
}

async function stage(files: Record<string, Buffer | string>, patterns: string[], fetched: AttachmentCandidate[] = [], secrets: string[] = []) {
  const s = setup(files);
  const log = recordingLogger();
  const staged = await stageAttachments({ workspace: s.ws, patterns, fetched, dir: s.dir, artifactDir: s.artifactDir, log, redactor: new Redactor(secrets) });
  return { ...s, staged, log, warnings: log.lines.filter((l) => l.startsWith("warning:")) };
}

describe("attachment types by content", () => {
  it("PNG, JPEG, GIF, WebP, PDF and UTF-8 text; nothing else, whatever the name", () => {
    expect(sniffAttachment(png())?.mediaType).toBe("image/png");
    expect(sniffAttachment(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]))?.mediaType).toBe("image/jpeg");
    expect(sniffAttachment(Buffer.from("GIF89a\x01\x00", "latin1"))?.mediaType).toBe("image/gif");
    expect(sniffAttachment(Buffer.from("RIFF\x10\x00\x00\x00WEBPVP8 ", "latin1"))?.mediaType).toBe("image/webp");
    expect(sniffAttachment(PDF)?.mediaType).toBe("application/pdf");
    expect(sniffAttachment(Buffer.from("héllo\nwörld\t\r\n"))?.kind).toBe("text");
    expect(sniffAttachment(Buffer.from("PK\x03\x04\x00\x00", "latin1"))).toBeUndefined();
    expect(sniffAttachment(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]))).toBeUndefined();
    expect(sniffAttachment(Buffer.from([0xc3, 0x28]))).toBeUndefined();
    expect(sniffAttachment(Buffer.alloc(0))).toBeUndefined();
  });
});

describe("staging", () => {
  it("copies into the read-only folder and the artifact under our own names, and describes them", async () => {
    const shot = png(5, 5, 1);
    const { staged, dir, artifactDir, warnings } = await stage(
      { "docs/screen shot `x`.png": shot, "docs/spec.pdf": PDF, "notes.md": "# notes\n" },
      ["docs/*.png", "docs/spec.pdf", "notes.md"],
    );
    expect(warnings).toEqual([]);
    expect(staged!.files.map((f) => f.name)).toEqual(["01-screen-shot-x.png", "02-spec.pdf", "03-notes.txt"]);
    expect(readdirSync(artifactDir).sort()).toEqual(readdirSync(dir).sort());
    expect(readFileSync(path.join(dir, "01-screen-shot-x.png")).equals(shot)).toBe(true);
    expect(statSync(path.join(dir, "01-screen-shot-x.png")).mode & 0o777).toBe(0o444);
    expect(staged!.env).toEqual({ AGENT_ATTACHMENTS_DIR: dir, AGENT_ATTACHMENTS: staged!.files.map((f) => f.path).join("\n") });
    expect(staged!.promptText).toContain(`# Attachments\nFiles attached to this task, in the read-only folder ${dir} (also $AGENT_ATTACHMENTS_DIR).`);
    expect(staged!.promptText).toContain("01-screen-shot-x.png (image, image/png, ");
    expect(staged!.promptText).not.toContain("`x`");
    expect(staged!.promptText).not.toContain("untrusted");
    expect(staged!.transcript[0]!.dataUri).toBe(`data:image/png;base64,${shot.toString("base64")}`);
    expect(staged!.transcript[1]!.dataUri).toBeUndefined();
  });

  it("over 20 MB and of the wrong type: skipped with a warning naming the file and the limit; the rest staged", async () => {
    const { staged, warnings } = await stage(
      { "big.png": Buffer.concat([png(), Buffer.alloc(20 * 1024 * 1024)]), "tool.bin": Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0]), "ok.png": png() },
      ["big.png", "tool.bin", "ok.png"],
    );
    expect(staged!.files.map((f) => f.name)).toEqual(["01-ok.png"]);
    expect(warnings).toEqual([
      `warning: Attachment 'big.png' is ${(20 * 1024 * 1024 + png().length).toLocaleString("en-US")} bytes, over the limit of 20 MiB per file; skipped.`,
      "warning: Attachment 'tool.bin' is not an image (PNG, JPEG, GIF, WebP), a PDF or UTF-8 text (checked by its content); skipped.",
    ]);
  });

  it("at most 10 files from all sources together; the input's first, then the thread's", async () => {
    const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`s/${i}.png`, png(3, 3, i)]));
    const extra = mkdtempSync(path.join(os.tmpdir(), "fetched-"));
    const fetched = Array.from({ length: 4 }, (_, i) => {
      const hostPath = path.join(extra, `${i}.download`);
      writeFileSync(hostPath, png(3, 3, 100 + i));
      return { hostPath, label: `https://github.com/user-attachments/assets/${i}`, source: "the comment by @alice", untrusted: true };
    });
    const { staged, warnings } = await stage(files, ["s/*.png"], fetched);
    expect(staged!.files).toHaveLength(10);
    expect(warnings).toEqual(["warning: Attachments over the limit of 10 files were skipped: 'https://github.com/user-attachments/assets/2', 'https://github.com/user-attachments/assets/3'."]);
    expect(staged!.promptText).toContain("untrusted data");
  });

  it("a secret in an attached text file is redacted in the agent's copy and the artifact's", async () => {
    const { staged, dir, artifactDir } = await stage({ "build.log": "token=sk-live-secret-value-123 ok\n" }, ["build.log"], [], ["sk-live-secret-value-123"]);
    for (const d of [dir, artifactDir]) expect(readFileSync(path.join(d, staged!.files[0]!.name), "utf8")).not.toContain("sk-live-secret-value-123");
  });

  it("nothing given: nothing staged, no folder", async () => {
    const { staged, dir } = await stage({}, []);
    expect(staged).toBeUndefined();
    expect(() => statSync(dir)).toThrow();
  });
});

describe("the inputs", () => {
  it("attachments: one per line (commas stay, globs use them); comment-attachments defaults to true", () => {
    expect(attachmentPatterns("docs/{a,b}.png\n\n  shots/*.png  \n# a comment")).toEqual(["docs/{a,b}.png", "shots/*.png"]);
    expect(attachmentPatterns(["a.png", "b.png"])).toEqual(["a.png", "b.png"]);
    const cwd = mkdtempSync(path.join(os.tmpdir(), "parse-"));
    const s = parseSettings({ agent: "command", "agent-command": "true", prompt: "x", attachments: "a.png\nb.png" }, { cwd });
    expect(s.run.attachments).toEqual(["a.png", "b.png"]);
    expect(s.github.commentAttachments).toBe(true);
    expect(parseSettings({ agent: "command", "agent-command": "true", prompt: "x", "comment-attachments": "false" }, { cwd }).github.commentAttachments).toBe(false);
  });
});
