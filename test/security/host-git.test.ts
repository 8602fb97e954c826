/**
 * Attack table, row 1: host-side git isolation (SECURITY.md). A hostile
 * `command` agent plants repository state that would make a git process on
 * the host run its program (filters, textconv, fsmonitor, hooks, pager,
 * askpass, sshCommand) or read what it chose (alternates, a replaced `.git`,
 * a nested `.git`). Every row runs through dist/ the way the runner runs it,
 * in bubblewrap and (to prove the host side holds on its own) without a
 * sandbox, and is judged on the host: the payload left no marker, and the
 * agent's ordinary change is still collected.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { scenario } from "../github/scenario.js";
import { runActionSteps } from "../support/harness.js";

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

/** The workspace every test starts from, built with git once and copied (a full copy: an attack rewrites its .git). */
let template: string | undefined;
function makeRepo(): string {
  if (!template) {
    const built = mkdtempSync(path.join(os.tmpdir(), "hostgit-template-"));
    git(built, "init", "-q", "-b", "main");
    mkdirSync(path.join(built, "sub"));
    writeFileSync(path.join(built, "README.md"), "hi\n");
    writeFileSync(path.join(built, "sub", "keep.txt"), "keep\n");
    git(built, "add", "-A");
    git(built, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init");
    template = built;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "hostgit-ws-"));
  cpSync(template, dir, { recursive: true, preserveTimestamps: true });
  return dir;
}

/** A repository outside the workspace holding a commit the agent should never get listed as its own. */
function makeHostRepo(): { objects: string; commit: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hostgit-private-"));
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(path.join(dir, "secret.txt"), "HOST-ONLY-CONTENT\n");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "host only");
  return { objects: path.join(dir, ".git", "objects"), commit: git(dir, "rev-parse", "HEAD") };
}

/**
 * The shared part of every attack: a payload that leaves a marker named after
 * the hook that ran it (and passes stdin through, as a filter must), and an
 * "evil" repository copy whose config points every command-valued key at it.
 */
const PRELUDE = String.raw`
set -u
P="$PWD/.attack/payload.sh"
mkdir -p "$PWD/.attack/hooks"
cat > "$P" <<EOF
#!/bin/sh
touch "$MARKS/\$(basename "\$1" 2>/dev/null || echo x)-\$\$"
cat 2>/dev/null
exit 0
EOF
chmod +x "$P"
for h in post-index-change pre-commit post-checkout reference-transaction pre-auto-gc; do
  printf '#!/bin/sh\n"%s" hook-%s\n' "$P" "$h" > "$PWD/.attack/hooks/$h"; chmod +x "$PWD/.attack/hooks/$h"
done
evil_config() {
  cat <<EOF
[core]
	repositoryformatversion = 0
	bare = false
	fsmonitor = "$P fsmonitor"
	hooksPath = $PWD/.attack/hooks
	pager = "$P pager"
	askPass = "$P askpass"
	sshCommand = "$P ssh"
	attributesFile = $PWD/.attack/attributes
[filter "x"]
	clean = "$P clean"
	smudge = "$P smudge"
	process = "$P process"
[diff "x"]
	textconv = "$P textconv"
	command = "$P diffcmd"
[diff]
	external = "$P external"
[remote "origin"]
	url = ext::$P ext
EOF
}
echo '* filter=x diff=x' > "$PWD/.attack/attributes"
make_evil_copy() { mkdir -p "$1"; cp -r .git/. "$1/"; chmod -R u+w "$1"; evil_config > "$1/config"; }
echo "ordinary change" > agent-change.txt
`;

interface Row {
  name: string;
  /** Bash that plants the vector (after PRELUDE; $MARKS, $P and helpers available). */
  plant: string;
  inputs?: Record<string, string>;
  /** The file the agent's ordinary change shows up as. */
  changed?: string;
}

