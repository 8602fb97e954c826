/**
 * Issue #23, the leaks: cloud credential variables never reach the agent's
 * environment (whatever forward-env, env or secrets name), the parser refuses
 * to forward them on purpose, the auth actions' files are found for hiding,
 * and a patch never carries google-github-actions/auth's credentials file.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseSettings, type RawInputs } from "../../src/config/parse.js";
import { cloudSecretValues, sandboxHost } from "../../src/config/host.js";
import { ConfigurationError } from "../../src/errors.js";
import { buildAgentEnv } from "../../src/sandbox/env.js";
import { cloudCredentialFiles } from "../../src/sandbox/hostfs.js";
import { pathProblem } from "../../src/publish/patch-rules.js";
import { isCloudCredentialName } from "../../src/shared/cloud.js";
import { noneSandbox } from "../../src/sandbox/none.js";
import { createDockerBackend } from "../../src/sandbox/docker.js";
import { HostRepo } from "../../src/git/host-repo.js";
import { collectChanges, takeBaseline } from "../../src/git/snapshot.js";

const tmp = (p: string) => mkdtempSync(path.join(os.tmpdir(), p));

const CLOUD_ENV: Record<string, string> = {
  AWS_ACCESS_KEY_ID: "AKIAPROBEACCESSKEY01",
  AWS_SECRET_ACCESS_KEY: "probe-aws-secret-value-0123456789",
  AWS_SESSION_TOKEN: "probe-aws-session-token",
  AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/probe",
  AWS_WEB_IDENTITY_TOKEN_FILE: "/nonexistent/token",
  GOOGLE_APPLICATION_CREDENTIALS: "/nonexistent/gha-creds-1.json",
  GOOGLE_GHA_CREDS_PATH: "/nonexistent/gha-creds-1.json",
  CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE: "/nonexistent/gha-creds-1.json",
  CLOUD_ML_REGION: "us-east5",
  AZURE_CLIENT_ID: "probe-azure-client",
  AZURE_FEDERATED_TOKEN_FILE: "/nonexistent/azure-token",
  AZURE_OPENAI_API_KEY: "probe-azure-openai-key",
  ACTIONS_ID_TOKEN_REQUEST_URL: "https://token.actions.example/probe",
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: "probe-oidc-request-bearer",
};

function envFor(run: { forwardEnv?: string[]; env?: Record<string, string>; secrets?: Record<string, string> }) {
  const layout = { workspace: "/w", home: "/h", tmp: "/t", outputsDir: "/o", readOnlyPaths: [] };
  return buildAgentEnv(
    {
      layout,
      run: { forwardEnv: run.forwardEnv ?? [], env: run.env ?? {}, secrets: run.secrets ?? {} } as never,
      backendEnv: { CLAUDE_CODE_USE_BEDROCK: "1", AWS_REGION: "us-east-1" },
      pathPrepend: [],
      runId: "r",
    },
    { PATH: "/usr/bin", ...CLOUD_ENV, OTHER: "fine" },
  );
}

describe("cloud credential variables", () => {
  it("names every prefix the auth actions use, and nothing ordinary", () => {
    for (const name of Object.keys(CLOUD_ENV)) expect(isCloudCredentialName(name)).toBe(true);
    for (const name of ["PATH", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MY_AWS_THING", "ACTIONS_RUNTIME_URL"]) expect(isCloudCredentialName(name)).toBe(false);
  });

  it("never passes one from forward-env, env or secrets; the backend's own switches stay", () => {
    const { env, withheldCloud } = envFor({
      forwardEnv: ["AWS_SECRET_ACCESS_KEY", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "OTHER"],
      env: { GOOGLE_APPLICATION_CREDENTIALS: "/x", PLAIN: "1" },
      secrets: { AZURE_OPENAI_API_KEY: "probe-azure-openai-key", AWS_SESSION_TOKEN: "s", TOOL_TOKEN: "t" },
    });
    const values = Object.values(env).join("\n");
    for (const v of ["probe-aws-secret-value-0123456789", "probe-oidc-request-bearer", "probe-azure-openai-key", "/x"]) expect(values).not.toContain(v);
    expect(env).toMatchObject({ OTHER: "fine", PLAIN: "1", TOOL_TOKEN: "t", CLAUDE_CODE_USE_BEDROCK: "1", AWS_REGION: "us-east-1" });
    expect(Object.keys(env).filter(isCloudCredentialName)).toEqual(["AWS_REGION"]);
    expect(withheldCloud.sort()).toEqual(["ACTIONS_ID_TOKEN_REQUEST_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_OPENAI_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"]);
  });

  it("withholds AZURE_OPENAI_API_KEY from codex and opencode as it withholds OPENAI_API_KEY", () => {
    const { env } = envFor({ secrets: { OPENAI_API_KEY: "sk-real", AZURE_OPENAI_API_KEY: "probe-azure-openai-key" } });
    expect(env.OPENAI_API_KEY).toBeUndefined();
    expect(env.AZURE_OPENAI_API_KEY).toBeUndefined();
  });

  it("is refused in forward-env and env with a message naming the input; allowed in secrets (for the gateway)", () => {
    const raw: RawInputs = { agent: "command", "agent-command": "true", prompt: "p", "forward-env": "AWS_SECRET_ACCESS_KEY,HOME_X", env: "AZURE_CLIENT_SECRET=x" };
    let problems: string[] = [];
    try {
      parseSettings(raw, { cwd: tmp("cloud-parse-") });
    } catch (e) {
      if (!(e instanceof ConfigurationError)) throw e;
      problems = e.problems;
    }
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^Input 'forward-env': 'AWS_SECRET_ACCESS_KEY' is a cloud credential variable .*never reaches the agent/);
    expect(problems[1]).toMatch(/^Input 'env': 'AZURE_CLIENT_SECRET' is a cloud credential variable/);
    const ok = parseSettings({ agent: "command", "agent-command": "true", prompt: "p", secrets: "AZURE_OPENAI_API_KEY=k" }, { cwd: tmp("cloud-parse-") });
    expect(ok.run.secrets.AZURE_OPENAI_API_KEY).toBe("k");
  });

  it("masks the runner's cloud secrets (keys, tokens, client secrets), not its files, URLs or regions", () => {
    const values = cloudSecretValues({ sandbox: sandboxHost({ PATH: "/bin", ...CLOUD_ENV, AZURE_CLIENT_SECRET: "probe-azure-client-secret" }) });
    expect(values.sort()).toEqual(
      ["AKIAPROBEACCESSKEY01", "probe-aws-secret-value-0123456789", "probe-aws-session-token", "probe-azure-openai-key", "probe-oidc-request-bearer", "probe-azure-client-secret"].sort(),
    );
  });

  it("reads the credentials files the runner's environment names", () => {
    expect(sandboxHost({ PATH: "/bin", ...CLOUD_ENV }).credentialFiles).toEqual([
      "/nonexistent/gha-creds-1.json",
      "/nonexistent/gha-creds-1.json",
      "/nonexistent/gha-creds-1.json",
      "/nonexistent/token",
      "/nonexistent/azure-token",
    ]);
  });
});

describe("cloud credentials files", () => {
  it("finds gha-creds-*.json in the workspace and its parents, named files, and what symlinks lead to", () => {
    const root = tmp("cloud-files-");
    const ws = path.join(root, "repo", "sub");
    mkdirSync(ws, { recursive: true });
    writeFileSync(path.join(root, "repo", "gha-creds-0123abcd.json"), "{}");
    writeFileSync(path.join(ws, "gha-creds-ffff.json"), "{}");
    writeFileSync(path.join(ws, "not-gha-creds.json"), "{}");
    const token = path.join(root, "aws-token");
    writeFileSync(token, "jwt");
    symlinkSync(token, path.join(ws, "token-link"));
    const found = cloudCredentialFiles(ws, [path.join(ws, "token-link"), path.join(root, "missing")]);
    expect(found).toEqual(
      [path.join(root, "aws-token"), path.join(root, "repo", "gha-creds-0123abcd.json"), path.join(ws, "gha-creds-ffff.json"), path.join(ws, "token-link")].sort(),
    );
  });

  it("sandbox: none names each one the agent can read, in a warning", async () => {
    const ws = tmp("cloud-none-");
    writeFileSync(path.join(ws, "gha-creds-abcdef.json"), "{}");
    const warnings: string[] = [];
    const log = { debug: () => {}, info: () => {}, warning: (m: string) => warnings.push(m), error: () => {} } as never;
    const layout = { workspace: ws, home: tmp("h-"), tmp: tmp("t-"), outputsDir: tmp("o-"), readOnlyPaths: [] };
    const prepared = await noneSandbox.prepare({ layout, network: { mode: "open", allowedDomains: [] }, log, credentialFiles: [] });
    await prepared.cleanup();
    expect(warnings.filter((w) => w.includes("cloud credentials file"))).toEqual([
      `sandbox: none: the agent can read the cloud credentials file ${path.join(realpathSync(ws), "gha-creds-abcdef.json")}. Use a sandbox, which hides it.`,
    ]);
  });

  it("docker mounts an empty read-only file over each one the container can see", async () => {
    const ws = tmp("cloud-docker-");
    execFileSync("git", ["init", "-q", "-b", "main"], { cwd: ws });
    writeFileSync(path.join(ws, "gha-creds-0f0f.json"), '{"credential_source":{"headers":{"Authorization":"Bearer probe-oidc-request-bearer"}}}');
    mkdirSync(path.join(ws, "ci"));
    writeFileSync(path.join(ws, "ci", "aws-token"), "jwt");
    const outside = path.join(tmp("cloud-docker-outside-"), "token");
    writeFileSync(outside, "jwt");
    const docker = createDockerBackend({ dockerPath: "/usr/bin/docker-not-called", host: { path: "/usr/bin:/bin", home: "/home/runner", dockerEnv: {} } });
    const log = { debug: () => {}, info: () => {}, warning: () => {}, error: () => {} } as never;
    const layout = { workspace: ws, home: tmp("h-"), tmp: tmp("t-"), outputsDir: tmp("o-"), readOnlyPaths: [] };
    const sandbox = await docker.prepare({ layout, network: { mode: "none", allowedDomains: [] }, dockerImage: "node:24", log, credentialFiles: [path.join(ws, "ci", "aws-token"), outside] });
    try {
      const args = sandbox.wrap({ file: "true", args: [], cwd: ws, env: {} }).args;
      const real = realpathSync(ws);
      const masks = args.filter((a) => a.includes("cloud-credentials-hidden"));
      expect(masks.map((m) => /target=([^,]+)/.exec(m)![1]).sort()).toEqual([path.join(real, "ci", "aws-token"), path.join(real, "gha-creds-0f0f.json")].sort());
      expect(masks.every((m) => m.endsWith(",readonly"))).toBe(true);
      expect(readFileSync(/source=([^,]+)/.exec(masks[0]!)![1]!, "utf8")).toBe("");
      // A file outside every mount is not visible in the container: nothing to hide there.
      expect(args.join(" ")).not.toContain(outside);
    } finally {
      await sandbox.cleanup();
    }
  });

  it("are refused as patch paths", () => {
    expect(pathProblem("gha-creds-abc123.json")).toMatch(/google-github-actions\/auth/);
    expect(pathProblem("deep/er/gha-creds-x.json")).toMatch(/never delivered/);
    expect(pathProblem("docs/gha-creds.md")).toBeUndefined();
  });

  it("never enter a snapshot: neither the auth action's file nor one the agent writes", async () => {
    const ws = tmp("cloud-snap-");
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C" };
    const git = (...a: string[]) => execFileSync("git", a, { cwd: ws, env: { ...env, HOME: os.tmpdir(), GIT_CONFIG_GLOBAL: "/dev/null" } });
    git("init", "-q", "-b", "main");
    writeFileSync(path.join(ws, "README.md"), "hi\n");
    git("add", "-A");
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init");
    writeFileSync(path.join(ws, "gha-creds-5eed.json"), '{"credential_source":{"headers":{"Authorization":"Bearer probe-oidc-request-bearer"}}}');
    const scratch = tmp("cloud-snap-scratch-");
    const repo = await HostRepo.create({ cwd: ws, dir: path.join(scratch, "host-git"), env });
    const base = await takeBaseline(repo, scratch);
    expect(base.preexisting).toEqual([]);
    mkdirSync(path.join(ws, "lib"));
    writeFileSync(path.join(ws, "lib", "gha-creds-agent.json"), "{}");
    writeFileSync(path.join(ws, "work.txt"), "done\n");
    const patchPath = path.join(scratch, "patch.diff");
    const collected = await collectChanges(repo, base, scratch, patchPath);
    expect(collected.changedFiles).toEqual(["work.txt"]);
    expect(readFileSync(patchPath, "utf8")).not.toContain("gha-creds");
    // Not even hashed into the private repository's objects.
    const objects = execFileSync("git", ["--git-dir", repo.dir, "cat-file", "--batch-all-objects", "--batch"], { encoding: "utf8" });
    expect(objects).not.toContain("probe-oidc-request-bearer");
  });
});
