/**
 * Attack rows for issue 17 item 7 (credentials anywhere in the workspace),
 * through dist/ in bwrap as the runner runs the step.
 *
 * The workspace carries what checkouts leave behind, in every git config the
 * agent could reach: the top `.git/config` and a file it includes, the main
 * worktree's `config.worktree`, a linked worktree's `config.worktree`, a
 * submodule's `.git/modules/lib/config`, a nested checkout's
 * `vendor/tool/.git/config`, and a nested checkout whose `.git` is a gitfile
 * pointing to a git dir outside the workspace (visible read-only). Each holds
 * an `http.https://github.com/.extraheader AUTHORIZATION: basic …` and/or a
 * token in a remote URL. The hostile agent greps every file it can read there.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { attackReport } from "../support/attack-report.js";
import { REPO_ROOT, runActionSteps } from "../support/harness.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");
/** Distinct secrets per file, so a hit says which mask failed. */
const T = {
  topHeader: "ghs_credTopHeader00000000000000000001",
  topUrl: "ghs_credTopUrl0000000000000000000000002",
  included: "ghs_credIncluded000000000000000000000003",
  mainWorktree: "ghs_credMainWorktree00000000000000000004",
  linkedWorktree: "ghs_credLinkedWorktree000000000000000005",
  submoduleHeader: "ghs_credSubmoduleHeader00000000000000006",
  submoduleUrl: "credSubmodulePassword0000000000000007",
  nested: "ghs_credNestedCheckout000000000000000008",
  gitfile: "ghs_credGitfileTarget0000000000000000009",
};
/** What the agent would find: the raw token or its base64 in an AUTHORIZATION header. */
const needles = Object.values(T).flatMap((t) => [t, b64(`x-access-token:${t}`)]);