const ROWS: Row[] = [
  {
    name: "commondir pointing at a copy whose config defines a clean filter, plus .gitattributes",
    plant: `make_evil_copy "$PWD/.attack/evil"; echo "$PWD/.attack/evil" > .git/commondir; echo '* filter=x diff=x' > .gitattributes`,
  },
  {
    name: ".git/config rewritten (filters, textconv, fsmonitor, hooksPath, pager, askpass, sshCommand)",
    plant: `evil_config > .git/config 2>/dev/null || true; echo '* filter=x diff=x' > .gitattributes`,
  },
  {
    name: "config.worktree with extensions.worktreeConfig",
    plant: `git config extensions.worktreeConfig true 2>/dev/null; evil_config > .git/config.worktree; echo '* filter=x diff=x' > .gitattributes`,
  },
  {
    name: "info/attributes naming a filter defined through commondir",
    plant: `make_evil_copy "$PWD/.attack/evil"; echo "$PWD/.attack/evil" > .git/commondir; mkdir -p .git/info "$PWD/.attack/evil/info"; echo '* filter=x diff=x' | tee .git/info/attributes > "$PWD/.attack/evil/info/attributes"`,
  },
  {
    name: ".gitattributes textconv and external diff",
    plant: `make_evil_copy "$PWD/.attack/evil"; echo "$PWD/.attack/evil" > .git/commondir; echo '* diff=x' > .gitattributes`,
  },
  {
    name: "hooks planted in .git/hooks (post-index-change runs on every index write)",
    plant: `mkdir -p .git/hooks; cp "$PWD"/.attack/hooks/* .git/hooks/`,
  },
  {
    name: ".git replaced by a gitfile pointing at an evil repository",
    plant: `make_evil_copy "$PWD/.attack/evil"; mv .git .git-orig 2>/dev/null || rm -rf .git; echo "gitdir: $PWD/.attack/evil" > .git`,
  },
  {
    name: ".git replaced by a symlink to an evil repository",
    plant: `make_evil_copy "$PWD/.attack/evil"; mv .git .git-orig 2>/dev/null || rm -rf .git; ln -s "$PWD/.attack/evil" .git`,
  },
  {
    name: "a new .git inside the working-directory subfolder",
    plant: `git init -q . 2>/dev/null; evil_config > .git/config; echo '* filter=x diff=x' > .gitattributes; cp "$PWD"/.attack/hooks/* .git/hooks/ 2>/dev/null; true`,
    inputs: { "working-directory": "sub" },
    changed: "sub/agent-change.txt",
  },
];

async function attack(row: Row, sandbox: string) {
  const ws = makeRepo();
  const marks = mkdtempSync(path.join(os.tmpdir(), "hostgit-marks-"));
  const script = path.join(mkdtempSync(path.join(os.tmpdir(), "hostgit-agent-")), "agent.sh");
  writeFileSync(script, `#!/bin/bash\nMARKS=${JSON.stringify(marks)}\n${PRELUDE}\n${row.plant}\necho planted\n`);
  chmodSync(script, 0o755);
  const { main } = await runActionSteps({
    workspace: ws,
    inputs: { agent: "command", "agent-command": script, prompt: "attack", sandbox, ...row.inputs },
  });
  return { main, marks: readdirSync(marks) };
}

