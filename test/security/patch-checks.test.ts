/**
 * Issue 17 item 8, attack table: a hostile agent's patch is refused before
 * anything is pushed. Each row runs dist/main.js the way the runner does (the
 * harness, the fake GitHub, a bare origin standing in for github.com) with a
 * `command` agent, and checks the host afterwards: the origin's refs did not
 * move, no pull request was opened, the step failed with an error naming the
 * file (and the input that allows it, where one does), and the comment says why.
 *
 * The last rows move the branch tip after the agent started, so the tree that
 * delivery would commit (the patch applied, with `--3way`, onto the new tip)
 * differs from the tree validated against the agent's base commit.
 */
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { cloneRepo, git, readBranchFile, revParse } from "../support/git-fixtures.js";
import type { StepResult } from "../support/harness.js";
import { scenario, type Scenario, type ScenarioOptions } from "../github/scenario.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const allRefs = (dir: string) => git(dir, ["for-each-ref", "--format=%(refname) %(objectname)"]);
const errorLines = (r: StepResult) => r.rawStdout.split("\n").filter((l) => l.startsWith("::error::"));
const botComment = (sc: Scenario, n: number) => sc.gh.issueComments(n).filter((c) => c.user === "github-actions[bot]")[0]?.body ?? "";

/** Someone pushes to `branch` of the origin while the agent works: `script` runs in a clone and commits. */
async function moveBranch(sc: Scenario, branch: string, script: string): Promise<string> {
  const other = await cloneRepo(sc.repo.origin, { branch });
  execFileSync("sh", ["-c", `set -e\n${script}\ngit add -A && git -c user.name=h -c user.email=h@h commit -qm meanwhile && git push -q origin HEAD:${branch}`], { cwd: other });
  return (await revParse(sc.repo.origin, `refs/heads/${branch}`))!;
}

/** Run the agent on an issue (deliver: pull request) and check that nothing left the runner. */
async function refusedOnIssue(agent: string, opts: Partial<ScenarioOptions> = {}, inputs: Record<string, string> = {}) {
  s = await scenario({ fixture: "issue_comment.issue", agent, ...opts });
  const before = await allRefs(s.repo.origin);
  const r = await s.run(inputs);
  expect(r.exitCode, r.log).toBe(1);
  expect(await allRefs(s.repo.origin)).toBe(before);
  expect(s.gh.pulls()).toEqual([]);
  const errors = errorLines(r).join("\n");
  return { r, errors, comment: botComment(s, 7) };
}

const NOTES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

describe("patch checks: what the agent's patch may not change", () => {
  it("a submodule gitlink (an embedded repository the agent made) is refused", async () => {
    const agent = "git init -q vendor/lib\ngit -C vendor/lib -c user.name=a -c user.email=a@a commit -q --allow-empty -m x\necho 'Added a library.'";
    const { r, errors, comment } = await refusedOnIssue(agent);
    expect(errors, r.log).toMatch(/The patch from this run was refused: it adds the submodule \(gitlink\) 'vendor\/lib'; .*no input allows it/);
    expect(comment).toContain("vendor/lib");
  });

  it(".gitmodules is refused", async () => {
    const agent = `printf '[submodule "x"]\\n\\tpath = x\\n\\turl = https://evil.example/x.git\\n' > .gitmodules\necho 'Declared a submodule.'`;
    const { r, errors, comment } = await refusedOnIssue(agent);
    expect(errors, r.log).toMatch(/refused: it changes '\.gitmodules', which says where submodules are fetched from/);
    expect(comment).toContain(".gitmodules");
  });

  it("'* filter=evil' in .gitattributes is refused, in any folder", async () => {
    const agent = "echo '* filter=evil' > .gitattributes\nmkdir -p src && echo '*.js diff=evil' > src/.gitattributes\necho 'Normalized line endings.'";
    const { r, errors, comment } = await refusedOnIssue(agent);
    expect(errors, r.log).toContain("it adds '* filter=evil' to '.gitattributes'");
    expect(errors).toContain("it adds '*.js diff=evil' to 'src/.gitattributes'");
    expect(comment).toContain("filter=evil");
  });

  it("'.github' as a symlink is refused, even with allow-workflow-changes", async () => {
    const agent = "mkdir -p ci/workflows && printf 'on: push\\njobs: {}\\n' > ci/workflows/evil.yml\nln -s ci .github\necho 'Moved CI.'";
    const { r, errors } = await refusedOnIssue(agent, {}, { "allow-workflow-changes": "true" });
    expect(errors, r.log).toMatch(/refused: '\.github' is a symlink in \.github: it would make files outside \.github count as workflows or actions \(no input allows it\)/);
  });

  it("an edit to .github/actions/x/action.yml is refused unless allow-workflow-changes, then delivered", async () => {
    const agent = "mkdir -p .github/actions/x && printf 'runs:\\n  using: node20\\n  main: evil.js\\n' > .github/actions/x/action.yml\necho 'Added an action.'";
    const { r, errors } = await refusedOnIssue(agent);
    expect(errors, r.log).toMatch(/changes workflow files \(\.github\/actions\/x\/action\.yml\); set 'allow-workflow-changes: true'/);
    const allowed = await s!.run({ "allow-workflow-changes": "true" });
    expect(allowed.exitCode, allowed.log).toBe(0);
    expect(await readBranchFile(s!.repo.origin, allowed.outputs.branch!, ".github/actions/x/action.yml")).toContain("main: evil.js");
  });

  it("'.gıthub/workflows/x.yml' (dotless i: '.GITHUB' upper-cased, '.github' on Windows and macOS) is a workflow change", async () => {
    const agent = "mkdir -p .g\u0131thub/workflows && printf 'on: push\\njobs: {}\\n' > .g\u0131thub/workflows/x.yml\necho 'Added CI.'";
    const { r, errors } = await refusedOnIssue(agent);
    expect(errors, r.log).toMatch(/changes workflow files \(\.g\u0131thub\/workflows\/x\.yml\); set 'allow-workflow-changes: true'/);
  });
});

