/**
 * Attack rows for `sandbox: auto` failing closed and for the GitHub-hosted
 * setup (issue 17, design change and item 11), through dist/ as the runner
 * runs the step. The agent is a hostile `command` that tries to leave a
 * marker in the runner's HOME: it may only ever run sandboxed.
 *
 * The runner is a stand-in (test/sandbox/host-setup-fakes.ts): PATH holds every
 * system tool except bwrap, socat, sudo, apt-get and sysctl, whose stand-ins
 * record their argv; docker is there without a daemon.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runActionSteps } from "../support/harness.js";
import { fakeGitHubRunner, type FakeRunnerOptions } from "../sandbox/host-setup-fakes.js";

const INSTALL = "sudo -n apt-get install -y -qq --no-install-recommends bubblewrap socat";

function makeRepo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "auto-ws-"));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir });
  git("init", "-q", "-b", "main");
  writeFileSync(path.join(dir, "README.md"), "hi\n");
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init");
  return dir;
}

async function run(runnerOpts: FakeRunnerOptions & { githubHosted: boolean }, inputs: Record<string, string> = {}) {
  const runner = fakeGitHubRunner(runnerOpts);
  const ws = makeRepo();
  // Outside the sandbox this lands in the runner's HOME; inside, HOME is hidden and read-only.
  const marker = path.join(os.homedir(), `.agent-runner-unsandboxed-${process.pid}-${Date.now()}`);
  const script = path.join(mkdtempSync(path.join(os.tmpdir(), "auto-agent-")), "agent.sh");
  writeFileSync(script, `#!/bin/bash\nexport PATH=/usr/bin:/bin\ntouch ${marker} 2>/dev/null\necho "REPORT ran=1"\n`);
  chmodSync(script, 0o755);
  const { main } = await runActionSteps({
    workspace: ws,
    inputs: { agent: "command", "agent-command": script, prompt: "attack", network: "none", ...inputs },
    env: { PATH: runner.path, ...(runnerOpts.githubHosted ? { RUNNER_ENVIRONMENT: "github-hosted" } : {}) },
  });
  const ranUnsandboxed = existsSync(marker);
  rmSync(marker, { force: true });
  return { main, runner, ranUnsandboxed, sudo: runner.calls().filter((c) => c.startsWith("sudo ")) };
}

describe("sandbox: auto fails closed (through dist/)", () => {
  it("neither bwrap nor docker usable: the step fails with one error naming sandbox; the agent never runs", async () => {
    const { main, ranUnsandboxed } = await run({ apt: "broken", githubHosted: false }, { "docker-image": "node:24-bookworm" });
    expect(ranUnsandboxed).toBe(false);
    expect(main.exitCode).toBe(1);
    expect(main.log).toContain("Input 'sandbox': 'auto' found no sandbox that works on this runner");
    expect(main.log).toMatch(/bwrap: bubblewrap \(bwrap\) is not installed/);
    expect(main.log).toMatch(/docker: `docker info` failed/);
    expect(main.log).toContain("`sandbox: none` is the explicit opt-out");
    expect(main.log).not.toMatch(/falling back to sandbox: none/);
  });

  it("GitHub-hosted, everything fails (install, apt-get update, retry): one error listing each attempt; the agent never runs", async () => {
    const { main, ranUnsandboxed, sudo } = await run({ apt: "broken", githubHosted: true });
    expect(ranUnsandboxed).toBe(false);
    expect(main.exitCode).toBe(1);
    expect(sudo).toEqual([INSTALL, "sudo -n apt-get update -qq", INSTALL]);
    const error = main.log.split("\n").filter((l) => l.startsWith("::error::")).join("\n");
    expect(error).toContain("Input 'sandbox': 'auto' found no sandbox");
    expect(error).toMatch(/install bubblewrap socat: .* failed \(exit 100: E: Failed to fetch/);
    expect(error).toMatch(/refresh the package lists: .* failed \(exit 100/);
    expect(error).toMatch(/retry after apt-get update.* failed/);
    expect(error).toMatch(/docker: not tried, because `docker-image` is not set/);
  });

  it("GitHub-hosted, first install works: bwrap and socat installed, no update, no sysctl; the agent runs sandboxed", async () => {
    const { main, ranUnsandboxed, runner } = await run({ apt: "works", githubHosted: true });
    expect(main.outputs.conclusion).toBe("success");
    expect(ranUnsandboxed).toBe(false);
    expect(runner.calls()).toEqual([INSTALL, "apt-get install -y -qq --no-install-recommends bubblewrap socat"]);
    expect(main.log).toMatch(/Sandbox setup on this GitHub-hosted runner: install bubblewrap socat: .* → ok in \d+\.\d s/);
    expect(main.log).toMatch(/verify that bwrap can create a namespace → ok/);
    expect(readFileSync(path.join(path.dirname(main.outputs["patch-path"]!), "raw/stdout.jsonl"), "utf8")).toContain("REPORT ran=1");
  });

  it("GitHub-hosted, stale package lists: install 404s, apt-get update, the retry works; the agent runs sandboxed", async () => {
    const { main, ranUnsandboxed, sudo } = await run({ apt: "stale", githubHosted: true });
    expect(main.outputs.conclusion).toBe("success");
    expect(ranUnsandboxed).toBe(false);
    expect(sudo).toEqual([INSTALL, "sudo -n apt-get update -qq", INSTALL]);
    expect(main.log).toMatch(/install bubblewrap socat \(retry after apt-get update\): .* → ok in/);
  });

  it("GitHub-hosted, AppArmor blocks user namespaces: the sysctl is set (only then) and bwrap verified", async () => {
    const { main, ranUnsandboxed, runner } = await run({ apt: "works", githubHosted: true, bwrapInstalled: true, socatInstalled: true, usernsRestricted: true });
    expect(main.outputs.conclusion).toBe("success");
    expect(ranUnsandboxed).toBe(false);
    expect(runner.calls().filter((c) => c.startsWith("sudo "))).toEqual(["sudo -n sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"]);
    expect(runner.usernsRelaxed()).toBe(true);
  });
});