describe.each(["bwrap", "none"])("host git ignores agent-written repository state (sandbox: %s)", (sandbox) => {
  it.each(ROWS.map((r) => [r.name, r] as const))("%s", async (_name, row) => {
    const { main, marks } = await attack(row, sandbox);
    // Nothing the agent configured ran on the host.
    expect(marks).toEqual([]);
    // The host still measured the agent's work from its own repository.
    expect(main.log).not.toMatch(/Collecting the agent's changes failed/);
    expect(JSON.parse(main.outputs["changed-files"] ?? "[]")).toContain(row.changed ?? "agent-change.txt");
  });

  it("objects/info/alternates and a HEAD naming a commit of another repository on the host", async () => {
    const host = makeHostRepo();
    const row: Row = {
      name: "alternates",
      plant: `mkdir -p .git/objects/info; echo ${JSON.stringify(host.objects)} > .git/objects/info/alternates; echo ${host.commit} > .git/HEAD`,
    };
    const { main, marks } = await attack(row, sandbox);
    expect(marks).toEqual([]);
    const result = JSON.parse(readFileSync(path.join(path.dirname(main.outputs["patch-path"]!), "result.json"), "utf8"));
    // The host never walked the other repository's objects on the agent's say-so.
    expect(result.diff.agentCommits).toEqual([]);
    expect(JSON.stringify(result)).not.toContain(host.commit);
    expect(readFileSync(main.outputs["patch-path"]!, "utf8")).not.toContain("HOST-ONLY-CONTENT");
  });
});

/** Two steps of one job (one RUNNER_TEMP) in the same workspace, each running its bash script as the agent in bwrap. */
function twoStepJob(ws: string, first: string, second: string) {
  const runnerTemp = mkdtempSync(path.join(os.tmpdir(), "hostgit-job-"));
  const dir = mkdtempSync(path.join(os.tmpdir(), "hostgit-agent-"));
  const step = (name: string, body: string) => {
    const script = path.join(dir, `${name}.sh`);
    writeFileSync(script, `#!/bin/bash\n${body}\n`);
    chmodSync(script, 0o755);
    return runActionSteps({ workspace: ws, runnerTemp, inputs: { agent: "command", "agent-command": script, prompt: "step", sandbox: "bwrap" } });
  };
  return { one: () => step("first", first), two: () => step("second", second) };
}

describe("a second agent step in the same job", () => {
  it("does not trust the repository the first step's agent left behind (commondir, attributes, .git replaced)", async () => {
    const ws = makeRepo();
    const marks = mkdtempSync(path.join(os.tmpdir(), "hostgit-marks-"));
    // Step 1 plants every vector it can; it also commits, so step 2 starts from the agent's HEAD.
    const job = twoStepJob(
      ws,
      `MARKS=${JSON.stringify(marks)}\n${PRELUDE}\nmake_evil_copy "$PWD/.attack/evil"\ngit add -A && git -c user.name=a -c user.email=a@b commit -qm step1\necho "$PWD/.attack/evil" > .git/commondir\necho '* filter=x diff=x' > .gitattributes\nmkdir -p .git/info; echo '* filter=x diff=x' > .git/info/attributes`,
      "echo step2 > step2.txt",
    );
    const one = await job.one();
    // Its own patch is refused (it adds filter attributes), so its conclusion is failure; what matters is step 2.
    expect(one.main.outputs.conclusion, one.main.log).toBe("failure");
    expect(one.main.log).toMatch(/The patch from this run was refused/);
    const two = await job.two();
    // Neither step 2's pre-agent git (baseline) nor its collection ran anything step 1 configured.
    expect(readdirSync(marks)).toEqual([]);
    expect(two.main.log).toContain("An agent of this job already ran in this repository");
    expect(two.main.outputs.conclusion).toBe("success");
    expect(JSON.parse(two.main.outputs["changed-files"] ?? "[]")).toEqual(["step2.txt"]);
  });
});

describe("a second agent step in the same job, and the config file", () => {
  it("refuses settings from a config file the first step's agent wrote (sandbox: none, network: open)", async () => {
    const ws = makeRepo();
    mkdirSync(path.join(ws, ".github"));
    writeFileSync(path.join(ws, ".github", "agent-runner.yml"), "timeout-minutes: 10\n");
    execFileSync("git", ["add", "-A"], { cwd: ws });
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "config"], { cwd: ws });
    const marker = path.join(mkdtempSync(path.join(os.tmpdir(), "hostgit-marker-")), "second-ran");
    const job = twoStepJob(ws, "printf 'sandbox: none\\nnetwork: open\\nallow-workflow-changes: true\\n' > .github/agent-runner.yml", `touch ${JSON.stringify(marker)}`);
    const one = await job.one();
    expect(one.main.outputs.conclusion, one.main.log).toBe("success");
    const two = await job.two();
    expect(two.main.exitCode).toBe(1);
    expect(two.main.log).toMatch(/Input 'config-file': an agent already ran in .* earlier in this job, and '.github\/agent-runner.yml' has changed since/);
    // The step never ran its agent, sandboxed or not.
    expect(existsSync(marker)).toBe(false);
  });

  it("keeps a committed config file that no agent changed (control)", async () => {
    const ws = makeRepo();
    mkdirSync(path.join(ws, ".github"));
    writeFileSync(path.join(ws, ".github", "agent-runner.yml"), "timeout-minutes: 10\n");
    const job = twoStepJob(ws, "true", "true");
    expect((await job.one()).main.outputs.conclusion).toBe("success");
    expect((await job.two()).main.outputs.conclusion).toBe("success");
  });
});

