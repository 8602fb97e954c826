import { createHash } from "node:crypto";
import { mkdtempSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readInputFiles } from "../../src/config/input-files.js";
import { parseSettings, readConfigFile, type RawInputs } from "../../src/config/parse.js";
import { fingerprintOf } from "../../src/git/touched.js";
import { ConfigurationError } from "../../src/errors.js";
import { configProblems } from "../support/config-problems.js";

const ws = () => mkdtempSync(path.join(os.tmpdir(), "parse-"));
const parse = (raw: RawInputs, cwd = ws()) => parseSettings(raw, { cwd });
const problemsOf = (raw: RawInputs, cwd = ws()): string[] => configProblems(() => parse(raw, cwd));

describe("input parser", () => {
  it("turns inputs into typed settings with contract defaults", () => {
    const s = parse({ agent: "command", "agent-command": "bash -c 'echo hi'", prompt: "do it" });
    expect(s.agent.backend).toBe("command");
    expect(s.agent.command).toEqual(["bash", "-c", "echo hi"]);
    expect(s.run.timeoutSeconds).toBe(1800);
    expect(s.run.network.mode).toBe("model-only");
    expect(s.sandbox.choice).toBe("auto");
    expect(s.delivery).toMatchObject({ phase: "all", deliver: "auto", comment: "sticky", branchPrefix: "agent/", draft: true });
    expect(s.session).toBe("new");
  });

  it("reports every bad input at once, each named with what is allowed", () => {
    const problems = problemsOf({
      agent: "robot",
      permissions: "default: [unclosed",
      "timeout-minutes": "-1",
      sandbox: "vm",
      network: "some",
      "retention-days": "400",
      "mcp-servers": '{"x": {"cmd": "y"}}',
      prompt: "p",
    });
    expect(problems.join("\n")).toMatch(/Input 'agent': unknown agent 'robot'; use one of: claude, codex, opencode, gemini, command/);
    for (const input of ["permissions", "timeout-minutes", "sandbox", "network", "retention-days", "mcp-servers"])
      expect(problems.some((p) => p.startsWith(`Input '${input}'`))).toBe(true);
  });

  it("requires agent-command for the command agent and a prompt unless the event gives one", () => {
    expect(problemsOf({ agent: "command", prompt: "x" })).toEqual([expect.stringContaining("Input 'agent-command': is required")]);
    expect(problemsOf({ agent: "command", "agent-command": "true" })).toEqual([expect.stringContaining("Input 'prompt': is required")]);
    expect(() => parseSettings({ agent: "command", "agent-command": "true" }, { cwd: ws(), eventProvidesPrompt: true })).not.toThrow();
  });

  it("phase publish runs no agent: agent-command, prompt and docker-image are not required there, and still are for run and all", () => {
    for (const phase of ["run", "all"]) expect(problemsOf({ agent: "command", prompt: "x", phase })).toEqual([expect.stringContaining("Input 'agent-command': is required")]);
    const s = parse({ agent: "command", phase: "publish", sandbox: "docker" });
    expect(s.delivery.phase).toBe("publish");
    expect(s.agent.command).toBeUndefined();
    // What is given is still checked.
    expect(problemsOf({ agent: "command", phase: "publish", "agent-command": "echo hi | tee x" })[0]).toContain("Input 'agent-command'");
    expect(problemsOf({ agent: "claude", phase: "publish", "agent-command": "x" })[0]).toContain("only applies to agent 'command'");
  });

  it("refuses shell operators in agent-command rather than running a shell", () => {
    expect(problemsOf({ agent: "command", "agent-command": "echo hi | tee x", prompt: "p" })[0]).toContain("Input 'agent-command'");
  });

  it("parses permissions, MCP servers, env, secrets, agent-args and a fractional timeout", () => {
    const s = parse({
      agent: "claude",
      prompt: "p",
      permissions: "default: ask\nallow: [read, 'bash(npm test)']\ndeny: [webfetch]",
      "mcp-servers": JSON.stringify({ mcpServers: { files: { command: "node", args: ["srv.js"] }, web: { url: "https://mcp.example.com" } } }),
      env: "A=1\nB=x=y",
      secrets: "KEY=abc=def",
      "agent-args": '["--verbose", "--x=1"]',
      "timeout-minutes": "0.5",
    });
    expect(s.agent.permission).toEqual({
      default: "ask",
      rules: [
        { tool: "read", action: "allow" },
        { tool: "bash", pattern: "npm test", action: "allow" },
        { tool: "webfetch", action: "deny" },
      ],
    });
    expect(s.agent.mcpServers.files).toEqual({ command: "node", args: ["srv.js"], env: {} });
    expect(s.agent.mcpServers.web).toEqual({ url: "https://mcp.example.com", headers: {} });
    expect(s.run.env).toEqual({ A: "1", B: "x=y" });
    expect(s.run.secrets).toEqual({ KEY: "abc=def" });
    expect(s.run.extraArgs).toEqual(["--verbose", "--x=1"]);
    expect(s.run.timeoutSeconds).toBe(30);
  });

  it("never echoes a malformed secrets line", () => {
    const problems = problemsOf({ agent: "command", "agent-command": "true", prompt: "p", secrets: "not a pair hunter2-secret" });
    // The line is refused (an empty list would also "not contain" the secret), without its value.
    expect(problems).toEqual([expect.stringContaining("Input 'secrets': each line must be NAME=value")]);
    expect(problems.join()).not.toContain("hunter2-secret");
  });

  it("reads .github/agent-runner.yml, and inputs set in the step override it", () => {
    const dir = ws();
    mkdirSync(path.join(dir, ".github"));
    writeFileSync(path.join(dir, ".github/agent-runner.yml"), "agent: command\nagent-command: 'true'\nmodel: from-file\nsandbox: none\npermissions: {default: deny}\n");
    const s = parse({ prompt: "p", model: "from-input", sandbox: "auto" }, dir);
    expect(s.agent.model).toBe("from-input");
    // 'auto' is the action.yml default: the file's choice stands.
    expect(s.sandbox.choice).toBe("none");
    expect(s.agent.permission?.default).toBe("deny");
  });

  it("reads the config file once: its fingerprint and the settings come from the same bytes", () => {
    const dir = ws();
    mkdirSync(path.join(dir, ".github"));
    const file = path.join(dir, ".github/agent-runner.yml");
    writeFileSync(file, "agent: command\nagent-command: 'true'\nmodel: first\n");
    const read = readConfigFile({}, dir);
    expect(read.full).toBe(file);
    expect(fingerprintOf(read.bytes)).toBe(createHash("sha256").update(readFileSync(file)).digest("hex"));
    // Rewritten after the read: the settings still say what was fingerprinted.
    writeFileSync(file, "agent: command\nagent-command: 'true'\nmodel: second\n");
    const { text, source } = read;
    expect(parseSettings({ prompt: "p" }, { cwd: dir, configFile: { text, source } }).agent.model).toBe("first");
    expect(fingerprintOf(readConfigFile({ "config-file": "missing.yml" }, dir).bytes)).toBe("absent");
  });

  it("names a config file that could not be read (a symlink out of the workspace) as a config-file problem, from the one read", () => {
    const dir = ws();
    const outside = mkdtempSync(path.join(os.tmpdir(), "parse-outside-"));
    writeFileSync(path.join(outside, "host.yml"), "model: host-secret-model\n");
    mkdirSync(path.join(dir, ".github"));
    symlinkSync(path.join(outside, "host.yml"), path.join(dir, ".github/agent-runner.yml"));
    const read = readConfigFile({}, dir);
    expect(read.error).toBeDefined();
    expect(read.text).toBeUndefined();
    const { text, source, error } = read;
    let problems: string[] = [];
    try {
      parseSettings({ agent: "command", "agent-command": "true", prompt: "p" }, { cwd: dir, configFile: { text, source, error: error! } });
    } catch (e) {
      problems = (e as ConfigurationError).problems;
    }
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("'.github/agent-runner.yml'");
    expect(problems[0]).not.toContain("host-secret-model");
  });

  it("refuses secrets and unknown keys in the config file", () => {
    const dir = ws();
    mkdirSync(path.join(dir, ".github"));
    writeFileSync(path.join(dir, ".github/agent-runner.yml"), "secrets: A=b\nbogus: 1\n");
    const problems = problemsOf({ agent: "command", "agent-command": "true", prompt: "p" }, dir);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain("secrets belong in the workflow");
    expect(problems[1]).toContain("has key 'bogus', which is not an input the file may set");
  });

  it("keeps skill paths at parse time and checks that each holds a SKILL.md when the files are read", async () => {
    const dir = ws();
    const staging = mkdtempSync(path.join(os.tmpdir(), "parse-skills-"));
    mkdirSync(path.join(dir, "skills/lint"), { recursive: true });
    writeFileSync(path.join(dir, "skills/lint/SKILL.md"), "---\nname: lint\n---\n");
    const s = parse({ agent: "claude", prompt: "p", skills: "skills/lint" }, dir);
    expect(s.inputFiles.skills).toEqual(["skills/lint"]);
    const read = await readInputFiles(s, { cwd: dir, stagingDir: staging });
    expect(read.agent.skills).toEqual([{ name: "lint", path: path.join(staging, "skills/0/lint") }]);
    const none = parse({ agent: "claude", prompt: "p", skills: "skills/none" }, dir);
    await expect(readInputFiles(none, { cwd: dir, stagingDir: staging })).rejects.toThrow(/Input .skills.: .skills\/none. does not exist/);
    mkdirSync(path.join(dir, "skills/empty"));
    const empty = parse({ agent: "claude", prompt: "p", skills: "skills/empty" }, dir);
    await expect(readInputFiles(empty, { cwd: dir, stagingDir: staging })).rejects.toThrow(/has no SKILL.md/);
  });
});

