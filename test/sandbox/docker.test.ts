import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/errors.js";
import { sandboxHost } from "../../src/config/host.js";
import { BRIDGE_LAUNCHER, createDockerBackend, mountArg } from "../../src/sandbox/docker.js";
import type { NetworkMode, SandboxLayout } from "../../src/sandbox/types.js";
import { recordingLogger } from "./helpers.js";

let root: string;
let layout: SandboxLayout;
const SECRET = "sk-secret-value-never-in-argv";

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-docker-")));
  layout = {
    workspace: path.join(root, "ws"),
    home: path.join(root, "rt/home"),
    tmp: path.join(root, "rt/tmp"),
    outputsDir: path.join(root, "rt/out"),
    readOnlyPaths: ["/usr/local/lib", path.join(root, "missing")],
  };
  fs.mkdirSync(layout.workspace, { recursive: true });
  execFileSync("git", ["init", "-q", layout.workspace]);
  execFileSync("git", ["-C", layout.workspace, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic SECRETHEADER"]);
  // A submodule's git dir, as `git submodule update` leaves it.
  const sub = path.join(layout.workspace, ".git/modules/lib");
  fs.mkdirSync(sub, { recursive: true });
  fs.writeFileSync(path.join(sub, "HEAD"), "ref: refs/heads/main\n");
  fs.writeFileSync(path.join(sub, "config"), '[remote "origin"]\n\turl = https://x-access-token:SECRETSUBTOKEN@github.com/o/lib\n');
});
afterAll(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const fakeDocker = createDockerBackend({
  dockerPath: "/usr/bin/docker-not-called",
  host: { path: "/usr/bin:/bin", home: "/home/runner", dockerEnv: { DOCKER_HOST: "unix:///run/docker.sock" } },
});

async function wrapWith(mode: NetworkMode) {
  const sandbox = await fakeDocker.prepare({
    layout,
    network: { mode, allowedDomains: [] },
    gateway: { host: "127.0.0.1", port: 4555 },
    dockerImage: "node:24-bookworm",
    log: recordingLogger(),
  });
  const spec = sandbox.wrap({ file: "claude", args: ["-p", "--verbose"], cwd: layout.workspace, env: { HOME: layout.home, ANTHROPIC_API_KEY: SECRET, PATH: "/usr/bin" } });
  return { sandbox, spec };
}

describe("docker argv", () => {
  it("model-only: no network, bridge launcher, names-only env, same-path mounts, no privileges", async () => {
    const { sandbox, spec } = await wrapWith("model-only");
    try {
      const a = spec.args;
      expect(spec.file).toBe("/usr/bin/docker-not-called");
      expect(a.slice(0, 5)).toEqual(["run", "--rm", "--interactive", "--init", "--name"]);
      expect(a[5]).toMatch(/^agent-runner-[0-9a-f]{12}$/);
      const joined = a.join(" ");
      const uid = process.getuid!();
      const gid = process.getgid!();
      expect(joined).toContain(`--user ${uid}:${gid} --cap-drop ALL --security-opt no-new-privileges --read-only --network none`);
      expect(joined).toContain("--env HOME --env ANTHROPIC_API_KEY --env PATH");
      expect(joined).not.toContain(SECRET);
      expect(joined).not.toMatch(/--env \S+=/);
      for (const p of [layout.workspace, layout.home, layout.tmp, layout.outputsDir]) expect(a).toContain(`type=bind,source=${p},target=${p}`);
      expect(a).toContain("type=bind,source=/usr/local/lib,target=/usr/local/lib,readonly");
      expect(joined).not.toContain("missing");
      const gitMount = a.find((x) => x.endsWith(`target=${layout.workspace}/.git/config,readonly`))!;
      const copy = /source=([^,]+)/.exec(gitMount)![1]!;
      expect(fs.readFileSync(copy, "utf8")).not.toContain("SECRETHEADER");
      expect(a).toContain(`type=bind,source=${layout.workspace}/.git/hooks,target=${layout.workspace}/.git/hooks,readonly`);
      expect(a.find((x) => x.endsWith("target=/run/agent-runner,readonly"))).toBeDefined();
      const tail = a.slice(a.indexOf("--workdir"));
      expect(tail).toEqual(["--workdir", layout.workspace, "--", "node:24-bookworm", "node", "/run/agent-runner/bridge.mjs", "4555=gateway.sock", "3128=proxy.sock", "--", "claude", "-p", "--verbose"]);
      // Values reach the docker CLI through its environment; the client's own variables too.
      expect(spec.env).toMatchObject({ ANTHROPIC_API_KEY: SECRET, HOME: layout.home, DOCKER_HOST: "unix:///run/docker.sock", DOCKER_CONFIG: "/home/runner/.docker" });
      expect(sandbox.reachable("http://127.0.0.1:4555")).toBe("http://127.0.0.1:4555");
      expect(sandbox.env()).toMatchObject({ HTTPS_PROXY: "http://127.0.0.1:3128", NO_PROXY: "localhost,127.0.0.1,::1" });
    } finally {
      await sandbox.cleanup();
    }
  });

  it("masks a submodule's git config too, with a copy any uid can read", async () => {
    const { sandbox, spec } = await wrapWith("none");
    try {
      const mount = spec.args.find((x) => x.endsWith(`target=${layout.workspace}/.git/modules/lib/config,readonly`))!;
      const copy = /source=([^,]+)/.exec(mount)![1]!;
      expect(fs.readFileSync(copy, "utf8")).toContain("url = https://github.com/o/lib");
      expect(fs.readFileSync(copy, "utf8")).not.toContain("SECRETSUBTOKEN");
      expect(fs.statSync(copy).mode & 0o777).toBe(0o644);
      expect(spec.args).toContain(`type=bind,source=${layout.workspace}/.git/modules/lib/hooks,target=${layout.workspace}/.git/modules/lib/hooks,readonly`);
    } finally {
      await sandbox.cleanup();
    }
  });

  it("none: --network none without a bridge; open: --network host", async () => {
    const none = await wrapWith("none");
    expect(none.spec.args.join(" ")).toContain("--network none");
    expect(none.spec.args.join(" ")).not.toContain("bridge.mjs");
    expect(none.sandbox.env()).toEqual({});
    await none.sandbox.cleanup();
    const open = await wrapWith("open");
    expect(open.spec.args.join(" ")).toContain("--network host");
    expect(open.spec.args.slice(-4)).toEqual(["node:24-bookworm", "claude", "-p", "--verbose"]);
    await open.sandbox.cleanup();
  });

  it("refuses a missing image and variable names Docker cannot take", async () => {
    await expect(fakeDocker.prepare({ layout, network: { mode: "none", allowedDomains: [] }, log: recordingLogger() })).rejects.toThrow(/docker-image/);
    const s = await fakeDocker.prepare({ layout, network: { mode: "none", allowedDomains: [] }, dockerImage: "img", log: recordingLogger() });
    expect(() => s.wrap({ file: "x", args: [], cwd: layout.workspace, env: { "A=B": "1" } })).toThrow(ConfigurationError);
    await s.cleanup();
  });

  it("CSV-quotes --mount fields holding commas", () => {
    expect(mountArg("/a,b", "/c", true)).toBe('type=bind,"source=/a,b",target=/c,readonly');
    expect(mountArg('/q"x', "/c", false)).toBe('type=bind,"source=/q""x",target=/c');
  });
});

describe("docker in-container bridge launcher (run on the host with node)", () => {
  it("listens on 127.0.0.1:<port> → unix socket, passes the env untouched and the exit code", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ar-launcher-"));
    const upstream = net.createServer((c) => c.end("pong"));
    try {
      fs.writeFileSync(path.join(dir, "bridge.mjs"), BRIDGE_LAUNCHER);
      await new Promise<void>((r) => upstream.listen(path.join(dir, "x.sock"), r));
      const port = await new Promise<number>((r) => {
        const s = net.createServer().listen(0, "127.0.0.1", () => {
          const p = (s.address() as net.AddressInfo).port;
          s.close(() => r(p));
        });
      });
      const client = `const s=require("net").connect(${port},"127.0.0.1");let d="";s.on("data",c=>d+=c);s.on("end",()=>{console.log(d, process.env["WEIRD-NAME"], process.env.KEEP);process.exit(3)})`;
      const child = spawn(process.execPath, [path.join(dir, "bridge.mjs"), `${port}=x.sock`, "--", process.execPath, "-e", client], {
        env: { "WEIRD-NAME": "w", KEEP: "k", PATH: process.env.PATH ?? "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((r) => child.on("close", r));
      expect(out.trim()).toBe("pong w k");
      expect(code).toBe(3);
    } finally {
      upstream.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

const dockerBackend = createDockerBackend({ host: sandboxHost() });
const dockerCheck = await dockerBackend.check();

describe("docker check()", () => {
  it("reports why Docker cannot be used, naming the fix", async () => {
    // Whether or not this machine has Docker: a CLI whose `docker info` fails.
    const failing = await createDockerBackend({ host: { path: "/usr/bin:/bin", dockerEnv: {} }, dockerPath: "/bin/false" }).check();
    expect(failing).toEqual({ ok: false, reason: expect.stringMatching(/^`docker info` failed \(.*\)\. .*sandbox: bwrap/) });
    if (!dockerCheck.ok) {
      expect(dockerCheck.reason).toMatch(/docker (info|CLI)/);
      expect(dockerCheck.reason).toContain("sandbox: bwrap");
    }
  });
});

describe("docker real run", () => {
  // A Docker engine is not something the set-up command installs; the run's last lines say why this was skipped.
  beforeEach((ctx) => {
    if (!dockerCheck.ok) ctx.skip(`no usable Docker engine here: ${dockerCheck.reason}`);
  });

  it("runs a command in a container with the workspace mounted", async () => {
    const image = process.env.AGENT_RUNNER_TEST_DOCKER_IMAGE ?? "node:24-bookworm-slim";
    const s = await dockerBackend.prepare({ layout, network: { mode: "none", allowedDomains: [] }, dockerImage: image, log: recordingLogger() });
    try {
      const spec = s.wrap({ file: "sh", args: ["-c", "echo ok > from-container.txt; id -u"], cwd: layout.workspace, env: { HOME: layout.home } });
      const out = execFileSync(spec.file, spec.args, { env: spec.env, cwd: spec.cwd, encoding: "utf8" });
      expect(out.trim()).toBe(String(process.getuid!()));
      expect(fs.readFileSync(path.join(layout.workspace, "from-container.txt"), "utf8")).toBe("ok\n");
    } finally {
      await s.cleanup();
    }
  });
});
