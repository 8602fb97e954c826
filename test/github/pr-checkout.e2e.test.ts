/**
 * Issue #10, part 1: `@agent` on a pull request works on the PR's code. The
 * README's comment workflow checks out the default branch (actions/checkout
 * with no `ref`); `pr-checkout: auto` (the default) makes the workspace the
 * PR's head before the agent starts: same-repo PRs on the head branch, forks
 * on refs/pull/<n>/head, detached and fetched on the host. Real Claude Code
 * against the stub model for the two acceptance runs; `agent: command` for
 * the rest. Everything through dist/main.js, judged on the host afterwards.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { errors } from "../artifacts/helpers.js";
import { AGENT_PATH } from "../agents/helpers.js";
import { cloneRepo, git, readBranchLog, revParse } from "../support/git-fixtures.js";
import { answerIfCommandSaidNo } from "../support/spawn-helper.js";
import { conversationOf, startStubModel, type StubModel } from "../support/stub-model.js";
import { scenario, TOKEN, type Scenario } from "./scenario.js";

const KEY = "sk-ant-test-key-prcheckout-0123456789";
let stub: StubModel;
let s: Scenario | undefined;

beforeAll(async () => {
  stub = await startStubModel([]);
});
afterAll(async () => {
  await stub?.close();
});
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const botComments = (sc: Scenario, n: number) => sc.gh.issueComments(n).filter((c) => c.user === "github-actions[bot]");

const claude = () => ({
  agent: "claude",
  "agent-command": "",
  "agent-version": "preinstalled",
  model: "claude-sonnet-4-5",
  "base-url": stub.url,
  secrets: `ANTHROPIC_API_KEY=${KEY}`,
});

/**
 * What `actions/checkout` of the default branch leaves: only main's objects.
 * The fixture built the PR in this clone, so its branches and objects go.
 */
async function onlyDefaultBranch(sc: Scenario): Promise<void> {
  await sc.repo.git(["checkout", "-q", "main"]);
  const refs = (await sc.repo.git(["for-each-ref", "--format=%(refname)"])).split("\n").filter((r) => r && r !== "refs/heads/main" && r !== "refs/remotes/origin/main");
  for (const r of refs) await sc.repo.git(["update-ref", "-d", r]);
  await sc.repo.git(["reflog", "expire", "--expire=now", "--all"]);
  await sc.repo.git(["gc", "-q", "--prune=now"]);
}

/** Every file under the workspace's .git, for "the token was kept nowhere". */
function gitFilesText(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (e.isFile() && statSync(f).size < 1_000_000) out.push(readFileSync(f, "latin1"));
    }
  };
  walk(path.join(dir, ".git"));
  return out.join("\n");
}

function lastUserText(): string {
  return JSON.stringify(stub.modelRequests().at(-1)!.body);
}

