/** `npm run demo` keeps working: the whole action, key-free, against local fakes. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/harness.js";

describe("npm run demo", () => {
  it("comments, opens a draft PR and uploads artifacts with no key and no network", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--experimental-transform-types", "--disable-warning=ExperimentalWarning", path.join(REPO_ROOT, "scripts/demo.mjs")], {
      cwd: REPO_ROOT,
      timeout: 120_000,
      env: { ...process.env, ANTHROPIC_API_KEY: "" },
    });
    expect(stdout).toContain("### ✅ Agent Runner finished");
    expect(stdout).toMatch(/Opened pull request \[#\d+\]/);
    expect(stdout).toMatch(/Closes #7/);
    expect(stdout).toMatch(/agent-run-4242-1 \(\d+ bytes\)\n(\s+\S+\n)*\s+transcript\.html/);
    expect(stdout).toContain("changed-files: [\"greet.sh\"]");
    expect(stdout).toContain("the gateway added the real one on the way out: true");
  }, 150_000);
});
