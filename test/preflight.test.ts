/**
 * The check before any test (test/preflight.ts): on a machine without
 * bubblewrap, socat and Chromium the run stops at once with one message
 * naming them and the set-up command, instead of scattered failures.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./support/harness.js";
import { checkTestMachine, onPath, preflightMessage } from "./preflight.js";

/** A PATH folder holding only the named programs (links to this machine's). */
function binDir(programs: Record<string, string>, scripts: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-bin-"));
  for (const [name, target] of Object.entries(programs)) fs.symlinkSync(target, path.join(dir, name));
  for (const [name, body] of Object.entries(scripts)) fs.writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return dir;
}

const hostPath = process.env.PATH ?? "";
const real = (name: string) => {
  const found = onPath(name, hostPath);
  if (!found) throw new Error(`${name} is not on PATH (the preflight should have stopped this run)`);
  return found;
};
/** Everything the suite needs but bubblewrap, socat and Chromium. */
const withoutSandboxTools = () => binDir({ node: process.execPath, git: real("git"), curl: real("curl"), ps: real("ps"), "cmark-gfm": real("cmark-gfm") });

describe("preflight", () => {
  it("npm test on a machine without bubblewrap, socat and Chromium on PATH stops within 30 s, before any test, with one message", async () => {
    const started = Date.now();
    const vitest = path.join(REPO_ROOT, "node_modules/vitest/vitest.mjs");
    const child = spawn(process.execPath, [vitest, "run", "test/unit/redact.test.ts"], {
      cwd: REPO_ROOT,
      env: { PATH: withoutSandboxTools(), HOME: os.tmpdir(), NO_COLOR: "1", CI: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));

    expect(Date.now() - started).toBeLessThan(30_000);
    expect(code).toBe(1);
    expect(output).toContain("This machine cannot run the test suite yet");
    expect(output).toContain("not on PATH: bubblewrap (bwrap), socat, chromium\n");
    expect(output).toContain("Run `npm run setup`");
    expect(output.match(/cannot run the test suite/g)).toHaveLength(1);
    // No test ran.
    expect(output).not.toMatch(/Test Files|redact\.test\.ts/);
  });

  it("names a Node other than 24 first on PATH, and a bwrap that cannot create namespaces, with the fix", async () => {
    const dir = binDir(
      { socat: real("socat"), chromium: real("chromium"), git: real("git"), curl: real("curl"), ps: real("ps"), "cmark-gfm": real("cmark-gfm"), true: real("true") },
      {
        node: "echo 20.11.1",
        // bwrap --help, then the namespace probe: what an AppArmor-restricted Ubuntu 24.04 answers.
        bwrap: 'case "$1" in --help) echo "usage: bwrap";; *) echo "bwrap: setting up uid map: Permission denied" >&2; exit 1;; esac',
      },
    );
    const { problems } = await checkTestMachine(dir);
    expect(problems).toEqual([
      expect.stringMatching(/^bubblewrap cannot create a sandbox here \(bwrap: setting up uid map: Permission denied\)\. .*sudo sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0/),
      expect.stringMatching(/^node: the first on PATH is v20\.11\.1 \(.*\/node\); the tests run dist\/ with Node 24 /),
    ]);
    expect(preflightMessage(problems).split("\n")).toHaveLength(4);
  });

  it("passes on this machine and hands the Chromium it found to the tests", async () => {
    const { problems, found } = await checkTestMachine(hostPath);
    expect(problems).toEqual([]);
    expect(found.chromium).toBe(real("chromium"));
  });
});
