import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bridgeScript, buildBwrapArgs, orderMounts, type Mount } from "../../src/sandbox/bwrap.js";
import { isConfigurationError } from "../../src/errors.js";
import {
  gitConfigFiles,
  gitCredentialFindings,
  hiddenHostDirs,
  maskGitCredentials,
  sanitizeGitConfig,
  scanWorkspaceGit,
  walkWorkspaceForGit,
} from "../../src/sandbox/hostfs.js";
import { recordingLogger } from "./helpers.js";
import { reachableUrl } from "../../src/sandbox/network.js";

const CHECKOUT_CONFIG = `[core]
\trepositoryformatversion = 0
\tbare = false
[remote "origin"]
\turl = https://x-access-token:ghs_SECRETTOKEN1@github.com/o/r
\tfetch = +refs/heads/*:refs/remotes/origin/*
[http "https://github.com/"]
\textraheader = AUTHORIZATION: basic U0VDUkVUVE9LRU4y
\tsslVerify = true
[http]
\tExtraHeader = "AUTHORIZATION: bearer SECRETTOKEN3" \\
continued
[credential]
\thelper = store --file /home/runner/.git-credentials-SECRET4
[url "https://oauth2:SECRETTOKEN5@gitlab.com/"]
\tinsteadOf = https://gitlab.com/
[includeIf "gitdir:/home/runner/work/r/r/.git"]
\tpath = /home/runner/work/_temp/git-credentials-SECRET6.config
[include] path = /tmp/SECRET7
[user]
\tname = someone
[branch "main"] remote = origin
`;