describe("a second agent step in the same job, triggered from a thread", () => {
  it("pushes to the repository's server, never to an origin the first step's agent pointed elsewhere", async () => {
    // Step 1 (sandbox none: the host side must hold on its own) points .git/commondir at a
    // copy whose origin is a repository the agent chose; step 2 delivers a pull request.
    const s = await scenario({
      fixture: "issue_comment.issue",
      agent: String.raw`if [ ! -f "$CAPTURE/planted" ]; then
  touch "$CAPTURE/planted"
  git clone -q --bare "$(git remote get-url origin)" "$CAPTURE/evil-origin.git"
  mkdir -p "$CAPTURE/evil" && cp -r .git/. "$CAPTURE/evil/"
  git --git-dir="$CAPTURE/evil" config remote.origin.url "$CAPTURE/evil-origin.git"
  echo "$CAPTURE/evil" > .git/commondir
else
  echo two > two.txt
fi`,
    });
    try {
      const one = await s.run({ deliver: "none", comment: "none" });
      expect(one.outputs.conclusion).toBe("success");
      await s.run({ deliver: "pull-request" }, {}, { runnerTemp: one.runnerTemp });
      expect(s.agentRuns()).toBe(2);
      // The copy the agent chose holds the repository's branches, so a push there would have worked.
      const evilRefs = execFileSync("git", ["--git-dir", path.join(s.capture, "evil-origin.git"), "for-each-ref", "--format=%(refname)"], { encoding: "utf8" });
      expect(evilRefs).toContain("refs/heads/main");
      expect(evilRefs).not.toContain("refs/heads/agent/");
    } finally {
      await s.close();
    }
  });
});

describe("a second agent step in the same job on a pull request", () => {
  it("refuses to run host git for the PR (checkout, base settings) in a repository an agent already ran in", async () => {
    const s = await scenario({ fixture: "issue_comment.pr", agent: "echo one >> one.txt" });
    try {
      const one = await s.run({ deliver: "none", comment: "none" });
      expect(one.outputs.conclusion).toBe("success");
      const two = await s.run({ deliver: "none", comment: "none" }, {}, { runnerTemp: one.runnerTemp });
      expect(two.exitCode).toBe(1);
      expect(two.log).toMatch(/Input 'working-directory': an agent already ran in .* earlier in this job/);
      expect(s.agentRuns()).toBe(1);
    } finally {
      await s.close();
    }
  });
});

describe("the agent's own commits are still found", () => {
  it("lists commits the agent made, without running git in its repository", async () => {
    const ws = makeRepo();
    const script = path.join(mkdtempSync(path.join(os.tmpdir(), "hostgit-agent-")), "agent.sh");
    writeFileSync(script, `#!/bin/bash\nset -e\nfor i in 1 2; do echo $i > c$i.txt; git add c$i.txt; git -c user.name=a -c user.email=a@b commit -qm c$i; done\n`);
    chmodSync(script, 0o755);
    const { main } = await runActionSteps({ workspace: ws, inputs: { agent: "command", "agent-command": script, prompt: "commit", sandbox: "bwrap" } });
    const result = JSON.parse(readFileSync(path.join(path.dirname(main.outputs["patch-path"]!), "result.json"), "utf8"));
    expect(result.diff.agentCommits).toEqual(git(ws, "rev-list", "--reverse", "HEAD~2..HEAD").split("\n"));
    expect(result.diff.changedFiles).toEqual(["c1.txt", "c2.txt"]);
  });
});
