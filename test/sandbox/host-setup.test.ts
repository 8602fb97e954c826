/**
 * The GitHub-hosted setup and `sandbox: auto`'s choice, against stand-in
 * sudo/apt-get/sysctl on PATH (argv recorded) and the real bwrap check.
 */
import { describe, expect, it } from "vitest";
import { isConfigurationError } from "../../src/errors.js";
import { createBwrapBackend } from "../../src/sandbox/bwrap.js";
import { setUpGitHubRunner } from "../../src/sandbox/host-setup.js";
import { chooseSandbox } from "../../src/sandbox/registry.js";
import type { SandboxHost } from "../../src/sandbox/types.js";
import { fakeGitHubRunner, type FakeRunnerOptions } from "./host-setup-fakes.js";
import { recordingLogger } from "./helpers.js";

const INSTALL = "sudo -n apt-get install -y -qq --no-install-recommends";

async function setup(opts: FakeRunnerOptions) {
  const runner = fakeGitHubRunner(opts);
  const log = recordingLogger();
  const host = { path: runner.path };
  const outcome = await setUpGitHubRunner({ log, host, verify: () => createBwrapBackend({ host }).check() });
  return { runner, log, outcome, sudo: runner.calls().filter((c) => c.startsWith("sudo ")) };
}

describe("GitHub-hosted sandbox setup", () => {
  it("installs only what is missing, once, and verifies bwrap", async () => {
    const { outcome, sudo, log } = await setup({ apt: "works", socatInstalled: true });
    expect(outcome.ok).toBe(true);
    expect(sudo).toEqual([`${INSTALL} bubblewrap`]);
    // Each step is logged with its duration.
    expect(log.lines.some((l) => /install bubblewrap: `sudo -n apt-get install .*` → ok in \d+\.\d s/.test(l))).toBe(true);
    expect(log.lines.some((l) => /verify that bwrap can create a namespace → ok in \d+\.\d s/.test(l))).toBe(true);
  });

  it("installs nothing when bwrap and socat are there, and leaves AppArmor alone when bwrap works", async () => {
    const { outcome, runner } = await setup({ apt: "works", bwrapInstalled: true, socatInstalled: true });
    expect(outcome.ok).toBe(true);
    expect(runner.calls()).toEqual([]);
  });

  it("stale package lists: install fails, apt-get update, one retry works", async () => {
    const { outcome, sudo } = await setup({ apt: "stale" });
    expect(outcome.ok).toBe(true);
    expect(sudo).toEqual([`${INSTALL} bubblewrap socat`, "sudo -n apt-get update -qq", `${INSTALL} bubblewrap socat`]);
  });

  it("sets the AppArmor sysctl only when it is on and bwrap cannot create a namespace", async () => {
    const { outcome, runner } = await setup({ apt: "works", bwrapInstalled: true, socatInstalled: true, usernsRestricted: true });
    expect(outcome.ok).toBe(true);
    expect(runner.calls()).toEqual([
      "sysctl -n kernel.apparmor_restrict_unprivileged_userns",
      "sudo -n sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
      "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
    ]);
    expect(runner.usernsRelaxed()).toBe(true);
  });

  it("everything fails: one outcome listing each step and its result", async () => {
    const { outcome, sudo } = await setup({ apt: "broken" });
    expect(outcome.ok).toBe(false);
    expect(sudo).toEqual([`${INSTALL} bubblewrap socat`, "sudo -n apt-get update -qq", `${INSTALL} bubblewrap socat`]);
    expect(outcome.steps.join("\n")).toMatch(/install bubblewrap socat: .* failed \(exit 100: E: Failed to fetch .*404/);
    expect(outcome.steps.join("\n")).toMatch(/refresh the package lists: .* failed \(exit 100/);
    expect(outcome.steps.join("\n")).toMatch(/retry after apt-get update.* failed/);
    expect(outcome.steps.at(-1)).toBe("bwrap is still not on PATH");
  });
});

describe("sandbox: auto fails closed", () => {
  const hostFor = (path: string, githubHosted: boolean): SandboxHost => ({ path, dockerEnv: {}, githubHosted });

  it("no bwrap, no docker: one ConfigurationError naming sandbox, what was tried, and the opt-out", async () => {
    const runner = fakeGitHubRunner({ apt: "broken" });
    const err = await chooseSandbox("auto", recordingLogger(), hostFor(runner.path, true), { dockerImage: "node:24" }).catch((e: unknown) => e);
    expect(isConfigurationError(err)).toBe(true);
    const msg = String((err as Error).message);
    expect((err as { problems: string[] }).problems).toHaveLength(1);
    expect(msg).toContain("Input 'sandbox': 'auto' found no sandbox");
    expect(msg).toMatch(/bwrap: bubblewrap \(bwrap\) is not installed\. The GitHub-hosted runner setup tried:/);
    expect(msg).toMatch(/apt-get update/);
    expect(msg).toMatch(/docker: (`docker info` failed|the docker CLI is not installed)/);
    expect(msg).toContain("`sandbox: none` is the explicit opt-out");
  });

  it("not GitHub-hosted: no setup is attempted, and docker without an image is not tried", async () => {
    const runner = fakeGitHubRunner({ apt: "works" });
    const err = await chooseSandbox("auto", recordingLogger(), hostFor(runner.path, false)).catch((e: unknown) => e);
    expect(String(err)).toMatch(/docker: not tried, because `docker-image` is not set/);
    expect(runner.calls()).toEqual([]);
  });

  it("explicit bwrap on a GitHub-hosted runner says what the setup tried", async () => {
    const runner = fakeGitHubRunner({ apt: "broken" });
    const err = await chooseSandbox("bwrap", recordingLogger(), hostFor(runner.path, true)).catch((e: unknown) => e);
    expect(String(err)).toMatch(/Input 'sandbox': 'bwrap' cannot run here: bubblewrap \(bwrap\) is not installed/);
    expect(String(err)).toMatch(/sudo -n apt-get update/);
  });

  it("sandbox: none stays the explicit choice", async () => {
    const runner = fakeGitHubRunner({ apt: "broken" });
    expect((await chooseSandbox("none", recordingLogger(), hostFor(runner.path, true))).name).toBe("none");
    expect(runner.calls()).toEqual([]);
  });
});
