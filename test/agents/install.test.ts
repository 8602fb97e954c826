/**
 * The agent installer runs the real npm against a tiny registry on
 * 127.0.0.1 serving a fake CLI package: install into the tool cache, reuse,
 * the Actions-cache hooks, `preinstalled`, the runner's own npm config, and
 * the errors a user can fix.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeAgent } from "../../src/agents/claude.js";
import { installAgent, type InstallCache, type InstallContext } from "../../src/agents/install.js";
import type { AgentBackend } from "../../src/agents/types.js";
import { Agent } from "../../src/config/schema.js";
import { ConfigurationError } from "../../src/errors.js";
import type { Logger } from "../../src/logger.js";

const PKG = "@fake/agent-cli";
const VERSIONS = ["1.2.3", "2.0.0"];

/** A CLI package whose program prints its version. */
function tarball(version: string): Buffer {
  const dir = mkdtempSync(path.join(os.tmpdir(), "fake-pkg-"));
  const root = path.join(dir, "package");
  mkdirSync(path.join(root, "bin"), { recursive: true });
  writeFileSync(path.join(root, "package.json"), JSON.stringify({ name: PKG, version, bin: { "fake-agent": "bin/fake.js" } }));
  writeFileSync(path.join(root, "bin/fake.js"), `#!/usr/bin/env node\nconsole.log("fake-agent ${version}");\n`);
  chmodSync(path.join(root, "bin/fake.js"), 0o755);
  execFileSync("tar", ["-czf", path.join(dir, "pkg.tgz"), "-C", dir, "package"]);
  return readFileSync(path.join(dir, "pkg.tgz"));
}

interface Registry {
  url: string;
  requests: string[];
  /** The Authorization header of each request ("" when none). */
  authorizations: string[];
  close(): Promise<void>;
}

/** Just enough of the npm registry protocol: a packument and the tarballs it points to. */
async function startRegistry(): Promise<Registry> {
  const tarballs = new Map(VERSIONS.map((v) => [v, tarball(v)]));
  const requests: string[] = [];
  const authorizations: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    authorizations.push(req.headers.authorization ?? "");
    const url = decodeURIComponent(req.url ?? "");
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (url === `/${PKG}`) {
      const versions = Object.fromEntries(
        [...tarballs].map(([v, tgz]) => [
          v,
          {
            name: PKG,
            version: v,
            bin: { "fake-agent": "bin/fake.js" },
            dist: {
              tarball: `${base}/tarballs/${v}.tgz`,
              shasum: createHash("sha1").update(tgz).digest("hex"),
              integrity: `sha512-${createHash("sha512").update(tgz).digest("base64")}`,
            },
          },
        ]),
      );
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ name: PKG, "dist-tags": { latest: VERSIONS.at(-1) }, versions }));
      return;
    }
    const m = /^\/tarballs\/(.+)\.tgz$/.exec(url);
    const tgz = m ? tarballs.get(m[1]!) : undefined;
    if (tgz) {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(tgz);
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: "Not found" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests,
    authorizations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const fakeBackend: AgentBackend = { ...claudeAgent, npmPackage: { name: PKG, bin: "fake-agent", defaultVersion: "1.2.3" } };
const agent = (version?: string) => Agent.parse({ name: "claude", backend: "claude", ...(version ? { version } : {}) });
const searchPath = [path.dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":");

function recorder(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, debug: (m) => lines.push(m), info: (m) => lines.push(m), warning: (m) => lines.push(m), error: (m) => lines.push(m), group: (_t, fn) => fn() };
}

