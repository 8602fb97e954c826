/**
 * What a release needs before its tag is pushed: package.json names the coordinates src/constants.ts
 * gives, CHANGELOG.md has notes for package.json's version (scripts/release-notes.mjs, which the release
 * workflow runs, prints them and refuses a version without them), and release.yml publishes as
 * docs/releasing.md says.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { COORDINATES } from "../../src/constants.js";
import { REPO_ROOT } from "../support/harness.js";

const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  private?: boolean;
  bin: Record<string, string>;
  files: string[];
  dependencies?: object;
  publishConfig?: { access?: string };
};
const notes = (...args: string[]) => spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts/release-notes.mjs"), ...args], { cwd: REPO_ROOT, encoding: "utf8" });

describe("release", () => {
  it("package.json publishes the CLI under the coordinates, with no runtime dependencies", () => {
    expect(pkg.name).toBe(COORDINATES.npmPackage);
    expect(pkg.bin).toEqual({ [COORDINATES.bin]: "dist/cli.js" });
    expect(`v${pkg.version.split(".")[0]}`).toBe(COORDINATES.majorTag);
    expect(pkg.private).toBeUndefined();
    expect(pkg.publishConfig?.access).toBe("public");
    expect(pkg.dependencies).toBeUndefined();
  });

  it("CHANGELOG.md has the notes of package.json's version", () => {
    const out = notes(pkg.version);
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^### Added$/m);
    expect(out.stdout).not.toContain(`## [${pkg.version}]`);
    expect(out.stdout).not.toContain("## [Unreleased]");
  });

  it("release notes are refused for a version the changelog lacks, or one with an empty section", () => {
    const missing = notes("9.9.9");
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toContain("no section '## [9.9.9]");
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "changelog-")), "CHANGELOG.md");
    writeFileSync(file, "# Changelog\n\n## [2.0.0] - 2027-01-01\n\n## [1.0.0] - 2026-01-01\n\n### Fixed\n\n- a thing\n");
    const empty = notes("2.0.0", file);
    expect(empty.status).toBe(1);
    expect(empty.stderr).toContain("section for 2.0.0 is empty");
    const older = notes("1.0.0", file);
    expect(older.stdout).toBe("### Fixed\n\n- a thing\n");
  });

  it("release.yml runs CI on a version tag, then publishes with provenance and moves the major tag", () => {
    const wf = YAML.parse(readFileSync(path.join(REPO_ROOT, ".github/workflows/release.yml"), "utf8")) as {
      on: { push: { tags: string[] } };
      jobs: Record<string, { needs?: string; permissions: Record<string, string>; steps: { run?: string }[] }>;
    };
    expect(wf.on.push.tags).toEqual(["v*.*.*"]);
    const scripts = (job: string) => wf.jobs[job]!.steps.map((s) => s.run ?? "").join("\n");
    expect(scripts("check")).toContain(".ci/run");
    expect(scripts("check")).toContain("scripts/release-notes.mjs");
    expect(wf.jobs.check!.permissions).toEqual({ contents: "read" });
    expect(wf.jobs.release!.needs).toBe("check");
    expect(wf.jobs.release!.permissions).toEqual({ contents: "write", "id-token": "write" });
    expect(scripts("release")).toContain("npm publish --provenance --access public");
    expect(scripts("release")).toContain("gh release create");
    expect(scripts("release")).toMatch(/refs\/tags\/\$major/);
  });
});