describe("threat detection's agent inputs", () => {
  it("detection-agent, detection-model and threat-detection-fail-open are parsed with threat-detection: agent", () => {
    const s = parse({ agent: "claude", prompt: "p", "threat-detection": "agent", "detection-agent": "codex", "detection-model": "gpt-5.5", "threat-detection-fail-open": "true" });
    expect(s.delivery).toMatchObject({ threatDetection: "agent", detectionAgent: "codex", detectionModel: "gpt-5.5", detectionFailOpen: true });
    expect(parse({ agent: "claude", prompt: "p" }).delivery).toMatchObject({ threatDetection: "auto", detectionFailOpen: false });
  });

  it("an unknown backend, a detection-agent without threat-detection: agent, and a command run with no judge named are refused", () => {
    expect(problemsOf({ agent: "claude", prompt: "p", "threat-detection": "agent", "detection-agent": "robot" })).toEqual([expect.stringMatching(/^Input 'detection-agent': unknown agent 'robot'/)]);
    expect(problemsOf({ agent: "claude", prompt: "p", "detection-agent": "codex" })).toEqual([expect.stringMatching(/^Input 'detection-agent': only applies with 'threat-detection: agent'/)]);
    expect(problemsOf({ agent: "command", "agent-command": "true", prompt: "p", "threat-detection": "agent" })).toEqual([expect.stringMatching(/^Input 'detection-agent': is required/)]);
    expect(problemsOf({ agent: "claude", prompt: "p", "threat-detection": "agent", "detection-agent": "command" })).toEqual([expect.stringMatching(/^Input 'detection-agent': 'command' runs 'agent-command'/)]);
    // The publish step runs no agent: nothing to name there.
    expect(problemsOf({ agent: "command", phase: "publish", "threat-detection": "agent" })).toEqual([]);
  });
});