describe("installing an agent CLI with npm", () => {
  let registry: Registry;
  let npmEnv: Record<string, string>;
  beforeAll(async () => {
    registry = await startRegistry();
    const home = mkdtempSync(path.join(os.tmpdir(), "npm-home-"));
    // Only the local registry: an isolated HOME and npm cache, no proxy, no user .npmrc.
    npmEnv = { HOME: home, npm_config_cache: path.join(home, ".npm"), npm_config_registry: registry.url, npm_config_userconfig: path.join(home, ".npmrc") };
  });
  afterAll(() => registry?.close());

  const context = (over: Partial<InstallContext> = {}): InstallContext & { log: ReturnType<typeof recorder> } => ({
    searchPath,
    cwd: os.tmpdir(),
    toolCache: mkdtempSync(path.join(os.tmpdir(), "tool-cache-")),
    env: npmEnv,
    ...over,
    log: recorder(),
  });

  it("installs the pinned default into the tool cache, says how long it took, and reuses it on the next run", async () => {
    const ctx = context();
    const first = await installAgent(fakeBackend, agent(), ctx);
    const dir = path.join(ctx.toolCache!, "agent-runner", PKG, "1.2.3");
    expect(first.binPath).toBe(path.join(dir, "node_modules/.bin/fake-agent"));
    expect(execFileSync(first.binPath, { encoding: "utf8", env: { PATH: searchPath } }).trim()).toBe("fake-agent 1.2.3");
    expect(first).toMatchObject({ version: "1.2.3", readOnlyPaths: [dir], install: { source: "npm" } });
    expect(existsSync(`${dir}.complete`)).toBe(true);
    expect(ctx.log.lines.join("\n")).toMatch(/Agent CLI @fake\/agent-cli@1\.2\.3 installed with npm in \d+\.\d s/);
    expect(registry.requests).toContain(`GET /tarballs/1.2.3.tgz`);

    const before = registry.requests.length;
    const log = recorder();
    const again = await installAgent(fakeBackend, agent(), { ...ctx, log });
    expect(again).toMatchObject({ binPath: first.binPath, install: { source: "tool-cache" } });
    expect(registry.requests.length).toBe(before);
    expect(log.lines.join("\n")).toContain("found in the tool cache");
  });

  it("installs the version asked for instead of the default", async () => {
    const installed = await installAgent(fakeBackend, agent("2.0.0"), context());
    expect(installed.version).toBe("2.0.0");
    expect(execFileSync(installed.binPath, { encoding: "utf8", env: { PATH: searchPath } }).trim()).toBe("fake-agent 2.0.0");
  });

  it("restores from the cross-run cache instead of npm, and saves a fresh install to it", async () => {
    const saved: { dir: string; key: string }[] = [];
    const store = mkdtempSync(path.join(os.tmpdir(), "actions-cache-"));
    const cache: InstallCache = {
      restore: async (dir, key) => {
        const from = path.join(store, encodeURIComponent(key));
        if (!existsSync(from)) return false;
        cpSync(from, dir, { recursive: true, verbatimSymlinks: true });
        return true;
      },
      save: async (dir, key) => {
        saved.push({ dir, key });
        cpSync(dir, path.join(store, encodeURIComponent(key)), { recursive: true, verbatimSymlinks: true });
      },
    };
    const first = await installAgent(fakeBackend, agent(), context({ cache }));
    expect(first.install?.source).toBe("npm");
    expect(saved).toHaveLength(1);
    expect(saved[0]!.key).toBe(`agent-runner-claude-${PKG}-1.2.3-${process.platform}-${process.arch}`);

    const before = registry.requests.length;
    const restored = await installAgent(fakeBackend, agent(), context({ cache }));
    expect(restored.install?.source).toBe("actions-cache");
    expect(execFileSync(restored.binPath, { encoding: "utf8", env: { PATH: searchPath } }).trim()).toBe("fake-agent 1.2.3");
    expect(registry.requests.length).toBe(before);
  });

  it("a version the registry does not have is an error naming the input and npm's reason", async () => {
    const err = await installAgent(fakeBackend, agent("9.9.9"), context()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(String(err)).toMatch(/Input 'agent-version': 'npm install @fake\/agent-cli@9\.9\.9' failed \(exit code \d+\): .*(ETARGET|9\.9\.9)/);
  });

  it("refuses a version that is not a version before running npm", async () => {
    for (const v of ["--registry=http://evil", "../../x", "1.0 && rm -rf /"]) {
      const err = await installAgent(fakeBackend, agent(v), context()).catch((e: unknown) => e);
      expect(String(err)).toContain(`Input 'agent-version': '${v}' is not an npm version`);
    }
  });

  it("uses the CLI on PATH for 'preinstalled', and says what to do when it is missing", async () => {
    const bin = mkdtempSync(path.join(os.tmpdir(), "bin-"));
    writeFileSync(path.join(bin, "fake-agent"), "#!/bin/sh\necho hi\n");
    chmodSync(path.join(bin, "fake-agent"), 0o755);
    const found = await installAgent(fakeBackend, agent("preinstalled"), context({ searchPath: `${bin}:${searchPath}` }));
    expect(found).toMatchObject({ binPath: path.join(bin, "fake-agent"), version: "preinstalled", install: { source: "path" } });
    const err = await installAgent(fakeBackend, agent("preinstalled"), context()).catch((e: unknown) => e);
    expect(String(err)).toContain("Input 'agent-version': 'preinstalled' but 'fake-agent' is not on PATH");
  });
});

describe("the runner's npm configuration", () => {
  let registry: Registry;
  afterAll(() => registry?.close());

  it("a registry set only in the machine's global npmrc, and auth only in the user npmrc, are both used for the install", async () => {
    registry = await startRegistry();
    const home = mkdtempSync(path.join(os.tmpdir(), "npm-home-"));
    // npm's global npmrc is <global prefix>/etc/npmrc; `npm_config_prefix` is how a runner moves that prefix.
    const globalPrefix = mkdtempSync(path.join(os.tmpdir(), "npm-global-"));
    mkdirSync(path.join(globalPrefix, "etc"));
    writeFileSync(path.join(globalPrefix, "etc/npmrc"), `registry=${registry.url}\n`);
    const userrc = path.join(home, ".npmrc");
    const nerfDart = registry.url.replace(/^http:/, "");
    writeFileSync(userrc, `${nerfDart}:_authToken=user-npmrc-token-0123\n`);
    // No registry in the environment: without the global npmrc npm would ask registry.npmjs.org, which
    // a dead proxy on 127.0.0.1 refuses at once (only the local registry is exempt).
    const env = {
      HOME: home,
      npm_config_cache: path.join(home, ".npm"),
      npm_config_userconfig: userrc,
      npm_config_prefix: globalPrefix,
      npm_config_proxy: "http://127.0.0.1:9",
      npm_config_https_proxy: "http://127.0.0.1:9",
      npm_config_noproxy: "127.0.0.1",
      npm_config_fetch_retries: "0",
    };
    const toolCache = mkdtempSync(path.join(os.tmpdir(), "tool-cache-"));

    const installed = await installAgent(fakeBackend, agent("2.0.0"), { searchPath, cwd: os.tmpdir(), toolCache, env, log: recorder() });

    expect(installed).toMatchObject({ version: "2.0.0", install: { source: "npm" } });
    expect(execFileSync(installed.binPath, { encoding: "utf8", env: { PATH: searchPath } }).trim()).toBe("fake-agent 2.0.0");
    expect(registry.requests.map(decodeURIComponent)).toEqual(expect.arrayContaining([`GET /${PKG}`, "GET /tarballs/2.0.0.tgz"]));
    expect(registry.authorizations).toContain("Bearer user-npmrc-token-0123");
  });
});
