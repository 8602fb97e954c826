/**
 * Issue #6 with a real agent CLI (Claude Code, pinned) against the stub model,
 * through dist/main.js on an issue comment, the artifact client talking to the
 * fake results service and the fake GitHub REST API:
 *  - the run artifact's transcript.html opens in headless Chromium and shows
 *    every tool call;
 *  - two consecutive workflow runs on the same issue with `session: continue`:
 *    the second restores `agent-session-<n>` and resumes (the model sees the
 *    first run's turns).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AgentBackendName } from "../../src/config/schema.js";
import { sessionIdKey } from "../../src/session/thread.js";
import { AGENT_PATH } from "../agents/helpers.js";
import { buildEvent, FIXTURE_REPO, writeEvent } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";
import { REPO_ROOT, runStep, type StepResult } from "../support/harness.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";
import { errors, git, makeRepo } from "./helpers.js";

const OUT_DIR = path.join(REPO_ROOT, "test-output/artifacts");
const TOKEN = "ghs_artifactsTestToken0123456789abcdefAB";
const KEY = "sk-ant-test-key-artifacts-0123456789";
const ISSUE = 7;
/** The Chromium on PATH, found by the preflight (test/preflight.ts). */
const CHROMIUM = inject("chromium");
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

let results: FakeActionsResults;
let gh: FakeGitHub;
let stub: StubModel;
/** One workspace for both runs: on GitHub the checkout path of a repository is the same in every run. */
let ws: string;
let first: StepResult | undefined;

beforeAll(async () => {
  results = await startFakeActionsResults({ repository: FIXTURE_REPO });
  gh = await startFakeGitHub({ token: TOKEN, results, repo: { fullName: FIXTURE_REPO, collaborators: { alice: "write" } } });
  stub = await startStubModel([]);
  ws = makeRepo({ "README.md": "# demo\n" });
  mkdirSync(OUT_DIR, { recursive: true });
});
afterAll(async () => {
  await stub?.close();
  await gh?.close();
  await results?.close();
});

const claudeInputs = () => ({ agent: "claude", model: "claude-sonnet-4-5", "base-url": stub.url, secrets: `ANTHROPIC_API_KEY=${KEY}` });

/** One workflow run triggered by `@agent <request>` on an issue, by alice. */
async function commentRun(
  runId: number,
  request: string,
  commentId: number,
  agentInputs: Record<string, string> = claudeInputs(),
  issue = ISSUE,
): Promise<StepResult> {
  const ev = buildEvent("issue_comment.issue", {
    body: `@agent ${request}`,
    author: "alice",
    number: issue,
    mutate: (p) => {
      p["comment"]["id"] = commentId;
    },
  });
  gh.seedEvent(ev);
  const { env: eventEnv } = await writeEvent(mkdtempSync(path.join(os.tmpdir(), "event-")), ev);
  git(ws, "reset", "-q", "--hard");
  git(ws, "clean", "-qfdx");
  return runStep("main", {
    workspace: ws,
    githubToken: TOKEN,
    inputs: {
      ...agentInputs,
      "agent-version": "preinstalled",
      sandbox: "none",
      session: "continue",
      deliver: "none",
      comment: "none",
    },
    env: {
      ...eventEnv,
      ...results.runtimeEnv({ runId, repository: FIXTURE_REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: ws }),
      PATH: AGENT_PATH,
    },
    timeoutMs: 120_000,
  });
}