const cleanup: string[] = [];
afterAll(() => {
  for (const p of cleanup) rmSync(p, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", "-c", "protocol.file.allow=always", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}
const header = (t: string) => `AUTHORIZATION: basic ${b64(`x-access-token:${t}`)}`;
const setCfg = (file: string, key: string, value: string) => execFileSync("git", ["config", "--file", file, key, value]);

/** The workspace, and every credential-bearing config file in it (to check the host's copies after the run). */
function makeWorkspace(): { ws: string; outside: string; configs: string[] } {
  const root = mkdtempSync(path.join(os.tmpdir(), "cred-"));
  cleanup.push(root);
  // A git dir outside the workspace and outside every folder the sandbox hides: readable by the agent.
  const outside = mkdtempSync("/opt/agent-runner-cred-test-");
  cleanup.push(outside);

  const lib = path.join(root, "lib-src");
  mkdirSync(lib);
  git(lib, "init", "-q", "-b", "main");
  writeFileSync(path.join(lib, "lib.txt"), "lib\n");
  git(lib, "add", "-A");
  git(lib, "commit", "-qm", "lib");

  const ws = path.join(root, "ws");
  mkdirSync(ws);
  git(ws, "init", "-q", "-b", "main");
  writeFileSync(path.join(ws, "README.md"), "hi\n");
  // Nested checkouts are not part of this repository's content.
  writeFileSync(path.join(ws, ".gitignore"), "vendor/\next/\n");
  git(ws, "add", "-A");
  git(ws, "commit", "-qm", "init");
  git(ws, "submodule", "add", "-q", lib, "lib");
  git(ws, "commit", "-qm", "lib");

  const dotGit = path.join(ws, ".git");
  const top = path.join(dotGit, "config");
  setCfg(top, "http.https://github.com/.extraheader", header(T.topHeader));
  setCfg(top, "remote.origin.url", `https://x-access-token:${T.topUrl}@github.com/o/r`);
  setCfg(top, "extensions.worktreeConfig", "true");
  // An included file inside .git (as a credential setup could write one).
  const included = path.join(dotGit, "credentials.inc");
  setCfg(included, "http.https://github.com/.extraheader", header(T.included));
  setCfg(top, "include.path", "credentials.inc");
  const mainWt = path.join(dotGit, "config.worktree");
  setCfg(mainWt, "http.https://github.com/.extraheader", header(T.mainWorktree));

  git(ws, "worktree", "add", "-q", path.join(root, "wt"), "-b", "wt");
  const linkedWt = path.join(dotGit, "worktrees", "wt", "config.worktree");
  setCfg(linkedWt, "remote.origin.pushurl", `https://x-access-token:${T.linkedWorktree}@github.com/o/r`);

  const sub = path.join(dotGit, "modules", "lib", "config");
  setCfg(sub, "http.https://github.com/.extraheader", header(T.submoduleHeader));
  setCfg(sub, "remote.origin.url", `https://someone:${T.submoduleUrl}@github.com/o/lib`);

  const nestedDir = path.join(ws, "vendor", "tool");
  mkdirSync(nestedDir, { recursive: true });
  git(nestedDir, "init", "-q");
  const nested = path.join(nestedDir, ".git", "config");
  setCfg(nested, "remote.origin.url", `https://x-access-token:${T.nested}@github.com/o/tool`);

  const extDir = path.join(ws, "ext");
  git(ws, "init", "-q", `--separate-git-dir=${path.join(outside, "ext.git")}`, extDir);
  const gitfileTarget = path.join(outside, "ext.git", "config");
  setCfg(gitfileTarget, "http.https://github.com/.extraheader", header(T.gitfile));

  return { ws, outside, configs: [top, included, mainWt, linkedWt, sub, nested, gitfileTarget] };
}

const digest = (files: string[]) => Object.fromEntries(files.map((f) => [f, createHash("sha256").update(readFileSync(f)).digest("hex")]));

function agentScript(outside: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cred-agent-"));
  cleanup.push(dir);
  const patterns = path.join(dir, "needles");
  writeFileSync(patterns, needles.join("\n") + "\n");
  const script = path.join(dir, "agent.sh");
  writeFileSync(
    script,
    `#!/bin/bash
export PATH=/usr/bin:/bin
touch ran.txt
report() { echo "REPORT $1=$2"; }
# Every file it can read under the workspace (.git included) and where the gitfile points.
hits=$(grep -rIaoFh -f ${patterns} . ${outside} /etc/gitconfig 2>/dev/null | sort -u | wc -l)
report hits $hits
report files_read $(find . ${outside} -type f -readable 2>/dev/null | wc -l)
# What git itself shows, per repository.
shown=$( (git config --list --show-origin; git -C lib config --list; git -C vendor/tool config --list; git -C ext config --list) 2>&1 )
report git_hits $(grep -cFf ${patterns} <<<"$shown")
report extraheader_keys $(grep -ci extraheader <<<"$shown")
report sub_url $(git -C lib config remote.origin.url)
report top_url $(git config remote.origin.url)
# Try to get the originals back: rewrite a masked file, remove the mask.
echo x >> .git/modules/lib/config 2>/dev/null && report wrote_sub_config 1 || report wrote_sub_config 0
umount .git/config 2>/dev/null && report umount 1 || report umount 0
report done 1
`,
  );
  chmodSync(script, 0o755);
  return script;
}

const reportOf = attackReport;

describe("credentials anywhere in the workspace (through dist/, bwrap)", () => {
  it("submodule, worktree, nested-checkout, gitfile-target and included configs: the agent finds no token; the host's files are unchanged", async () => {
    const { ws, outside, configs } = makeWorkspace();
    const before = digest(configs);
    const { main } = await runActionSteps({
      workspace: ws,
      inputs: { agent: "command", "agent-command": agentScript(outside), prompt: "find tokens", sandbox: "bwrap", network: "none" },
    });
    expect(main.outputs.conclusion).toBe("success");
    const report = reportOf(main);
    expect(report).toMatchObject({ done: "1", hits: "0", git_hits: "0", extraheader_keys: "0", wrote_sub_config: "0", umount: "0" });
    expect(Number(report.files_read)).toBeGreaterThan(10);
    // Masked, not hidden: the agent's git still knows its remotes, without credentials.
    expect(report.sub_url).toBe("https://github.com/o/lib");
    expect(report.top_url).toBe("https://github.com/o/r");
    // A mount, not an edit: every real config still holds what it held.
    expect(digest(configs)).toEqual(before);
    expect(readFileSync(path.join(ws, ".git/modules/lib/config"), "utf8")).toContain(`someone:${T.submoduleUrl}@`);
  });

  it("a token the masks cannot remove (`hub.oauthtoken` in a submodule config): the run refuses to start, naming the file", async () => {
    const { ws, outside } = makeWorkspace();
    const sub = path.join(ws, ".git/modules/lib/config");
    setCfg(sub, "hub.oauthtoken", "ghp_credUnknownKey000000000000000000010");
    const { main } = await runActionSteps({
      workspace: ws,
      inputs: { agent: "command", "agent-command": agentScript(outside), prompt: "find tokens", sandbox: "bwrap", network: "none" },
    });
    expect(main.exitCode).toBe(1);
    expect(existsSync(path.join(ws, "ran.txt"))).toBe(false);
    const error = main.log.split("\n").filter((l) => l.startsWith("::error::")).join("\n");
    expect(error).toContain("Input 'sandbox': the agent would see a GitHub token in");
    expect(error).toContain(path.join(".git", "modules", "lib", "config"));
    expect(error).toContain("persist-credentials: false");
    expect(main.log).not.toContain("ghp_credUnknownKey");
  });

  it("sandbox: none warns, naming each config the agent can read credentials in (none is not a boundary)", async () => {
    const { ws, outside } = makeWorkspace();
    const { main } = await runActionSteps({
      workspace: ws,
      inputs: { agent: "command", "agent-command": agentScript(outside), prompt: "find tokens", sandbox: "none", network: "open" },
    });
    expect(main.outputs.conclusion).toBe("success");
    const warnings = main.log.split("\n").filter((l) => l.startsWith("::warning::sandbox: none: the agent can read"));
    expect(warnings.join("\n")).toContain(path.join(".git", "modules", "lib", "config"));
    expect(warnings.join("\n")).toContain(path.join("vendor", "tool", ".git", "config"));
    expect(warnings.length).toBeGreaterThanOrEqual(7);
    expect(Number(reportOf(main).hits)).toBeGreaterThan(0);
  });
});

/**
 * Attack row H2: a workflow passes every vendor's key (the reusable workflow with
 * `secrets: inherit`, or a run whose detection agent is another vendor's). Only
 * gateways get model keys: a `claude` that is really a bash script, and the
 * verify check after it, see no OPENAI_/CODEX_/GEMINI_/GOOGLE_API_KEY, nor the
 * real ANTHROPIC_API_KEY; an ordinary secret still arrives.
 */
describe("other vendors' model keys (through dist/, bwrap)", () => {
  const KEYS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"];

  it("agent claude with OPENAI/CODEX/GEMINI/GOOGLE keys in secrets: neither the agent nor verify-command has any of them", async () => {
    // In the repository, which the sandbox shows read-only (it hides /tmp).
    mkdirSync(path.join(REPO_ROOT, "test-output"), { recursive: true });
    const bin = mkdtempSync(path.join(REPO_ROOT, "test-output", "keys-bin-"));
    cleanup.push(bin);
    writeFileSync(
      path.join(bin, "claude"),
      `#!/bin/bash
if [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
cat > /dev/null
for n in ${KEYS.join(" ")} TOOL_TOKEN; do v="\${!n}"; echo "REPORT $n=\${v:+\${#v}}"; done
echo "REPORT real_anthropic=$(printf '%s' "$ANTHROPIC_API_KEY" | grep -c real-anthropic)"
echo "REPORT done=1"
`,
    );
    chmodSync(path.join(bin, "claude"), 0o755);
    const values = Object.fromEntries(KEYS.map((k) => [k, `${k.toLowerCase()}-real-${k.length}-0123456789abcdef`]));
    values.ANTHROPIC_API_KEY = "sk-ant-real-anthropic-key-0123456789";
    const ws = (() => {
      const d = mkdtempSync(path.join(os.tmpdir(), "keys-ws-"));
      cleanup.push(d);
      git(d, "init", "-q", "-b", "main");
      writeFileSync(path.join(d, "README.md"), "# keys\n");
      git(d, "add", ".");
      git(d, "commit", "-qm", "init");
      return d;
    })();
    const { main } = await runActionSteps({
      workspace: ws,
      inputs: {
        agent: "claude",
        "agent-version": "preinstalled",
        model: "claude-sonnet-4-5",
        // A dead local endpoint: the script makes no model request, and nothing may leave the machine.
        "base-url": "http://127.0.0.1:9",
        prompt: "look around",
        sandbox: "bwrap",
        network: "model-only",
        "threat-detection": "none",
        secrets: [...Object.entries(values).map(([k, v]) => `${k}=${v}`), "TOOL_TOKEN=tool-token-value"].join("\n"),
        "verify-command": "bash -c 'env | cut -d= -f1 | sort'",
        "max-fix-rounds": "0",
      },
      env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin` },
    });
    const report = attackReport(main);
    expect(report.done, main.log).toBe("1");
    // The control: an ordinary secret reaches the agent.
    expect(report.TOOL_TOKEN).toBe(String("tool-token-value".length));
    for (const k of ["OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"]) expect(report[k], k).toBe("");
    // Its own key variable is the gateway's placeholder, never the real one.
    expect(report.real_anthropic).toBe("0");
    const verifyLog = readFileSync(path.join(path.dirname(main.outputs["patch-path"]!), "verify/verify-1.log"), "utf8");
    expect(verifyLog).toMatch(/^TOOL_TOKEN$/m);
    for (const k of KEYS) expect(verifyLog).not.toMatch(new RegExp(`^${k}$`, "m"));
  });
});