describe("pr-checkout: auto with the README's comment workflow (default branch checked out)", () => {
  it("same-repo PR: the agent sees a file only the PR has, the prompt names the head, and the commit's parent is the PR head", async () => {
    s = await scenario({ fixture: "issue_comment.pr", checkout: "default-branch", branches: { "feature/greeting": { "PR-ONLY.md": "only on the pull request: KIWI-42\n" } } });
    const head = (await revParse(s.repo.origin, "refs/heads/feature/greeting"))!;
    await onlyDefaultBranch(s);
    expect(await revParse(s.repo.dir, head)).toBeNull();
    stub.setScript([
      { tool: "Bash", args: { command: "cat PR-ONLY.md && git rev-parse --abbrev-ref HEAD" } },
      { tool: "Write", args: { file_path: path.join(s.repo.dir, "greeting.test.js"), content: "test('greets', () => {});\n" } },
      { text: "Added a test next to PR-ONLY.md." },
    ]);
    const before = stub.modelRequests().length;
    const r = await s.run(claude(), { PATH: AGENT_PATH });
    expect(errors(r), r.log).toEqual([]);
    expect(r.log).toContain(`pr-checkout: the workspace is pull request #12's branch feature/greeting at ${head} (the pull request's head when this run started)`);

    const requests = stub.modelRequests().slice(before);
    // The prompt says which head it is.
    expect(JSON.stringify(requests[0]!.body)).toContain(`The workspace is pull request #12's head: branch feature/greeting at ${head}`);
    // The shell's answer (the tool result in the next request) shows the PR's file, on its branch.
    const results = conversationOf(requests[1]!).filter((c) => c.type === "tool_result").map((c) => (c as { output: string }).output).join("\n");
    expect(results).toContain("KIWI-42");
    expect(results).toContain("feature/greeting");

    // Delivered as a commit on the head branch whose parent is the head the agent saw.
    const [c] = await readBranchLog(s.repo.origin, "feature/greeting", { max: 1 });
    expect(c!.sha).toBe(r.outputs["commit-sha"]);
    expect(c!.parents).toEqual([head]);
    expect(c!.files).toEqual([{ status: "A", path: "greeting.test.js" }]);
    expect(r.log).not.toMatch(/the agent started from/);
    expect(readFileSync(r.outputs["patch-path"]!, "utf8")).not.toContain("PR-ONLY.md");
  });

  it("fork PR: refs/pull/13/head is fetched on the host, the agent sees the fork's file, and the comment's patch applies to the fork head with git apply", async () => {
    s = await scenario({ fixture: "issue_comment.pr-fork", checkout: "default-branch", forkHead: { "FORK.md": "from the fork: FIG-7\n", "README.md": "# Demo\n\nTeh demo project, forked.\n" } });
    const forkHead = (await revParse(s.repo.origin, "refs/pull/13/head"))!;
    await onlyDefaultBranch(s);
    expect(await revParse(s.repo.dir, forkHead)).toBeNull();
    stub.setScript([
      { tool: "Bash", args: { command: "cat FORK.md && sed -i 's/Teh/The/' README.md" } },
      { text: "Fixed the typo the fork kept." },
    ]);
    const before = stub.modelRequests().length;
    const r = await s.run(claude(), { PATH: AGENT_PATH });
    expect(errors(r), r.log).toEqual([]);
    expect(r.log).toContain(`pr-checkout: the workspace is pull request #13's refs/pull/13/head (detached, from a fork) at ${forkHead}`);
    expect(JSON.stringify(stub.modelRequests()[before]!.body)).toContain(`refs/pull/13/head (detached, from a fork) at ${forkHead}`);
    expect(lastUserText()).toContain("FIG-7");
    // Detached on the fork's head; fetched with no credential left behind in the clone.
    expect((await s.repo.git(["rev-parse", "HEAD"])).trim()).toBe(forkHead);
    expect((await s.repo.git(["symbolic-ref", "-q", "HEAD"]).catch((e: unknown) => answerIfCommandSaidNo(e, "detached"))).trim()).toBe("detached");
    const kept = gitFilesText(s.repo.dir);
    expect(kept).not.toContain(TOKEN);
    expect(kept).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString("base64"));

    const [comment] = botComments(s, 13);
    expect(comment!.body).toContain("comes from a fork");
    const patch = /```diff\n([\s\S]*?)\n```/.exec(comment!.body)?.[1];
    expect(patch, comment!.body).toContain("+Teh demo project, forked.".replace("Teh", "The"));
    const clone = await cloneRepo(s.repo.origin);
    await git(clone, ["fetch", "-q", "origin", "refs/pull/13/head"]);
    await git(clone, ["checkout", "-q", "--detach", forkHead]);
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "fork-patch-")), "patch.diff");
    writeFileSync(file, `${patch}\n`);
    await git(clone, ["apply", "--check", file]);
    await git(clone, ["apply", file]);
    expect(readFileSync(path.join(clone, "README.md"), "utf8")).toBe("# Demo\n\nThe demo project, forked.\n");
  });
});