describe("a real CLI on an issue, run by the action", () => {
  it("first run: starts a new session, uploads the run and the session, and its transcript shows every tool call", async () => {
    stub.setScript([
      { tool: "Write", args: { file_path: path.join(ws, "notes.txt"), content: "the word is PAPAYA\n" } },
      { tool: "Bash", args: { command: "echo checked > check.txt && ls" } },
      { text: "Noted: the word is PAPAYA." },
    ]);
    first = await commentRun(6001, "remember the word PAPAYA", 9001);
    expect(errors(first), first.log).toEqual([]);
    expect(first.outputs.conclusion).toBe("success");
    expect(first.log).toContain(`Session: no saved session 'agent-session-${ISSUE}' found for this thread. Starting a new session.`);
    const sessionId = first.outputs["session-id"]!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const names = results.artifacts({ runId: 6001 }).map((a) => a.name).sort();
    // The thread's last session, and the same state under its id (session: <id> from a later job or run).
    expect(names).toEqual(["agent-run-6001-1", `agent-session-${ISSUE}`, sessionIdKey(sessionId)].sort());
    const sessionFiles = results.artifactFiles(`agent-session-${ISSUE}`);
    expect(sessionFiles).toContain("session.json");
    expect(sessionFiles.some((f) => f.startsWith("home/.claude/projects/") && f.endsWith(`${sessionId}.jsonl`))).toBe(true);
    const manifest = JSON.parse(results.readArtifactFile(`agent-session-${ISSUE}`, "session.json").toString());
    expect(manifest).toMatchObject({ version: 1, backend: "claude", sessionId, workspace: ws });
    // Redacted like everything else: the key the gateway held never appears.
    for (const f of [...sessionFiles.map((n) => results.readArtifactFile(`agent-session-${ISSUE}`, n)), ...results.artifactFiles("agent-run-6001-1").map((n) => results.readArtifactFile("agent-run-6001-1", n))])
      expect(f.includes(Buffer.from(KEY))).toBe(false);
    expect(first.summary).toContain(`agent-session-${ISSUE}`);

    // The transcript, as a person downloads it from the artifact.
    const html = path.join(OUT_DIR, "transcript-claude.html");
    writeFileSync(html, results.readArtifactFile("agent-run-6001-1", "transcript.html"));
    await checkTranscriptInChromium(html, ["Write", "Bash"]);
  });

  it("second run with session: continue resumes the first run's session: the model sees the earlier turns", async () => {
    expect(first?.outputs["session-id"]).toBeDefined();
    const sessionId = first!.outputs["session-id"]!;
    stub.setScript([{ text: "The word was PAPAYA." }]);
    const before = stub.modelRequests().length;
    const second = await commentRun(6002, "what was the word?", 9002);
    expect(errors(second), second.log).toEqual([]);
    expect(second.outputs.conclusion).toBe("success");
    expect(second.log).toMatch(new RegExp(`Session: resuming ${sessionId} from artifact 'agent-session-${ISSUE}' \\(id \\d+, workflow run 6001`));
    expect(second.log).toMatch(/Session: restored \d+ files? into the agent's HOME\./);
    expect(second.outputs["session-id"]).toBe(sessionId);

    const requests = stub.modelRequests().slice(before);
    expect(requests.length).toBeGreaterThan(0);
    const history = JSON.stringify(requests.at(-1)!.body);
    expect(history).toContain("remember the word PAPAYA");
    expect(history).toContain("Noted: the word is PAPAYA.");
    expect(history).toContain("what was the word?");
    // The newest session state was saved again, in this run.
    expect(results.artifacts({ runId: 6002 }).map((a) => a.name).sort()).toEqual(["agent-run-6002-1", `agent-session-${ISSUE}`, sessionIdKey(sessionId)].sort());
  });
});

describe("structured output in the artifact", () => {
  it("a run with output-schema uploads structured-output.json with the rest", async () => {
    stub.setScript([{ tool: "StructuredOutput", args: { answer: "42" } }, { text: "ok" }]);
    const other = makeRepo({ "README.md": "# other\n" });
    const main = await runStep("main", {
      workspace: other,
      githubToken: TOKEN,
      inputs: {
        ...claudeInputs(),
        "agent-version": "preinstalled",
        sandbox: "none",
        prompt: "answer",
        "output-schema": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }),
      },
      env: { ...results.runtimeEnv({ runId: 6100, repository: FIXTURE_REPO, github: { url: gh.url, serverUrl: gh.serverUrl }, workspace: other }), PATH: AGENT_PATH },
      timeoutMs: 120_000,
    });
    expect(errors(main), main.log).toEqual([]);
    expect(JSON.parse(main.outputs["structured-output"]!)).toEqual({ answer: "42" });
    const files = results.artifactFiles("agent-run-6100-1");
    expect(files).toContain("structured-output.json");
    expect(JSON.parse(results.readArtifactFile("agent-run-6100-1", "structured-output.json").toString())).toEqual({ answer: "42" });
    // Not on an issue or PR, no workflow: the session is kept under its id only.
    expect(results.artifacts({ runId: 6100 }).map((a) => a.name).sort()).toEqual(["agent-run-6100-1", sessionIdKey(main.outputs["session-id"]!)].sort());
  });
});

