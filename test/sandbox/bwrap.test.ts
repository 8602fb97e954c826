/**
 * Acceptance tests of the bwrap sandbox with real bubblewrap: each runs a
 * shell script through PreparedSandbox.wrap() exactly as the runner spawns
 * agents, and checks what the script could see, write and reach.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxHost } from "../../src/config/host.js";
import { createBwrapBackend } from "../../src/sandbox/bwrap.js";
import { startModelGateway, type ModelGateway } from "../../src/sandbox/gateway.js";
import type { NetworkMode, PreparedSandbox, SandboxLayout, SpawnSpec } from "../../src/sandbox/types.js";
import { recordingLogger, recordingServer } from "./helpers.js";

const rand = () => randomBytes(8).toString("hex");
const SECRETS = {
  githubToken: `ghs_HOSTTOKEN_${rand()}`,
  runtimeToken: `RUNTIME_${rand()}`,
  runnerTemp: `RUNNERTEMP_${rand()}`,
  gitHeader: `GITHEADER_${rand()}`,
  gitCredentials: `GITCREDS_${rand()}`,
  docker: `DOCKERAUTH_${rand()}`,
  modelKey: `sk-real-model-key-${rand()}`,
};

let root: string;
let layout: SandboxLayout;
let hostHome: string;
let runnerTemp: string;
let backend: ReturnType<typeof createBwrapBackend>;
const hostPath = process.env.PATH ?? "/usr/bin:/bin";

function agentEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: hostPath, HOME: layout.home, TMPDIR: layout.tmp, AGENT_OUTPUT_DIR: layout.outputsDir, LANG: "C.UTF-8", PASSED_IN: "visible-value", ...extra };
}

function run(spec: SpawnSpec, timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function inSandbox(mode: NetworkMode, script: string, opts: { allowedDomains?: string[]; gateway?: ModelGateway; env?: Record<string, string>; args?: string[] } = {}) {
  const log = recordingLogger();
  const sandbox = await backend.prepare({
    layout,
    network: { mode, allowedDomains: opts.allowedDomains ?? [] },
    gateway: opts.gateway ? { host: "127.0.0.1", port: opts.gateway.port } : undefined,
    log,
  });
  try {
    const env = { ...agentEnv(opts.env), ...sandbox.env() };
    const spec = sandbox.wrap({ file: "/bin/bash", args: ["-c", script, "probe", ...(opts.args ?? [])], cwd: layout.workspace, env });
    const result = await run(spec);
    return { ...result, spec, sandbox, log, blocked: sandbox.blockedAttempts() };
  } finally {
    await sandbox.cleanup();
  }
}

// The preflight (test/preflight.ts) made sure bubblewrap works here: a failing check fails these tests.
const check = await createBwrapBackend({ host: sandboxHost() }).check();

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-bwrap-")));
  runnerTemp = path.join(root, "runner_temp");
  hostHome = path.join(root, "hosthome");
  layout = {
    workspace: path.join(root, "work", "repo"),
    home: path.join(runnerTemp, "agent", "home"),
    tmp: path.join(runnerTemp, "agent", "tmp"),
    outputsDir: path.join(runnerTemp, "agent", "outputs"),
    readOnlyPaths: [],
  };
  for (const d of [runnerTemp, hostHome, path.join(hostHome, ".docker"), layout.workspace]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(runnerTemp, "token.txt"), SECRETS.runnerTemp);
  fs.writeFileSync(path.join(hostHome, ".git-credentials"), `https://x:${SECRETS.gitCredentials}@github.com\n`);
  fs.writeFileSync(path.join(hostHome, ".docker", "config.json"), JSON.stringify({ auths: { "ghcr.io": { auth: SECRETS.docker } } }));
  execFileSync("git", ["init", "-q", layout.workspace]);
  execFileSync("git", ["-C", layout.workspace, "config", "http.https://github.com/.extraheader", `AUTHORIZATION: basic ${SECRETS.gitHeader}`]);
  execFileSync("git", ["-C", layout.workspace, "remote", "add", "origin", "https://github.com/o/r"]);
  fs.writeFileSync(path.join(layout.workspace, "README.md"), "hello\n");
  backend = createBwrapBackend({ host: { path: hostPath, home: hostHome, runnerTemp } });
});

afterAll(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe("bwrap check()", () => {
  it("names the fix when bubblewrap is missing or cannot create namespaces", async () => {
    const missing = await createBwrapBackend({ host: { path: hostPath }, bwrapPath: "/nonexistent/bwrap" }).check();
    expect(missing).toEqual({ ok: false, reason: expect.stringContaining("apt-get install -y bubblewrap") });
    const failing = await createBwrapBackend({ host: { path: hostPath }, bwrapPath: "/bin/false" }).check();
    expect(failing).toEqual({ ok: false, reason: expect.stringContaining("sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0") });
    await expect(createBwrapBackend({ host: { path: hostPath }, bwrapPath: "/nonexistent/bwrap" }).prepare({ layout: { workspace: "/", home: "/", tmp: "/", outputsDir: "/", readOnlyPaths: [] }, network: { mode: "none", allowedDomains: [] }, log: recordingLogger() })).rejects.toThrow(/bubblewrap/);
  });
});

describe("bwrap sandbox (real bubblewrap)", () => {
  it("check() passes here", () => {
    expect(check).toEqual({ ok: true });
  });

  it("hides host env, other processes' environ, RUNNER_TEMP, host HOME and git credentials", async () => {
    // A sibling process on the host holding the job's tokens, as the runner's own processes do.
    const sibling = spawn("/bin/sleep", ["60"], { env: { GITHUB_TOKEN: SECRETS.githubToken, ACTIONS_RUNTIME_TOKEN: SECRETS.runtimeToken }, stdio: "ignore" });
    try {
      const script = `
        echo "== env"; env
        echo "== environ"; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f" 2>/dev/null; done
        echo "== pids"; ls /proc | grep -cE '^[0-9]+$'
        echo "== runner_temp"; cat "$1/token.txt" 2>&1; ls -A "$1" 2>&1
        echo "== hosthome"; cat "$2/.git-credentials" "$2/.docker/config.json" 2>&1; ls -A /root 2>&1
        echo "== gitconfig"; cat .git/config; git config --list 2>&1
        echo "== passwd"; id -un; getent passwd "$(id -u)"
      `;
      const r = await inSandbox("none", script, { args: [runnerTemp, hostHome] });
      expect(r.code, r.stderr).toBe(0);
      for (const [name, secret] of Object.entries(SECRETS)) expect(r.stdout, name).not.toContain(secret);
      expect(r.stdout).toContain("PASSED_IN=visible-value");
      const pids = Number(/== pids\n(\d+)/.exec(r.stdout)?.[1]);
      expect(pids).toBeGreaterThan(0);
      expect(pids).toBeLessThan(10); // its own PID namespace: bwrap's init, bash, ls, grep
      expect(r.stdout).toMatch(/== runner_temp\ncat: .*token\.txt: No such file or directory/);
      expect(r.stdout).toMatch(/remote\.origin\.url=https:\/\/github\.com\/o\/r/);
      expect(r.stdout).toContain(`agent:x:${process.getuid?.() === 0 ? 1000 : process.getuid?.()}`);
      expect(r.stdout).toContain(`:${layout.home}:`);
      // The host's real files are untouched.
      expect(fs.readFileSync(path.join(layout.workspace, ".git/config"), "utf8")).toContain(SECRETS.gitHeader);
    } finally {
      sibling.kill("SIGKILL");
    }
  });

  it("passes exactly cmd.env, with and without the network bridge", async () => {
    const env = { PATH: hostPath, HOME: layout.home, ONLY_THIS: "1", "WEIRD-NAME": "x" };
    for (const mode of ["none", "model-only"] as const) {
      const sandbox = await backend.prepare({ layout, network: { mode, allowedDomains: [] }, log: recordingLogger() });
      try {
        const spec = sandbox.wrap({ file: "/usr/bin/env", args: [], cwd: layout.workspace, env });
        expect(spec.env).toEqual(env);
        expect(spec.args.join(" ")).not.toContain("ONLY_THIS");
        const r = await run(spec);
        expect(r.code, r.stderr).toBe(0);
        const got = Object.fromEntries(r.stdout.trim().split("\n").map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
        // The POSIX shell that starts the bridge cannot pass names that are not identifiers.
        const expected = mode === "none" ? env : { PATH: env.PATH, HOME: env.HOME, ONLY_THIS: "1" };
        expect(got, mode).toEqual(expected);
      } finally {
        await sandbox.cleanup();
      }
    }
  });

  it("secrets in cmd.env never appear in the bwrap argv", async () => {
    const sandbox = await backend.prepare({ layout, network: { mode: "model-only", allowedDomains: [] }, gateway: { host: "127.0.0.1", port: 4999 }, log: recordingLogger() });
    try {
      const spec = sandbox.wrap({ file: "/bin/true", args: [], cwd: layout.workspace, env: { ANTHROPIC_API_KEY: SECRETS.modelKey, GITHUB_TOKEN: SECRETS.githubToken } });
      expect(JSON.stringify([spec.file, ...spec.args])).not.toMatch(new RegExp(`${SECRETS.modelKey}|${SECRETS.githubToken}`));
      expect(spec.args).not.toContain("--setenv");
    } finally {
      await sandbox.cleanup();
    }
  });

  it("writes: workspace, HOME, TMPDIR and outputs yes; host HOME, /tmp, /etc, the action's folder, .git/config and hooks no; no privilege", async () => {
    const actionDir = process.cwd();
    const probe = `.sandbox-probe-${rand()}`;
    const script = `
      t() { if "$@" >/dev/null 2>&1; then echo "OK $*"; else echo "DENIED $*"; fi; }
      t sh -c "echo x > /root/probe"
      t sh -c "echo x > $1/probe"
      t sh -c "echo x > /tmp/${probe}"
      t sh -c "echo x > $2/${probe}"
      t sh -c "echo x > /etc/${probe}"
      t sh -c "echo x >> .git/config"
      t sh -c "echo x > .git/hooks/post-checkout"
      t sh -c "echo x > written-by-agent.txt"
      t sh -c "echo x > $HOME/h.txt"
      t sh -c "echo x > $TMPDIR/t.txt"
      t sh -c "echo x > $AGENT_OUTPUT_DIR/o.txt"
      t mount -t tmpfs none /mnt
      t mount -o remount,rw /
      t unshare -r true
      t su -c true root
      if command -v sudo >/dev/null; then t sudo -n true; fi
      echo "uid=$(id -u)"; grep CapEff /proc/self/status
    `;
    const r = await inSandbox("none", script, { args: [hostHome, actionDir] });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    const verdict = (frag: string) => lines.find((l) => l.includes(frag))?.split(" ")[0];
    for (const frag of ["/root/probe", `${hostHome}/probe`, `/tmp/${probe}`, `${actionDir}/${probe}`, `/etc/${probe}`, ".git/config", ".git/hooks/post-checkout", "mount -t tmpfs", "remount,rw", "unshare -r", "su -c", "sudo -n"]) {
      if (frag === "sudo -n" && !lines.some((l) => l.includes(frag))) continue;
      expect(verdict(frag), frag).toBe("DENIED");
    }
    for (const frag of ["written-by-agent.txt", "h.txt", "t.txt", "o.txt"]) expect(verdict(frag), frag).toBe("OK");
    expect(r.stdout).toMatch(/uid=(?!0\n)\d+/);
    expect(r.stdout).toContain("CapEff:\t0000000000000000");
    // Host unchanged where it had to be, changed where the agent may write.
    expect(fs.existsSync(path.join(hostHome, "probe"))).toBe(false);
    expect(fs.existsSync(path.join("/tmp", probe))).toBe(false);
    expect(fs.existsSync(path.join(actionDir, probe))).toBe(false);
    expect(fs.existsSync(path.join(layout.workspace, ".git/hooks/post-checkout"))).toBe(false);
    expect(fs.readFileSync(path.join(layout.workspace, ".git/config"), "utf8")).not.toMatch(/^x$/m);
    expect(fs.existsSync(path.join(layout.workspace, "written-by-agent.txt"))).toBe(true);
    expect(fs.existsSync(path.join(layout.outputsDir, "o.txt"))).toBe(true);
  });

  it("read-only paths inside a hidden folder are visible and executable, not writable; a hidden folder itself is never re-exposed", async () => {
    const tools = path.join(root, "tools");
    fs.mkdirSync(path.join(tools, "bin"), { recursive: true });
    fs.writeFileSync(path.join(tools, "bin", "tool"), "#!/bin/sh\necho tool-ran\n", { mode: 0o755 });
    const log = recordingLogger();
    const sandbox = await backend.prepare({ layout: { ...layout, readOnlyPaths: [tools, hostHome, "/usr/bin", "/tmp"] }, network: { mode: "none", allowedDomains: [] }, log });
    try {
      const spec = sandbox.wrap({
        file: "/bin/sh",
        args: ["-c", `"${tools}/bin/tool"; echo x > "${tools}/bin/new" 2>/dev/null || echo write-denied; cat "${hostHome}/.git-credentials" 2>/dev/null || echo creds-hidden`],
        cwd: layout.workspace,
        env: agentEnv(),
      });
      const r = await run(spec);
      expect(r.stdout.split("\n")).toEqual(["tool-ran", "write-denied", "creds-hidden", ""]);
      // The host HOME and /tmp are hidden folders themselves: naming them read-only does not re-expose them.
      expect(log.lines.join("\n")).toMatch(/read-only path \/tmp would expose \/tmp/);
      expect(log.lines.join("\n")).toContain(`read-only path ${hostHome} would expose ${hostHome}`);
    } finally {
      await sandbox.cleanup();
    }
  });

  it("a daemonized child does not outlive the sandbox", async () => {
    const marker = String(900000 + Math.floor(Math.random() * 99999));
    const r = await inSandbox("none", `setsid sleep ${marker} </dev/null >/dev/null 2>&1 & disown; nohup sleep ${marker} >/dev/null 2>&1 & echo started`);
    expect(r.stdout).toContain("started");
    const alive = () =>
      fs.readdirSync("/proc").filter((p) => {
        if (!/^\d+$/.test(p)) return false;
        try {
          return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").replace(/\0/g, " ").trim() === `sleep ${marker}`;
        } catch {
          return false;
        }
      });
    // Killed processes are reaped promptly; the limit only catches one that survives, on a loaded machine too.
    const deadline = Date.now() + 30_000;
    while (alive().length && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(alive()).toEqual([]);
  });

  describe("network", () => {
    let upstream: Awaited<ReturnType<typeof recordingServer>>;
    let hostService: Awaited<ReturnType<typeof recordingServer>>;
    let gateway: ModelGateway;
    beforeAll(async () => {
      upstream = await recordingServer();
      hostService = await recordingServer();
      gateway = await startModelGateway({ provider: "anthropic", upstream: upstream.url, apiKey: SECRETS.modelKey, log: recordingLogger() });
    });
    afterAll(async () => {
      await gateway.close();
      await upstream.close();
      await hostService.close();
    });

    // curl exit codes: 0 ok, 7 cannot connect, 22 HTTP error (with -f), 56 proxy CONNECT refused.
    const probes = `
      c() { code=$(curl -sS -o /dev/null -w '%{http_code}' -m 5 "$@" 2>/dev/null); echo "rc=$? http=$code $*"; }
      c --noproxy '*' -H "x-api-key: $ANTHROPIC_API_KEY" -d '{}' "$GW/v1/messages"
      c --noproxy '*' "http://127.0.0.1:$HOSTPORT/direct"
      if [ -n "\${HTTP_PROXY:-}" ]; then
        c -x "$HTTP_PROXY" --noproxy '' "http://127.0.0.1:$HOSTPORT/via-proxy"
        c "http://127.0.0.1:$HOSTPORT/env-proxy"
        c -x "$HTTP_PROXY" "http://blocked.example/"
        c -x "$HTTP_PROXY" "https://blocked-tls.example/"
        c -x "$HTTP_PROXY" --noproxy '' -H "x-api-key: $ANTHROPIC_API_KEY" -d '{}' "$GW/v1/messages?via=proxy"
      fi
    `;
    const line = (out: string, frag: string) =>
      out.split("\n").find((l) => (frag.endsWith("$") ? l.endsWith(frag.slice(0, -1)) : l.includes(frag))) ?? `(no line for ${frag})`;

    it("model-only: the gateway works, nothing else does, and refusals are recorded", async () => {
      const sandbox = await backend.prepare({ layout, network: { mode: "model-only", allowedDomains: [] }, gateway: { host: "127.0.0.1", port: gateway.port }, log: recordingLogger() });
      const gwInside = sandbox.reachable(gateway.url);
      await sandbox.cleanup();
      expect(gwInside).toBe(gateway.url);
      const r = await inSandbox("model-only", probes.replace(/\$GW/g, gwInside), {
        gateway,
        env: { HOSTPORT: String(hostService.port), ANTHROPIC_API_KEY: gateway.placeholderKey },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(line(r.stdout, "/v1/messages$")).toMatch(/^rc=0 http=200/);
      expect(line(r.stdout, "/direct")).toMatch(/^rc=7 /);
      expect(line(r.stdout, "/via-proxy")).toMatch(/http=403/);
      expect(line(r.stdout, "/env-proxy")).toMatch(/^rc=7 /); // loopback bypasses the proxy and finds nothing
      expect(line(r.stdout, "blocked.example/")).toMatch(/http=403/);
      expect(line(r.stdout, "blocked-tls.example")).not.toMatch(/^rc=0/);
      expect(line(r.stdout, "via=proxy")).toMatch(/^rc=0 http=200/); // the proxy always lets the gateway through
      expect(hostService.requests).toHaveLength(0);
      const last = upstream.requests.at(-1)!;
      expect(last.headers["x-api-key"]).toBe(SECRETS.modelKey);
      expect(JSON.stringify(upstream.requests)).not.toContain(gateway.placeholderKey);
      expect(r.blocked.map((b) => b.host).sort()).toEqual(["127.0.0.1", "blocked-tls.example", "blocked.example"]);
    });

    it("a Node client: fetch reaches the gateway (model-only) and an allowed host via NODE_USE_ENV_PROXY (allowlist)", async () => {
      const nodeDir = path.dirname(path.dirname(fs.realpathSync(process.execPath)));
      const client = `
        const gw = process.argv[1], host = process.argv[2];
        const a = await fetch(gw + "/v1/messages", { method: "POST", headers: { "x-api-key": process.env.ANTHROPIC_API_KEY }, body: "{}" });
        console.log("gateway", a.status);
        try { const b = await fetch(host + "/node-fetch"); console.log("host", b.status); } catch (e) { console.log("host", "error", e.cause?.code ?? e.message); }
      `;
      for (const [mode, allowed, expectHost] of [
        ["model-only", [], /^host error/m],
        ["allowlist", [`127.0.0.1:${hostService.port}`], /^host 200$/m],
      ] as const) {
        const sandbox = await backend.prepare({
          layout: { ...layout, readOnlyPaths: [nodeDir] },
          network: { mode, allowedDomains: [...allowed] },
          gateway: { host: "127.0.0.1", port: gateway.port },
          log: recordingLogger(),
        });
        try {
          const spec = sandbox.wrap({
            file: process.execPath,
            args: ["--input-type=module", "-e", client, sandbox.reachable(gateway.url), hostService.url],
            cwd: layout.workspace,
            env: { ...agentEnv({ ANTHROPIC_API_KEY: gateway.placeholderKey }), ...sandbox.env() },
          });
          const r = await run(spec);
          expect(r.stdout, `${mode}: ${r.stderr}`).toMatch(/^gateway 200$/m);
          expect(r.stdout, mode).toMatch(expectHost);
        } finally {
          await sandbox.cleanup();
        }
      }
      expect(upstream.requests.at(-1)!.headers["x-api-key"]).toBe(SECRETS.modelKey);
    });

    it("none: neither the gateway nor the host is reachable", async () => {
      const r = await inSandbox("none", probes.replace(/\$GW/g, gateway.url), {
        gateway,
        env: { HOSTPORT: String(hostService.port), ANTHROPIC_API_KEY: gateway.placeholderKey },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(line(r.stdout, "/v1/messages$")).toMatch(/^rc=7 /);
      expect(line(r.stdout, "/direct")).toMatch(/^rc=7 /);
      expect(r.stdout).not.toContain("via-proxy");
    });

    it("allowlist: an allowed host works through the proxy, others are blocked and recorded", async () => {
      const before = hostService.requests.length;
      const r = await inSandbox("allowlist", probes.replace(/\$GW/g, gateway.url), {
        allowedDomains: [`127.0.0.1:${hostService.port}`],
        gateway,
        env: { HOSTPORT: String(hostService.port), ANTHROPIC_API_KEY: gateway.placeholderKey },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(line(r.stdout, "/v1/messages$")).toMatch(/^rc=0 http=200/);
      expect(line(r.stdout, "/direct")).toMatch(/^rc=7 /);
      expect(line(r.stdout, "/via-proxy")).toMatch(/^rc=0 http=200/);
      expect(line(r.stdout, "/env-proxy")).toMatch(/^rc=0 http=200/); // HTTP_PROXY from sandbox.env(), no NO_PROXY for loopback
      expect(line(r.stdout, "blocked.example/")).toMatch(/http=403/);
      expect(line(r.stdout, "blocked-tls.example")).not.toMatch(/^rc=0/);
      expect(hostService.requests.slice(before).map((q) => q.url)).toEqual(["/via-proxy", "/env-proxy"]);
      expect(r.blocked.map((b) => b.host).sort()).toEqual(["blocked-tls.example", "blocked.example"]);
      expect(r.blocked.find((b) => b.host === "blocked-tls.example")!.detail).toContain("CONNECT blocked-tls.example:443");
    });

    it("open: the host network is shared", async () => {
      const r = await inSandbox("open", probes.replace(/\$GW/g, gateway.url), {
        gateway,
        env: { HOSTPORT: String(hostService.port), ANTHROPIC_API_KEY: gateway.placeholderKey },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(line(r.stdout, "/v1/messages$")).toMatch(/^rc=0 http=200/);
      expect(line(r.stdout, "/direct")).toMatch(/^rc=0 http=200/);
    });
  });

  // Runs in every network mode, times reported only: speed is measured by `npm run bench`, never asserted
  // by a timer that a loaded machine misses.
  it("start-up overhead of `true` in each network mode (reported)", async () => {
    const N = 5;
    const time = async (mk: () => Promise<SpawnSpec>) => {
      const spec = await mk();
      await run(spec); // warm-up
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < N; i++) {
        const r = await run(spec);
        expect(r.code, r.stderr).toBe(0);
      }
      return Number(process.hrtime.bigint() - t0) / 1e6 / N;
    };
    const prepared: PreparedSandbox[] = [];
    const wrapped = async (mode: NetworkMode) => {
      const s = await backend.prepare({ layout, network: { mode, allowedDomains: [] }, gateway: { host: "127.0.0.1", port: 4998 }, log: recordingLogger() });
      prepared.push(s);
      return s.wrap({ file: "/bin/true", args: [], cwd: layout.workspace, env: agentEnv() });
    };
    try {
      const bare = await time(async () => ({ file: "/bin/true", args: [], cwd: layout.workspace, env: agentEnv() }));
      const none = await time(() => wrapped("none"));
      const bridged = await time(() => wrapped("model-only"));
      const t0 = Date.now();
      const s = await backend.prepare({ layout, network: { mode: "model-only", allowedDomains: [] }, gateway: { host: "127.0.0.1", port: 4998 }, log: recordingLogger() });
      const prepareMs = Date.now() - t0;
      await s.cleanup();
      console.log(
        `[sandbox overhead] true: bare ${bare.toFixed(1)} ms, bwrap network none ${none.toFixed(1)} ms, bwrap model-only (socat bridges) ${bridged.toFixed(1)} ms; prepare() ${prepareMs} ms`,
      );
    } finally {
      for (const s of prepared) await s.cleanup();
    }
  });
});
