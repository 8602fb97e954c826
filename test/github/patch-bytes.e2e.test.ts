/**
 * Issue #20, patches are bytes: a file committed with CRLF line ends (no
 * .gitattributes, no autocrlf) that the agent appends to is delivered byte
 * for byte, CRs kept, with and without a secret in the patch (the secret is
 * redacted, nothing else changes), for every delivery (comment, commit onto
 * the PR's branch, pull request, and the two-job run → publish flow through
 * the artifact). Each time the patch.diff of the run artifact applies to the
 * base commit with `git apply` and reproduces the delivered bytes.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURE_REPO } from "../support/events.js";
import { startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { cloneRepo, git, revParse } from "../support/git-fixtures.js";
import { scenario, type Scenario } from "./scenario.js";
import { closeAfterEach } from "../support/close-after-each.js";

let s: Scenario | undefined;
let results: FakeActionsResults | undefined;
closeAfterEach(() => s, () => results);

const BASE = Buffer.from("one\r\ntwo\r\n");
const SECRET = "s3cr3t-Value-0123456789";
const FILES = { "README.md": "# Demo\n\nTeh demo project.\n", "win.txt": BASE };
/** Appends a CRLF line, and with a secret a second CRLF line holding it. */
const agent = (withSecret: boolean) =>
  [`printf 'three\\r\\n' >> win.txt`, ...(withSecret ? [`printf 'key=%s\\r\\n' "$API_KEY" >> win.txt`] : []), "echo 'Appended a line.'"].join("\n");
/** What the delivered win.txt must be: CRs kept, the secret (and only it) replaced. */
const expected = (withSecret: boolean) => Buffer.concat([BASE, Buffer.from("three\r\n"), ...(withSecret ? [Buffer.from("key=***\r\n")] : [])]);
/** Threat detection would hold a patch that held a secret back (test/security/threats.e2e.test.ts); here the redacted bytes themselves are under test. */
const secretsInput = (withSecret: boolean): Record<string, string> => (withSecret ? { secrets: `API_KEY=${SECRET}`, "threat-detection": "none" } : {});

function blob(repoDir: string, ref: string, file: string): Buffer {
  return execFileSync("git", ["cat-file", "blob", `${ref}:${file}`], { cwd: repoDir });
}

/** Apply `patch` with `git apply` to a clean checkout of `base`; the file as it then reads. */
async function appliedToBase(origin: string, base: string, patch: Buffer, file: string): Promise<Buffer> {
  const clean = await cloneRepo(origin);
  await git(clean, ["checkout", "-q", "--detach", base]);
  const patchFile = path.join(mkdtempSync(path.join(os.tmpdir(), "patch-")), "patch.diff");
  writeFileSync(patchFile, patch);
  await git(clean, ["apply", "--binary", patchFile]);
  return readFileSync(path.join(clean, file));
}

/** The run artifact's patch.diff, as uploaded. */
function artifactPatch(r: FakeActionsResults, runId: number): Buffer {
  const [artifact] = r.artifacts({ runId }).filter((a) => a.name.startsWith("agent-run-"));
  return r.readArtifactFile(artifact!.id, "patch.diff");
}

const bot = (sc: Scenario, n: number) => sc.gh.issueComments(n).filter((c) => c.user === "github-actions[bot]");

describe.each([false, true])("a CRLF file the agent appends to (secret in the patch: %s)", (withSecret) => {
  const runId = 5100 + (withSecret ? 50 : 0);

  it("deliver: comment — the patch in the comment and the artifact applies to the base, CRs kept", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    s = await scenario({ fixture: "issue_comment.issue", files: FILES, agent: agent(withSecret) });
    const base = (await revParse(s.repo.origin, "refs/heads/main"))!;
    const r = await s.run({ deliver: "comment", ...secretsInput(withSecret) }, results.runtimeEnv({ runId, github: s.gh, repository: FIXTURE_REPO }));
    expect(r.exitCode, r.log).toBe(0);
    expect(r.rawStdout).not.toContain("::error::");
    const patch = artifactPatch(results, runId);
    expect(patch.includes(Buffer.from("+three\r\n"))).toBe(true);
    expect(patch.includes(SECRET)).toBe(false);
    expect(patch.equals(readFileSync(r.outputs["patch-path"]!))).toBe(true);
    expect(await appliedToBase(s.repo.origin, base, patch, "win.txt")).toEqual(expected(withSecret));
    const [c] = bot(s, 7);
    expect(c!.body).toContain("+three");
    expect(c!.body).not.toContain(SECRET);
  });

  it("deliver: commit on a same-repo PR — the pushed blob is byte-exact", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    s = await scenario({ fixture: "issue_comment.pr", files: FILES, agent: agent(withSecret) });
    const head = (await revParse(s.repo.origin, "refs/heads/feature/greeting"))!;
    const r = await s.run(secretsInput(withSecret), results.runtimeEnv({ runId: runId + 1, github: s.gh, repository: FIXTURE_REPO }));
    expect(r.exitCode, r.log).toBe(0);
    expect(r.outputs.branch).toBe("feature/greeting");
    expect(blob(s.repo.origin, r.outputs["commit-sha"]!, "win.txt")).toEqual(expected(withSecret));
    expect(await appliedToBase(s.repo.origin, head, artifactPatch(results, runId + 1), "win.txt")).toEqual(expected(withSecret));
  });

  it("deliver: pull request — the branch's blob is byte-exact", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    s = await scenario({ fixture: "issue_comment.issue", files: FILES, agent: agent(withSecret) });
    const base = (await revParse(s.repo.origin, "refs/heads/main"))!;
    const r = await s.run(secretsInput(withSecret), results.runtimeEnv({ runId: runId + 2, github: s.gh, repository: FIXTURE_REPO }));
    expect(r.exitCode, r.log).toBe(0);
    expect(s.gh.pulls()).toHaveLength(1);
    expect(blob(s.repo.origin, `refs/heads/${r.outputs.branch!}`, "win.txt")).toEqual(expected(withSecret));
    expect(await appliedToBase(s.repo.origin, base, artifactPatch(results, runId + 2), "win.txt")).toEqual(expected(withSecret));
  });

  it("two jobs: run uploads the patch, publish (no agent-command) downloads it and opens the pull request byte-exact", async () => {
    results = await startFakeActionsResults({ repository: FIXTURE_REPO });
    const r0 = results;
    s = await scenario({ fixture: "issue_comment.issue", files: FILES, agent: agent(withSecret) });
    const sc = s;
    const base = (await revParse(s.repo.origin, "refs/heads/main"))!;
    const env = (job: string) => r0.runtimeEnv({ runId: runId + 3, job, github: sc.gh, repository: FIXTURE_REPO });
    const run = await s.run({ phase: "run", ...secretsInput(withSecret) }, env("agent"));
    expect(run.exitCode, run.log).toBe(0);
    expect(s.gh.pulls()).toEqual([]);
    const publish = await s.run({ phase: "publish", "agent-command": "", ...(withSecret ? { "threat-detection": "none" } : {}) }, env("publish"));
    expect(publish.exitCode, publish.log).toBe(0);
    expect(publish.rawStdout).not.toContain("::error::");
    expect(blob(s.repo.origin, `refs/heads/${publish.outputs.branch!}`, "win.txt")).toEqual(expected(withSecret));
    const patch = artifactPatch(results, runId + 3);
    expect(readFileSync(publish.outputs["patch-path"]!).equals(patch)).toBe(true);
    expect(await appliedToBase(s.repo.origin, base, patch, "win.txt")).toEqual(expected(withSecret));
  });
});