/**
 * The other backends carry their sessions the same way; each is proven here
 * once it is registered (a backend still being built is skipped).
 */
const OTHER_BACKENDS: Array<{ name: AgentBackendName; issue: number; inputs: () => Record<string, string> }> = [
  { name: "codex", issue: 31, inputs: () => ({ agent: "codex", model: "gpt-5.5", "base-url": `${stub.url}/v1`, secrets: "OPENAI_API_KEY=sk-openai-test-key-artifacts-0123" }) },
  { name: "gemini", issue: 32, inputs: () => ({ agent: "gemini", model: "gemini-2.5-flash", "base-url": stub.url, secrets: "GEMINI_API_KEY=gemini-test-key-artifacts-0123" }) },
  { name: "opencode", issue: 33, inputs: () => ({ agent: "opencode", model: "gpt-5.5", "base-url": `${stub.url}/v1`, secrets: "OPENAI_API_KEY=sk-openai-test-key-artifacts-0123" }) },
];

describe("session carrying for the other backends", () => {
  for (const b of OTHER_BACKENDS) {
    it(`${b.name}: a second run on the same issue resumes the first run's session`, async () => {
      stub.setScript([{ text: `Noted: the fruit is MANGO-${b.name}.` }]);
      const one = await commentRun(7000 + b.issue, `remember the fruit MANGO-${b.name}`, 9100 + b.issue, b.inputs(), b.issue);
      expect(errors(one), one.log).toEqual([]);
      expect(one.outputs.conclusion).toBe("success");
      const id = one.outputs["session-id"]!;
      expect(id).toBeTruthy();
      expect(results.artifactFiles(`agent-session-${b.issue}`)).toContain("session.json");

      stub.setScript([{ text: "It was MANGO." }]);
      const before = stub.modelRequests().length;
      const two = await commentRun(7100 + b.issue, "which fruit?", 9200 + b.issue, b.inputs(), b.issue);
      expect(errors(two), two.log).toEqual([]);
      expect(two.outputs.conclusion).toBe("success");
      expect(two.log).toContain(`Session: resuming ${id} from artifact 'agent-session-${b.issue}'`);
      const history = JSON.stringify(stub.modelRequests().slice(before).at(-1)!.body);
      expect(history).toContain(`remember the fruit MANGO-${b.name}`);
      expect(history).toContain(`Noted: the fruit is MANGO-${b.name}.`);
      expect(history).toContain("which fruit?");
    });
  }
});

async function checkTranscriptInChromium(file: string, expectedTools: string[]): Promise<void> {
  const pw = await import("playwright-core");
  const profile = mkdtempSync(path.join(os.tmpdir(), "chromium-profile-"));
  const context = await pw.chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1100, height: 900 } });
  try {
    const url = pathToFileURL(file).href;
    const requests: string[] = [];
    const problems: string[] = [];
    context.on("request", (r) => requests.push(r.url()));
    await context.route("**/*", (route) => (route.request().url() === url ? route.continue() : route.abort()));
    const page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`console.${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(url, { waitUntil: "load" });

    expect(await page.locator(".run-header .conclusion").textContent()).toBe("success");
    expect(await page.locator('[data-field="agent"] dd').textContent()).toContain("claude");
    const calls = page.locator("details.tool-call");
    expect(await calls.evaluateAll((els) => els.map((e) => e.getAttribute("data-tool-name")))).toEqual(expectedTools);
    expect(await page.locator("details.tool-call .tool-name").allTextContents()).toEqual(expectedTools);
    // Each call opens to its input and output.
    for (let i = 0; i < expectedTools.length; i++) {
      await calls.nth(i).locator("summary").click();
      expect(await calls.nth(i).getAttribute("open")).not.toBeNull();
      expect((await calls.nth(i).locator(".tool-input").textContent())?.length).toBeGreaterThan(0);
    }
    expect(await page.locator('details.tool-call[data-tool-name="Bash"] .tool-input').textContent()).toContain("echo checked");
    expect(await page.locator(".result .text").textContent()).toContain("PAPAYA");
    await page.screenshot({ path: path.join(OUT_DIR, "transcript-claude.png"), fullPage: true });
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
