/**
 * The parts of `attempts` that need no agent: the inputs, the ranking of
 * select: verify, the judge's answer checked, changed lines counted, the
 * concurrency bound, the markers the post step kills by, and the checkout
 * copied for each attempt.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { allRunIds, attemptConcurrency } from "../../src/attempts/run.js";
import { parseVerdict } from "../../src/attempts/judge.js";
import { changedLines, judgeCandidates, rankByVerify, type Finished } from "../../src/attempts/select.js";
import { checkoutOf, copyCheckout } from "../../src/attempts/workspaces.js";
import { TouchedWorkspaces } from "../../src/git/touched.js";
import { parseSettings, type RawInputs } from "../../src/config/parse.js";
import type { RunResult } from "../../src/result.js";
import { configProblems } from "../support/config-problems.js";

const base = { agent: "command", "agent-command": "true", prompt: "p" } satisfies RawInputs;
const parse = (raw: RawInputs) => parseSettings({ ...base, ...raw }, { cwd: mkdtempSync(path.join(os.tmpdir(), "attempts-parse-")) });
const problems = (raw: RawInputs): string[] => configProblems(() => parse(raw));

describe("inputs attempts and select", () => {
  it("one attempt by default (no attempts settings: the agent runs in the workspace itself)", () => {
    expect(parse({}).attempts).toBeUndefined();
    expect(parse({ attempts: "1", select: "judge" }).attempts).toBeUndefined();
  });

  it("2–5 attempts, select verify by default, judge when asked", () => {
    expect(parse({ attempts: "3" }).attempts).toEqual({ count: 3, select: "verify" });
    expect(parse({ attempts: "5", select: "judge" }).attempts).toEqual({ count: 5, select: "judge" });
  });

  it("anything else is one problem naming the input and what is allowed", () => {
    for (const bad of ["0", "6", "2.5", "three", "-1"]) expect(problems({ attempts: bad })).toEqual([`Input 'attempts': '${bad}' must be a whole number from 1 to 5.`]);
    expect(problems({ attempts: "2", select: "best" })).toEqual(["Input 'select': 'best' is not allowed; use one of: verify, judge."]);
  });
});

function finished(attempt: number, verified: Finished["verified"], lines: number, conclusion: RunResult["conclusion"] = "success"): Finished {
  const result = { conclusion, diff: { changedFiles: lines ? ["f"] : [] } } as unknown as RunResult;
  return { attempt, result, verified, changedLines: lines };
}

describe("select: verify", () => {
  it("a passing attempt first, then the fewest changed lines", () => {
    const order = rankByVerify([finished(1, "failed", 1), finished(2, "passed", 30), finished(3, "passed", 4), finished(4, "not-run", 2)]).map((f) => f.attempt);
    expect(order).toEqual([3, 2, 4, 1]);
  });

  it("without a verify command: success first, a change before none, then fewest lines, then the lowest number", () => {
    const order = rankByVerify([finished(1, "not-run", 0), finished(2, "not-run", 9, "failure"), finished(3, "not-run", 5), finished(4, "not-run", 5)]).map((f) => f.attempt);
    expect(order).toEqual([3, 4, 1, 2]);
  });

  it("the judge is offered the passing attempts, or with no check the successful ones", () => {
    expect(judgeCandidates([finished(1, "passed", 1), finished(2, "failed", 1), finished(3, "passed", 2)]).map((f) => f.attempt)).toEqual([1, 3]);
    expect(judgeCandidates([finished(1, "not-run", 1), finished(2, "not-run", 1, "timeout")]).map((f) => f.attempt)).toEqual([1]);
  });
});

describe("the judge's answer", () => {
  it("one JSON object, best among the attempts offered, reasons kept", () => {
    expect(parseVerdict('I read them.\n{"best": 2, "reasons": ["smaller", "tested"]}', [1, 2, 3])).toEqual({ best: 2, reasons: ["smaller", "tested"] });
    expect(parseVerdict('{"best": 3}', [1, 3])).toEqual({ best: 3, reasons: [] });
  });

  it("anything else is a fallback with the reason", () => {
    expect(parseVerdict("attempt 2", [1, 2])).toEqual({ fallback: "the judge's answer holds no JSON object" });
    expect(parseVerdict("{best: 2}", [1, 2])).toEqual({ fallback: "the judge's answer is not valid JSON" });
    expect(parseVerdict('{"best": 4}', [1, 2])).toMatchObject({ fallback: expect.stringMatching(/best must be one of the attempts offered \(1, 2\)/) });
    expect(parseVerdict('{"best": "2"}', [1, 2])).toMatchObject({ fallback: expect.stringMatching(/out of shape: best/) });
    expect(parseVerdict('{"best": 1.5}', [1, 2])).toMatchObject({ fallback: expect.stringMatching(/out of shape/) });
  });
});

describe("changed lines, concurrency, markers", () => {
  it("counts added and removed lines of the hunks, not the headers", async () => {
    const patch = path.join(mkdtempSync(path.join(os.tmpdir(), "attempts-patch-")), "patch.diff");
    writeFileSync(
      patch,
      [
        "diff --git a/a.txt b/a.txt",
        "--- a/a.txt",
        "+++ b/a.txt",
        "@@ -1,2 +1,2 @@",
        " same",
        "-old",
        "+new",
        "diff --git a/b.txt b/b.txt",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/b.txt",
        "@@ -0,0 +1,2 @@",
        "+--- not a header",
        "++++ nor this",
        "",
      ].join("\n"),
    );
    expect(await changedLines(patch)).toBe(4);
    expect(await changedLines(path.join(path.dirname(patch), "missing.diff"))).toBe(0);
  });

  it("min(N, cores) at once, at least one", () => {
    expect(attemptConcurrency(3, 2)).toBe(2);
    expect(attemptConcurrency(3, 8)).toBe(3);
    expect(attemptConcurrency(2, 0)).toBe(1);
  });

  it("one marker per attempt and one for the judge, all saved for the post step", () => {
    expect(allRunIds("abc", 3)).toEqual(["abc-attempt-1", "abc-attempt-2", "abc-attempt-3", "abc-judge"]);
  });
});

describe("the checkout copied for each attempt", () => {
  const repo = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "attempts-repo-"));
    const env = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" };
    execFileSync("git", ["init", "-q", "-b", "main"], { cwd: dir, env });
    mkdirSync(path.join(dir, "sub"));
    writeFileSync(path.join(dir, "sub", "a.txt"), "a\n");
    execFileSync("git", ["add", "-A"], { cwd: dir, env });
    execFileSync("git", ["commit", "-qm", "i"], { cwd: dir, env });
    writeFileSync(path.join(dir, "untracked.txt"), "u\n");
    return realpathSync(dir);
  };
  const gitEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

  it("the whole checkout (untracked files and .git included), working-directory kept inside it", async () => {
    const dir = repo();
    const touched = TouchedWorkspaces.forJob(mkdtempSync(path.join(os.tmpdir(), "attempts-temp-")));
    const source = await checkoutOf(path.join(dir, "sub"), gitEnv, touched);
    expect(source).toEqual({ workTree: dir, pathspec: "sub" });
    const copy = await copyCheckout(source, mkdtempSync(path.join(os.tmpdir(), "attempts-copy-")));
    expect(copy.workspace).toBe(path.join(copy.workTree, "sub"));
    expect(readFileSync(path.join(copy.workTree, "untracked.txt"), "utf8")).toBe("u\n");
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: copy.workTree, encoding: "utf8" })).toBe("?? untracked.txt\n");
  });

  it("refused after an earlier agent of this job ran there: its .git is not trusted any more", async () => {
    const dir = repo();
    const touched = TouchedWorkspaces.forJob(mkdtempSync(path.join(os.tmpdir(), "attempts-temp-")));
    await touched.mark({ workTree: dir, gitDir: path.join(dir, ".git"), commonDir: path.join(dir, ".git") });
    await expect(checkoutOf(dir, gitEnv, touched)).rejects.toThrow(/Input 'attempts': an agent already ran in this repository earlier in this job/);
  });
});
