/**
 * dist/safe-outputs-mcp.js as an agent's CLI meets it: spawned over stdio and
 * driven by the MCP SDK's own client. The kind schemas are zod/mini (issue #22);
 * the tools' JSON Schemas must still carry every limit and description the
 * model reads, and a refusal must still name the field with zod's English text.
 * Needs `node scripts/build.mjs` first (every dist test does).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { ACTION_ROOT } from "../support/harness.js";

const SERVER = path.join(ACTION_ROOT, "dist/safe-outputs-mcp.js");

let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

async function connect(config: unknown): Promise<{ client: Client; file: string }> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "ar-mcp-")), "safe-outputs.jsonl");
  const transport = new StdioClientTransport({ command: process.execPath, args: [SERVER, "--file", file, "--config", JSON.stringify(config)], stderr: "pipe" });
  client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(transport);
  return { client, file };
}

function text(result: Awaited<ReturnType<Client["callTool"]>>): string {
  const content = result.content as { type: string; text: string }[];
  return content.map((c) => c.text).join("");
}

describe("the safe-outputs MCP server", () => {
  it("lists each enabled kind with its limits and descriptions in the tool's JSON Schema", async () => {
    const { client } = await connect({
      "add-comment": { max: 1, target: "*" },
      "create-pull-request-review": { max: 1, "max-comments": 3 },
      "update-issue": { max: 1, fields: ["title", "state"] },
    });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["add_comment", "update_issue", "create_pull_request_review"]);
    const [comment, update, review] = tools as [(typeof tools)[number], (typeof tools)[number], (typeof tools)[number]];

    expect(comment.inputSchema).toEqual({
      type: "object",
      properties: {
        body: { type: "string", minLength: 1, maxLength: 65536, description: "The comment, in GitHub Markdown." },
        issue_number: {
          type: "integer",
          minimum: 1,
          maximum: Number.MAX_SAFE_INTEGER,
          description: "Issue or pull request number; default: the one that triggered this run.",
        },
      },
      required: ["body"],
      additionalProperties: false,
    });

    // `fields` picks the arguments: no body here.
    expect(Object.keys(update.inputSchema.properties ?? {})).toEqual(["title", "state"]);
    expect(update.inputSchema.properties?.state).toEqual({ type: "string", enum: ["open", "closed"], description: "open or closed." });

    const props = review.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.event).toEqual({ type: "string", enum: ["COMMENT", "REQUEST_CHANGES"], description: "COMMENT or REQUEST_CHANGES." });
    expect(props.comments).toMatchObject({ type: "array", maxItems: 3, default: [], description: "Inline comments." });
    const item = (props.comments as { items: { properties: Record<string, { description?: string }>; additionalProperties: boolean; required: string[] } }).items;
    expect(item.additionalProperties).toBe(false);
    expect(item.required).toEqual(["path", "line", "body"]);
    expect(Object.fromEntries(Object.entries(item.properties).map(([k, v]) => [k, v.description]))).toEqual({
      path: "File path as the diff names it.",
      line: "Line the comment is on (last line of a range).",
      side: "RIGHT (default): the new version; LEFT: the old one.",
      start_line: "First line of a multi-line comment.",
      body: "The comment, in GitHub Markdown.",
      severity: "critical, major, minor or nit: when comments are capped, the most severe are kept.",
    });
  });

  it("refuses bad arguments with the field and zod's English message, and records only a call that passes", async () => {
    const { client, file } = await connect({ "add-comment": { max: 1 } });
    const empty = await client.callTool({ name: "add_comment", arguments: { body: "   " } });
    expect(empty.isError).toBe(true);
    expect(text(empty)).toContain("Refused: body: must not be empty.");
    const wrongType = await client.callTool({ name: "add_comment", arguments: { body: 3 } });
    expect(text(wrongType)).toContain("Refused: body: Invalid input: expected string, received number.");
    const extra = await client.callTool({ name: "add_comment", arguments: { body: "hi", issue_number: 4 } });
    expect(text(extra)).toContain("Refused: arguments: unknown field(s) 'issue_number'.");
    expect(() => readFileSync(file, "utf8")).toThrow();

    const ok = await client.callTool({ name: "add_comment", arguments: { body: "Looks good." } });
    expect(ok.isError).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe(JSON.stringify({ type: "add_comment", body: "Looks good." }) + "\n");
  });
});