describe("patch checks: the tree delivery commits, after the branch moved", () => {
  it("a link that was harmless where the agent started leaves the repository after the 3-way apply onto the PR branch: nothing pushed", async () => {
    s = await scenario({
      fixture: "issue_comment.pr",
      branches: { "feature/greeting": { "d/sub/f.txt": "f\n", "notes.txt": NOTES } },
      // d/link → sub/.. is d itself in the agent's checkout; the edit next to the PR author's forces a 3-way apply.
      agent: "ln -s sub/.. d/link\nsed -i 's/^line 2$/line two/' notes.txt\necho 'Linked.'",
    });
    // The PR's author, meanwhile: d/sub becomes a link to the root (harmless alone), and line 5 changes.
    const moved = await moveBranch(s, "feature/greeting", "git rm -rq d/sub && mkdir -p d && ln -s .. d/sub && sed -i 's/^line 5$/line five/' notes.txt");
    const before = await allRefs(s.repo.origin);
    // The agent works on the head it was given (the workflow's checkout), not the moved one.
    const r = await s.run({ "pr-checkout": "none" });
    expect(r.exitCode, r.log).toBe(1);
    expect(await allRefs(s.repo.origin)).toBe(before);
    expect(await revParse(s.repo.origin, "refs/heads/feature/greeting")).toBe(moved);
    const errors = errorLines(r).join("\n");
    // Validation against the agent's base passed; the check of the merged tree refused.
    expect(r.log).toMatch(/Patch: 2 file\(s\), \d+ bytes, applies cleanly/);
    expect(errors).toContain(`refused on top of branch 'feature/greeting' (${moved.slice(0, 7)}): symlink 'd/link' → 'sub/..' points outside the repository`);
    expect(errors).toContain("Nothing was pushed");
    expect(botComment(s, 12)).toContain("symlink 'd/link'");
    expect(s.gh.pulls()).toHaveLength(1); // the PR itself, no new one
  });

  it("a file that became an action through a link the base branch added meanwhile is a workflow change: no pull request", async () => {
    s = await scenario({
      fixture: "issue_comment.issue",
      files: { "README.md": "# Demo\n", "tools/setup/action.yml": "runs:\n  using: node20\n  main: index.js\n" },
      agent: "sed -i 's/index.js/evil.js/' tools/setup/action.yml\necho 'Tweaked the tool.'",
    });
    await moveBranch(s, "main", "mkdir -p .github/actions && ln -s ../../tools/setup .github/actions/setup");
    const before = await allRefs(s.repo.origin);
    const r = await s.run();
    expect(r.exitCode, r.log).toBe(1);
    expect(await allRefs(s.repo.origin)).toBe(before);
    expect(s.gh.pulls()).toEqual([]);
    expect(errorLines(r).join("\n")).toMatch(
      /refused on top of 'main' \([0-9a-f]{7}\): it changes workflow files \(tools\/setup\/action\.yml; 'tools\/setup\/action\.yml' is '\.github\/actions\/setup\/action\.yml' through a symlink in \.github\); set 'allow-workflow-changes: true'/,
    );
    expect(botComment(s, 7)).toContain("Not pushed");
  });
});