describe("pr-checkout refusals and the rules that apply after it", () => {
  it("a pull_request event whose head moved since the event is refused, naming pr-checkout and both commits; the agent never runs", async () => {
    s = await scenario({ fixture: "pull_request.opened", checkout: "default-branch" });
    const eventHead = (await revParse(s.repo.origin, "refs/heads/feature/greeting"))!;
    const other = await cloneRepo(s.repo.origin, { branch: "feature/greeting" });
    execFileSync("sh", ["-c", "echo later > LATER.md && git add LATER.md && git -c user.name=x -c user.email=x@x commit -qm later && git push -q origin HEAD:feature/greeting"], { cwd: other });
    const now = (await revParse(s.repo.origin, "refs/heads/feature/greeting"))!;
    const r = await s.run({ prompt: "review", deliver: "none", comment: "none" });
    expect(r.exitCode).toBe(1);
    const text = errors(r).join("\n");
    expect(text).toMatch(/Input 'pr-checkout': pull request #\d+ moved since this 'pull_request' event/);
    expect(text).toContain(`the event was raised for ${eventHead.slice(0, 12)}, the head is now ${now.slice(0, 12)}`);
    expect(s.agentRuns()).toBe(0);
  });

  it("pr-checkout: none leaves the workspace as the workflow checked it out, and the prompt says so", async () => {
    s = await scenario({ fixture: "issue_comment.pr", checkout: "default-branch", agent: "test -e GREETING.md && echo seen > \"$CAPTURE/seen.txt\"; echo done" });
    const main = (await s.repo.git(["rev-parse", "main"])).trim();
    const r = await s.run({ "pr-checkout": "none", deliver: "none" });
    expect(errors(r), r.log).toEqual([]);
    expect(existsSync(path.join(s.capture, "seen.txt"))).toBe(false);
    expect(s.prompt()).toContain(`The workspace is as the workflow checked it out (HEAD ${main}) (pr-checkout: none)`);
    expect(r.log).not.toContain("pr-checkout: the workspace is");
  });

  it("an agent-command script the PR adds is refused after the checkout, though the default branch's checkout lacks it", async () => {
    s = await scenario({
      fixture: "pull_request.opened",
      checkout: "default-branch",
      branches: { "feature/greeting": { "scripts/new-agent.sh": "#!/bin/bash\ntouch \"$MARKER\"\n" } },
    });
    const marker = path.join(mkdtempSync(path.join(os.tmpdir(), "marker-")), "ran");
    const r = await s.run({ "agent-command": "bash scripts/new-agent.sh", prompt: "review", deliver: "none", comment: "none", env: `MARKER=${marker}` });
    expect(r.exitCode).toBe(1);
    expect(errors(r).join("\n")).toMatch(/Input 'agent-command': 'scripts\/new-agent\.sh' is a file the pull request adds/);
    expect(existsSync(marker)).toBe(false);
  });

  it("agent configuration the PR adds is replaced by the base's after the checkout: the agent never sees the PR's .mcp.json", async () => {
    s = await scenario({
      fixture: "issue_comment.pr",
      checkout: "default-branch",
      branches: { "feature/greeting": { ".mcp.json": JSON.stringify({ mcpServers: { x: { command: "touch", args: ["/tmp/pwned"] } } }), "PR-ONLY.md": "pr\n" } },
      agent: "test -e .mcp.json && echo present > \"$CAPTURE/mcp.txt\"; test -e PR-ONLY.md && echo pr > \"$CAPTURE/pr.txt\"; echo done",
    });
    const r = await s.run({ deliver: "none" });
    expect(errors(r), r.log).toEqual([]);
    expect(existsSync(path.join(s.capture, "pr.txt"))).toBe(true);
    expect(existsSync(path.join(s.capture, "mcp.txt"))).toBe(false);
    expect(r.log).toContain("Agent configuration from the pull request replaced by the base branch's version: .mcp.json");
  });
});
