/**
 * The tests' spawn helper (test/support/spawn-helper.ts) runs commands from a small process of its own:
 * what the command gets and what comes back must be exactly what a spawn from the worker gives.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { branchExists, git, revParse } from "../support/git-fixtures.js";
import { answerIfCommandSaidNo, CommandFailed, execFileFromHelper, isSpawnHelperFailure, runFromHelper, SpawnHelperError, spawnHelperPid } from "../support/spawn-helper.js";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const cwd = os.tmpdir();

describe("the tests' spawn helper", () => {
  it("passes every byte value through standard input and output, and arguments with line separators as they are", async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const cat = await runFromHelper("cat", [], { cwd, env, input: Buffer.concat([bytes, bytes]) });
    expect(cat.code).toBe(0);
    expect(cat.stdout.equals(Buffer.concat([bytes, bytes]))).toBe(true);
    const odd = "a\u2028b\u2029c\nd\r\ne";
    const printed = await runFromHelper("printf", ["%s", odd], { cwd, env });
    expect(printed.stdout.toString("utf8")).toBe(odd);
  });

  it("gives the command only the environment and folder asked for", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "helper-cwd-"));
    const r = await runFromHelper("sh", ["-c", 'printf "%s|%s|%s" "$FOO" "${HOME-unset}" "$PWD"'], { cwd: dir, env: { ...env, FOO: "bar" } });
    expect(r.stdout.toString()).toBe(`bar|unset|${dir}`);
  });

  it("relays exit codes, signals and standard error; a command that cannot start rejects with its errno", async () => {
    const failed = await runFromHelper("sh", ["-c", "printf out; printf err >&2; exit 3"], { cwd, env });
    expect([failed.code, failed.signal, failed.stdout.toString(), failed.stderr.toString()]).toEqual([3, null, "out", "err"]);
    const killed = await runFromHelper("sh", ["-c", "kill -TERM $$"], { cwd, env });
    expect([killed.code, killed.signal]).toEqual([null, "SIGTERM"]);
    await expect(runFromHelper("/nonexistent/command", [], { cwd, env })).rejects.toMatchObject({ code: "ENOENT" });
    await expect(runFromHelper("true", [], { cwd: "/nonexistent/folder", env })).rejects.toMatchObject({ code: "ENOENT" });
    // A command's own failure is not the helper's.
    const e = await runFromHelper("/nonexistent/command", [], { cwd, env }).catch((x: unknown) => x);
    expect(isSpawnHelperFailure(e)).toBe(false);
  });

  it("returns large outputs whole, and answers concurrent commands each with its own", async () => {
    const big = await runFromHelper("head", ["-c", "10000000", "/dev/zero"], { cwd, env });
    expect(big.stdout.length).toBe(10_000_000);
    // The first asked finishes last: each reply must find its own request, not the oldest one waiting.
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => runFromHelper("sh", ["-c", `sleep 0.${String(30 - i).padStart(2, "0")}; printf n${i}`], { cwd, env })),
    );
    expect(answers.map((a) => a.stdout.toString())).toEqual(Array.from({ length: 30 }, (_, i) => `n${i}`));
  });

  it("execFileFromHelper behaves as promisify(execFile): text, a rejection carrying the exit code, and the 1 MiB limit", async () => {
    await expect(execFileFromHelper("printf", ["%s", "x"], { env })).resolves.toEqual({ stdout: "x", stderr: "" });
    await expect(execFileFromHelper("sh", ["-c", "printf e >&2; exit 2"], { env })).rejects.toMatchObject({ code: 2, stderr: "e" });
    // A signal is no exit code: not a CommandFailed, so never read as git's "no".
    const killed = await execFileFromHelper("sh", ["-c", "kill -9 $$"], { env }).catch((e: unknown) => e);
    expect(killed).toBeInstanceOf(Error);
    expect(killed).not.toBeInstanceOf(CommandFailed);
    expect(String(killed)).toMatch(/killed by SIGKILL/);
    await expect(execFileFromHelper("head", ["-c", String(1024 * 1024), "/dev/zero"], { env })).resolves.toMatchObject({ stderr: "" });
    await expect(execFileFromHelper("head", ["-c", String(1024 * 1024 + 1), "/dev/zero"], { env })).rejects.toThrow(/maxBuffer/);
  });

  it("a helper that dies fails what was under way as its own failure, and the next command starts a new helper", async () => {
    const sleeping = runFromHelper("sleep", ["5"], { cwd, env });
    const pid = spawnHelperPid();
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, "SIGKILL");
    const e = await sleeping.catch((x: unknown) => x);
    expect(isSpawnHelperFailure(e)).toBe(true);
    const again = await runFromHelper("printf", ["%s", "back"], { cwd, env });
    expect(again.stdout.toString()).toBe("back");
    expect(spawnHelperPid()).not.toBe(pid);
  });

  it("only a command that ran and said no is an answer: a helper failure or a command that could not start is thrown on", async () => {
    expect(answerIfCommandSaidNo(new CommandFailed("git said no", 1, "", ""), "no")).toBe("no");
    expect(() => answerIfCommandSaidNo(new SpawnHelperError("helper gone"), "no")).toThrow(SpawnHelperError);
    expect(() => answerIfCommandSaidNo(Object.assign(new Error("spawn git ENOENT"), { code: "ENOENT" }), "no")).toThrow(/ENOENT/);
    const repo = mkdtempSync(path.join(os.tmpdir(), "helper-repo-"));
    await git(repo, ["init", "-q"]);
    await expect(git(repo, ["rev-parse", "--verify", "--quiet", "refs/heads/none"])).rejects.toBeInstanceOf(CommandFailed);
    expect(await branchExists(repo, "none")).toBe(false);
    expect(await revParse(repo, "refs/heads/none")).toBeNull();
    // A folder that is not there: git never ran, so there is no answer to give.
    await expect(branchExists(path.join(repo, "gone"), "main")).rejects.toThrow(/ENOENT/);
  });
});