describe("sanitizeGitConfig", () => {
  it("removes extraheaders, credential helpers, includes and URL userinfo, keeps the rest", () => {
    const out = sanitizeGitConfig(CHECKOUT_CONFIG);
    expect(out).not.toMatch(/SECRET/);
    expect(out).not.toMatch(/extraheader\s*=/i);
    expect(out).toContain("url = https://github.com/o/r");
    expect(out).toContain('[url "https://gitlab.com/"]');
    expect(out).toContain("insteadOf = https://gitlab.com/");
    expect(out).toContain("sslVerify = true");
    expect(out).toContain("name = someone");
    expect(out).toMatch(/\[branch "main"\]\s+remote = origin/);
    expect(out).toContain("fetch = +refs/heads/*:refs/remotes/origin/*");
    // git itself still reads the result.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ar-gitcfg-"));
    try {
      fs.writeFileSync(path.join(dir, "config"), out);
      const list = execFileSync("git", ["config", "--file", path.join(dir, "config"), "--list"], { encoding: "utf8" });
      expect(list).toContain("remote.origin.url=https://github.com/o/r");
      expect(list).toContain("branch.main.remote=origin");
      expect(list).not.toMatch(/SECRET|extraheader/i);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("finds the config of a .git folder and of a worktree's .git file", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ar-git-"));
    try {
      fs.mkdirSync(path.join(root, "main/.git/worktrees/wt"), { recursive: true });
      fs.writeFileSync(path.join(root, "main/.git/config"), "[core]\n");
      fs.writeFileSync(path.join(root, "main/.git/worktrees/wt/config"), "[core]\n");
      fs.writeFileSync(path.join(root, "main/.git/worktrees/wt/commondir"), "../..\n");
      fs.mkdirSync(path.join(root, "wt"));
      fs.writeFileSync(path.join(root, "wt/.git"), `gitdir: ${path.join(root, "main/.git/worktrees/wt")}\n`);
      const main = fs.realpathSync(path.join(root, "main/.git/config"));
      const wt = fs.realpathSync(path.join(root, "main/.git/worktrees/wt/config"));
      // The main checkout's linked worktrees are part of what its .git shows.
      expect(gitConfigFiles(path.join(root, "main")).sort()).toEqual([main, wt].sort());
      expect(gitConfigFiles(path.join(root, "wt")).sort()).toEqual([main, wt].sort());
      // Nested checkouts are found too.
      expect(gitConfigFiles(root).sort()).toEqual([main, wt].sort());
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("every git config under the workspace", () => {
  const mk = (root: string, rel: string, text = "[core]\n") => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
    return fs.realpathSync(path.join(root, rel));
  };

  it("finds submodules (names with slashes, nested), worktree configs, nested checkouts, gitfile targets and includes", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ar-scan-"));
    try {
      const ws = path.join(root, "ws");
      const want = [
        mk(ws, ".git/config", "[include]\n\tpath = extra.inc\n[includeIf \"gitdir:/x\"]\n\tpath = \"../outside.inc\"\n"),
        mk(ws, ".git/extra.inc"),
        mk(ws, "outside.inc"),
        mk(ws, ".git/config.worktree"),
        mk(ws, ".git/modules/libs/a/config"),
        mk(ws, ".git/modules/libs/a/modules/inner/config"),
        mk(ws, ".git/worktrees/w1/config.worktree"),
        mk(ws, "deep/er/checkout/.git/config"),
        mk(root, "elsewhere.git/config"),
      ];
      for (const d of [".git/modules/libs/a", ".git/modules/libs/a/modules/inner"]) mk(ws, `${d}/HEAD`, "ref: refs/heads/main\n");
      mk(ws, ".git/worktrees/w1/commondir", "../..\n");
      mk(ws, "ext/.git", `gitdir: ${path.join(root, "elsewhere.git")}\n`);
      mk(ws, "ext2/.git", "gitdir: ../../elsewhere.git\n");
      const scan = scanWorkspaceGit(ws);
      expect(scan.configs.sort()).toEqual(want.sort());
      expect(scan.stopped).toBeUndefined();
      // The walk the runner makes while git hashes the workspace finds the same; a walk of another folder is not used.
      const walk = await walkWorkspaceForGit(ws);
      expect(scanWorkspaceGit(ws, { walk })).toEqual(scanWorkspaceGit(ws));
      expect(scanWorkspaceGit(ws, { walk: { root: root, dotGits: [] } })).toEqual(scanWorkspaceGit(ws));
      // Hooks only for repositories under the workspace, never for linked worktrees' git dirs.
      expect(scan.hookDirs.map((h) => path.relative(fs.realpathSync(ws), h)).sort()).toEqual(
        [".git/hooks", ".git/modules/libs/a/hooks", ".git/modules/libs/a/modules/inner/hooks", "deep/er/checkout/.git/hooks"].sort(),
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("bounds the walk (depth and folder count) and says which limit stopped it", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ar-scan-"));
    try {
      const shallow = mk(root, "a/.git/config");
      mk(root, "a/b/c/d/.git/config");
      for (let i = 0; i < 30; i++) fs.mkdirSync(path.join(root, `wide${i}`));
      expect(scanWorkspaceGit(root, { limits: { maxDepth: 2, maxDirs: 1000 } })).toMatchObject({ configs: [shallow], stopped: { limit: "depth" } });
      expect(scanWorkspaceGit(root, { limits: { maxDepth: 8, maxDirs: 5 } }).stopped).toMatchObject({ limit: "count" });
      for (const limits of [{ maxDepth: 2, maxDirs: 1000 }, { maxDepth: 8, maxDirs: 5 }])
        expect(scanWorkspaceGit(root, { walk: await walkWorkspaceForGit(root, limits) })).toEqual(scanWorkspaceGit(root, { limits }));
      const log = recordingLogger();
      maskGitCredentials({ workspace: root, privateDir: root, fileMode: 0o600, visible: () => false, log });
      expect(log.lines.join("\n")).not.toMatch(/did not look deeper|stopped after/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("finds credentials independently of the sanitizer, and the sanitizer leaves none of the kinds it handles", () => {
    expect(gitCredentialFindings(CHECKOUT_CONFIG)).toEqual(
      expect.arrayContaining(["an `http.*.extraheader`", "an `Authorization:` header", "a URL carrying credentials (`https://user:…@host`)"]),
    );
    expect(gitCredentialFindings(sanitizeGitConfig(CHECKOUT_CONFIG))).toEqual([]);
    // Not credentials: ssh user names, ordinary URLs, a removed-key comment.
    expect(gitCredentialFindings('[remote "o"]\n\turl = ssh://git@github.com/o/r\n\tpushurl = https://github.com/o/r\n\t# extraheader removed by Agent Runner\n')).toEqual([]);
    expect(sanitizeGitConfig("# AUTHORIZATION: basic abc\n[core]\n")).not.toContain("abc");
    // A token under a key we do not know is not silently rewritten: it is found (and refused).
    const unknown = "[hub]\n\toauthtoken = ghp_0123456789abcdefghijABCDEFGHIJ\n";
    expect(gitCredentialFindings(sanitizeGitConfig(unknown))).toEqual(["a GitHub token"]);
  });

  it("masks each visible config with a clean copy, skips invisible ones, and refuses a credential it cannot remove", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ar-mask-"));
    try {
      const ws = path.join(root, "ws");
      const top = mk(ws, ".git/config", CHECKOUT_CONFIG);
      const sub = mk(ws, ".git/modules/lib/config", '[remote "origin"]\n\turl = https://u:SECRETSUB@github.com/o/lib\n');
      mk(ws, ".git/modules/lib/HEAD", "ref: refs/heads/main\n");
      const priv = fs.mkdtempSync(path.join(root, "priv-"));
      const overlays = maskGitCredentials({ workspace: ws, privateDir: priv, fileMode: 0o600, visible: (p) => p !== sub, log: recordingLogger() });
      const configMounts = overlays.filter((o) => !o.dest.endsWith("/hooks"));
      expect(configMounts.map((o) => o.dest)).toEqual([top]);
      expect(fs.readFileSync(configMounts[0]!.src, "utf8")).not.toMatch(/SECRET/);
      expect(fs.readFileSync(top, "utf8")).toBe(CHECKOUT_CONFIG);
      fs.appendFileSync(sub, "[github]\n\ttoken = github_pat_0123456789abcdefghij_ABCDEFGHIJ\n");
      let err: unknown;
      try {
        maskGitCredentials({ workspace: ws, privateDir: priv, fileMode: 0o600, visible: () => true, log: recordingLogger() });
      } catch (e) {
        err = e;
      }
      expect(isConfigurationError(err)).toBe(true);
      expect(String(err)).toContain(`Input 'sandbox': the agent would see a GitHub token in ${sub}`);
      expect(String(err)).not.toContain("github_pat_");
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("hidden host folders", () => {
  it("hides homes, RUNNER_TEMP, the runner's _work folder and root, /tmp and /run", () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-runner-")));
    try {
      fs.mkdirSync(path.join(root, "_work/_temp"), { recursive: true });
      fs.mkdirSync(path.join(root, "_work/repo/repo"), { recursive: true });
      fs.writeFileSync(path.join(root, ".credentials"), "{}");
      // A runner HOME outside /home and /root: hidden because the host says it is HOME.
      fs.mkdirSync(path.join(root, "runner-home"));
      const hidden = hiddenHostDirs({ home: path.join(root, "runner-home"), runnerTemp: path.join(root, "_work/_temp"), runnerWorkspace: path.join(root, "_work/repo") });
      for (const d of ["/root", "/tmp", "/run", root, path.join(root, "runner-home"), path.join(root, "_work"), path.join(root, "_work/_temp")]) expect(hidden).toContain(d);
      expect(hidden).not.toContain("/");
      // Shortest first, so parents are laid before children.
      expect(hidden.indexOf("/tmp")).toBeLessThan(hidden.indexOf(root));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("bwrap argv", () => {
  it("orders mounts parents first and lets a bind replace a hide at the same path", () => {
    const mounts: Mount[] = [
      { op: "rw", src: "/tmp/rt/ws", dest: "/tmp/rt/ws" },
      { op: "hide", dest: "/tmp/rt/ws/secret" },
      { op: "hide", dest: "/tmp" },
      { op: "hide", dest: "/tmp/rt" },
      { op: "rw", src: "/tmp/rt", dest: "/tmp/rt" },
      { op: "ro", src: "/x/cfg", dest: "/tmp/rt/ws/.git/config" },
    ];
    expect(orderMounts(mounts).map((m) => `${m.op} ${m.dest}`)).toEqual([
      "hide /tmp",
      "rw /tmp/rt",
      "rw /tmp/rt/ws",
      "hide /tmp/rt/ws/secret",
      "ro /tmp/rt/ws/.git/config",
    ]);
  });

  it("isolates every namespace, drops capabilities and remounts the hiding tmpfs read-only", () => {
    const args = buildBwrapArgs(
      {
        uid: 1000,
        gid: 1000,
        isolatedNetwork: true,
        disableUserns: true,
        mounts: orderMounts([
          { op: "hide", dest: "/root" },
          { op: "rw", src: "/root/ws", dest: "/root/ws" },
        ]),
        bridgeDir: "/tmp/agent-runner-net-x",
      },
      "/root/ws",
    );
    const joined = args.join(" ");
    for (const flag of ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop ALL", "--proc /proc", "--dev /dev"]) {
      expect(joined).toContain(flag);
    }
    expect(joined).toContain("--ro-bind / / --dev /dev --proc /proc --tmpfs /root --bind /root/ws /root/ws --ro-bind /tmp/agent-runner-net-x /run/agent-runner --remount-ro /root --chdir /root/ws");
    expect(joined).not.toContain("--setenv");
  });

  it("the bridge prologue waits for socat and execs the agent through env -u", () => {
    const script = bridgeScript(
      [
        { port: 8080, socket: "gateway.sock" },
        { port: 3128, socket: "proxy.sock" },
      ],
      { socat: "/usr/bin/socat", sleep: "/usr/bin/sleep", env: "/usr/bin/env" },
      ["PWD", "OLDPWD"],
    );
    expect(script).toContain("TCP4-LISTEN:8080,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/run/agent-runner/gateway.sock");
    expect(script).toContain("0100007F:1F90|0100007F:0C38");
    expect(script).toContain('exec /usr/bin/env -u PWD -u OLDPWD -- "$@"');
  });

  it("reachable() keeps the gateway's port and spells loopback 127.0.0.1", () => {
    const plan = { mode: "model-only" as const, gatewayInside: { host: "127.0.0.1", port: 4100 } };
    expect(reachableUrl("http://localhost:4100", plan)).toBe("http://127.0.0.1:4100");
    expect(reachableUrl("http://127.0.0.1:4100/v1", plan)).toBe("http://127.0.0.1:4100/v1");
    expect(reachableUrl("http://127.0.0.1:4100/", plan)).toBe("http://127.0.0.1:4100/");
    expect(reachableUrl("https://api.example.com/v1", plan)).toBe("https://api.example.com/v1");
  });
});
